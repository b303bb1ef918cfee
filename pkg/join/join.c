/* The join policy: which discovery runs with which tokens, decided from one
 * specification before any network access, then the discovery and the
 * writes. Messages name fields in backquotes (`token_file`) so that a
 * command can put its own names (flags, config paths) in their place. */
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include <kjoin/private/join.h>
#include <kjoin/private/node.h>
#include <kjoin/private/util.h>
#include <kjoin/private/token.h>
#include <kjoin/private/pin.h>
#include <kjoin/private/discovery.h>

#include "internal.h"

#define TOKEN_TEXT_MAX 2200 /* K10, 64 hex, "::", a user and a password of KJOIN_K3S_FIELD_MAX */

static bool set(const char *s) { return s && *s; }

/* The shared token's text (token, token_file or KJOIN_TOKEN) into buf, a
 * secret the caller wipes; *origin names where it came from, NULL for none.
 * KJOIN_TOKEN counts only when no token field is set; K3S_TOKEN stands in
 * for it unless the flavor is kubeadm (it is what K3s agents are given). */
static kjoin_code shared_text(const kjoin_join_spec *s, char buf[TOKEN_TEXT_MAX], const char **origin,
                              kjoin_err *err)
{
    *origin = NULL;
    if (s->token && s->token_file)
        return kjoin_err_set(err, KJOIN_E_USAGE, "`token` and `token_file` are both set: give one");
    const char *file = s->token_file;
    *origin = "`token_file`";
    if (!file && !s->token && !s->discovery_token && !s->tls_bootstrap_token && !set(s->env_token) &&
        !set(s->env_k3s_token) && s->flavor != KJOIN_FLAVOR_KUBEADM && set(s->env_k3s_token_file)) {
        file = s->env_k3s_token_file; /* what `k3s agent` reads when K3S_TOKEN is not set */
        *origin = "K3S_TOKEN_FILE";
    }
    if (file) {
        kjoin_err inner;
        kjoin_code rc = kjoin_token_read_text(file, buf, TOKEN_TEXT_MAX, &inner);
        if (rc)
            return kjoin_err_set(err, rc, "%s: %s", *origin, inner.msg);
        /* K3s reads its token file whole, trimmed (a second line is part of
         * the password); kubeadm's tokens are one line: its first. */
        if (!(s->flavor == KJOIN_FLAVOR_K3S || kjoin_token_is_k3s(buf) || set(s->env_k3s_url) ||
              file == s->env_k3s_token_file))
            buf[strcspn(buf, "\r\n")] = '\0';
        return KJOIN_OK;
    }
    const char *text = s->token;
    *origin = "`token`";
    if (!text && !s->discovery_token && !s->tls_bootstrap_token) {
        bool k3s_env = !set(s->env_token) && s->flavor != KJOIN_FLAVOR_KUBEADM && set(s->env_k3s_token);
        text = k3s_env ? s->env_k3s_token : set(s->env_token) ? s->env_token : NULL;
        *origin = k3s_env ? "K3S_TOKEN" : "KJOIN_TOKEN";
    }
    if (!text) {
        *origin = NULL;
        return KJOIN_OK;
    }
    if (strlen(text) >= TOKEN_TEXT_MAX)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s: the token is longer than %d bytes", *origin,
                             TOKEN_TEXT_MAX - 1);
    memcpy(buf, text, strlen(text) + 1);
    return KJOIN_OK;
}

/* Why the cluster is K3s, or NULL when it is not. Only an explicit choice,
 * a K10 token or the variables K3s agents are configured with choose it: a
 * malformed bootstrap token is an error, never a K3s password. */
static const char *k3s_reason(const kjoin_join_spec *s, const char *text)
{
    if (s->flavor == KJOIN_FLAVOR_K3S)
        return "the flavor is k3s";
    if (s->flavor == KJOIN_FLAVOR_KUBEADM)
        return NULL;
    if (text && kjoin_token_is_k3s(text))
        return "a K10 token";
    return set(s->env_k3s_url) ? "K3S_URL is set" : set(s->env_k3s_token) ? "K3S_TOKEN is set" : NULL;
}

