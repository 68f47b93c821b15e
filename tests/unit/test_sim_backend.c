/* The sim backend: idle GPUs, a jobs file's phases (warmup, startup,
 * training), caps through the GPU model, energy, noise, bad options and
 * bad jobs files. The clock is pinned with pfi_sim_set_time. */
#include "test_util.h"

#include <string.h>
#include <unistd.h>

#include "pfi/backend.h"
#include "pfi/gpumodel.h"
#include "pfi/sim_backend.h"

static char jobs_path[64];

static const pfi_job_model dense = {.compute_frac = 0.85,
                                    .sm_activity = 0.9,
                                    .dram_activity = 0.3,
                                    .tensor_ratio = 0.55,
                                    .tput_per_gpu = 130000};
static const pfi_job_model moe = {.compute_frac = 0.3,
                                  .sm_activity = 0.6,
                                  .dram_activity = 0.55,
                                  .tensor_ratio = 0.02,
                                  .tput_per_gpu = 53000};

static int setup(void **state)
{
    (void)state;
    snprintf(jobs_path, sizeof jobs_path, "/tmp/pfi-sim-jobs-XXXXXX");
    int fd = mkstemp(jobs_path);
    if (fd < 0) return -1;
    close(fd);
    test_write_file(jobs_path,
                    "gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu,"
                    "start_s,warmup_s,startup_s,duration_s,fb_mib\n"
                    "0,dense,0.85,0.9,0.3,0.55,130000,0,5,8,60,70000\n"
                    "1,moe,0.3,0.6,0.55,0.02,53000,10,,,,40000\n");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(jobs_path);
    return 0;
}

static pfi_backend *open_sim(const char *opts)
{
    pfi_backend *b = NULL;
    pfi_error err = {0};
    if (pfi_backend_open("sim", opts, &b, &err) != PFI_OK) fail_msg("open: %s", err.msg);
    return b;
}

static void test_idle(void **state)
{
    (void)state;
    pfi_backend *b = open_sim("");
    unsigned n;
    assert_int_equal(pfi_backend_count(b, &n), PFI_OK);
    assert_int_equal(n, 8); /* the default */
    pfi_gpu_info info;
    assert_int_equal(pfi_backend_info(b, 7, &info), PFI_OK);
    assert_string_equal(info.name, "NVIDIA H200");
    pfi_gpu_sample s;
    assert_int_equal(pfi_sim_set_time(b, 3), PFI_OK);
    assert_int_equal(pfi_backend_sample(b, 7, &s), PFI_OK);
    const pfi_gpu_spec *h = pfi_gpumodel_h200();
    assert_near((s.v[PFI_GF_POWER] * 1e3), h->idle_w * 1000, 1e-6);
    assert_near((s.v[PFI_GF_FB_USED] * (1 / 1048576.0)), 615, 0);
    assert_near((s.v[PFI_GF_UTIL_GPU] * 100), 0, 0);
    assert_near((s.v[PFI_GF_SM_CLOCK] * 1e-6), h->sm_clock_min_mhz, 0);
    assert_near((s.v[PFI_GF_MEM_CLOCK] * 1e-6), 3201, 0);
    assert_true(((uint32_t)s.v[PFI_GF_CLOCK_EVENTS]) == PFI_CLK_IDLE);
    assert_near(s.v[PFI_GF_TEMP], 32.1 + 0.0371 * h->idle_w, 1e-9);
    assert_int_equal(s.valid, (1u << (PFI_GF_DRAM_ACTIVE + 1)) - 1); /* no PCIe/NVLink model */
    double t;
    assert_int_equal(pfi_backend_throughput(b, 7, &t), PFI_OK);
    assert_near(t, 0, 0);
    assert_int_equal(pfi_backend_sample(b, 8, &s), PFI_ENOTFOUND);
    pfi_backend_close(b);
}

/* The paper's phases from the jobs file, and a cap changing a training GPU
 * exactly as the model says. */
