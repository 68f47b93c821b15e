/* The feedback trim (ctl_internal.h): what the plan's curves get wrong
 * about the site's power is taken off the budget. The excess over the
 * budget is integrated at once (the site must come under), a deficit
 * unwinds it at a quarter of the rate (no oscillation around the budget). */
#include <math.h>

#include "ctl_internal.h"

#define TRIM_UNWIND 0.25 /* a deficit's share taken off the trim each period */

double ctl_trim_update(ctl_trim *t, int controlling, int settled, double budget, double measured)
{
    if (!controlling) {
        t->w = 0;
        return t->w;
    }
    /* integrate only once the caps planned under this budget have been in
     * force for a period */
    if (!settled) return t->w;
    double e = measured - budget;
    t->w = e > 0 ? t->w + e : fmax(0, t->w + TRIM_UNWIND * e);
    if (t->w > budget) t->w = budget;
    return t->w;
}