static kjoin_code parse_token(const char *text, const char *origin, kjoin_token *out, kjoin_err *err)
{
    kjoin_err inner;
    kjoin_code rc = kjoin_token_parse(text, out, &inner);
    return rc ? kjoin_err_set(err, rc, "%s: %s", origin, inner.msg) : KJOIN_OK;
}

/* kubeadm's precedence: a specific token wins over the shared one, and the
 * TLS-bootstrap token defaults to the discovery token. */
static kjoin_code resolve_tokens(const kjoin_join_spec *s, kjoin_join_plan *p, kjoin_err *err)
{
    char text[TOKEN_TEXT_MAX] = "";
    const char *origin;
    kjoin_token shared = {0};
    kjoin_code rc = shared_text(s, text, &origin, err);
    p->k3s_reason = rc ? NULL : k3s_reason(s, origin ? text : NULL);
    if (!rc && p->k3s_reason) {
        p->kind = KJOIN_DISCOVERY_K3S;
        if (!origin || s->discovery_token || s->tls_bootstrap_token)
            rc = kjoin_err_set(err, KJOIN_E_USAGE,
                               "K3s discovery takes one token (`token`, `token_file` or KJOIN_TOKEN), not "
                               "`discovery_token` or `tls_bootstrap_token`");
        else
            rc = kjoin_k3s_token_parse(text, &p->k3s_token, err);
    } else if (!rc && origin) {
        rc = parse_token(text, origin, &shared, err);
    }
    OPENSSL_cleanse(text, sizeof(text));
    if (rc || p->kind == KJOIN_DISCOVERY_K3S)
        return rc;
    if (s->discovery_token)
        rc = parse_token(s->discovery_token, "`discovery_token`", &p->discovery_token, err);
    else if (origin)
        p->discovery_token = shared;
    p->has_discovery_token = !rc && (s->discovery_token || origin);
    if (!rc && s->tls_bootstrap_token)
        rc = parse_token(s->tls_bootstrap_token, "`tls_bootstrap_token`", &p->tls_bootstrap_token, err);
    else if (!rc && p->has_discovery_token)
        p->tls_bootstrap_token = origin ? shared : p->discovery_token;
    p->has_tls_bootstrap_token = !rc && (s->tls_bootstrap_token || p->has_discovery_token);
    kjoin_token_clear(&shared);
    return rc;
}

/* K3S_URL as `k3s agent` reads it: an https URL whose path is ignored, and
 * whose port is 443 when it names none. */
static kjoin_code k3s_url_authority(const char *url, char *out, size_t cap, kjoin_err *err)
{
    if (strncasecmp(url, "https://", 8) != 0)
        return kjoin_err_set(err, KJOIN_E_USAGE, "K3S_URL: only https:// URLs are supported, as K3s agents require");
    const char *host = url + 8;
    size_t n = strcspn(host, "/?#");
    const char *close = host[0] == '[' ? memchr(host, ']', n) : NULL;
    const char *after = close ? close + 1 : host;
    bool has_port = memchr(after, ':', n - (size_t)(after - host)) != NULL;
    if (!n || n + 5 >= cap)
        return kjoin_err_set(err, KJOIN_E_USAGE, "K3S_URL: no host, or a host too long");
    snprintf(out, cap, "%.*s%s", (int)n, host, has_port ? "" : ":443");
    return KJOIN_OK;
}

static kjoin_code resolve_endpoints(const kjoin_join_spec *s, kjoin_join_plan *p, kjoin_err *err)
{
    kjoin_err inner;
    if (s->n_endpoints > KJOIN_MAX_ENDPOINTS)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%zu `endpoints` given: at most %d endpoints", s->n_endpoints,
                             KJOIN_MAX_ENDPOINTS);
    if (s->n_endpoints && s->discovery_file)
        return kjoin_err_set(err, KJOIN_E_USAGE,
                             "`endpoints` (token discovery) and `discovery_file` are both set: give one");
    for (size_t i = 0; i < s->n_endpoints; i++)
        if (kjoin_endpoint_parse(s->endpoints[i], &p->endpoints[i], &inner))
            return kjoin_err_set(err, KJOIN_E_USAGE, "`endpoints`: %s", inner.msg);
    p->n_endpoints = s->n_endpoints;
    bool k3s_url = !s->n_endpoints && !s->discovery_file && s->flavor != KJOIN_FLAVOR_KUBEADM && set(s->env_k3s_url);
    if (k3s_url) {
        char authority[300];
        kjoin_code rc = k3s_url_authority(s->env_k3s_url, authority, sizeof(authority), err);
        if (!rc && kjoin_endpoint_parse(authority, &p->endpoints[0], &inner))
            rc = kjoin_err_set(err, KJOIN_E_USAGE, "K3S_URL: %s", inner.msg);
        if (rc)
            return rc;
        p->n_endpoints = 1;
    }
    if (!p->n_endpoints && !s->discovery_file)
        return kjoin_err_set(err, KJOIN_E_USAGE, "neither `endpoints` nor `discovery_file` is set: nothing to "
                                                 "discover the cluster from");
    return KJOIN_OK;
}

