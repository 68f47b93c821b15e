/* The feedback trim on measured power (ctl_trim.c; private to
 * src/control/): the site's, and each topology domain's (ctl_topo.h). */
#ifndef PFI_CTL_TRIM_H
#define PFI_CTL_TRIM_H

typedef struct ctl_trim {
    double w;   /* taken off the budget, W */
    int frozen; /* the last period's readings were incomplete */
} ctl_trim;

/* measured and budget this period; settled: the caps planned under this
 * budget have been in force a period; controlling: a budget is in force;
 * fresh: the readings are complete (else it is frozen and decays). Returns
 * the trim. */
double ctl_trim_update(ctl_trim *t, int controlling, int settled, int fresh, double budget,
                       double measured);

#endif