static void test_jobs_and_caps(void **state)
{
    (void)state;
    char opts[128];
    snprintf(opts, sizeof opts, "gpus=2,jobs=%s", jobs_path);
    pfi_backend *b = open_sim(opts);
    const pfi_gpu_spec *h = pfi_gpumodel_h200();
    pfi_gpu_sample s;
    double tput;

    pfi_sim_set_time(b, 1); /* warmup: framebuffer under 10 GiB, no kernels */
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_near((s.v[PFI_GF_FB_USED] * (1 / 1048576.0)), 2127, 0);
    assert_near((s.v[PFI_GF_UTIL_GPU] * 100), 0, 0);
    assert_near((s.v[PFI_GF_POWER] * 1e3), 118400,
                1e-6); /* a CUDA context: probe's 118.4 W, 1980 MHz */
    assert_near((s.v[PFI_GF_SM_CLOCK] * 1e-6), 1980, 0);

    pfi_sim_set_time(b, 7); /* startup: loaded, still idle */
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_near((s.v[PFI_GF_FB_USED] * (1 / 1048576.0)), 70000, 0);
    assert_near((s.v[PFI_GF_UTIL_GPU] * 100), 0, 0);
    assert_near((s.v[PFI_GF_POWER] * 1e3), 118400, 1e-6);
    assert_true(((uint32_t)s.v[PFI_GF_CLOCK_EVENTS]) == PFI_CLK_IDLE);
    assert_int_equal(pfi_backend_throughput(b, 0, &tput), PFI_OK);
    assert_near(tput, 0, 0);

    pfi_sim_set_time(b, 20); /* training at the default 700 W */
    pfi_gpumodel_point p700, p400;
    assert_int_equal(pfi_gpumodel_eval(h, &dense, 700, &p700), PFI_OK);
    assert_int_equal(pfi_gpumodel_eval(h, &dense, 400, &p400), PFI_OK);
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_near((s.v[PFI_GF_POWER] * 1e3), p700.power_w * 1000, 1e-6);
    assert_near((s.v[PFI_GF_SM_CLOCK] * 1e-6), p700.sm_clock_mhz, 1e-9);
    assert_near((s.v[PFI_GF_UTIL_GPU] * 100), p700.gpu_util_pct, 1e-9);
    assert_near((s.v[PFI_GF_UTIL_MEM] * 100), p700.mem_copy_util_pct, 1e-9);
    assert_near(s.v[PFI_GF_SM_ACTIVE], p700.sm_active, 1e-12);
    assert_near(s.v[PFI_GF_SM_OCCUPANCY], 0.34 * p700.sm_active, 1e-12);
    assert_near(s.v[PFI_GF_TENSOR_ACTIVE], p700.tensor_active, 1e-12);
    assert_near(s.v[PFI_GF_DRAM_ACTIVE], p700.dram_active, 1e-12);
    assert_int_equal(pfi_backend_throughput(b, 0, &tput), PFI_OK);
    assert_near(tput, p700.tput, 1e-9);

    assert_int_equal(pfi_backend_set_limit(b, 0, 400), PFI_OK);
    pfi_gpu_limits l;
    assert_int_equal(pfi_backend_limits(b, 0, &l), PFI_OK);
    assert_near((l.enforced_w * 1000), 400000, 0);
    assert_near((l.current_w * 1000), 400000, 0);
    assert_near((l.min_w * 1000), 200000, 0);
    assert_near((l.max_w * 1000), 700000, 0);
    assert_near((l.default_w * 1000), 700000, 0);
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_near((s.v[PFI_GF_LIMIT] * 1e3), 400000, 0);
    assert_near((s.v[PFI_GF_POWER] * 1e3), p400.power_w * 1000, 1e-6);
    assert_true((s.v[PFI_GF_POWER] * 1e3) <= 400000);
    assert_true((s.v[PFI_GF_SM_CLOCK] * 1e-6) < p700.sm_clock_mhz - 100);
    assert_true(((uint32_t)s.v[PFI_GF_CLOCK_EVENTS]) == PFI_CLK_POWER_CAP);
    assert_int_equal(pfi_backend_throughput(b, 0, &tput), PFI_OK);
    assert_near(tput, p400.tput, 1e-9);
    assert_true(tput < p700.tput);

    /* GPU 1's moe job starts at 10 s and has no warmup or startup */
    pfi_sim_set_time(b, 9.9);
    assert_int_equal(pfi_backend_throughput(b, 1, &tput), PFI_OK);
    assert_near(tput, 0, 0);
    pfi_sim_set_time(b, 10);
    pfi_gpumodel_point pm;
    assert_int_equal(pfi_gpumodel_eval(h, &moe, 700, &pm), PFI_OK);
    assert_int_equal(pfi_backend_throughput(b, 1, &tput), PFI_OK);
    assert_near(tput, pm.tput, 1e-9);

    pfi_sim_set_time(b, 73); /* dense ended at 5 + 8 + 60 s */
    assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
    assert_near((s.v[PFI_GF_FB_USED] * (1 / 1048576.0)), 615, 0);
    assert_true(((uint32_t)s.v[PFI_GF_CLOCK_EVENTS]) == PFI_CLK_IDLE);
    pfi_sim_set_time(b, 1e6); /* moe runs until the end */
    assert_int_equal(pfi_backend_throughput(b, 1, &tput), PFI_OK);
    assert_near(tput, pm.tput, 1e-9);
    pfi_backend_close(b);
}

