/* The kubelet's own words, for a wait that ends early or at its deadline:
 * its journal under systemd, otherwise the file its output goes to. */
#include "internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kjoin/private/util.h>
#include <kjoin/util.h>

/* A klog line of one of the levels ("E1126 ..."). */
static bool klog_line(const char *line, size_t len, const char *levels)
{
    if (len < 6 || !line[0] || !strchr(levels, line[0]))
        return false;
    for (size_t i = 1; i < 5; i++) /* within the line: it need not end with a NUL */
        if (line[i] < '0' || line[i] > '9')
            return false;
    return true;
}

/* A fatal klog line (F1126 ..., then Go's goroutine dump) or component-base's
 * "command failed" (a kubelet from 1.2x on) is the kubelet's last word
 * before it exits. */
static bool exit_line(const char *line, size_t len)
{
    static const char failed[] = "\"command failed\"";
    return klog_line(line, len, "F") || memmem(line, len, failed, sizeof(failed) - 1) != NULL;
}

/* klog's E or F lines, cobra's "Error: ..." on exit, or a structured err=. */
static bool error_line(const char *line, size_t len)
{
    return klog_line(line, len, "EF") || (len >= 7 && !memcmp(line, "Error: ", 7)) ||
           memmem(line, len, " err=", 5) != NULL;
}

void kjoin_node__kubelet_words(const char *text, size_t len, kjoin_node__words *w)
{
    const char *last = NULL, *last_error = NULL;
    size_t last_len = 0, error_len = 0;
    w->exits = 0;
    w->ends_with_exit = false;
    w->said[0] = '\0';
    for (const char *line = text, *end = text + len; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t n = (size_t)((nl ? nl : end) - line);
        bool blank = true;
        for (size_t i = 0; i < n && blank; i++)
            blank = line[i] == ' ' || line[i] == '\t' || line[i] == '\r';
        if (!blank) {
            last = line, last_len = n;
            bool exited = exit_line(line, n);
            w->exits += exited;
            /* A dump after the exit line keeps it the last word; a log line does not. */
            if (exited || klog_line(line, n, "IWE"))
                w->ends_with_exit = exited;
            if (error_line(line, n))
                last_error = line, error_len = n;
        }
        line = nl ? nl + 1 : end;
    }
    if (!last)
        return;
    char raw[sizeof(w->said)];
    const char *pick = last_error ? last_error : last;
    size_t n = last_error ? error_len : last_len;
    snprintf(raw, sizeof(raw), "; the kubelet's last %s: %.*s", last_error ? "error" : "log line",
             (int)(n < 300 ? n : 300), pick);
    kjoin_printable(w->said, sizeof(w->said), raw, false);
}

bool kjoin_node__kubelet_error_about(const char *text, size_t len, const char *needle, char *out, size_t cap)
{
    /* The last about its containers (a pull, a start) wins over the last of
     * any kind (a mirror Pod the API server refused says less). */
    static const char starting[] = "\"StartContainer\"";
    const char *pick = NULL, *any = NULL;
    size_t n = 0, any_n = 0, k = strlen(needle);
    *out = '\0';
    for (const char *line = text, *end = text + len; k && line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t m = (size_t)((nl ? nl : end) - line);
        if (error_line(line, m) && memmem(line, m, needle, k)) {
            any = line, any_n = m;
            if (memmem(line, m, starting, sizeof(starting) - 1) || memmem(line, m, "image", 5))
                pick = line, n = m;
        }
        line = nl ? nl + 1 : end;
    }
    if (!pick)
        pick = any, n = any_n;
    if (!pick)
        return false;
    if (klog_line(pick, n, "EF")) { /* klog's header (level, time, pid, file) says nothing here */
        const char *body = memmem(pick, n, "] ", 2);
        if (body) {
            n -= (size_t)(body + 2 - pick);
            pick = body + 2;
        }
    }
    char raw[600];
    snprintf(raw, sizeof(raw), "%.*s", (int)(n < 500 ? n : 500), pick);
    kjoin_mask_keys(kjoin_printable(out, cap, raw, false));
    return true;
}

