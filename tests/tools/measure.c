/* measure N CMD [ARG...] [::: CMD2 [ARG...]]: runs CMD N times (stdout and
 * stderr discarded), and CMD2 as often, interleaved (CMD, CMD2, CMD, ...) so
 * drift moves both alike. "{n}" in an argument becomes the run number, for a
 * fresh output path per run. Prints, per command, the median and
 * 90th-percentile wall time in milliseconds and the peak resident set size in
 * KiB over all runs. Exits 1 if any run fails. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct series {
    char **argv;
    int argc;
    double *times;
    long peak_kib;
} series;

/* argv with "{n}" replaced by run (one occurrence per argument). */
static char **expand(const series *s, long run)
{
    char **v = calloc((size_t)s->argc + 1, sizeof(char *));
    for (int i = 0; v && i < s->argc; i++) {
        const char *at = strstr(s->argv[i], "{n}");
        if (!at) {
            v[i] = s->argv[i];
            continue;
        }
        size_t n = strlen(s->argv[i]) + 24;
        v[i] = malloc(n);
        snprintf(v[i], n, "%.*s%ld%s", (int)(at - s->argv[i]), s->argv[i], run, at + 3);
    }
    return v;
}

static int run_once(series *s, long run)
{
    char **argv = expand(s, run);
    double start = now_ms();
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        execvp(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
        ;
    s->times[run] = now_ms() - start;
    if (ru.ru_maxrss > s->peak_kib)
        s->peak_kib = ru.ru_maxrss;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "measure: run %ld of %s failed (status %d)\n", run + 1, argv[0], status);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    char *end = NULL;
    long n = argc > 2 ? strtol(argv[1], &end, 10) : 0;
    if (argc < 3 || *end || n < 1 || n > 100000) {
        fprintf(stderr, "usage: measure N CMD [ARG...] [::: CMD2 [ARG...]]\n");
        return 2;
    }
    series s[2] = {{.argv = argv + 2, .argc = argc - 2}};
    int count = 1;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], ":::") == 0) {
            s[0].argc = i - 2;
            s[1] = (series){.argv = argv + i + 1, .argc = argc - i - 1};
            count = 2;
            break;
        }
    }
    for (int k = 0; k < count; k++) {
        if (s[k].argc < 1) {
            fprintf(stderr, "measure: empty command\n");
            return 2;
        }
        s[k].times = calloc((size_t)n, sizeof(double));
    }
    for (long i = 0; i < n; i++)
        for (int k = 0; k < count; k++)
            if (run_once(&s[k], i))
                return 1;
    for (int k = 0; k < count; k++) {
        qsort(s[k].times, (size_t)n, sizeof(double), by_value);
        printf("median_ms=%.2f p90_ms=%.2f peak_rss_kib=%ld runs=%ld\n", s[k].times[n / 2],
               s[k].times[(size_t)((double)n * 0.9)], s[k].peak_kib, n);
    }
    return 0;
}
