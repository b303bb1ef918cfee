/* The util module's own plumbing, for the library's modules, its tests and
 * fuzzers: not installed, not exported. The public part is kjoin/util.h. */
#ifndef KJOIN_PRIVATE_UTIL_H
#define KJOIN_PRIVATE_UTIL_H

#include <kjoin/util.h>

/* One scratch directory (a dry run's copy of a node's files, keys among
 * them) that SIGINT, SIGTERM or SIGHUP must not leave behind: set names it
 * (false when the path is too long), clear forgets it. A program that wants
 * it calls kjoin_scratch_remove_on_signals once: those signals then remove
 * the directory named, if any, and end the process as they would have (a
 * signal ignored stays ignored). */
bool kjoin_scratch_set(const char *path);
/* One scratch directory (a dry run's copy of a node's files, keys among
 * them) that SIGINT, SIGTERM or SIGHUP must not leave behind: set names it
 * (false when the path is too long), clear forgets it. A program that wants
 * it calls kjoin_scratch_remove_on_signals once: those signals then remove
 * the directory named, if any, and end the process as they would have (a
 * signal ignored stays ignored). */
void kjoin_scratch_clear(void);

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

/* Formats milliseconds the way Go prints durations ("5m0s", "1.5s", "300ms")
 * into buf. Returns buf. */
char *kjoin_duration_format(int64_t ms, char *buf, size_t buflen);

/* Logs each line of text (may be NULL) with prefix, at level. */
void kjoin_log_lines(kjoin_log_fn fn, void *ctx, int level, const char *prefix, const char *text);

/* kjoin_logf with a va_list, for wrappers. */
void kjoin_vlogf(kjoin_log_fn fn, void *ctx, int level, const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));

/* Full-jitter exponential backoff: a random time in [0, min(cap, base *
 * 2^round)) milliseconds, drawn from the CSPRNG. */
int64_t kjoin_backoff_ms(unsigned round, int64_t base, int64_t cap);

/* Sleeps ms milliseconds, resuming after signals. */
void kjoin_sleep_ms(int64_t ms);

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

/* Whether s is UTF-8 without control characters (C0, DEL, C1): text
 * another program can take as it is. */
bool kjoin_utf8_printable(const char *s);

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

/* Whether s is a DNS-1123 subdomain as the API server checks one (at most
 * 253 characters; dot-separated labels of a-z, 0-9 and '-' that start and
 * end with a letter or digit). The _check form says which rule s breaks.
 * Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_dns_subdomain_check(const char *s, kjoin_err *err);
bool kjoin_dns_subdomain_valid(const char *s);

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

/* Whether url is a server's as a kubeconfig names one: https://HOST[:PORT],
 * (a "/" after it at most), no user name or password, path, query or
 * fragment (what names it in the message). Errors: KJOIN_E_USAGE. */
#define KJOIN_SERVER_URL_MAX 300
kjoin_code kjoin_url_server_check(const char *url, const char *what, kjoin_err *err);

/* A public options or specification structure's version (its first field)
 * against the one this library was built with: what (NULL, or of another
 * version: a program built against other headers) is refused.
 * Errors: KJOIN_E_USAGE naming what and its initialiser. */
kjoin_code kjoin_version_check(const unsigned *version, unsigned want, const char *what, const char *init,
                               kjoin_err *err);

/* A member of the JSON object o (the API server's, untrusted): of any
 * type, an object, or a string without an embedded NUL; NULL when o is no
 * object, the member is missing or of another type. */
struct json_object;
struct json_object *kjoin_json_at(struct json_object *o, const char *key);
struct json_object *kjoin_json_obj(struct json_object *o, const char *key);
const char *kjoin_json_str(struct json_object *o, const char *key);
/* The one JSON value that is all of text's len bytes (no trailing bytes), or NULL. */
struct json_object *kjoin_json_whole(const char *text, size_t len);

#endif
