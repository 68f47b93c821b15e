/* The clock cap expiry runs on (agent.h: agent_cap_now): the boot clock
 * (CLOCK_BOOTTIME), so that a step of the wall clock neither stretches nor
 * cuts a cap, plus, for tests only, the seconds written in the file that
 * PFID_TEST_CLOCK names: a test moves expiry time forward by rewriting that
 * file instead of sleeping (tests/integration/test_pfid_sim.sh,
 * test_pfid_nvml.sh). The offset can only be >= 0, so the hook can make a cap
 * expire sooner, never outlive its expiry; an unreadable or malformed file
 * counts as 0. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent.h"

static double test_offset(void)
{
    const char *path = getenv("PFID_TEST_CLOCK");
    if (!path || !*path) return 0;
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    double skip = 0;
    if (fscanf(f, "%lf", &skip) != 1 || !isfinite(skip) || skip < 0) skip = 0;
    fclose(f);
    return skip;
}

double agent_cap_now(void)
{
    return pfi_clock_mono() + test_offset();
}

double agent_cap_wall(double t)
{
    return pfi_clock_wall() + (t - agent_cap_now());
}
