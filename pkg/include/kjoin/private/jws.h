/* Detached JWS (RFC 7515 Appendix F) with HS256, as the bootstrap signer
 * writes into cluster-info: "<b64url header>..<b64url HMAC>". */
#ifndef KJOIN_JWS_H
#define KJOIN_JWS_H

#include <stddef.h>

#include <kjoin/err.h>

/* Signs content with key (for bootstrap tokens: the 16-character secret, not
 * "id.secret"). The protected header is exactly {"alg":"HS256","kid":"<kid>"},
 * byte for byte what the control plane writes; kid is at most 64 characters
 * of [a-z0-9]. *out is newly-allocated. Errors: KJOIN_E_USAGE (bad kid),
 * KJOIN_E_OTHER. */
kjoin_code kjoin_jws_sign(const char *content, size_t content_len, const char *kid, const void *key,
                          size_t key_len, char **out, kjoin_err *err);

/* Verifies a detached JWS over content with key. The header is checked as
 * received: a JSON object whose "alg" is exactly "HS256", whose "kid", if
 * present, equals kid, with no "crit" and no "b64": false. The MAC is
 * compared in constant time. An empty key is refused.
 * Errors: KJOIN_E_TRUST. */
kjoin_code kjoin_jws_verify(const char *jws, const char *content, size_t content_len, const char *kid,
                            const void *key, size_t key_len, kjoin_err *err);

#endif
