/* kubeadm's upload-certs, from a control-plane node: the shared
 * certificates encrypted with a certificate key into the kubeadm-certs
 * Secret that download-certs reads on a joining node, owned by a bootstrap
 * token of two hours (the garbage collector removes the Secret with it),
 * and the Role that lets the bootstrap tokens' group read it. */
#include <kjoin/private/controlplane.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <kjoin/private/cluster.h>
#include <kjoin/private/kubeapi.h>
#include <kjoin/private/safedir.h>
#include <kjoin/private/token.h>

#include "internal.h"

#define FILE_MAX (1 << 20)
#define TTL_S (2 * 3600) /* kubeadm's DefaultCertTokenDuration */
#define SECRETS "/api/v1/namespaces/kube-system/secrets"
#define ROLES "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/roles"
#define ROLE_BINDINGS "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings"
#define RBAC_NAME "kubeadm:kubeadm-certs"

kjoin_code kjoin_certificate_key_generate(kjoin_certificate_key *key, kjoin_err *err)
{
    return kjoin_random_bytes(key->bytes, sizeof(key->bytes), err);
}

void kjoin_certificate_key_format(const kjoin_certificate_key *key, char out[2 * KJOIN_CERTIFICATE_KEY_LEN + 1])
{
    kjoin_hex(key->bytes, KJOIN_CERTIFICATE_KEY_LEN, out);
}

kjoin_code kjoin_kubeadm_certs_encrypt(const kjoin_certificate_key *key, const unsigned char *in, size_t len,
                                       unsigned char **out, size_t *out_len, kjoin_err *err)
{
    *out = NULL, *out_len = 0;
    if (len > FILE_MAX)
        return kjoin_err_set(err, KJOIN_E_USAGE, "a file of %zu bytes is too large for the Secret", len);
    unsigned char *sealed = malloc(NONCE_LEN + len + TAG_LEN);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int got = 0, last = 0;
    bool ok = sealed && ctx && !kjoin_random_bytes(sealed, NONCE_LEN, NULL) &&
              EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) == 1 &&
              EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, NONCE_LEN, NULL) == 1 &&
              EVP_EncryptInit_ex(ctx, NULL, NULL, key->bytes, sealed) == 1 &&
              EVP_EncryptUpdate(ctx, sealed + NONCE_LEN, &got, in, (int)len) == 1 &&
              EVP_EncryptFinal_ex(ctx, sealed + NONCE_LEN + got, &last) == 1 &&
              EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, TAG_LEN, sealed + NONCE_LEN + got + last) == 1;
    EVP_CIPHER_CTX_free(ctx);
    if (!ok) {
        free(sealed);
        return kjoin_err_set(err, KJOIN_E_OTHER, "could not encrypt with the certificate key");
    }
    *out = sealed, *out_len = NONCE_LEN + (size_t)(got + last) + TAG_LEN;
    return KJOIN_OK;
}

/* ---- what goes up ----------------------------------------------------------- */

/* The node's shared files, read through the checked certificates directory
 * (and its etcd/ when there is one): ca.crt and ca.key required, the others
 * empty when the node has none (kubeadm uploads an empty value then). */
