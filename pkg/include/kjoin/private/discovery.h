/* The discovery module's own plumbing, for the library's modules, its tests and
 * fuzzers: not installed, not exported. The public part is kjoin/discovery.h. */
#ifndef KJOIN_PRIVATE_DISCOVERY_H
#define KJOIN_PRIVATE_DISCOVERY_H

#include <kjoin/discovery.h>

/* Parses "host:port", "ipv4:port" or "[ipv6]:port", optionally prefixed by
 * "https://" and followed by one "/". *out is written only on success.
 * Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_endpoint_parse(const char *s, kjoin_endpoint *out, kjoin_err *err);

/* Parses the ConfigMap JSON the API server returns. token_id may be NULL
 * (no signature wanted). *out is written only on success; release it with
 * kjoin_cluster_info_release(). Errors: KJOIN_E_TRUST (not a ConfigMap, no
 * data.kubeconfig, values not strings). */
kjoin_code kjoin_cluster_info_parse(const char *json, size_t len, const char *token_id,
                                    kjoin_cluster_info *out, kjoin_err *err);
void kjoin_cluster_info_release(kjoin_cluster_info *ci);

void kjoin_join_result_release(kjoin_join_result *r);

/* *out is written only on success. Errors: KJOIN_E_USAGE (no pins and not
 * unsafe, endpoint count), KJOIN_E_TIMEOUT, KJOIN_E_TRUST, KJOIN_E_OTHER. */
kjoin_code kjoin_discover_token(const kjoin_token_discovery *opts, kjoin_join_result *out, kjoin_err *err);

/* kjoin_discovery_source_check, then a local document (a path or file://)
 * read and checked as discovery will read it, so that a missing, unreadable
 * or malformed file is said before anything else runs. Standard input and
 * URLs are left to discovery. Errors: KJOIN_E_USAGE, KJOIN_E_TRUST. */
kjoin_code kjoin_discovery_file_check(const char *source, kjoin_err *err);

/* *out is written only on success. The local document is read and checked
 * before any network access. Errors: KJOIN_E_USAGE (source, unreadable file),
 * KJOIN_E_TIMEOUT, KJOIN_E_TRUST, KJOIN_E_OTHER. */
kjoin_code kjoin_discover_file(const kjoin_file_discovery *opts, kjoin_join_result *out, kjoin_err *err);

/* *out is written only on success. Errors: KJOIN_E_USAGE (no hash, no pins
 * and not unsafe), KJOIN_E_TIMEOUT, KJOIN_E_TRUST, KJOIN_E_OTHER. */
kjoin_code kjoin_discover_k3s(const kjoin_k3s_discovery *opts, kjoin_join_result *out, kjoin_err *err);

#endif
