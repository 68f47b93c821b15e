/* The clock cap expiry runs on (agent.h: agent_cap_now). Wall time, plus, for
 * tests only, the seconds written in the file that PFID_TEST_CLOCK names: a
 * test moves expiry time forward by rewriting that file instead of sleeping
 * (tests/integration/test_pfid_sim.sh, test_pfid_nvml.sh). The offset can
 * only be >= 0, so the hook can make a cap expire sooner, never outlive its
 * expiry; an unreadable or malformed file counts as 0. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent.h"

double agent_cap_now(void)
{
    double now = pfi_clock_wall();
    const char *path = getenv("PFID_TEST_CLOCK");
    if (!path || !*path) return now;
    FILE *f = fopen(path, "r");
    if (!f) return now;
    double skip = 0;
    if (fscanf(f, "%lf", &skip) != 1 || !isfinite(skip) || skip < 0) skip = 0;
    fclose(f);
    return now + skip;
}