static bool valid_cluster_name(const char *s)
{
    if (!*s || strlen(s) > 253)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              strchr("-._", *s)))
            return false;
    return true;
}

static kjoin_code check_outputs(const kjoin_join_spec *s, kjoin_err *err)
{
    if (s->cluster_name && !valid_cluster_name(s->cluster_name))
        return kjoin_err_set(err, KJOIN_E_USAGE, "`cluster_name` \"%.253s\" is invalid: use letters, digits, '-', "
                                                 "'.', '_'", s->cluster_name);
    if (s->kubeconfig_out && !*s->kubeconfig_out)
        return kjoin_err_set(err, KJOIN_E_USAGE, "`kubeconfig_out` is empty");
    if (s->ca_cert_path && !*s->ca_cert_path)
        return kjoin_err_set(err, KJOIN_E_USAGE, "`ca_cert_path` is empty");
    if (s->timeout_ms < 0)
        return kjoin_err_set(err, KJOIN_E_USAGE, "`timeout_ms` is negative");
    return KJOIN_OK;
}

static kjoin_code check_consistency(const kjoin_join_spec *s, const kjoin_join_plan *p, kjoin_err *err)
{
    bool pinned = s->pins && kjoin_pinset_count(s->pins);
    if (s->unsafe_skip_ca_verification && pinned)
        return kjoin_err_set(err, KJOIN_E_USAGE,
                             "`unsafe_skip_ca_verification` contradicts `pins`: give one");
    if (p->kind == KJOIN_DISCOVERY_K3S)
        return s->discovery_file ? kjoin_err_set(err, KJOIN_E_USAGE,
                                                 "`discovery_file` is for kubeadm clusters, but K3s was chosen (%s); "
                                                 "set the `flavor` to kubeadm if the cluster is not K3s",
                                                 p->k3s_reason)
                                 : KJOIN_OK;
    if (s->discovery_file && (s->discovery_token || s->unsafe_skip_ca_verification))
        return kjoin_err_set(err, KJOIN_E_USAGE, "`discovery_token` and `unsafe_skip_ca_verification` are for "
                                                 "token discovery, not `discovery_file`");
    if (!s->discovery_file && !p->has_discovery_token)
        return kjoin_err_set(err, KJOIN_E_USAGE, "no bootstrap token: set `token_file`, `token`, "
                                                 "`discovery_token` or KJOIN_TOKEN");
    if (s->discovery_file && !p->has_tls_bootstrap_token)
        return kjoin_err_set(err, KJOIN_E_USAGE, "file discovery needs the token to write into the kubeconfig: "
                                                 "set `tls_bootstrap_token`, `token` or `token_file`");
    /* Said before anything runs (a node's preflight included), not when discovery starts. */
    if (!s->discovery_file && !pinned && !s->unsafe_skip_ca_verification)
        return kjoin_err_set(err, KJOIN_E_USAGE, "token discovery without a CA pin is unsafe: set `pins`, "
                                                 "or `unsafe_skip_ca_verification` to accept that risk");
    return KJOIN_OK;
}

void kjoin_join_plan_clear(kjoin_join_plan *p)
{
    if (p)
        OPENSSL_cleanse(p, sizeof(*p));
}

