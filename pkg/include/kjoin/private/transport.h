/* The transport module's own plumbing, for the library's modules, its tests and
 * fuzzers: not installed, not exported. The public part is kjoin/transport.h. */
#ifndef KJOIN_PRIVATE_TRANSPORT_H
#define KJOIN_PRIVATE_TRANSPORT_H

#include <kjoin/transport.h>

/* NULL when out of memory. */
kjoin_tls_trust *kjoin_tls_trust_new(void);
/* Adds cert as an anchor or as an untrusted intermediate; takes a reference,
 * the caller keeps its own. Errors: KJOIN_E_OTHER. */
kjoin_code kjoin_tls_trust_add(kjoin_tls_trust *t, struct x509_st *cert, bool anchor, kjoin_err *err);
/* Adds every certificate of a PEM text. Errors: KJOIN_E_USAGE (no PEM),
 * KJOIN_E_OTHER. */
kjoin_code kjoin_tls_trust_add_pem(kjoin_tls_trust *t, const char *pem, size_t len, bool anchor, kjoin_err *err);
void kjoin_tls_trust_free(kjoin_tls_trust *t);

/* NULL when out of memory. */
kjoin_http_conn *kjoin_http_conn_new(void);
void kjoin_http_conn_free(kjoin_http_conn *c);
/* Checks the chain of the connection's last handshake against t and the
 * host of its requests; t must outlive the pinning (until
 * kjoin_http_conn_unpin or kjoin_http_conn_free). Errors: KJOIN_E_TRUST (the
 * chain does not verify), KJOIN_E_OTHER (no request was made on c yet). */
kjoin_code kjoin_http_conn_pin(kjoin_http_conn *c, const kjoin_tls_trust *t, kjoin_err *err);
/* Back to KJOIN_TLS_INSECURE requests (the connection stays open). */
void kjoin_http_conn_unpin(kjoin_http_conn *c);
/* Makes the request running on c, and every later one, fail at once
 * (KJOIN_E_TRANSIENT): the losers of a race. */
void kjoin_http_conn_cancel(kjoin_http_conn *c);

/* Performs one request (req->method, GET by default). Any HTTP status is
 * success; *out is written only on success. Errors: KJOIN_E_TRANSIENT
 * (connection, DNS, timeout, TLS handshake in insecure mode; for a method
 * other than GET only when the request was never sent, so a retry cannot
 * apply it twice), KJOIN_E_TRUST (server verification failed, body over the
 * cap, a redirect to anything but https), KJOIN_E_USAGE (bad anchors, an
 * unusable client certificate, credentials with an unverified mode or
 * redirects), KJOIN_E_OTHER (including a non-GET request sent but not
 * answered: it may have been applied). */
kjoin_code kjoin_http_send(const kjoin_http_request *req, kjoin_http_response *out, kjoin_err *err);
/* kjoin_http_send for the GETs of discovery (req->method must be NULL or GET). */
kjoin_code kjoin_http_get(const kjoin_http_request *req, kjoin_http_response *out, kjoin_err *err);
void kjoin_http_response_release(kjoin_http_response *resp);

#endif
