/* The feedback trim (ctl_internal.h): what the plan's curves get wrong
 * about the site's power is taken off the budget. The excess over the
 * budget is integrated at once (the site must come under), a deficit
 * unwinds it at a quarter of the rate (no oscillation around the budget).
 *
 * It cannot wind up (issue 27): it is bounded at a quarter of the budget
 * (a curve that wrong is not a trim's to fix: the plan's floors are), and
 * while readings are missing or not comparable (Prometheus not answering,
 * an agent that died or came back this period: watts move between the
 * counted maximum and the measured, an excess no cap removes) it is
 * frozen, the caps held as they are, and decays by a tenth a period, so
 * that a long outage does not leave a stale trim to act on fresh readings. */
#include <math.h>

#include "ctl_internal.h"

#define TRIM_UNWIND 0.25   /* a deficit's share taken off the trim each period */
#define TRIM_MAX_FRAC 0.25 /* of the budget */
#define TRIM_DECAY 0.9     /* kept per period while frozen */

double ctl_trim_update(ctl_trim *t, int controlling, int settled, int fresh, double budget,
                       double measured)
{
    if (!controlling) {
        t->w = 0;
        t->frozen = 0;
        return t->w;
    }
    if (!fresh) {
        t->w *= TRIM_DECAY;
        t->frozen = 1;
        return t->w;
    }
    /* integrate only once the caps planned under this budget, on fresh
     * readings, have been in force for a period */
    int was_frozen = t->frozen;
    t->frozen = 0;
    if (!settled || was_frozen) return t->w;
    double e = measured - budget;
    t->w = e > 0 ? t->w + e : fmax(0, t->w + TRIM_UNWIND * e);
    if (t->w > TRIM_MAX_FRAC * budget) t->w = TRIM_MAX_FRAC * budget;
    return t->w;
}
