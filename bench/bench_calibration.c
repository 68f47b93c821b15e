/* The calibration of the controller's promises (issue 29, item 2;
 * tests/families/calib.h): per family, class setting and event, the share
 * of periods whose realised throughput is at or above the plan's 90% lower
 * bound (target >= 0.9), and |expected - realised| / realised (target <=
 * 0.05 from the second event on). Prints JSON.
 *
 *   bench_calibration [--seeds N] [--noise REL] [--family NAME|all] [--policy pfi|learn]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"

int main(int argc, char **argv)
{
    size_t seeds = 5;
    double noise = 0.01;
    const char *fam = "all";
    pfi_plan_policy policy = PFI_PLAN_PFI;
    for (int a = 1; a + 1 < argc; a += 2) {
        if (strcmp(argv[a], "--seeds") == 0)
            seeds = (size_t)atoi(argv[a + 1]);
        else if (strcmp(argv[a], "--noise") == 0)
            noise = atof(argv[a + 1]);
        else if (strcmp(argv[a], "--family") == 0)
            fam = argv[a + 1];
        else if (strcmp(argv[a], "--policy") == 0 &&
                 pfi_plan_policy_parse(argv[a + 1], &policy) != PFI_OK) {
            fprintf(stderr, "bench_calibration: policy %s: equal, pfi or learn\n", argv[a + 1]);
            return 2;
        }
    }
    static const char *const cls_name[] = {"none", "class", "mislabelled"};
    printf(
        "{\"bench\":\"calibration\",\"confidence\":0.9,\"noise_rel\":%g,\"seeds\":%zu,\"rows\":[",
        noise, seeds);
    int first = 1;
    for (int f = 0; f < FAM_COUNT; f++) {
        if (strcmp(fam, "all") == 0 ? f != FAM_EMBEDDED && f != FAM_MIX && f != FAM_DEAD_ZONE
                                    : strcmp(fam, fam_name((fam_kind)f)) != 0)
            continue;
        for (int c = 0; c < 3; c++) {
            calib_opts o = calib_defaults();
            o.family = (fam_kind)f;
            o.noise_rel = noise;
            o.policy = policy;
            o.classes = (calib_classes)c;
            calib_event acc[8] = {{0}};
            for (size_t s = 0; s < seeds; s++) {
                calib_event ev[8];
                o.seed = 1 + s;
                pfi_error err;
                pfi_error_clear(&err);
                if (calib_run(&o, ev, &err) != PFI_OK) {
                    fprintf(stderr, "bench_calibration: %s\n", err.msg);
                    return 1;
                }
                for (size_t e = 0; e < o.events; e++) {
                    acc[e].budget_frac = ev[e].budget_frac;
                    acc[e].periods += ev[e].periods;
                    acc[e].covered += ev[e].covered;
                    acc[e].over += ev[e].over;
                    acc[e].err_mean += ev[e].err_mean / (double)seeds;
                    acc[e].err_max =
                        ev[e].err_max > acc[e].err_max ? ev[e].err_max : acc[e].err_max;
                    acc[e].width_mean += ev[e].width_mean / (double)seeds;
                    acc[e].realised += ev[e].realised / (double)seeds;
                    acc[e].first_expected += ev[e].first_expected / (double)seeds;
                    acc[e].first_lo += ev[e].first_lo / (double)seeds;
                    acc[e].first_realised += ev[e].first_realised / (double)seeds;
                }
            }
            for (size_t e = 0; e < o.events; e++) {
                const calib_event *E = &acc[e];
                printf(
                    "%s\n {\"family\":\"%s\",\"classes\":\"%s\",\"event\":%zu,\"budget_frac\":%.2f,"
                    "\"periods\":%zu,\"over_budget\":%zu,\"coverage\":%.4f,\"err_mean\":%.4f,\"err_"
                    "max\":%.4f,"
                    "\"band_width\":%.4f,\"realised\":%.1f,\"first_expected_kept\":%.4f,"
                    "\"first_lo_kept\":%.4f,\"first_realised_kept\":%.4f}",
                    first ? "" : ",", fam_name(o.family), cls_name[c], e + 1, E->budget_frac,
                    E->periods, E->over, (double)E->covered / (double)E->periods, E->err_mean,
                    E->err_max, E->width_mean, E->realised, E->first_expected, E->first_lo,
                    E->first_realised);
                first = 0;
            }
        }
    }
    printf("\n]}\n");
    return 0;
}
