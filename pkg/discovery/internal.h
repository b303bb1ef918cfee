/* What every discovery source shares: the deadline, logging, retries, GETs
 * and the final kubeconfig. */
#ifndef KJOIN_DISCOVERY_INTERNAL_H
#define KJOIN_DISCOVERY_INTERNAL_H

#include <kjoin/private/discovery.h>
#include <kjoin/private/transport.h>

/* Why an attempt failed, so the retry policy can tell a bad signature apart. */
typedef enum kjoin_stage { KJOIN_STAGE_OTHER, KJOIN_STAGE_SIGNATURE } kjoin_stage;

typedef struct kjoin_run kjoin_run;

/* One attempt against target i: KJOIN_OK with *out written, KJOIN_E_TRANSIENT
 * to retry, or a final code. */
typedef kjoin_code (*kjoin_attempt_fn)(kjoin_run *r, size_t i, kjoin_stage *st, kjoin_join_result *out,
                                       kjoin_err *err);

struct kjoin_run {
    const kjoin_discovery_common *c;
    int64_t start, deadline;
    const void *source; /* the source's own options */
    void *state;        /* the source's state across attempts */
    kjoin_http_conn *conn; /* this target's kept connection */
    kjoin_tls_trust *trust; /* what conn is pinned to, during an attempt */
    bool not_ready;     /* the last attempt's answer was a retried 403 or 404 */
    int64_t retry_after_ms; /* what the last answer (429, 503) asked with Retry-After; -1: nothing */
};

__attribute__((format(printf, 3, 4))) void kjoin_discovery__log(const kjoin_run *r, int level, const char *fmt,
                                                                ...);

/* Races attempt over targets 0..n-1 (each started 250 ms after the one
 * before, or when its first attempt ended), each retried on its own kept
 * connection r->conn, until one passes (the others are cancelled), all
 * failed for good, or the deadline passes (KJOIN_E_TIMEOUT naming the last
 * failure). A bad signature is retried at most twice per target. With more
 * than one target, attempts run on threads of their own. */
kjoin_code kjoin_discovery__retry(kjoin_run *r, size_t n, const char *const *names, kjoin_attempt_fn attempt,
                                  kjoin_join_result *out, kjoin_err *err);

/* Milliseconds to wait before r's next attempt, given how long its last one
 * took; *round and *polling carry the schedule between attempts (start at 0
 * and false). After a not-ready answer (r->not_ready): the first retry
 * starts KJOIN_KUBEADM_POLL_MS plus a random phase below KJOIN_POLL_MS after
 * the failed attempt started, later ones KJOIN_POLL_MS after the previous
 * one started. Otherwise: full-jitter exponential backoff, 500 ms doubling
 * up to 5 s. Never sooner than the server asked (r->retry_after_ms). */
#define KJOIN_KUBEADM_POLL_MS 5000 /* kubeadm's DiscoveryRetryInterval */
#define KJOIN_POLL_MS 4900         /* below 5 s, with room for the attempt that joins */
int64_t kjoin_discovery__next_wait(const kjoin_run *r, int64_t attempt_ms, unsigned *round, bool *polling);

/* Runs attempt over the endpoints (1 to KJOIN_MAX_ENDPOINTS) with one
 * deadline of common->timeout_ms, as kjoin_discovery__retry does. */
kjoin_code kjoin_discovery__over_endpoints(const kjoin_discovery_common *common, const void *source,
                                           const kjoin_endpoint *endpoints, size_t n, kjoin_attempt_fn attempt,
                                           kjoin_join_result *out, kjoin_err *err);

/* GET url with the request's trust, bounded by the deadline and the
 * per-request limit. Any HTTP status is success. */
kjoin_code kjoin_discovery__get(kjoin_run *r, const char *url, const kjoin_http_request *trust,
                                kjoin_http_response *resp, kjoin_err *err);

/* Statuses that kjoin_discovery__get_200 may also retry. */
#define KJOIN_RETRY_403 1u
#define KJOIN_RETRY_404 2u

/* GET url wanting 200 (resp holds it). 5xx, 429 and the statuses in retry
 * are transient (KJOIN_E_TRANSIENT); any other status is final
 * (KJOIN_E_OTHER). Messages show url redacted. */
kjoin_code kjoin_discovery__get_200(kjoin_run *r, const char *url, const kjoin_http_request *trust, unsigned retry,
                                    kjoin_http_response *resp, kjoin_err *err);

/* Fills *out: the bootstrap kubeconfig for server with the trusted
 * certificates of bundle (which may be NULL: no CA), taking bundle. */
kjoin_code kjoin_discovery__finish(kjoin_run *r, const char *server, const char *endpoint, kjoin_bundle **bundle,
                                   kjoin_join_result *out, kjoin_err *err);

/* cluster-info parsed as it arrives (see clusterinfo.c): fed in pieces of
 * any size, it holds one decoded copy of data.kubeconfig, or none when
 * expect is set: the kubeconfig is then only compared with expect. */
typedef struct kjoin_discovery__ci kjoin_discovery__ci;
/* NULL when out of memory; expect (which must outlive p) may be NULL. */
kjoin_discovery__ci *kjoin_discovery__ci_new(const char *expect, size_t expect_len);
/* Never fails: an error is kept for kjoin_discovery__ci_finish. */
void kjoin_discovery__ci_feed(kjoin_discovery__ci *p, const char *data, size_t len);
/* As kjoin_cluster_info_parse, on everything fed. With expect, out's
 * kubeconfig is NULL (its length is set) and *same says whether it was
 * expect byte for byte. */
kjoin_code kjoin_discovery__ci_finish(kjoin_discovery__ci *p, const char *token_id, kjoin_cluster_info *out,
                                      bool *same, kjoin_err *err);
void kjoin_discovery__ci_free(kjoin_discovery__ci *p);

/* The bundle's anchors and chained certificates as req->trust, for a
 * KJOIN_TLS_PINNED request on a connection of its own; released with
 * kjoin_discovery__pinned_release. */
kjoin_code kjoin_discovery__pinned(const kjoin_bundle *b, kjoin_http_request *req, kjoin_err *err);
void kjoin_discovery__pinned_release(kjoin_http_request *req);

/* Pins r->conn to the bundle's trust: the live connection's chain must pass
 * the checks a pinned handshake would. Requests on r->conn are then
 * KJOIN_TLS_PINNED until kjoin_discovery__unpin. */
kjoin_code kjoin_discovery__pin(kjoin_run *r, const kjoin_bundle *b, kjoin_err *err);
void kjoin_discovery__unpin(kjoin_run *r);

/* Logs each certificate's trust decision; warns about each dropped one. */
void kjoin_discovery__report_trust(const kjoin_run *r, const kjoin_bundle *b);

#endif
