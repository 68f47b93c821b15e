/* Variances of the controller's readings (src/control/ctl_spread.h). */
#include "ctl_spread.h"

#include <math.h>

double ctl_spread_add(double var, double sd)
{
    if (!(var >= 0) || !(sd >= 0) || !isfinite(var) || !isfinite(sd)) return NAN;
    return var + sd * sd;
}

double ctl_spread_ewma(double var_m, double var_x, double a)
{
    if (!(var_m >= 0) || !(var_x >= 0) || !isfinite(var_m) || !isfinite(var_x)) return NAN;
    return (1 - a) * (1 - a) * var_m + a * a * var_x;
}

double ctl_spread_sd(double var)
{
    return var >= 0 && isfinite(var) ? sqrt(var) : 0;
}