static kjoin_code read_shared(const char *cert_dir, const kjoin_cluster_configuration *cluster, kjoin_shared_certs *c,
                               kjoin_err *err)
{
    kjoin_safedir dir, etcd;
    char etcd_path[4096];
    kjoin_kubeadm_certs_names(c);
    if (snprintf(etcd_path, sizeof(etcd_path), "%s/etcd", cert_dir) >= (int)sizeof(etcd_path))
        return kjoin_err_set(err, KJOIN_E_USAGE, "the certificates directory's path is too long");
    kjoin_code rc = kjoin_safedir_open(cert_dir, 0, &dir, err);
    if (rc)
        return rc;
    bool has_etcd = access(etcd_path, F_OK) == 0;
    if (has_etcd && (rc = kjoin_safedir_open(etcd_path, 0, &etcd, err))) {
        kjoin_safedir_close(&dir);
        return rc;
    }
    for (size_t i = 0; !rc && i < KJOIN_SHARED_N; i++) {
        bool in_etcd = !strncmp(c->files[i].name, "etcd/", 5), missing = false;
        char *text = NULL;
        size_t len = 0;
        if (in_etcd && (!has_etcd || cluster->external_etcd)) /* an external etcd has no CA here */
            continue;
        rc = kjoin_safedir_read(in_etcd ? &etcd : &dir, c->files[i].name + (in_etcd ? 5 : 0), FILE_MAX,
                                c->files[i].mode == 0600, &text, &len, &missing, err);
        if (rc && missing && i != KJOIN_SHARED_CA_CRT && i != KJOIN_SHARED_CA_KEY)
            rc = KJOIN_OK;
        else if (rc && missing)
            kjoin_err_set(err, rc, "%s has no %s: the shared certificates go up from a control-plane node's "
                          "certificates directory", cert_dir, c->files[i].name);
        c->files[i].data = (unsigned char *)text, c->files[i].len = len;
    }
    if (has_etcd)
        kjoin_safedir_close(&etcd);
    kjoin_safedir_close(&dir);
    /* An external etcd's files, where the cluster says (each named in the Secret; empty when missing). */
    const char *const paths[KJOIN_EXTERNAL_ETCD_N] = {cluster->external_ca_file, cluster->external_cert_file,
                                                      cluster->external_key_file};
    for (size_t i = 0; !rc && cluster->external_etcd && i < KJOIN_EXTERNAL_ETCD_N; i++) {
        char *text = NULL;
        size_t len = 0;
        bool missing = false;
        c->external[i].present = true;
        if (*paths[i] && (rc = kjoin_safedir_read_path(paths[i], i == KJOIN_EXTERNAL_ETCD_KEY, &text, &len, &missing,
                                                       err)) && missing)
            rc = KJOIN_OK;
        c->external[i].data = (unsigned char *)text, c->external[i].len = len;
    }
    if (rc)
        kjoin_shared_certs_release(c);
    return rc;
}

/* The Secret's data: each file encrypted, in base64, under kubeadm's name
 * for it ('/' as '-'); "" for a file the node does not have. */
/* One value of the Secret: data encrypted, in base64 ("" for none). */
static kjoin_code add_sealed(json_object *data, const char *name, const unsigned char *plain, size_t len,
                             const kjoin_certificate_key *key, kjoin_err *err)
{
    unsigned char *sealed = NULL;
    size_t n = 0;
    kjoin_code rc = plain ? kjoin_kubeadm_certs_encrypt(key, plain, len, &sealed, &n, err) : KJOIN_OK;
    if (rc)
        return rc;
    char *b64 = kjoin_b64_encode(sealed ? (void *)sealed : "", n, false);
    free(sealed);
    if (!b64 || json_object_object_add(data, name, json_object_new_string(b64)))
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    free(b64);
    return rc;
}

static kjoin_code encrypted_data(const kjoin_shared_certs *c, const kjoin_certificate_key *key, bool external,
                                 json_object **out, kjoin_err *err)
{
    json_object *data = json_object_new_object();
    kjoin_code rc = data ? KJOIN_OK : kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    for (size_t i = 0; !rc && i < KJOIN_SHARED_N; i++) {
        char name[32];
        if (external && !strncmp(c->files[i].name, "etcd/", 5))
            continue; /* kubeadm's certsToTransfer: an external etcd's files instead */
        snprintf(name, sizeof(name), "%s", c->files[i].name);
        for (char *p = name; (p = strchr(p, '/'));)
            *p = '-';
        rc = add_sealed(data, name, c->files[i].data, c->files[i].len, key, err);
    }
    for (size_t i = 0; !rc && i < KJOIN_EXTERNAL_ETCD_N; i++)
        if (c->external[i].present)
            rc = add_sealed(data, c->external[i].secret_key, c->external[i].data, c->external[i].len, key, err);
    if (rc)
        json_object_put(data);
    else
        *out = data;
    return rc;
}

/* The kubeadm-certs Secret around data; owned by the token's Secret when
 * owner_uid is given. */