kjoin_code kjoin_join_resolve(const kjoin_join_spec *spec, kjoin_join_plan *out, kjoin_err *err)
{
    kjoin_join_plan p = {.kind = spec->discovery_file ? KJOIN_DISCOVERY_FILE : KJOIN_DISCOVERY_TOKEN,
                         .timeout_ms = spec->timeout_ms ? spec->timeout_ms : KJOIN_JOIN_DEFAULT_TIMEOUT_MS};
    kjoin_code rc = check_outputs(spec, err);
    if (!rc)
        rc = resolve_endpoints(spec, &p, err);
    if (!rc)
        rc = resolve_tokens(spec, &p, err);
    if (!rc)
        rc = check_consistency(spec, &p, err);
    if (!rc && spec->discovery_file) /* every input error before preflight */
        rc = kjoin_discovery_file_check(spec->discovery_file, err);
    if (!rc)
        *out = p;
    kjoin_join_plan_clear(rc ? &p : NULL);
    return rc;
}

/* ---- running it --------------------------------------------------------- */

static kjoin_code discover(const kjoin_join_spec *s, const kjoin_join_plan *p, kjoin_join_result *result,
                           kjoin_err *err)
{
    char masked[KJOIN_TOKEN_STR_MAX], limit[32];
    const char *id = s->audit_id ? s->audit_id : "-";
    kjoin_token_masked(p->has_discovery_token ? &p->discovery_token : &p->tls_bootstrap_token, masked);
    kjoin_duration_format(p->timeout_ms, limit, sizeof(limit));
    kjoin_discovery_common common = {.tls_bootstrap_token = &p->tls_bootstrap_token,
                                     .pins = s->pins,
                                     .timeout_ms = p->timeout_ms,
                                     .cluster_name = s->cluster_name,
                                     .audit_id = s->audit_id,
                                     .log = s->log,
                                     .log_ctx = s->log_ctx};
    if (p->kind == KJOIN_DISCOVERY_K3S) {
        const kjoin_k3s_token *t = &p->k3s_token;
        if (t->is_bootstrap)
            kjoin_token_masked(&t->bootstrap, masked);
        else
            snprintf(masked, sizeof(masked), "node:********");
        kjoin_logf(s->log, s->log_ctx, 0,
                   "[discovery] Join ID %s: K3s cluster (%s), token with%s CA hash, credentials %s, %zu "
                   "endpoint(s), timeout %s", id, p->k3s_reason, t->has_hash ? "" : "out", masked, p->n_endpoints,
                   limit);
        common.tls_bootstrap_token = t->is_bootstrap ? &t->bootstrap : NULL;
        /* A K3s agent always presents "node" with the token's password,
         * whatever user the token names (createProxyAndValidateToken). */
        common.username = "node";
        common.password = t->password;
        kjoin_k3s_discovery kd = {.common = common,
                                  .endpoints = p->endpoints,
                                  .n_endpoints = p->n_endpoints,
                                  .ca_hash = t->has_hash ? t->hash : NULL,
                                  .unsafe_skip_ca_verification = s->unsafe_skip_ca_verification};
        return kjoin_discover_k3s(&kd, result, err);
    }
    if (p->kind == KJOIN_DISCOVERY_FILE) {
        char shown[1024];
        kjoin_logf(s->log, s->log_ctx, 0, "[discovery] Join ID %s: discovery file %s, token %s, timeout %s", id,
                   kjoin_url_redact(s->discovery_file, shown, sizeof(shown)), masked, limit);
        kjoin_file_discovery fd = {.common = common, .source = s->discovery_file};
        return kjoin_discover_file(&fd, result, err);
    }
    kjoin_logf(s->log, s->log_ctx, 0, "[discovery] Join ID %s: token %s, %zu endpoint(s), timeout %s", id, masked,
               p->n_endpoints, limit);
    if (s->unsafe_skip_ca_verification)
        kjoin_logf(s->log, s->log_ctx, KJOIN_LOG_WARNING, "[discovery] WARNING: `unsafe_skip_ca_verification` is set: the CA is not "
                                          "pinned, so anyone who can answer on the endpoint and knows the token can "
                                          "impersonate the API server");
    kjoin_token_discovery td = {.common = common,
                                .endpoints = p->endpoints,
                                .n_endpoints = p->n_endpoints,
                                .discovery_token = &p->discovery_token,
                                .unsafe_skip_ca_verification = s->unsafe_skip_ca_verification,
                                .wait_for_token = s->wait_for_token};
    return kjoin_discover_token(&td, result, err);
}

