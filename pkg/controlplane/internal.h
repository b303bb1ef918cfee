/* Private to pkg/controlplane. */
#ifndef KJOIN_CONTROLPLANE_INTERNAL_H
#define KJOIN_CONTROLPLANE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <kjoin/private/err.h>
#include <kjoin/private/util.h>

/* A file under the certificates directory: "ca.crt", or "etcd/ca.crt" in
 * its etcd/ directory. data NULL: nothing to write. */
typedef struct cp_file {
    const char *name;
    unsigned mode;
    const void *data;
    size_t len;
} cp_file;

/* Writes every file that has data under cert_dir (and its etcd/, both made
 * 0700 when missing and checked as ssh checks a directory it trusts), each
 * atomically with its mode, all or nothing: the files and directories this
 * call created are taken back when a later write fails. An existing file
 * with other content is refused unless force. written[i] (may be NULL):
 * each file's outcome. With record_dir, the files about to be created or
 * replaced and the directories about to be made go into the control-plane
 * record there first. Each file written (created or replaced) is added to
 * cx's written, and what a replaced file held to cx's replaced (cx may be
 * NULL, as may each). Errors: KJOIN_E_USAGE, KJOIN_E_OUTPUT. */
/* Keeps what path held (*text, len bytes: taken, *text set to NULL) in r,
 * with its mode, before it is replaced. false when it cannot be kept (r
 * full, path gone): then it must not be replaced. */
bool kjoin_cp__replaced_keep(kjoin_cp_replaced *r, const char *path, char **text, size_t len);

kjoin_code kjoin_cp__write_files(const char *record_dir, const char *cert_dir, const cp_file *files, size_t n,
                                 bool force, kjoin_write_result *written, const kjoin_cp_context *cx,
                                 kjoin_err *err);

/* Writes the manifests yaml[i] as names[i] into dir (made 0700), 0600,
 * all or nothing; one there that is the same Pod is kept (kept[i]), another
 * refused unless force. Errors: KJOIN_E_OUTPUT, KJOIN_E_USAGE. */
kjoin_code kjoin_cp__write_manifests(const char *record_dir, const char *dir, const char *const *names,
                                     char *const *yaml, size_t n, bool force, bool *kept,
                                     const kjoin_cp_context *cx, kjoin_err *err);

/* kubeadm's EncryptBytes (the kubeadm-certs Secret's values): Go's
 * cipher.NewGCM nonce, then the ciphertext and its tag. */
#define NONCE_LEN 12
#define TAG_LEN 16

struct kjoin_kubeapi;
struct kjoin_kubeapi_options;

/* The context's admin client, or one made from its admin.conf (*owned:
 * free it). Errors: as kjoin_cp_admin_client. */
struct kjoin_cp_context;
kjoin_code kjoin_cp__admin(const struct kjoin_cp_context *cx, struct kjoin_kubeapi **api, struct kjoin_kubeapi **owned,
                           kjoin_err *err);

/* Its two halves: admin.conf's text, read through its checked directory
 * (wipe it), and a client from that text, at server instead of its own
 * when given (one of the cluster's API servers: this node's), its CA
 * verifying, with the options o. Errors: KJOIN_E_USAGE, and those of
 * kjoin_kubeapi_new. */
/* kjoin_cp_admin_client with a bound of its own (bound_ms > 0), not the
 * join's deadline: for what is asked when that deadline is over. */
kjoin_code kjoin_cp__admin_client_bounded(const struct kjoin_cp_context *cx, int64_t bound_ms,
                                          struct kjoin_kubeapi **out, kjoin_err *err);
kjoin_code kjoin_cp__admin_read(const char *path, char **text, size_t *len, kjoin_err *err);
kjoin_code kjoin_cp__admin_client(const char *text, size_t len, const char *server,
                                  const struct kjoin_kubeapi_options *o, struct kjoin_kubeapi **out, kjoin_err *err);

/* ---- pairs: certs.c's, shared with kubeconfig.c ---- */

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <kjoin/private/safedir.h>

#include "../certs/x509.h"

struct kjoin_cluster_configuration;

typedef struct cp_pair {
    X509 *crt;
    EVP_PKEY *key; /* NULL: not in the directory (an external CA signs) */
} cp_pair;

/* file.crt and file.key in d, as text (wiped and freed by the caller);
 * *missing when neither is there. Errors: KJOIN_E_USAGE (refused by
 * kjoin_safedir_read: a symlink, loose modes). */
kjoin_code kjoin_cp__read_pair(const kjoin_safedir *d, const char *file, char **crt, size_t *crt_len, char **key,
                               size_t *key_len, bool *missing, kjoin_err *err);

/* A CA: base.crt required and a CA, base.key its key when there (base as
 * "etcd/ca", for messages under cert_dir; d holds its file). Errors:
 * KJOIN_E_USAGE. */
kjoin_code kjoin_cp__load_ca(const kjoin_safedir *d, const char *cert_dir, const char *base, cp_pair *out,
                             kjoin_err *err);
void kjoin_cp__pair_release(cp_pair *p);

/* Whether x is among the certificates of pem. */
bool kjoin_cp__trusted(X509 *x, const char *pem, size_t len);
/* The cluster CA found in cert_dir must be one of pem's, the CA discovery
 * verified (pem NULL: nothing to check). Errors: KJOIN_E_TRUST. */
kjoin_code kjoin_cp__check_trusted(const cp_pair *ca, const char *cert_dir, const char *pem, size_t len,
                                   kjoin_err *err);

/* Why a pair found on disk is not one to keep ("" when it is): both
 * there, signed by ca (named ca_name), the key the certificate's, valid at
 * now. */
void kjoin_cp__judge(X509 *x, EVP_PKEY *k, const cp_pair *ca, const char *ca_name, int64_t now, char *why,
                     size_t cap);

/* n new keys of the cluster's encryptionAlgorithm into keys[], made at
 * once, one thread each. Errors: KJOIN_E_OTHER. */
#define KJOIN_CP_KEYS_MAX 8
kjoin_code kjoin_cp__new_keys(const struct kjoin_cluster_configuration *c, EVP_PKEY **keys, size_t n, kjoin_err *err);

/* Issues req (its subject, kind and names set) for key (borrowed) as
 * kubeadm of release minor issues: Go's subject order, backdated five
 * minutes, the cluster's lifetime. *crt and *key_pem are PEM (wipe the
 * key). Errors: KJOIN_E_USAGE (no CA key), KJOIN_E_OTHER. */
/* Signs req's certificate for key with ca, as the cluster's kubeadm would
 * (its validity, or an hour at most in a dry run). */
kjoin_code kjoin_cp__sign(cert_request *req, const kjoin_cp_context *cx, const cp_pair *ca, EVP_PKEY *key, char **crt,
                          char **key_pem, size_t *key_len, kjoin_err *err);

#endif