static char *secret_text(json_object *data, const char *owner, const char *owner_uid)
{
    json_object *root = json_object_new_object(), *meta = json_object_new_object();
    json_object_object_add(root, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(root, "kind", json_object_new_string("Secret"));
    json_object_object_add(meta, "name", json_object_new_string("kubeadm-certs"));
    json_object_object_add(meta, "namespace", json_object_new_string("kube-system"));
    if (owner_uid) {
        json_object *refs = json_object_new_array(), *ref = json_object_new_object();
        json_object_object_add(ref, "apiVersion", json_object_new_string("v1"));
        json_object_object_add(ref, "kind", json_object_new_string("Secret"));
        json_object_object_add(ref, "name", json_object_new_string(owner));
        json_object_object_add(ref, "uid", json_object_new_string(owner_uid));
        json_object_object_add(ref, "controller", json_object_new_boolean(1));
        json_object_object_add(ref, "blockOwnerDeletion", json_object_new_boolean(1));
        json_object_array_add(refs, ref);
        json_object_object_add(meta, "ownerReferences", refs);
    }
    json_object_object_add(root, "metadata", meta);
    json_object_object_add(root, "data", json_object_get(data));
    const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
    char *copy = text ? strdup(text) : NULL;
    json_object_put(root);
    return copy;
}

/* ---- the cluster's side ----------------------------------------------------- */

/* kubeadm's CreateOrUpdate: created, or (it is there, and has a name to be
 * replaced by) replaced. The reply's body into *reply when asked. */
static kjoin_code create_or_update(kjoin_kubeapi *api, const char *collection, const char *name, const char *body,
                                   const char *what, char **reply, kjoin_err *err)
{
    char path[512];
    kjoin_kubeapi_response r;
    kjoin_code rc = kjoin_kubeapi_request(api, "POST", collection, body, &r, err);
    if (!rc && r.status == 409 && name) {
        kjoin_kubeapi_response_release(&r);
        snprintf(path, sizeof(path), "%s/%s", collection, name);
        rc = kjoin_kubeapi_request(api, "PUT", path, body, &r, err);
    }
    if (rc)
        return rc; /* no answer: nothing to release */
    if (!(rc = kjoin_kubeapi_check(&r, what, err)) && reply)
        *reply = r.body, r.body = NULL;
    kjoin_kubeapi_response_release(&r);
    return rc;
}

/* The token whose Secret owns kubeadm-certs: no usages, two hours, kubeadm's
 * description; *uid its Secret's. */
static kjoin_code create_owner_token(kjoin_kubeapi *api, int64_t now, kjoin_upload_certs_result *out, char *uid,
                                     size_t cap, kjoin_err *err)
{
    kjoin_token_spec spec = {.expires = now + TTL_S};
    char *body = NULL, *reply = NULL;
    snprintf(spec.description, sizeof(spec.description), "Proxy for managing TTL for the kubeadm-certs secret");
    kjoin_code rc = kjoin_token_generate(&spec.token, err);
    if (!rc)
        rc = kjoin_token_secret_encode(&spec, &body, err);
    if (!rc)
        rc = create_or_update(api, SECRETS, NULL, body, "create the certificates' owner token", &reply, err);
    kjoin_free_wiped_str(body);
    json_object *o = reply ? json_tokener_parse(reply) : NULL, *meta = NULL, *v = NULL;
    const char *got = o && json_object_object_get_ex(o, "metadata", &meta) && json_object_object_get_ex(meta, "uid", &v)
                          ? json_object_get_string(v)
                          : NULL;
    if (!rc && (!got || !*got || strlen(got) >= cap))
        rc = kjoin_err_set(err, KJOIN_E_API, "the API server's answer to the token's Secret has no uid");
    if (!rc) {
        snprintf(uid, cap, "%s", got);
        snprintf(out->token_id, sizeof(out->token_id), "%s", spec.token.id);
        out->expires = spec.expires;
    }
    json_object_put(o);
    kjoin_free_wiped_str(reply);
    kjoin_token_clear(&spec.token);
    return rc;
}

/* The Role and RoleBinding that let kubeadm's bootstrap tokens read the Secret. */
static kjoin_code create_rbac(kjoin_kubeapi *api, kjoin_err *err)
{
    static const char role[] =
        "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"Role\",\"metadata\":{\"name\":\"" RBAC_NAME
        "\",\"namespace\":\"kube-system\"},\"rules\":[{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":"
        "[\"secrets\"],\"resourceNames\":[\"kubeadm-certs\"]}]}";
    static const char binding[] =
        "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"RoleBinding\",\"metadata\":{\"name\":\"" RBAC_NAME
        "\",\"namespace\":\"kube-system\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"Role\","
        "\"name\":\"" RBAC_NAME "\"},\"subjects\":[{\"kind\":\"Group\",\"name\":"
        "\"system:bootstrappers:kubeadm:default-node-token\"}]}";
    kjoin_code rc = create_or_update(api, ROLES, RBAC_NAME, role, "create role " RBAC_NAME, NULL, err);
    return rc ? rc : create_or_update(api, ROLE_BINDINGS, RBAC_NAME, binding, "create rolebinding " RBAC_NAME, NULL, err);
}

/* The caller's view of a ClusterConfiguration: opaque, so its layout is not ABI. */
struct kjoin_local_configuration {
    kjoin_cluster_configuration cluster;
};

kjoin_code kjoin_local_configuration_parse(const char *yaml, size_t len, kjoin_local_configuration **out,
                                           kjoin_err *err)
{
    kjoin_local_configuration *c = calloc(1, sizeof(*c));
    *out = NULL;
    if (!c)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    kjoin_code rc = kjoin_cluster_configuration_from_file(yaml, len, &c->cluster, err);
    if (rc)
        free(c);
    else
        *out = c;
    return rc;
}

void kjoin_local_configuration_free(kjoin_local_configuration *c) { free(c); }

kjoin_code kjoin_upload_certs(kjoin_kubeapi *api, const kjoin_local_configuration *local, const char *cert_dir,
                              const kjoin_certificate_key *key, int64_t now, kjoin_upload_certs_result *out, kjoin_err *err)
{
    static const kjoin_cluster_configuration defaults = {0};
    const kjoin_cluster_configuration *cluster = local ? &local->cluster : &defaults;
    kjoin_shared_certs certs;
    json_object *data = NULL;
    char *text = NULL, uid[128], owner[64];
    memset(out, 0, sizeof(*out));
    /* The paths are this machine's (as kubeadm's upload-certs takes them from
     * its --config), never the cluster's kubeadm-config: whoever may write
     * that ConfigMap would choose which of this node's root-only files is
     * sealed into a Secret that bootstrap tokens can read. */
    snprintf(out->cert_dir, sizeof(out->cert_dir), "%s",
             cert_dir ? cert_dir : *cluster->certificates_dir ? cluster->certificates_dir : "/etc/kubernetes/pki");
    kjoin_code rc = read_shared(out->cert_dir, cluster, &certs, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < KJOIN_SHARED_N; i++)
        out->uploaded[i] = certs.files[i].data != NULL;
    /* What goes up opens as download-certs opens it, before anything is made
     * in the cluster: the key, each CA with its key, ca.crt the CA of the node. */
    kjoin_shared_certs check;
    kjoin_err why;
    if (!(rc = encrypted_data(&certs, key, cluster->external_etcd, &data, err)) &&
        !(rc = (text = secret_text(data, NULL, NULL)) ? KJOIN_OK : kjoin_err_set(err, KJOIN_E_OTHER, "out of memory"))) {
        rc = kjoin_kubeadm_certs_open(text, strlen(text), key, (const char *)certs.files[KJOIN_SHARED_CA_CRT].data,
                                      certs.files[KJOIN_SHARED_CA_CRT].len, &check, &why);
        if (rc)
            kjoin_err_set(err, rc, "the certificates of %s would not open on a joining node (%s): nothing uploaded",
                          out->cert_dir, why.msg);
        else
            kjoin_shared_certs_release(&check);
    }
    kjoin_shared_certs_release(&certs);
    free(text), text = NULL;
    if (!rc)
        rc = create_owner_token(api, now, out, uid, sizeof(uid), err);
    if (!rc) {
        snprintf(owner, sizeof(owner), "bootstrap-token-%s", out->token_id);
        text = secret_text(data, owner, uid);
        rc = text ? create_or_update(api, SECRETS, "kubeadm-certs", text, "upload secret kube-system/kubeadm-certs",
                                     NULL, err)
                  : kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    free(text);
    json_object_put(data);
    return rc ? rc : create_rbac(api, err);
}
