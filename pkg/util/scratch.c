/* A scratch directory that a signal must not leave behind: a dry run's copy
 * of the node's files holds the cluster's CA keys. The signal handler
 * removes it with async-signal-safe calls only (openat, getdents64,
 * unlinkat), then lets the signal end the process as it would have. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <kjoin/private/util.h>

static char scratch[4096];
static volatile sig_atomic_t scratch_set;
static const int scratch_signals[] = {SIGINT, SIGTERM, SIGHUP};

bool kjoin_scratch_set(const char *path)
{
    size_t n = strlen(path);
    if (n >= sizeof(scratch))
        return false;
    scratch_set = 0; /* never half a path for a handler to read */
    memcpy(scratch, path, n + 1);
    scratch_set = 1;
    return true;
}

void kjoin_scratch_clear(void) { scratch_set = 0; }

/* name under dirfd, and all below it; never follows a symlink. Passes again
 * over a directory whose entries went while it was read. */
static void remove_at(int dirfd, const char *name, int depth)
{
    if (unlinkat(dirfd, name, 0) == 0 || (errno != EISDIR && errno != EPERM) || depth > 32)
        return;
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    for (int pass = 0; fd >= 0 && pass < 8; pass++) {
        char buf[2048];
        ssize_t n;
        int removed = 0;
        lseek(fd, 0, SEEK_SET);
        while ((n = getdents64(fd, buf, sizeof(buf))) > 0)
            for (ssize_t off = 0; off < n;) {
                struct dirent64 *d = (struct dirent64 *)(void *)(buf + off);
                off += d->d_reclen;
                if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0)
                    remove_at(fd, d->d_name, depth + 1), removed++;
            }
        if (!removed)
            break;
    }
    if (fd >= 0)
        close(fd);
    unlinkat(dirfd, name, AT_REMOVEDIR);
}

static void on_signal(int sig)
{
    int saved = errno;
    if (scratch_set)
        remove_at(AT_FDCWD, scratch, 0);
    scratch_set = 0;
    errno = saved;
    signal(sig, SIG_DFL);
    raise(sig); /* delivered on return: the process ends by this signal, as it would have */
}

void kjoin_scratch_remove_on_signals(void)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(scratch_signals) / sizeof(scratch_signals[0]); i++)
        sigaddset(&sa.sa_mask, scratch_signals[i]); /* one at a time */
    for (size_t i = 0; i < sizeof(scratch_signals) / sizeof(scratch_signals[0]); i++) {
        struct sigaction old;
        /* A signal the caller ignores (nohup) stays ignored. */
        if (sigaction(scratch_signals[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(scratch_signals[i], &sa, NULL);
    }
}
