/* kubeadm JoinConfiguration files (--config): the discovery settings. */
#ifndef KJOIN_CONFIG_H
#define KJOIN_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kjoin/discovery.h>
#include <kjoin/err.h>
#include <kjoin/pin.h>
#include <kjoin/token.h>

#define KJOIN_CONFIG_MAX_SKIPPED 16

/* The discovery part of a JoinConfiguration, every value already checked.
 * Release with kjoin_join_config_release(); it holds token secrets. */
typedef struct kjoin_join_config {
    char api_version[64];
    bool has_bootstrap_token;          /* discovery.bootstrapToken */
    kjoin_token token;                 /* .token */
    kjoin_endpoint endpoint;           /* .apiServerEndpoint */
    kjoin_pinset *pins;                /* .caCertHashes; never NULL after parsing */
    bool unsafe_skip_ca_verification;  /* .unsafeSkipCAVerification */
    char *file;                        /* discovery.file.kubeConfigPath, or NULL */
    bool has_tls_bootstrap_token;
    kjoin_token tls_bootstrap_token;   /* discovery.tlsBootstrapToken */
    bool has_timeout;
    int64_t timeout_ms;                /* v1beta3 discovery.timeout, v1beta4 timeouts.discovery */
    size_t n_skipped;                  /* other documents, for one log line each */
    char skipped[KJOIN_CONFIG_MAX_SKIPPED][128];
} kjoin_join_config;

/* Parses a stream of YAML documents ("---"), of which exactly one must be a
 * kubeadm.k8s.io/v1beta3 or v1beta4 JoinConfiguration; other kinds are
 * listed in skipped. Unknown fields inside discovery, unknown apiVersions and
 * invalid values are refused with their line and column. *out is written
 * only on success. Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_join_config_parse(const char *yaml, size_t len, kjoin_join_config *out, kjoin_err *err);
void kjoin_join_config_release(kjoin_join_config *c);

#endif
