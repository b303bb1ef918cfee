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
bool kjoin_scratch_set(const char *path);
void kjoin_scratch_clear(void);
void kjoin_scratch_remove_on_signals(void);

/* Wipes len bytes at p (which may hold a secret), then frees p; NULL is
 * nothing to do. The _str form wipes a NUL-terminated string. */
void kjoin_free_wiped(void *p, size_t len);
void kjoin_free_wiped_str(char *s);

/* Base64 (RFC 4648). url selects the URL-safe alphabet without padding;
 * otherwise the standard alphabet with padding. Returns a newly-allocated
 * NUL-terminated string, or NULL when out of memory. */
char *kjoin_b64_encode(const void *data, size_t len, bool url);

/* Decodes base64. url: URL-safe alphabet, no padding, no whitespace.
 * Otherwise: standard alphabet, padding required, line breaks allowed.
 * On success *out is newly-allocated (NUL-terminated for convenience) and
 * *out_len its length. Errors: KJOIN_E_TRUST for malformed input. */
kjoin_code kjoin_b64_decode(const char *in, size_t len, bool url, unsigned char **out,
                            size_t *out_len, kjoin_err *err);

/* Parses a Go duration ("300ms", "30s", "1h30m", "1.5h"). Only positive
 * values are accepted. *out_ms is rounded up to whole milliseconds.
 * Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_duration_parse(const char *s, int64_t *out_ms, kjoin_err *err);

/* Formats milliseconds the way Go prints durations ("5m0s", "1.5s", "300ms")
 * into buf. Returns buf. */
char *kjoin_duration_format(int64_t ms, char *buf, size_t buflen);

/* Receives one log line (no trailing newline): level 0 a step, 1 detail,
 * 4 and above each request. Never carries a secret. */
typedef void (*kjoin_log_fn)(void *ctx, int level, const char *line);
/* Logs each line of text (may be NULL) with prefix, at level. */
void kjoin_log_lines(kjoin_log_fn fn, void *ctx, int level, const char *prefix, const char *text);
/* The level of warnings (say, an unpinned CA): shown even when a caller
 * asks for errors only (a verbosity below 0 but not below this). */
#define KJOIN_LOG_WARNING (-1)

/* Formats one line (at most 1023 bytes) and hands it to fn; fn may be NULL. */
void kjoin_logf(kjoin_log_fn fn, void *ctx, int level, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* kjoin_logf with a va_list, for wrappers. */
void kjoin_vlogf(kjoin_log_fn fn, void *ctx, int level, const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));

/* Full-jitter exponential backoff: a random time in [0, min(cap, base *
 * 2^round)) milliseconds, drawn from the CSPRNG. */
int64_t kjoin_backoff_ms(unsigned round, int64_t base, int64_t cap);

/* Sleeps ms milliseconds, resuming after signals. */
void kjoin_sleep_ms(int64_t ms);

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

/* Writes data to path atomically: parent directories are created (0700),
 * a temporary file "<name>.kjoin-XXXXXX" (random, O_EXCL) in the same
 * directory is written with mode, fsynced and renamed over path, and the
 * directory is fsynced. Such temporary files that a killed run left (ours,
 * older than this process) are removed first. An existing file with
 * identical bytes is left alone (its mode set to mode); a different one is
 * refused unless force. The directory and every one above it must be this
 * user's or root's and not writable by others (kjoin_safedir), and nothing
 * is followed through a symlink. Errors: KJOIN_E_OUTPUT, KJOIN_E_USAGE (a
 * directory refused). */
kjoin_code kjoin_file_write_mode(const char *path, const void *data, size_t len, mode_t mode, bool force,
                                 kjoin_write_result *result, kjoin_err *err);
/* kjoin_file_write_mode with mode 0600. */
kjoin_code kjoin_file_write_atomic(const char *path, const void *data, size_t len, bool force,
                                   kjoin_write_result *result, kjoin_err *err);

/* A URL as it may be shown in logs, errors and JSON: userinfo ("user:pass@")
 * left out, and a query or fragment (pre-signed URLs carry signatures there)
 * replaced by "?<redacted>". Strings without "://" are copied as they are.
 * Writes at most cap bytes into out and returns out. */
char *kjoin_url_redact(const char *url, char *out, size_t cap);

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

/* Whether s is UTF-8 without control characters (C0, DEL, C1): text
 * another program can take as it is. */
bool kjoin_utf8_printable(const char *s);

