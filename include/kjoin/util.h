/* Small shared helpers: cleanup idioms, base64, durations, capped reads and
 * atomic writes. */
#ifndef KJOIN_UTIL_H
#define KJOIN_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

#include <kjoin/err.h>

/* Frees *p when the variable leaves scope; hand ownership off with KJOIN_TAKE. */
static inline void kjoin_freep(void *p) { free(*(void **)p); }
#define KJOIN_AUTO_FREE __attribute__((cleanup(kjoin_freep)))
#define KJOIN_TAKE(p)                          \
    __extension__({                            \
        __typeof__(p) kjoin_take_tmp_ = (p);   \
        (p) = NULL;                            \
        kjoin_take_tmp_;                       \
    })

/* One scratch directory (a dry run's copy of a node's files, keys among
 * them) that SIGINT, SIGTERM or SIGHUP must not leave behind: set names it
 * (false when the path is too long), clear forgets it. A program that wants
 * it calls kjoin_scratch_remove_on_signals once: those signals then remove
 * the directory named, if any, and end the process as they would have (a
 * signal ignored stays ignored). */
void kjoin_scratch_remove_on_signals(void);

/* Wipes len bytes at p (which may hold a secret), then frees p; NULL is
 * nothing to do. The _str form wipes a NUL-terminated string. */
void kjoin_free_wiped(void *p, size_t len);
void kjoin_free_wiped_str(char *s);

/* Parses a Go duration ("300ms", "30s", "1h30m", "1.5h"). Only positive
 * values are accepted. *out_ms is rounded up to whole milliseconds.
 * Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_duration_parse(const char *s, int64_t *out_ms, kjoin_err *err);

/* Receives one log line (no trailing newline): level 0 a step, 1 detail,
 * 4 and above each request. Never carries a secret. */
typedef void (*kjoin_log_fn)(void *ctx, int level, const char *line);
/* The level of warnings (say, an unpinned CA): shown even when a caller
 * asks for errors only (a verbosity below 0 but not below this). */
#define KJOIN_LOG_WARNING (-1)

/* Formats one line (at most 1023 bytes) and hands it to fn; fn may be NULL. */
void kjoin_logf(kjoin_log_fn fn, void *ctx, int level, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Monotonic clock in milliseconds. */
int64_t kjoin_now_ms(void);

/* Reads a whole file, or standard input when path is "-", refusing more than
 * cap bytes. *out is newly-allocated and NUL-terminated.
 * Errors: KJOIN_E_USAGE (missing, unreadable or too large). */
kjoin_code kjoin_file_read(const char *path, size_t cap, char **out, size_t *out_len,
                           kjoin_err *err);

typedef enum kjoin_write_result {
    KJOIN_WRITE_CREATED,
    KJOIN_WRITE_REPLACED,
    KJOIN_WRITE_UNCHANGED
} kjoin_write_result;

/* Copies in (NULL is "") into out (which may be in itself: nothing is
 * written ahead of what was read), at most cap bytes with the NUL, as it may
 * reach a terminal or a log: control characters (C0, DEL, C1), carriage
 * returns and bytes that are not UTF-8 become '?', except '\n' and '\t' with
 * keep_newlines; a bootstrap token ("abcdef.0123456789abcdef") keeps only
 * its id, and a K3s token ("K10<hash>::user:password") only its hash, however
 * it got into the text. The one way text from a server, a file or an
 * argument reaches a terminal. Returns out. */
char *kjoin_printable(char *out, size_t cap, const char *in, bool keep_newlines);

/* Masks in place, with '*', each word of exactly 64 hex digits standing
 * alone: a certificate key's form, however it got into the text (a key given
 * where a file name goes). A pin ("sha256:<hex>", "root-sha256:<hex>") is
 * left as it is. Every error message and log line passes through it.
 * Returns s (NULL is nothing to do). */
char *kjoin_mask_keys(char *s);

/* SHA-256 of data into out. Errors: KJOIN_E_OTHER. */
kjoin_code kjoin_sha256(const void *data, size_t len, unsigned char out[32], kjoin_err *err);

/* Writes 2*len lower-case hex digits and a NUL into out. Returns out. */
char *kjoin_hex(const unsigned char *bytes, size_t len, char *out);

/* The longest DNS-1123 subdomain, which a Node's name is. */
#define KJOIN_DNS_SUBDOMAIN_MAX 253

/* A node's name, resolved once for a whole join. */
typedef struct kjoin_node_name {
    char name[KJOIN_DNS_SUBDOMAIN_MAX + 1];
    bool is_host_name;   /* the same as the host's name (the kubelet needs no --hostname-override) */
} kjoin_node_name;

/* The one of names[0..n) closest to word[0..len) when it is close enough
 * to be a slip of the keyboard (an edit distance, swaps counting once, of
 * at most 1 for short words, 2 from 5 letters on); NULL otherwise. */
const char *kjoin_did_you_mean(const char *word, size_t len, const char *const *names, size_t n);

/* kubeadm's rule: the given name, else the host name (host, or this
 * machine's when NULL), white space trimmed and lower-cased; then it must be
 * a DNS-1123 subdomain. *out is written only on success. Errors:
 * KJOIN_E_USAGE (the rule broken, naming `node_name` or the host name),
 * KJOIN_E_OTHER (no host name to read). */
kjoin_code kjoin_node_name_resolve(const char *given, const char *host, kjoin_node_name *out, kjoin_err *err);

#endif