static void test_limit_validation(void **state)
{
    (void)state;
    pfi_backend *b = open_sim("gpus=1");
    const double bad[] = {199.9994, 700.0005, 0, NAN, -INFINITY}; /* W */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(pfi_backend_set_limit(b, 0, bad[i]), PFI_ERANGE);
        assert_non_null(strstr(pfi_backend_last_error(b), "outside"));
    }
    pfi_gpu_limits l;
    assert_int_equal(pfi_backend_limits(b, 0, &l), PFI_OK);
    assert_near((l.enforced_w * 1000), 700000, 0); /* never clamped */
    assert_int_equal(pfi_backend_set_limit(b, 0, 200), PFI_OK);
    assert_int_equal(pfi_backend_set_limit(b, 1, 300), PFI_ENOTFOUND);
    pfi_backend_close(b);
}

/* Energy is power integrated over the sim's clock: 10 s idle at idle_w. */
static void test_energy(void **state)
{
    (void)state;
    pfi_backend *b = open_sim("gpus=1");
    pfi_gpu_sample s0, s1;
    pfi_sim_set_time(b, 100);
    assert_int_equal(pfi_backend_sample(b, 0, &s0), PFI_OK);
    pfi_sim_set_time(b, 110);
    assert_int_equal(pfi_backend_sample(b, 0, &s1), PFI_OK);
    assert_near((s1.v[PFI_GF_ENERGY] * 1e3) - (s0.v[PFI_GF_ENERGY] * 1e3),
                pfi_gpumodel_h200()->idle_w * 10 * 1000, 1e-6);
    assert_true((s0.v[PFI_GF_ENERGY] * 1e3) > 0); /* 0-100 s counted too */
    pfi_sim_set_time(b, -1);                      /* back to the wall clock, from 110 s */
    assert_int_equal(pfi_backend_sample(b, 0, &s0), PFI_OK);
    assert_true((s0.v[PFI_GF_ENERGY] * 1e3) >= (s1.v[PFI_GF_ENERGY] * 1e3));
    assert_int_equal(pfi_sim_set_time(NULL, 1), PFI_EINVAL);
    pfi_backend_close(b);
}

/* Noise: reproducible from its seed, never above the cap. */
static void test_noise(void **state)
{
    (void)state;
    char opts[160];
    snprintf(opts, sizeof opts, "gpus=2,jobs=%s,noise=0.05,seed=7", jobs_path);
    double a[20], c[20];
    for (int run = 0; run < 2; run++) {
        pfi_backend *b = open_sim(opts);
        pfi_sim_set_time(b, 30);
        for (int i = 0; i < 20; i++) {
            pfi_gpu_sample s;
            assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
            assert_true((s.v[PFI_GF_POWER] * 1e3) <= 700000);
            (run ? c : a)[i] = (s.v[PFI_GF_POWER] * 1e3);
        }
        pfi_backend_close(b);
    }
    int differ = 0;
    for (int i = 0; i < 20; i++) {
        assert_near(a[i], c[i], 0);
        if (i && a[i] != a[0]) differ = 1;
    }
    assert_true(differ);
}

