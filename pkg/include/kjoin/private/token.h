/* The token module's own plumbing, for the library's modules, its tests and
 * fuzzers: not installed, not exported. The public part is kjoin/token.h. */
#ifndef KJOIN_PRIVATE_TOKEN_H
#define KJOIN_PRIVATE_TOKEN_H

#include <kjoin/token.h>

/* Copies the first line of a file ("-" for standard input) after any
 * leading blank lines, without surrounding white space, into buf (cap
 * bytes). It is a secret: wipe buf
 * after use. Errors: KJOIN_E_USAGE (unreadable, or the line too long). */
kjoin_code kjoin_token_read_line(const char *path, char *buf, size_t cap, kjoin_err *err);

/* The whole of a token file (or "-"), trimmed of surrounding white space as
 * Go's strings.TrimSpace trims it (how K3s reads its token files), into out
 * (cap bytes with the NUL). Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_token_read_text(const char *path, char *out, size_t cap, kjoin_err *err);

/* Adds one group (len bytes, not NUL-terminated) to *b. Groups outside
 * kjoin's are ignored; a node group that does not decode to a valid name
 * counts as a node group with an empty name (never a binding). */
void kjoin_token_binding_add(kjoin_token_binding *b, const char *group, size_t len);
/* The binding of a comma-separated list of groups. */
void kjoin_token_binding_of(const char *groups, kjoin_token_binding *out);
/* Whether the binding names exactly one node: the token is bound. */
bool kjoin_token_binding_valid(const kjoin_token_binding *b);

/* True when s is a K3s token by its form: it starts with "K10". Any other
 * text is a bootstrap token (and fails as one when malformed) unless the
 * caller was told the cluster is K3s. */
bool kjoin_token_is_k3s(const char *s);

/* Parses a K3s token as K3s does, but stricter: the hash must be empty or 64
 * hex digits (any case). The password never appears in a message. *out is
 * written only on success. Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_k3s_token_parse(const char *s, kjoin_k3s_token *out, kjoin_err *err);
void kjoin_k3s_token_clear(kjoin_k3s_token *t);

#endif
