/* The kubeapi module's own plumbing, for the library's modules, its tests and
 * fuzzers: not installed, not exported. The public part is kjoin/kubeapi.h. */
#ifndef KJOIN_PRIVATE_KUBEAPI_H
#define KJOIN_PRIVATE_KUBEAPI_H

#include <kjoin/kubeapi.h>

/* Parses a kubeconfig (YAML or JSON): the context named context, else
 * current-context; its cluster's server and CA (certificate-authority-data,
 * or a certificate-authority path); its user's client-certificate(-data) and
 * client-key(-data), or token / tokenFile. Paths are relative to dir (NULL:
 * paths are refused). insecure-skip-tls-verify, exec, auth-provider and
 * username/password are refused by name. *out is written only on success.
 * Errors: KJOIN_E_USAGE (the kubeconfig is the user's input). */
kjoin_code kjoin_kubeapi_config_parse(const char *yaml, size_t len, const char *dir, const char *context,
                                      kjoin_kubeapi_config *out, kjoin_err *err);

/* The in-cluster configuration of a pod, as client-go builds it:
 * https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, the service
 * account's token and CA under dir (NULL: the standard
 * /var/run/secrets/kubernetes.io/serviceaccount). Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_kubeapi_config_in_cluster(const char *dir, kjoin_kubeapi_config *out, kjoin_err *err);

/* Milliseconds left before the client's deadline (may be negative). */
int64_t kjoin_kubeapi_remaining_ms(const kjoin_kubeapi *api);

/* The API server's clock now (Unix seconds), from the Date of its last
 * answer to this client (to the second); 0 before any answer had one. What
 * the cluster's timestamps (a Lease's renewTime) are read against: this
 * machine's clock may be wrong. */
int64_t kjoin_kubeapi_server_time(const kjoin_kubeapi *api);

/* The API server's minor version (GET /version, "minor": "37" or "37+"), or
 * 0 when it does not tell (refused, unreachable, not a version). The _version
 * form reads an answer's body (untrusted: nulls, other types and garbage
 * are 0). */
int kjoin_kubeapi_server_minor(kjoin_kubeapi *api);
int kjoin_kubeapi_version_minor(const char *json, size_t len);

/* One GET whose 200 body is handed to sink as it arrives (a watch), within
 * timeout_ms and max_body bytes; no retry. Any other status is collected
 * into *out as kjoin_kubeapi_request's. Errors: as kjoin_http_send's
 * (KJOIN_E_TRANSIENT: the connection failed or the stream ended early). */
kjoin_code kjoin_kubeapi_stream(kjoin_kubeapi *api, const char *path, int64_t timeout_ms, size_t max_body,
                                void (*sink)(const char *data, size_t len, void *ctx), void *sink_ctx,
                                kjoin_kubeapi_response *out, kjoin_err *err);

/* Fills reason and message from a Status body (falling back to the HTTP
 * status's usual reason when the body is not a Status). Never fails. */
void kjoin_kubeapi_status_decode(long http_status, const char *body, size_t len,
                                 char reason[KJOIN_KUBEAPI_REASON_MAX], char message[KJOIN_KUBEAPI_MESSAGE_MAX]);

#endif