static void test_bad_options_and_files(void **state)
{
    (void)state;
    static const char *const bad_opts[] = {"gpus=0",  "gpus=x", "gpus=2000", "foo=1",
                                           "noise=2", "seed=x", "gpus"};
    pfi_backend *b = NULL;
    pfi_error err = {0};
    for (size_t i = 0; i < sizeof bad_opts / sizeof bad_opts[0]; i++) {
        assert_int_equal(pfi_backend_open("sim", bad_opts[i], &b, &err), PFI_EINVAL);
        assert_null(b);
        assert_non_null(strstr(err.msg, "sim:"));
    }
    static const struct {
        const char *text;
        long line;
        const char *why;
    } t[] = {
        {"gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio\n0,a,1,1,1,1\n", 1,
         "tput_per_gpu"},
        {"gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu\n"
         "0,a,0.5,0.5,0.5,0.5,1000\n2,b,0.5,0.5,0.5,0.5,1000\n",
         3, "GPU index"},
        {"gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu\n"
         "0,a,0.5,1.5,0.5,0.5,1000\n",
         2, "out of range"},
        {"gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu,start_s,"
         "duration_s\n0,a,0.5,0.5,0.5,0.5,1000,0,100\n0,b,0.5,0.5,0.5,0.5,1000,50,10\n",
         3, "overlaps job 'a'"},
        {"gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu,start_s\n"
         "0,a,0.5,0.5,0.5,0.5,1000,-1\n",
         2, "negative"},
        {"gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu\n"
         "0,a,0.5,0.5,nan,0.5,1000\n",
         2, ""},
    };
    char opts[128];
    snprintf(opts, sizeof opts, "gpus=2,jobs=%s", jobs_path);
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        test_write_file(jobs_path, t[i].text);
        int rc = pfi_backend_open("sim", opts, &b, &err);
        if (rc == PFI_OK) fail_msg("case %zu accepted", i);
        assert_null(b);
        assert_string_equal(err.file, jobs_path);
        if (err.line != t[i].line) fail_msg("case %zu: line %ld (%s)", i, err.line, err.msg);
        if (!strstr(err.msg, t[i].why)) fail_msg("case %zu: '%s'", i, err.msg);
    }
    /* the optional model columns reach the model */
    test_write_file(jobs_path,
                    "gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu,"
                    "clock_spread,floor_mhz,extra_w\n0,a,0.8,0.9,0.3,0.5,100000,0.05,900,40\n");
    assert_int_equal(pfi_backend_open("sim", opts, &b, &err), PFI_OK);
    {
        const pfi_job_model m = {.compute_frac = 0.8,
                                 .sm_activity = 0.9,
                                 .dram_activity = 0.3,
                                 .tensor_ratio = 0.5,
                                 .tput_per_gpu = 100000,
                                 .clock_spread = 0.05,
                                 .floor_mhz = 900,
                                 .extra_w = 40};
        pfi_gpumodel_point p;
        assert_int_equal(pfi_gpumodel_eval(pfi_gpumodel_h200(), &m, 300, &p), PFI_OK);
        assert_int_equal(pfi_backend_set_limit(b, 0, 300), PFI_OK);
        pfi_gpu_sample s;
        double tp;
        pfi_sim_set_time(b, 1);
        assert_int_equal(pfi_backend_sample(b, 0, &s), PFI_OK);
        assert_int_equal(pfi_backend_throughput(b, 0, &tp), PFI_OK);
        assert_near((s.v[PFI_GF_POWER] * 1e3), p.power_w * 1000, 1e-6);
        assert_near(tp, p.tput, 1e-9);
        pfi_backend_close(b);
    }
    /* two jobs one after the other on one GPU are fine */
    test_write_file(
        jobs_path,
        "gpu,job,compute_frac,sm_activity,dram_activity,tensor_ratio,tput_per_gpu,start_s,"
        "duration_s\n0,a,0.5,0.5,0.5,0.5,1000,0,50\n0,b,0.5,0.5,0.5,0.5,2000,50,10\n");
    assert_int_equal(pfi_backend_open("sim", opts, &b, &err), PFI_OK);
    double tput;
    pfi_sim_set_time(b, 55);
    assert_int_equal(pfi_backend_throughput(b, 0, &tput), PFI_OK);
    assert_true(tput > 1500); /* job b's */
    pfi_backend_close(b);
    assert_int_equal(pfi_backend_open("sim", "jobs=/nonexistent.csv", &b, &err), PFI_EIO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_idle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_jobs_and_caps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limit_validation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_energy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_noise, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_options_and_files, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
