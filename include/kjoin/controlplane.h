/* kubeadm's control-plane join, its first step: the certificates every
 * control-plane node shares (the cluster CA, the front proxy's CA, the
 * service-account key pair, etcd's CA), which `kubeadm init --upload-certs`
 * put in the kube-system/kubeadm-certs Secret, each value encrypted with
 * AES-256-GCM under the certificate key it printed. Whoever holds that key
 * and a bootstrap token holds the cluster's CA keys (docs/trust-model.md). */
#ifndef KJOIN_CONTROLPLANE_H
#define KJOIN_CONTROLPLANE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kjoin/err.h>
#include <kjoin/util.h>

#define KJOIN_CERTIFICATE_KEY_LEN 32 /* kubeadm's CertificateKeySize: AES-256 */

typedef struct kjoin_certificate_key {
    unsigned char bytes[KJOIN_CERTIFICATE_KEY_LEN];
} kjoin_certificate_key;

/* The key as kubeadm prints it: 64 hex digits, surrounding blanks (a file's
 * newline) aside. Errors: KJOIN_E_USAGE, which never quotes the key. */
kjoin_code kjoin_certificate_key_parse(const char *text, kjoin_certificate_key *key, kjoin_err *err);
/* The key from a file ("-": standard input), trimmed, as a token file is
 * read. Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_certificate_key_read(const char *path, kjoin_certificate_key *key, kjoin_err *err);
/* Wipes the key. */
void kjoin_certificate_key_clear(kjoin_certificate_key *key);

/* One value of the Secret, decrypted: kubeadm's EncryptBytes is a 12-byte
 * nonce, then the ciphertext and its 16-byte tag. *out is NUL-terminated,
 * free it with kjoin_free_wiped. Errors: KJOIN_E_TRUST (too short, or the
 * tag does not match: another key, or the value was changed). */
kjoin_code kjoin_kubeadm_certs_decrypt(const kjoin_certificate_key *key, const unsigned char *in, size_t len,
                                       unsigned char **out, size_t *out_len, kjoin_err *err);

/* The files the Secret carries, by kubeadm's names. */
enum {
    KJOIN_SHARED_CA_CRT,
    KJOIN_SHARED_CA_KEY,
    KJOIN_SHARED_FRONT_PROXY_CA_CRT,
    KJOIN_SHARED_FRONT_PROXY_CA_KEY,
    KJOIN_SHARED_SA_PUB,
    KJOIN_SHARED_SA_KEY,
    KJOIN_SHARED_ETCD_CA_CRT,
    KJOIN_SHARED_ETCD_CA_KEY,
    KJOIN_SHARED_N
};

typedef struct kjoin_shared_certs {
    struct {
        const char *name;       /* kubeadm's: "ca.crt", "etcd/ca.key" */
        unsigned mode;          /* as kubeadm writes it: 0600 for a key, 0644 otherwise */
        unsigned char *data;    /* NULL: empty in the Secret (kubeadm had none, as for an external etcd) */
        size_t len;
    } files[KJOIN_SHARED_N];
} kjoin_shared_certs;

/* The names and modes alone, no data. */
void kjoin_kubeadm_certs_names(kjoin_shared_certs *out);

/* The Secret (its JSON, from the API server: untrusted) opened with key and
 * checked before anything is kept: every value decrypts; ca.crt and ca.key
 * are there; each certificate is a CA, each key is its certificate's (the
 * service account's private key its public one); and ca.crt is one of
 * trusted_ca_pem, the CA discovery verified. An external etcd's values
 * are refused (not handled). Errors: KJOIN_E_TRUST (a value that does not
 * decrypt, a CA that is not the trusted one, a key that is not its
 * certificate's), KJOIN_E_API (not a Secret, a value missing or not base64
 * where a file is required). */
kjoin_code kjoin_kubeadm_certs_open(const char *secret_json, size_t len, const kjoin_certificate_key *key,
                                    const char *trusted_ca_pem, size_t ca_len, kjoin_shared_certs *out,
                                    kjoin_err *err);

/* Writes every file into cert_dir and its etcd/ (made 0700 if missing;
 * checked as ssh checks a directory it trusts), each atomically with its
 * mode: all or nothing (what this call created is taken back when a later
 * write fails). An existing file with other content is refused unless
 * force. Each file's outcome in written[] (may be NULL). Errors:
 * KJOIN_E_USAGE, KJOIN_E_OUTPUT. */
kjoin_code kjoin_shared_certs_write(const kjoin_shared_certs *c, const char *cert_dir, bool force,
                                    kjoin_write_result written[KJOIN_SHARED_N], kjoin_err *err);
void kjoin_shared_certs_release(kjoin_shared_certs *c);

/* kubeadm's download-certs: with the bootstrap token, the cluster's
 * certificatesDir (its ClusterConfiguration; /etc/kubernetes/pki without
 * one) and the kubeadm-certs Secret, opened and written as above. */
typedef struct kjoin_download_certs_spec {
    const char *bootstrap_kubeconfig;  /* discovery's, in memory */
    size_t bootstrap_len;
    const char *trusted_ca_pem;        /* the CA discovery verified */
    size_t ca_len;
    const kjoin_certificate_key *key;
    bool force;                        /* replace files that hold something else */
    int64_t timeout_ms;
    const char *audit_id;
    kjoin_log_fn log;
    void *log_ctx;
} kjoin_download_certs_spec;

typedef struct kjoin_download_certs_result {
    char cert_dir[1024];
    bool present[KJOIN_SHARED_N];      /* the Secret held it (not empty) */
    kjoin_write_result written[KJOIN_SHARED_N];
} kjoin_download_certs_result;

/* Errors: those of kjoin_kubeadm_certs_open and kjoin_shared_certs_write;
 * KJOIN_E_API when the Secret is not there (it expires two hours after its
 * upload) or the token may not read it; the API client's. */
kjoin_code kjoin_download_certs(const kjoin_download_certs_spec *s, kjoin_download_certs_result *out, kjoin_err *err);

#endif