/* SHA-256 of data into out. Errors: KJOIN_E_OTHER. */
kjoin_code kjoin_sha256(const void *data, size_t len, unsigned char out[32], kjoin_err *err);

/* Writes 2*len lower-case hex digits and a NUL into out. Returns out. */
char *kjoin_hex(const unsigned char *bytes, size_t len, char *out);

/* Decodes 2*len hex digits (either case) into out. Returns false, with out
 * undefined, when a character is not a hex digit. */
bool kjoin_hex_decode(const char *hex, size_t len, unsigned char *out);

/* Fills buf with len cryptographically random bytes (OpenSSL's CSPRNG).
 * Errors: KJOIN_E_OTHER. */
kjoin_code kjoin_random_bytes(void *buf, size_t len, kjoin_err *err);

/* Appends s to out (a NUL-terminated string in cap bytes) as one word of a
 * POSIX shell line: as it is when it holds only characters no shell treats
 * specially (letters, digits, "/._-:=@%+,"), else single-quoted, each "'"
 * written as '\''. false, with out unchanged, when it does not fit. */
bool kjoin_shell_word(char *out, size_t cap, const char *s);

/* The longest DNS-1123 subdomain, which a Node's name is. */
#define KJOIN_DNS_SUBDOMAIN_MAX 253

/* Whether s is a DNS-1123 subdomain as the API server checks one (at most
 * 253 characters; dot-separated labels of a-z, 0-9 and '-' that start and
 * end with a letter or digit). The _check form says which rule s breaks.
 * Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_dns_subdomain_check(const char *s, kjoin_err *err);
bool kjoin_dns_subdomain_valid(const char *s);

/* A node's name, resolved once for a whole join. */
typedef struct kjoin_node_name {
    char name[KJOIN_DNS_SUBDOMAIN_MAX + 1];
    bool is_host_name;   /* the same as the host's name (the kubelet needs no --hostname-override) */
} kjoin_node_name;

/* Whether p is an absolute path without empty, "." or ".." components and
 * not "/" itself: one a record read back may name. */
bool kjoin_clean_path(const char *p);
/* p as that clean path, as the user may spell it (a trailing "/", "//",
 * "/./" gone) into out; false for a relative path, one with "..", "/"
 * itself, or one longer than cap. */
bool kjoin_path_clean(const char *p, char *out, size_t cap);

/* Whether s is an IPv4 or IPv6 address as inet_pton reads one. */
bool kjoin_is_ip(const char *s);
/* Whether s is a loopback address (127.0.0.0/8, ::1, ::ffff:127.x). */
bool kjoin_is_loopback(const char *s);

/* Whether https to host goes through the proxy the environment names
 * (https_proxy, HTTPS_PROXY, all_proxy, ALL_PROXY), as libcurl decides:
 * not for this machine's own addresses, nor for what NO_PROXY (or
 * no_proxy) lists: "*", the host itself, a domain it is in ("example.com"
 * or ".example.com"), an IP address. The proxy into proxy (its URL, as
 * set). */
bool kjoin_proxy_for(const char *host, char *proxy, size_t cap);

/* The one of names[0..n) closest to word[0..len) when it is close enough
 * to be a slip of the keyboard (an edit distance, swaps counting once, of
 * at most 1 for short words, 2 from 5 letters on); NULL otherwise. */
const char *kjoin_did_you_mean(const char *word, size_t len, const char *const *names, size_t n);
/* Whether ip is an address of this machine: loopback, or on one of its
 * interfaces. */
bool kjoin_is_local_address(const char *ip);
/* url's host, as libcurl parses it (the host a request reaches, which is
 * the part after any "user:password@"; an IPv6 address without its
 * brackets), into out, and into *userinfo (may be NULL) whether url carries
 * a user name or password. false, with out empty, when url does not parse or
 * its host does not fit in cap bytes. */
bool kjoin_url_host(const char *url, char *out, size_t cap, bool *userinfo);
/* Whether url's host (kjoin_url_host) is this machine (localhost, or a
 * local address): such an endpoint is never reached through a proxy. */
bool kjoin_url_is_local(const char *url);

/* kubeadm's rule: the given name, else the host name (host, or this
 * machine's when NULL), white space trimmed and lower-cased; then it must be
 * a DNS-1123 subdomain. *out is written only on success. Errors:
 * KJOIN_E_USAGE (the rule broken, naming `node_name` or the host name),
 * KJOIN_E_OTHER (no host name to read). */
kjoin_code kjoin_node_name_resolve(const char *given, const char *host, kjoin_node_name *out, kjoin_err *err);

#endif
