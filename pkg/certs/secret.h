/* Private to pkg/certs: one Kubernetes Secret of the Secrets store. */
#ifndef KJOIN_CERTS_SECRET_H
#define KJOIN_CERTS_SECRET_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include <kjoin/private/err.h>

#define SECRET_NAME_MAX 254

typedef enum secret_key { SECRET_CA_CRT, SECRET_CA_KEY, SECRET_TLS_CRT, SECRET_TLS_KEY, SECRET_N_KEYS } secret_key;

/* A Secret as the API returned it. */
typedef struct certs_secret {
    json_object *obj; /* the whole object: others' labels and annotations are kept on a write */
    char name[SECRET_NAME_MAX], rv[64], type[64];
    bool ours;                    /* labelled app.kubernetes.io/managed-by=kjoin */
    char *data[SECRET_N_KEYS];    /* decoded; NULL when absent */
    size_t len[SECRET_N_KEYS];
    unsigned char sig[32];        /* kjoin__secret_sig of obj */
} certs_secret;

const char *kjoin_certs__secret_key_name(secret_key k);
/* Whether prefix may start a Secret name (a DNS label, at most 200). */
bool kjoin_certs__secret_prefix_valid(const char *prefix);
/* The Secret of an entry: <prefix>-ca-secret, -node-secret, -client-secret
 * (client.root), -node-<name>-secret, -client-<user>-secret. False when
 * that is not a valid Secret name (say, a user with '_' or capitals). */
bool kjoin_certs__secret_name(const char *prefix, const char *entry, char out[SECRET_NAME_MAX]);

/* Checks a namespace (a DNS label), a prefix that makes valid Secret names
 * and a CA Secret's name (may be NULL). Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_certs__secrets_names_check(const char *ns, const char *prefix, const char *ca_secret, kjoin_err *err);

/* Parses a Secret the API returned (untrusted): one JSON object of kind
 * Secret, a valid name, a resourceVersion, string data of valid base64.
 * *out is written only on success. Errors: KJOIN_E_TRUST. */
kjoin_code kjoin_certs__secret_parse(const char *json, size_t len, certs_secret *out, kjoin_err *err);
/* A string annotation, or NULL. */
const char *kjoin_certs__secret_annotation(const certs_secret *s, const char *key);
void kjoin_certs__secret_release(certs_secret *s);

/* A hash of what kjoin owns in a Secret: its type, its data, and kjoin's
 * labels and annotations. Equal before and after means a write would
 * change nothing kjoin owns. */
void kjoin_certs__secret_sig(json_object *secret, unsigned char out[32]);
/* "sha256:<hex>" of the data (ca.crt, ca.key, tls.crt, tls.key): the
 * content fingerprint recorded in kjoin.io/data-sha256. */
void kjoin_certs__data_fingerprint(const certs_secret *s, char out[80]);

/* A new Secret object named name, with kjoin's labels, keeping the labels
 * and annotations others put on old (may be NULL) and old's
 * resourceVersion (the compare-and-swap). Add the rest with the two below. */
json_object *kjoin_certs__secret_new(const certs_secret *old, const char *ns, const char *name, const char *prefix,
                                     const char *type);
void kjoin_certs__secret_annotate(json_object *secret, const char *key, const char *value);
bool kjoin_certs__secret_put_data(json_object *secret, secret_key k, const char *bytes, size_t len);
/* Wipes every string of the tree (they may hold keys), then frees it. */
void kjoin_certs__json_free(json_object *o);

#endif
