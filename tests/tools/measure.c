/* measure N CMD [ARG...]: runs CMD N times (stdout and stderr discarded) and
 * prints the median and 90th-percentile wall time in milliseconds and the
 * peak resident set size in KiB over all runs. Exits 1 if any run fails. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
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

int main(int argc, char **argv)
{
    char *end = NULL;
    long n = argc > 2 ? strtol(argv[1], &end, 10) : 0;
    if (argc < 3 || *end || n < 1 || n > 100000) {
        fprintf(stderr, "usage: measure N CMD [ARG...]\n");
        return 2;
    }
    double *times = calloc((size_t)n, sizeof(double));
    long peak_kib = 0;
    for (long i = 0; i < n; i++) {
        double start = now_ms();
        pid_t pid = fork();
        if (pid == 0) {
            int null = open("/dev/null", O_WRONLY);
            dup2(null, 1);
            dup2(null, 2);
            execvp(argv[2], argv + 2);
            _exit(127);
        }
        int status = 0;
        struct rusage ru;
        while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
            ;
        times[i] = now_ms() - start;
        if (ru.ru_maxrss > peak_kib)
            peak_kib = ru.ru_maxrss;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "measure: run %ld of %s failed (status %d)\n", i + 1, argv[2], status);
            return 1;
        }
    }
    qsort(times, (size_t)n, sizeof(double), by_value);
    printf("median_ms=%.2f p90_ms=%.2f peak_rss_kib=%ld runs=%ld\n", times[n / 2],
           times[(size_t)((double)n * 0.9)], peak_kib, n);
    free(times);
    return 0;
}
