/* Bootstrap tokens: "<id>.<secret>", id [a-z0-9]{6}, secret [a-z0-9]{16}. */
#ifndef KJOIN_TOKEN_H
#define KJOIN_TOKEN_H

#include <stdbool.h>
#include <stddef.h>

#include <kjoin/err.h>

#define KJOIN_TOKEN_ID_LEN 6
#define KJOIN_TOKEN_SECRET_LEN 16
#define KJOIN_TOKEN_STR_MAX (KJOIN_TOKEN_ID_LEN + 1 + KJOIN_TOKEN_SECRET_LEN + 1)

/* Plain value type. The secret is sensitive: wipe with kjoin_token_clear()
 * and show it only through kjoin_token_masked(). */
typedef struct kjoin_token {
    char id[KJOIN_TOKEN_ID_LEN + 1];
    char secret[KJOIN_TOKEN_SECRET_LEN + 1];
} kjoin_token;

/* True when s is a token id ([a-z0-9]{6}). */
bool kjoin_token_id_valid(const char *s);

/* Parses "<id>.<secret>". *out is written only on success. The message of a
 * failure never repeats the input. Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_token_parse(const char *s, kjoin_token *out, kjoin_err *err);

/* Reads a token from the first line of a file ("-" for standard input);
 * surrounding white space is ignored. Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_token_read_file(const char *path, kjoin_token *out, kjoin_err *err);

/* Draws a new token from OpenSSL's CSPRNG, uniform over [a-z0-9]
 * (rejection sampling, so no modulo bias). Errors: KJOIN_E_OTHER. */
kjoin_code kjoin_token_generate(kjoin_token *out, kjoin_err *err);

/* Writes "<id>.<secret>" into buf (KJOIN_TOKEN_STR_MAX bytes). Secret! */
void kjoin_token_format(const kjoin_token *t, char buf[KJOIN_TOKEN_STR_MAX]);

/* Writes "<id>.****************" into buf, safe for logs. */
void kjoin_token_masked(const kjoin_token *t, char buf[KJOIN_TOKEN_STR_MAX]);

/* Wipes the token. */
void kjoin_token_clear(kjoin_token *t);

/* ---- bootstrap-token Secrets (kube-system/bootstrap-token-<id>) -------------- */

#define KJOIN_TOKEN_GROUPS_MAX 1024
#define KJOIN_TOKEN_LIST_MAX (1024 * 1024) /* bytes of a SecretList kjoin reads */
#define KJOIN_TOKEN_DESCRIPTION_MAX 512

/* A bootstrap token as its Secret describes it. */
typedef struct kjoin_token_spec {
    kjoin_token token;                        /* secret */
    long long expires;                        /* Unix seconds; 0 when it never expires */
    bool usage_signing, usage_authentication;
    char groups[KJOIN_TOKEN_GROUPS_MAX];      /* comma-separated, "" for none */
    char description[KJOIN_TOKEN_DESCRIPTION_MAX];
    /* A node-bound token (kjoin_token_binding): the node, "" for none. On
     * encode the binding's groups and labels are added to groups'; on decode
     * they are read back from the groups (which keep them). */
    char bound_node[254];
    bool single_use;
} kjoin_token_spec;

/* Checks a comma-separated list of extra groups: each must match
 * system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9] (kubeadm's rule), no
 * duplicates. Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_token_groups_check(const char *groups, kjoin_err *err);

/* Parses a comma-separated list of usages ("signing", "authentication").
 * Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_token_usages_parse(const char *usages, kjoin_token_spec *spec, kjoin_err *err);

/* The Secret (JSON) kubeadm creates for spec: type bootstrap.kubernetes.io/token
 * with data token-id, token-secret, expiration (RFC 3339 UTC),
 * usage-bootstrap-*, auth-extra-groups, description. *out is newly-allocated
 * and holds the secret: wipe before freeing. Errors: KJOIN_E_USAGE,
 * KJOIN_E_OTHER. */
kjoin_code kjoin_token_secret_encode(const kjoin_token_spec *spec, char **out, kjoin_err *err);

/* One entry of a SecretList that is not a valid bootstrap token, with why. */
#define KJOIN_TOKEN_WARNING_MAX 200