bool kjoin_node_journal_error_about(const char *needle, int64_t since, char *out, size_t cap)
{
    char prog[4096], *text = NULL, from[32];
    bool found = false;
    *out = '\0';
    if (kjoin_node__find_program("journalctl", prog, sizeof(prog), NULL))
        return false;
    snprintf(from, sizeof(from), "@%lld", (long long)since);
    const char *argv[] = {prog, "-u", "kubelet", "--since", from, "-n", "1000", "-o", "cat", "--no-pager", NULL};
    if (!kjoin_node__run(argv, 10000, &text, NULL))
        found = kjoin_node__kubelet_error_about(text, strlen(text), needle, out, cap);
    free(text);
    return found;
}

void kjoin_node__journal_words(kjoin_node__words *w)
{
    char prog[4096], *text = NULL;
    *w = (kjoin_node__words){0};
    if (kjoin_node__find_program("journalctl", prog, sizeof(prog), NULL))
        return;
    /* Enough lines for a whole usage dump of v1.20's kubelet (about 330 lines
     * after its error), and a restart after it, so that its error is among them. */
    const char *argv[] = {prog, "-u", "kubelet", "-n", "1000", "-o", "cat", "--no-pager", NULL};
    if (!kjoin_node__run(argv, 10000, &text, NULL))
        kjoin_node__kubelet_words(text, strlen(text), w);
    free(text);
}

kjoin_code kjoin_node__log_check(const char *path, kjoin_err *err)
{
    struct stat st;
    if (!path)
        return KJOIN_OK;
    if (path[0] != '/')
        return kjoin_err_set(err, KJOIN_E_USAGE, "the kubelet's log file must be an absolute path, not \"%s\"", path);
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return kjoin_err_set(err, KJOIN_E_USAGE, "the kubelet's log file %s is not a regular file%s", path,
                             S_ISLNK(st.st_mode) ? " (a symbolic link is not followed)" : "");
    return KJOIN_OK;
}

/* At most the last 64 KiB of path past offset from (what this run's kubelet
 * wrote), never through a symlink; *size is the file's size. */
#define LOG_TAIL (64 * 1024)
static bool read_log(const char *path, off_t from, char **text, size_t *len, off_t *size)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    *text = NULL, *len = 0, *size = 0;
    if (fd < 0)
        return false;
    bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (ok) {
        *size = st.st_size;
        off_t start = from > st.st_size ? 0 : from; /* truncated: all of it is new */
        if (st.st_size - start > LOG_TAIL)
            start = st.st_size - LOG_TAIL;
        size_t want = (size_t)(st.st_size - start);
        ok = (*text = malloc(want + 1)) != NULL;
        ssize_t got = ok ? pread(fd, *text, want, start) : -1;
        ok = got >= 0;
        if (ok)
            (*text)[got] = '\0', *len = (size_t)got;
    }
    close(fd);
    return ok;
}

void kjoin_node__log_start(kjoin_node__log *lg, const char *path, int64_t now_ms)
{
    struct stat st; /* its size only; lstat, as read_log never follows a symlink */
    *lg = (kjoin_node__log){.path = path, .changed_ms = now_ms};
    if (path && lstat(path, &st) == 0 && S_ISREG(st.st_mode))
        lg->from = lg->seen = st.st_size;
}

/* The quiet time after an exit line that says nobody restarted the kubelet
 * (supervisors restart within seconds). */
#define LOG_QUIET_MS 15000
#define LOG_CRASH_LOOP 3

bool kjoin_node__log_gone(kjoin_node__log *lg, int64_t now_ms, char *why, size_t cap, kjoin_node__words *w)
{
    char *text = NULL;
    size_t len;
    off_t size;
    *w = (kjoin_node__words){0};
    if (!lg->path || !read_log(lg->path, lg->from, &text, &len, &size))
        return false;
    if (size != lg->seen)
        lg->seen = size, lg->changed_ms = now_ms;
    kjoin_node__kubelet_words(text, len, w);
    free(text);
    if (w->exits >= LOG_CRASH_LOOP) {
        snprintf(why, cap, "the kubelet keeps exiting: its output shows %d exits", w->exits);
        return true;
    }
    if (w->ends_with_exit && now_ms - lg->changed_ms >= LOG_QUIET_MS) {
        snprintf(why, cap, "the kubelet exited, and nothing started it again");
        return true;
    }
    return false;
}

void kjoin_node__log_words(const kjoin_node__log *lg, kjoin_node__words *w)
{
    char *text = NULL;
    size_t len;
    off_t size;
    *w = (kjoin_node__words){0};
    if (lg->path && read_log(lg->path, 0, &text, &len, &size))
        kjoin_node__kubelet_words(text, len, w);
    free(text);
}
