/* One cap of a sweep (see sweep_run.h). */
#include "sweep_run.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pfi/tm_aggregate.h"

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int sweep_sleep(double s, volatile sig_atomic_t *stop)
{
    double end = mono_s() + s;
    while (!*stop) {
        double left = end - mono_s();
        if (left <= 0) break;
        struct timespec ts = {0, (long)(fmin(left, 0.1) * 1e9)};
        nanosleep(&ts, NULL);
    }
    return *stop != 0;
}

void sweep_run_trace_header(FILE *f)
{
    fputs("time_s,gpu", f);
    for (int k = 0; k < PFI_TM_NFIELDS; k++)
        fprintf(f, ",%s", pfi_tm_field_name(k));
    fputs(",DCGM_FI_DEV_ENFORCED_POWER_LIMIT\n", f);
}

/* Starts argv in its own process group with stdout and stderr on a pipe. */
static int spawn(char *const *argv, double cap_w, unsigned port, pid_t *pid, int *rfd,
                 pfi_error *err)
{
    int p[2];
    if (pipe(p) != 0) return pfi_error_set(err, PFI_EIO, NULL, 0, "pipe: %s", strerror(errno));
    pid_t c = fork();
    if (c < 0) {
        close(p[0]), close(p[1]);
        return pfi_error_set(err, PFI_EIO, NULL, 0, "fork: %s", strerror(errno));
    }
    if (c == 0) {
        setpgid(0, 0);
        /* its own process group has no terminal to read: stdin is empty */
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        dup2(p[1], 1);
        dup2(p[1], 2);
        close(p[0]), close(p[1]);
        char cap[32];
        snprintf(cap, sizeof cap, "%.0f", cap_w);
        setenv("PFI_SWEEP_CAP_W", cap, 1);
        if (port) { /* the reporter (contrib callback) talks to pfi sweep, not pfid */
            char url[64];
            snprintf(url, sizeof url, "http://127.0.0.1:%u", port);
            setenv("PFID_URL", url, 1);
        }
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        execvp(argv[0], argv);
        dprintf(2, "pfi sweep: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(c, c); /* both sides, so the group exists before any kill */
    close(p[1]);
    fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
    *pid = c;
    *rfd = p[0];
    return PFI_OK;
}

/* Stops the command's process group: SIGTERM, SIGKILL after 5 s. Returns
 * its wait status (or the one already reaped, *reaped). */
static void stop_child(pid_t pid, int *reaped, int *status)
{
    if (*reaped) return;
    kill(-pid, SIGTERM);
    double end = mono_s() + 5;
    while (mono_s() < end) {
        if (waitpid(pid, status, WNOHANG) == pid) {
            *reaped = 1;
            kill(-pid, SIGKILL); /* anything the command left behind in its group */
            return;
        }
        struct timespec ts = {0, 50000000L};
        nanosleep(&ts, NULL);
    }
    kill(-pid, SIGKILL);
    waitpid(pid, status, 0);
    *reaped = 1;
}

typedef struct {
    char buf[8192];
    size_t len;
    double last_tput;
    size_t n_tput;
} line_buf;

/* Reads what the command wrote; each complete line goes to the log and
 * through the matcher. Returns 0 at end of file. */
static int drain(const sweep_run_opts *o, int fd, line_buf *lb, double t, pfi_trace_run *out)
{
    for (;;) {
        ssize_t n = read(fd, lb->buf + lb->len, sizeof lb->buf - lb->len);
        if (n == 0) return 0;
        if (n < 0) return errno == EAGAIN || errno == EINTR ? 1 : 0;
        if (o->log) fwrite(lb->buf + lb->len, 1, (size_t)n, o->log);
        lb->len += (size_t)n;
        size_t start = 0;
        for (size_t i = 0; i < lb->len; i++) {
            if (lb->buf[i] != '\n' && !(i + 1 == lb->len && lb->len == sizeof lb->buf)) continue;
            double v;
            if (o->m && pfi_tput_matcher_match(o->m, lb->buf + start, i - start, &v)) {
                lb->last_tput = v * o->tput_scale;
                lb->n_tput++;
                pfi_trace_run_add_tput(out, t, lb->last_tput);
            }
            start = i + 1;
        }
        memmove(lb->buf, lb->buf + start, lb->len - start);
        lb->len -= start;
    }
}

/* Samples every GPU once. Until a GPU's enforced limit shows the cap, its
 * samples are older than the cap (pfid samples on its own clock; a driver
 * may apply a limit a moment late) and are left out; *seen[k] records it. */
static void sample_gpus(const sweep_run_opts *o, double t, pfi_trace_run *out, double *power,
                        int *seen)
{
    pfi_gpu_sample s[64];
    const pfi_gpu_sample *ptr[64];
    size_t n = o->n_gpus < 64 ? o->n_gpus : 64;
    for (size_t k = 0; k < n; k++) {
        ptr[k] = sweep_gpu_sample(o->g, o->gpus[k], &s[k]) == PFI_OK ? &s[k] : NULL;
        if (ptr[k] && !seen[k] && pfi_gpu_sample_has(&s[k], PFI_GF_LIMIT) &&
            fabs(s[k].v[PFI_GF_LIMIT] - o->cap_w) > 1.0)
            ptr[k] = NULL;
        else if (ptr[k])
            seen[k] = 1;
        if (!ptr[k] || !o->trace) continue;
        pfi_tm_row one;
        pfi_tm_from_gpu_sample(&s[k], &one);
        fprintf(o->trace, "%.3f,%u", t, o->gpus[k]);
        for (int f = 0; f < PFI_TM_NFIELDS; f++)
            if (one.valid >> f & 1u)
                fprintf(o->trace, ",%.6g", one.v[f]);
            else
                fputc(',', o->trace);
        if (pfi_gpu_sample_has(&s[k], PFI_GF_LIMIT))
            fprintf(o->trace, ",%.1f\n", s[k].v[PFI_GF_LIMIT]);
        else
            fputs(",\n", o->trace);
    }
    pfi_tm_row row;
    pfi_tm_from_gpu_samples(ptr, n, &row, power);
    if (row.valid) pfi_trace_run_add_sample(out, t, &row);
}

int sweep_run_cap(const sweep_run_opts *o, pfi_trace_run *out, pfi_error *err)
{
    out->gpus = (int)o->n_gpus;
    out->cap_w = o->cap_w;
    pid_t pid = -1;
    int fd = -1,
        rc = spawn(o->argv, o->cap_w, o->port ? sweep_port_number(o->port) : 0, &pid, &fd, err);
    if (rc != PFI_OK) return rc;
    line_buf *lb = calloc(1, sizeof *lb);
    if (!lb) {
        int st, reaped = 0;
        stop_child(pid, &reaped, &st);
        close(fd);
        return pfi_error_set(err, PFI_ENOMEM, NULL, 0, "out of memory");
    }
    lb->last_tput = NAN;
    int seen[64] = {0};
    double t0 = mono_s(), next = 0;
    int open_fd = 1, reaped = 0, status = 0;
    for (;;) {
        double t = mono_s() - t0;
        if (*o->stop) {
            rc = pfi_error_set(err, PFI_ESTATE, NULL, 0, "interrupted");
            break;
        }
        if (t >= o->duration_s) break;
        if (!reaped && waitpid(pid, &status, WNOHANG) == pid) reaped = 1;
        if (reaped) {
            if (open_fd) drain(o, fd, lb, t, out);
            if (WIFEXITED(status))
                rc = pfi_error_set(err, PFI_ESTATE, NULL, 0,
                                   "the command exited with status %d after %.1f s (before the "
                                   "%.0f s duration)",
                                   WEXITSTATUS(status), t, o->duration_s);
            else
                rc = pfi_error_set(err, PFI_ESTATE, NULL, 0,
                                   "the command was killed by signal %d after %.1f s",
                                   WTERMSIG(status), t);
            break;
        }
        if (lb->n_tput == 0 && t >= o->tput_timeout_s) {
            rc = pfi_error_set(err, PFI_ENODATA, NULL, 0,
                               "no throughput line in the command's output within %.0f s",
                               o->tput_timeout_s);
            break;
        }
        if (t >= next) {
            double power = NAN;
            sample_gpus(o, t, out, &power, seen);
            if (o->progress) o->progress(o->progress_ctx, t, power, lb->last_tput);
            next += o->interval_s;
            if (next <= t) next = t + o->interval_s; /* late: skip, do not burst */
        }
        double wait = fmin(next, o->duration_s) - (mono_s() - t0);
        struct pollfd pf = {fd, POLLIN, 0};
        int ms = wait > 0 ? (int)ceil(fmin(wait, 0.1) * 1000) : 0;
        if (open_fd && poll(&pf, 1, ms) > 0) {
            open_fd = drain(o, fd, lb, mono_s() - t0, out);
        } else if (!open_fd) {
            struct timespec ts = {0, (long)ms * 1000000L};
            nanosleep(&ts, NULL);
        }
        double got[256];
        size_t ng = o->port ? sweep_port_take(o->port, got, 256) : 0;
        for (size_t k = 0; k < ng; k++) {
            lb->last_tput = got[k] * o->tput_scale;
            lb->n_tput++;
            pfi_trace_run_add_tput(out, mono_s() - t0, lb->last_tput);
        }
    }
    stop_child(pid, &reaped, &status);
    if (open_fd) drain(o, fd, lb, mono_s() - t0, out);
    close(fd);
    free(lb);
    if (o->log) fflush(o->log);
    if (o->trace) fflush(o->trace);
    return rc;
}
