/* File discovery: the cluster and its CA come from a kubeconfig the operator
 * distributed out of band (a path, standard input or an https:// URL); the
 * cluster's own cluster-info then refreshes it over TLS verified with that CA. */
#include <libgen.h>
#include <stdio.h>
#include <string.h>

#include <kjoin/private/kubeconfig.h>
#include <kjoin/private/util.h>
#include <kjoin/private/pin.h>

#include "internal.h"

typedef struct file_state {
    const char *source; /* without "file://" */
    char shown[1024];   /* source as logs, errors and JSON show it (kjoin_url_redact) */
    bool is_url;
    char *dir;          /* for relative certificate-authority paths; NULL for stdin and URLs */
    bool loaded;        /* cluster holds the document's cluster, read and parsed once */
    kjoin_cluster cluster;
} file_state;

kjoin_code kjoin_discovery_source_check(const char *s, kjoin_err *err)
{
    if (!s || !*s)
        return kjoin_err_set(err, KJOIN_E_USAGE, "`discovery_file` needs a path, - or an https:// URL");
    char shown[1024];
    kjoin_url_redact(s, shown, sizeof(shown));
    if (strncmp(s, "https://", 8) == 0)
        return s[8] ? KJOIN_OK : kjoin_err_set(err, KJOIN_E_USAGE, "`discovery_file` URL \"%s\" has no host", shown);
    if (strncmp(s, "file://", 7) == 0)
        return s[7] ? KJOIN_OK : kjoin_err_set(err, KJOIN_E_USAGE, "`discovery_file` \"%s\" has no path", shown);
    const char *scheme_end = strstr(s, "://");
    if (scheme_end)
        return kjoin_err_set(err, KJOIN_E_USAGE,
                             "`discovery_file` \"%s\": a URL must be https:// (the bootstrap discovery design "
                             "requires HTTPS for discovery documents)",
                             shown);
    return KJOIN_OK;
}

/* Parses the document's bytes into f->cluster. */
static kjoin_code parse_document(file_state *f, const char *doc, size_t len, kjoin_err *err)
{
    kjoin_err inner;
    kjoin_code rc = kjoin_kubeconfig_parse_discovery(doc, len, f->dir, &f->cluster, &inner);
    f->loaded = rc == KJOIN_OK;
    if (rc) /* which document, as the user named it */
        kjoin_err_set(err, rc, "the discovery file %s: %s", !strcmp(f->source, "-") ? "(standard input)" : f->shown,
                      inner.msg);
    return rc;
}

