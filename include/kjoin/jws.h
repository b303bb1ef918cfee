/* Detached JWS (RFC 7515 Appendix F) with HS256, as the bootstrap signer
 * writes into cluster-info: "<b64url header>..<b64url HMAC>". */
#ifndef KJOIN_JWS_H
#define KJOIN_JWS_H

#include <stddef.h>

#include <kjoin/err.h>
#include <kjoin/token.h>

/* Signs content with the token's secret. The protected header is exactly
 * {"alg":"HS256","kid":"<token id>"}, byte for byte what the control plane
 * writes. *out is newly-allocated. Errors: KJOIN_E_OTHER. */
kjoin_code kjoin_jws_sign(const char *content, size_t content_len, const kjoin_token *tok,
                          char **out, kjoin_err *err);

/* Verifies a detached JWS over content with the token's secret. The header
 * is checked as received: a JSON object whose "alg" is exactly "HS256", whose
 * "kid", if present, is the token id, with no "crit" and no "b64": false.
 * The MAC is compared in constant time. Errors: KJOIN_E_TRUST. */
kjoin_code kjoin_jws_verify(const char *jws, const char *content, size_t content_len,
                            const kjoin_token *tok, kjoin_err *err);

#endif
