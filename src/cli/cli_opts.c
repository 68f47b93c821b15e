/* The option tables' parser and --help (cli.h). */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MAX_OPTS 64

static int bounded(const pfi_cli_opt *o, double v)
{
    return !(o->lo < o->hi) || (v >= o->lo && v <= o->hi);
}

int pfi_cli_set_flag(const pfi_cli_opt *o, const char *arg)
{
    (void)arg;
    *(int *)o->dst = 1;
    return 0;
}

int pfi_cli_set_bits(const pfi_cli_opt *o, const char *arg)
{
    (void)arg;
    *(unsigned *)o->dst |= (unsigned)o->lo;
    return 0;
}

int pfi_cli_set_str(const pfi_cli_opt *o, const char *arg)
{
    *(const char **)o->dst = arg;
    return 0;
}

int pfi_cli_set_num(const pfi_cli_opt *o, const char *arg)
{
    double v;
    if (pfi_cli_parse_double(arg, &v) || !bounded(o, v)) return -1;
    *(double *)o->dst = v;
    return 0;
}

int pfi_cli_set_pos(const pfi_cli_opt *o, const char *arg)
{
    double v;
    if (pfi_cli_parse_double(arg, &v) || !(v > 0)) return -1;
    *(double *)o->dst = v;
    return 0;
}

int pfi_cli_set_nonneg(const pfi_cli_opt *o, const char *arg)
{
    double v;
    if (pfi_cli_parse_double(arg, &v) || !(v >= 0)) return -1;
    *(double *)o->dst = v;
    return 0;
}

static int whole(const pfi_cli_opt *o, const char *arg, unsigned long long *v)
{
    return pfi_cli_parse_ulong(arg, v) || !bounded(o, (double)*v) ? -1 : 0;
}

int pfi_cli_set_ull(const pfi_cli_opt *o, const char *arg)
{
    unsigned long long v;
    if (whole(o, arg, &v)) return -1;
    *(unsigned long long *)o->dst = v;
    return 0;
}

int pfi_cli_set_size(const pfi_cli_opt *o, const char *arg)
{
    unsigned long long v;
    if (whole(o, arg, &v) || v > (size_t)-1) return -1;
    *(size_t *)o->dst = (size_t)v;
    return 0;
}

int pfi_cli_set_uint(const pfi_cli_opt *o, const char *arg)
{
    unsigned long long v;
    if (whole(o, arg, &v) || v > (unsigned)-1) return -1;
    *(unsigned *)o->dst = (unsigned)v;
    return 0;
}

int pfi_cli_set_doubles(const pfi_cli_opt *o, const char *arg)
{
    pfi_cli_list *l = o->dst;
    free(l->v);
    l->v = NULL;
    l->n = 0;
    return pfi_cli_parse_doubles(arg, &l->v, &l->n) ? -1 : 0;
}

/* What the table's list options hold, freed when the command stops early. */
static void free_lists(const pfi_cli_spec *s)
{
    for (size_t i = 0; i < s->n_opts; i++)
        if (s->opts[i].set == pfi_cli_set_doubles) {
            pfi_cli_list *l = s->opts[i].dst;
            free(l->v);
            l->v = NULL;
            l->n = 0;
        }
}

/* One option's line(s): its names, then its help wrapped at 79 columns. */
static void help_row(FILE *f, const char *lhs, int w, const char *help)
{
    int col = w + 4, room = 79 - col;
    if ((int)strlen(lhs) > w)
        fprintf(f, "  %s\n%*s", lhs, col, "");
    else
        fprintf(f, "  %-*s  ", w, lhs);
    const char *p = help;
    while (*p) {
        int n = (int)strlen(p);
        if (n > room) {
            n = room;
            while (n > 0 && p[n] != ' ')
                n--;
            if (n == 0) n = room;
        }
        fprintf(f, "%.*s\n", n, p);
        p += n;
        while (*p == ' ')
            p++;
        if (*p) fprintf(f, "%*s", col, "");
    }
    if (!*help) fputc('\n', f);
}

void pfi_cli_help(const pfi_cli_spec *s, FILE *f)
{
    fprintf(f, "Usage: pfi %s %s\n\n%s\nOptions:\n", s->cmd, s->usage, s->about);
    int w = 14;
    char lhs[MAX_OPTS][96];
    for (size_t i = 0; i < s->n_opts && i < MAX_OPTS; i++) {
        const pfi_cli_opt *o = &s->opts[i];
        char sh[8] = "";
        if (o->short_name) snprintf(sh, sizeof sh, "-%c, ", o->short_name);
        snprintf(lhs[i], sizeof lhs[i], "%s--%s%s%s", sh, o->name, o->arg ? " " : "",
                 o->arg ? o->arg : "");
        int l = (int)strlen(lhs[i]);
        if (l > w && l <= 24) w = l;
    }
    for (size_t i = 0; i < s->n_opts && i < MAX_OPTS; i++)
        help_row(f, lhs[i], w, s->opts[i].help);
    help_row(f, "-h, --help", w, "show this help");
    if (s->page)
        fprintf(f, "\nSee %s.\n", s->page);
    else
        fprintf(f, "\nSee pfi-%s(1).\n", s->cmd);
}

int pfi_cli_parse(const pfi_cli_spec *s, int argc, char **argv, int *first)
{
    struct option lo[MAX_OPTS + 2];
    char shorts[2 * MAX_OPTS + 4] = "", *sp = shorts;
    if (s->n_opts > MAX_OPTS) {
        fprintf(stderr, "pfi %s: too many options in the table\n", s->cmd);
        return PFI_EXIT_USAGE;
    }
    if (s->stop_at_arg) *sp++ = '+';
    *sp++ = 'h';
    for (size_t i = 0; i < s->n_opts; i++) {
        const pfi_cli_opt *o = &s->opts[i];
        /* getopt_long's val: 256 + the entry, or its short letter */
        lo[i] = (struct option){o->name, o->arg ? required_argument : no_argument, NULL,
                                o->short_name ? o->short_name : 256 + (int)i};
        if (o->short_name) {
            *sp++ = o->short_name;
            if (o->arg) *sp++ = ':';
        }
    }
    *sp = '\0';
    lo[s->n_opts] = (struct option){"help", no_argument, NULL, 'h'};
    lo[s->n_opts + 1] = (struct option){0, 0, 0, 0};
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        if (c == 'h') {
            pfi_cli_help(s, stdout);
            free_lists(s);
            return PFI_EXIT_OK;
        }
        const pfi_cli_opt *o = NULL;
        if (c >= 256 && (size_t)(c - 256) < s->n_opts) o = &s->opts[c - 256];
        for (size_t i = 0; !o && c != '?' && i < s->n_opts; i++)
            if (s->opts[i].short_name == c) o = &s->opts[i];
        if (!o) {
            free_lists(s);
            return pfi_cli_usage_error(s->cmd, "bad option");
        }
        int r = o->set(o, optarg);
        if (r == 0) continue;
        free_lists(s);
        if (r == -1) {
            if (o->bad) return pfi_cli_usage_error(s->cmd, o->bad, optarg ? optarg : "");
            return pfi_cli_usage_error(s->cmd, "bad --%s '%s'", o->name, optarg ? optarg : "");
        }
        return r > 0 ? r : PFI_EXIT_USAGE; /* the setter said why */
    }
    *first = optind;
    return -1;
}