/* Reads and parses a local document (or standard input) before any network access. */
static kjoin_code load_local(file_state *f, kjoin_err *err)
{
    char *doc = NULL;
    size_t len = 0;
    kjoin_code rc = kjoin_file_read(f->source, KJOIN_KUBECONFIG_MAX, &doc, &len, err);
    if (rc)
        return rc;
    if (strcmp(f->source, "-") != 0) {
        char *copy = strdup(f->source);
        f->dir = copy ? strdup(dirname(copy)) : NULL;
        free(copy);
        if (!f->dir)
            rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    if (!rc)
        rc = parse_document(f, doc, len, err);
    free(doc);
    return rc;
}

/* Fetches and parses the document from its https:// URL, trusting the system roots. */
static kjoin_code fetch_url(kjoin_run *r, file_state *f, kjoin_err *err)
{
    kjoin_http_request req = {.tls = KJOIN_TLS_SYSTEM, .follow_redirects = true, .userinfo_allowed = true};
    kjoin_http_response resp = {0};
    kjoin_discovery__log(r, 0, "[discovery] Fetching the discovery file from %s (verified against the system trust store)",
                         f->shown);
    /* 404: the file may not be published yet. */
    kjoin_code rc = kjoin_discovery__get_200(r, f->source, &req, KJOIN_RETRY_404, &resp, err);
    if (!rc)
        rc = parse_document(f, resp.body, resp.len, err);
    kjoin_http_response_release(&resp);
    return rc;
}

/* The CA bundle of pem, with the pins applied (all anchors without pins). */
static kjoin_code trust_bundle(kjoin_run *r, const unsigned char *pem, size_t len, const char *from,
                               kjoin_bundle **out, kjoin_err *err)
{
    kjoin_bundle *b = NULL;
    kjoin_err inner;
    kjoin_code rc = kjoin_bundle_parse(pem, len, &b, &inner);
    if (rc)
        return kjoin_err_set(err, rc, "CA of %s: %s", from, inner.msg);
    if ((rc = kjoin_bundle_apply_pins(b, r->c->pins, err))) {
        kjoin_bundle_free(b);
        return rc;
    }
    if (kjoin_pinset_count(r->c->pins))
        kjoin_discovery__report_trust(r, b);
    else
        kjoin_discovery__log(r, 0, "[discovery] Trusting the %zu CA certificate(s) of %s", kjoin_bundle_count(b), from);
    *out = b;
    return KJOIN_OK;
}

/* Refreshes from the cluster's cluster-info over verified TLS, as kubeadm
 * does: the document's server is kept, cluster-info's CA is taken only when
 * the document has none, and 403 or 404 keep the document as it is. */
static kjoin_code refresh(kjoin_run *r, const kjoin_cluster *doc, kjoin_bundle **bundle, kjoin_err *err)
{
    char url[1024];
    size_t n = strlen(doc->server);
    while (n && doc->server[n - 1] == '/')
        n--;
    snprintf(url, sizeof(url), "%.*s" KJOIN_CLUSTER_INFO_PATH, (int)n, doc->server);
    kjoin_http_request trust = {.tls = KJOIN_TLS_SYSTEM};
    kjoin_http_response resp = {0};
    kjoin_cluster_info ci = {0};
    kjoin_cluster fresh = {0};
    kjoin_err inner;
    kjoin_code rc = *bundle ? kjoin_discovery__pinned(*bundle, &trust, err) : KJOIN_OK;
    if (rc)
        return rc;
    kjoin_discovery__log(r, 0, "[discovery] Refreshing from %s over TLS verified with %s", url,
                         *bundle ? "the discovery file's CA" : "the system trust store");
    rc = kjoin_discovery__get(r, url, &trust, &resp, err);
    kjoin_discovery__pinned_release(&trust);
    if (rc)
        return rc;
    if (resp.status == 403 || resp.status == 404) {
        kjoin_discovery__log(r, 0, "[discovery] cluster-info answered %ld: keeping the discovery file as it is",
                             resp.status);
    } else if (resp.status != 200) {
        rc = kjoin_err_set(err, KJOIN_E_TRANSIENT, "GET %s: HTTP %ld", url, resp.status);
    } else if (kjoin_cluster_info_parse(resp.body, resp.len, NULL, &ci, &inner) ||
               kjoin_kubeconfig_parse_cluster(ci.kubeconfig, ci.kubeconfig_len, &fresh, &inner)) {
        kjoin_discovery__log(r, KJOIN_LOG_WARNING, "[discovery] WARNING: cannot use the cluster-info the server returned (%s); "
                                   "keeping the discovery file as it is", inner.msg);
    } else {
        if (strcmp(fresh.server, doc->server) != 0)
            kjoin_discovery__log(r, KJOIN_LOG_WARNING,
                                 "[discovery] WARNING: cluster-info names the API server \"%s\"; keeping the "
                                 "discovery file's \"%s\"",
                                 fresh.server, doc->server);
        if (!*bundle)
            rc = trust_bundle(r, fresh.ca_pem, fresh.ca_len, "cluster-info (the discovery file has none)", bundle, err);
        if (!rc)
            kjoin_discovery__log(r, 0, "[discovery] Refreshed from cluster-info over verified TLS");
    }
    kjoin_http_response_release(&resp);
    kjoin_cluster_info_release(&ci);
    kjoin_cluster_release(&fresh);
    return rc;
}

static kjoin_code attempt(kjoin_run *r, size_t i, kjoin_stage *st, kjoin_join_result *out, kjoin_err *err)
{
    (void)i;
    (void)st;
    file_state *f = r->state;
    const kjoin_cluster *doc = &f->cluster;
    kjoin_bundle *bundle = NULL;
    kjoin_code rc = KJOIN_OK;
    if (!f->loaded && (rc = fetch_url(r, f, err)))
        return rc;
    if (doc->ca_pem && (rc = trust_bundle(r, doc->ca_pem, doc->ca_len, "the discovery file", &bundle, err)))
        goto out;
    if ((rc = refresh(r, doc, &bundle, err)))
        goto out;
    if (!bundle && kjoin_pinset_count(r->c->pins)) {
        rc = kjoin_err_set(err, KJOIN_E_TRUST,
                           "CA pins were given, but neither the discovery file nor cluster-info holds a CA");
        goto out;
    }
    if (!bundle)
        kjoin_discovery__log(r, 0, "[discovery] No CA in the discovery file or cluster-info: the kubeconfig will "
                                   "trust the system roots");
    rc = kjoin_discovery__finish(r, doc->server, f->shown, &bundle, out, err);
    if (!rc)
        kjoin_discovery__log(r, 0, "[discovery] Using API server \"%s\" (from the discovery file)", doc->server);
out:
    kjoin_bundle_free(bundle);
    return rc;
}

kjoin_code kjoin_discovery_file_check(const char *source, kjoin_err *err)
{
    kjoin_code rc = kjoin_discovery_source_check(source, err);
    if (rc || !strcmp(source, "-") || !strncmp(source, "https://", 8))
        return rc; /* standard input is read once, by discovery; a URL is the network's */
    file_state f = {.source = strncmp(source, "file://", 7) == 0 ? source + 7 : source};
    kjoin_url_redact(f.source, f.shown, sizeof(f.shown));
    rc = load_local(&f, err);
    kjoin_cluster_release(&f.cluster);
    free(f.dir);
    return rc;
}

kjoin_code kjoin_discover_file(const kjoin_file_discovery *o, kjoin_join_result *out, kjoin_err *err)
{
    kjoin_code rc = kjoin_discovery_source_check(o->source, err);
    if (rc)
        return rc;
    file_state f = {.source = strncmp(o->source, "file://", 7) == 0 ? o->source + 7 : o->source,
                    .is_url = strncmp(o->source, "https://", 8) == 0};
    kjoin_url_redact(f.source, f.shown, sizeof(f.shown));
    kjoin_run r = {.c = &o->common, .source = o, .state = &f, .start = kjoin_now_ms()};
    r.deadline = r.start + o->common.timeout_ms;
    if (!f.is_url)
        rc = load_local(&f, err);
    if (!rc) {
        const char *names[] = {f.shown};
        rc = kjoin_discovery__retry(&r, 1, names, attempt, out, err);
    }
    kjoin_cluster_release(&f.cluster);
    free(f.dir);
    return rc;
}