typedef struct kjoin_token_list {
    kjoin_token_spec *items;   /* secrets: release with kjoin_token_list_release() */
    size_t n;
    char (*warnings)[KJOIN_TOKEN_WARNING_MAX]; /* skipped Secrets, named, with why */
    size_t n_warnings;
} kjoin_token_list;

/* Decodes a SecretList (JSON, as GET .../secrets returns it): every Secret of
 * type bootstrap.kubernetes.io/token whose name is bootstrap-token-<id> and
 * whose token-id is that id becomes an item; others of that type are skipped
 * with a warning, as the bootstrap token design requires. *out is written
 * only on success. Errors: KJOIN_E_TRUST (not a SecretList), KJOIN_E_OTHER. */
kjoin_code kjoin_token_list_decode(const char *json, size_t len, kjoin_token_list *out, kjoin_err *err);
void kjoin_token_list_release(kjoin_token_list *l);

/* ---- node-bound tokens ------------------------------------------------------
 * A token bound to one node carries, as extra groups the API server itself
 * authenticates: KJOIN_TOKEN_BOUND_GROUP (what a joining node may do is bound
 * to it), KJOIN_TOKEN_NODE_GROUP_PREFIX + the node name with each '.' written
 * ':' (a node name has no ':', so no two names share a group), and, for a
 * token that makes its node once, KJOIN_TOKEN_SINGLE_USE_GROUP. Never
 * kubeadm's default-node-token group, whose auto-approval signs any name. */
#define KJOIN_TOKEN_BOUND_GROUP "system:bootstrappers:kjoin:bound"
#define KJOIN_TOKEN_SINGLE_USE_GROUP "system:bootstrappers:kjoin:single-use"
#define KJOIN_TOKEN_NODE_GROUP_PREFIX "system:bootstrappers:kjoin:node:"
#define KJOIN_TOKEN_RESERVED_PREFIX "system:bootstrappers:kjoin:"
/* The longest node name a group can carry: a group is at most 277
 * characters (system:bootstrappers: and 256). */
#define KJOIN_TOKEN_BOUND_NAME_MAX 245
/* kubeadm's default group, auto-approved for any system:node:* name. */
#define KJOIN_TOKEN_KUBEADM_GROUP "system:bootstrappers:kubeadm:default-node-token"
/* The label that selects bound tokens' Secrets, and the one that names the
 * node when it fits a label value (63 characters). */
#define KJOIN_TOKEN_BOUND_LABEL "kjoin.io/bound"
#define KJOIN_TOKEN_NODE_LABEL "kjoin.io/node-name"

/* What a token's groups say of its binding. */
typedef struct kjoin_token_binding {
    char node[254];      /* the bound node, "" when not bound */
    bool bound;          /* KJOIN_TOKEN_BOUND_GROUP is among the groups */
    bool single_use;     /* KJOIN_TOKEN_SINGLE_USE_GROUP is */
    unsigned node_groups; /* how many node groups: a binding is one */
} kjoin_token_binding;

/* The group binding a token to node (a valid node name, already resolved)
 * into out (cap bytes). Errors: KJOIN_E_USAGE (a name no group can carry:
 * longer than KJOIN_TOKEN_BOUND_NAME_MAX, or not a DNS-1123 subdomain). */
kjoin_code kjoin_token_node_group(const char *node, char *out, size_t cap, kjoin_err *err);

/* ---- K3s tokens ----------------------------------------------------------- */

#define KJOIN_K3S_HASH_LEN 32
#define KJOIN_K3S_FIELD_MAX 1024 /* a user name or password, NUL included (K3s has no limit) */

/* "K10<hash>::<user>:<password>", "K10<hash>::<bootstrap token>", with an
 * empty hash too, or a bare password. Wipe with kjoin_k3s_token_clear(). */
typedef struct kjoin_k3s_token {
    bool has_hash;
    unsigned char hash[KJOIN_K3S_HASH_LEN]; /* the CA hash the token pins */
    bool is_bootstrap;                      /* credentials are a bootstrap token */
    kjoin_token bootstrap;
    char username[KJOIN_K3S_FIELD_MAX];     /* "" for a bare password */
    char password[KJOIN_K3S_FIELD_MAX];     /* secret */
} kjoin_k3s_token;

#endif