/* The CA certificates the join trusts, as kubeadm leaves them in ca.crt. */
static bool trusted(const kjoin_cert_info *c, void *ctx)
{
    (void)ctx;
    return c->trust == KJOIN_TRUST_ANCHOR || c->trust == KJOIN_TRUST_CHAINED;
}

char *kjoin_join_trusted_ca_pem(const kjoin_join_result *r, size_t *len)
{
    *len = 0;
    return r->bundle ? kjoin_bundle_pem_filter(r->bundle, trusted, NULL, len) : NULL;
}

static const char *written_word(kjoin_write_result w)
{
    return w == KJOIN_WRITE_UNCHANGED ? "Unchanged:" : w == KJOIN_WRITE_REPLACED ? "Replaced" : "Wrote";
}

kjoin_code kjoin_join__write(kjoin_join_outcome *o, const char *kubeconfig_path, const char *ca_path, bool force,
                            kjoin_log_fn log, void *log_ctx, kjoin_err *err)
{
    const kjoin_join_result *r = &o->result;
    kjoin_code rc = kjoin_node_file_write(KJOIN_NODE_FILE_BOOTSTRAP_KUBECONFIG, kubeconfig_path, r->kubeconfig,
                                          r->kubeconfig_len, force, &o->kubeconfig_write, err);
    if (rc)
        return rc;
    o->written = true;
    kjoin_logf(log, log_ctx, 0, "[kubeconfig] %s %s (mode 0600)", written_word(o->kubeconfig_write), kubeconfig_path);
    if (!ca_path)
        return KJOIN_OK;
    size_t len = 0;
    char *pem = kjoin_join_trusted_ca_pem(r, &len);
    if (!pem || !len) {
        free(pem);
        return kjoin_err_set(err, KJOIN_E_OTHER, "no trusted CA certificate to write to %s", ca_path);
    }
    rc = kjoin_node_file_write(KJOIN_NODE_FILE_CA_CERT, ca_path, pem, len, force, &o->ca_write, err);
    free(pem);
    if (rc)
        return rc;
    o->ca_written = true;
    kjoin_logf(log, log_ctx, 0, "[discovery] %s the cluster CA to %s (mode 0644)", written_word(o->ca_write),
               ca_path);
    return KJOIN_OK;
}

void kjoin_join_outcome_release(kjoin_join_outcome *o)
{
    if (!o)
        return;
    kjoin_join_result_release(&o->result);
    memset(o, 0, sizeof(*o));
}

kjoin_code kjoin_join__planned(const kjoin_join_spec *spec, kjoin_join_plan *p, bool write, kjoin_join_outcome *out,
                               kjoin_err *err)
{
    kjoin_join_outcome o = {0};
    o.kind = p->kind;
    o.k3s = p->kind == KJOIN_DISCOVERY_K3S;
    const kjoin_token *id = o.k3s ? (p->k3s_token.is_bootstrap ? &p->k3s_token.bootstrap : NULL)
                            : p->has_discovery_token ? &p->discovery_token : &p->tls_bootstrap_token;
    if (id)
        memcpy(o.token_id, id->id, sizeof(o.token_id));
    kjoin_code rc = discover(spec, p, &o.result, err);
    kjoin_join_plan_clear(p);
    if (!rc && write)
        rc = kjoin_join__write(&o, spec->kubeconfig_out ? spec->kubeconfig_out : KJOIN_JOIN_DEFAULT_OUT,
                               spec->ca_cert_path, spec->force, spec->log, spec->log_ctx, err);
    if (rc) {
        kjoin_join_outcome_release(&o);
        return rc;
    }
    *out = o;
    return KJOIN_OK;
}

kjoin_code kjoin_join(const kjoin_join_spec *spec, kjoin_join_outcome *out, kjoin_err *err)
{
    kjoin_join_plan p;
    kjoin_code rc = kjoin_version_check(spec ? &spec->version : NULL, KJOIN_JOIN_SPEC_VERSION, "join specification",
                                        "KJOIN_JOIN_SPEC_INIT", err);
    if (!rc)
        rc = kjoin_join_resolve(spec, &p, err);
    return rc ? rc : kjoin_join__planned(spec, &p, !spec->dry_run, out, err);
}
