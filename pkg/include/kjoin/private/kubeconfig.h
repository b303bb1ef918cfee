/* The kubeconfig module's own plumbing, for the library's modules, its tests and
 * fuzzers: not installed, not exported. The public part is kjoin/kubeconfig.h. */
#ifndef KJOIN_PRIVATE_KUBECONFIG_H
#define KJOIN_PRIVATE_KUBECONFIG_H

#include <kjoin/kubeconfig.h>

/* Parses a --discovery-file document (YAML or JSON). Its cluster is the
 * unnamed one, else the current context's (as kubeadm chooses); no user entry
 * may carry client credentials (token, tokenFile, client-certificate(-data),
 * client-key(-data), username, password, exec, auth-provider). The CA comes
 * from certificate-authority-data, or from a certificate-authority path
 * relative to dir; dir NULL (standard input, URLs) refuses paths. The CA may
 * be absent: ca_pem NULL. Errors: KJOIN_E_TRUST (malformed or refused
 * document), KJOIN_E_USAGE (unreadable certificate-authority file). */
kjoin_code kjoin_kubeconfig_parse_discovery(const char *yaml, size_t len, const char *dir,
                                            kjoin_cluster *out, kjoin_err *err);

/* Emits a kubeconfig shaped as kubeadm's bootstrap-kubelet.conf (or, with a
 * client certificate, its admin.conf), context "<user>@<cluster>" as
 * current-context. *out is newly-allocated, NUL-terminated, and holds the
 * secret: wipe it before freeing. Errors: KJOIN_E_OTHER. */
kjoin_code kjoin_kubeconfig_emit_bootstrap(const kjoin_bootstrap_config *cfg, char **out,
                                           size_t *out_len, kjoin_err *err);

/* Emits the kubeconfig kubelet writes after its TLS bootstrap: cluster
 * "default-cluster" (server, CA data), user "default-auth" whose
 * client-certificate and client-key are both pem_path (the
 * kubelet-client-current.pem that holds both), context "default-context".
 * Errors: KJOIN_E_OTHER. */
kjoin_code kjoin_kubeconfig_emit_kubelet(const char *server, const char *ca_pem, size_t ca_len, const char *pem_path,
                                         char **out, size_t *out_len, kjoin_err *err);

/* The kubeconfig text with its current cluster's certificate-authority-data
 * (the current context's cluster, else the only one) replaced by ca_pem, in
 * base64, every other byte kept, whatever YAML style the value had. The
 * result is parsed again and must be the same document but for that value,
 * which must be exactly the new CA; else nothing is returned. *out is
 * newly-allocated (it may hold credentials: wipe it). Errors: KJOIN_E_USAGE
 * (malformed, no such value), KJOIN_E_OTHER (the check failed). */
kjoin_code kjoin_kubeconfig_replace_ca(const char *text, size_t len, const void *ca_pem, size_t ca_len, char **out,
                                       size_t *out_len, kjoin_err *err);

/* The same for the current cluster's server: server (an https URL) in place
 * of the one there, every other byte kept, checked the same way. kubeadm's
 * control-plane node points its kubelet at its own API server so.
 * Errors: KJOIN_E_USAGE (malformed, no server, not a URL), KJOIN_E_OTHER. */
kjoin_code kjoin_kubeconfig_replace_server(const char *text, size_t len, const char *server, char **out,
                                           size_t *out_len, kjoin_err *err);

#endif
