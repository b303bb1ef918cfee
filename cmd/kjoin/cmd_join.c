/* kjoin join: token or file discovery, then the TLS-bootstrap kubeconfig
 * written atomically. Flags follow kubeadm join; --config reads a kubeadm
 * JoinConfiguration instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <uuid/uuid.h>

#include <kjoin/config.h>
#include <kjoin/discovery.h>
#include <kjoin/kubeconfig.h>
#include <kjoin/util.h>

#include "cli.h"
#include "verbs.h"

enum {
    OPT_TOKEN,
    OPT_DISCOVERY_TOKEN,
    OPT_TLS_TOKEN,
    OPT_TOKEN_FILE,
    OPT_PIN,
    OPT_UNSAFE,
    OPT_DISCOVERY_FILE,
    OPT_CONFIG,
    OPT_TIMEOUT,
    OPT_OUT,
    OPT_CLUSTER_NAME,
    OPT_FORCE,
    OPT_DRY_RUN,
    OPT_OUTPUT,
    OPT_VERBOSE,
    OPT_FLAVOR,
    OPT_NODE_LOCAL,   /* kubeadm's node-local flags: accepted, reported once */
    OPT_CONTROL_PLANE, /* kubeadm's control-plane join: refused */
};

static const cli_opt join_opts[] = {
    {OPT_TOKEN, "token", 0, true, "TOKEN", "bootstrap token for discovery and TLS bootstrap (prefer --token-file)"},
    {OPT_DISCOVERY_TOKEN, "discovery-token", 0, true, "TOKEN", "token for discovery only"},
    {OPT_TLS_TOKEN, "tls-bootstrap-token", 0, true, "TOKEN", "token written into the kubeconfig"},
    {OPT_TOKEN_FILE, "token-file", 0, true, "FILE", "read --token from the first line of FILE (- for stdin)"},
    {OPT_PIN, "discovery-token-ca-cert-hash", 0, true, "PIN",
     "sha256:<hex> (SPKI) or root-sha256:<hex> (root DER); repeatable, comma-separated"},
    {OPT_UNSAFE, "discovery-token-unsafe-skip-ca-verification", 0, false, NULL,
     "token discovery without CA pinning (unsafe: trusts whoever answers)"},
    {OPT_DISCOVERY_FILE, "discovery-file", 0, true, "SOURCE", "discover from a kubeconfig: a path, - or an https:// URL"},
    {OPT_CONFIG, "config", 0, true, "FILE", "a kubeadm JoinConfiguration (v1beta3 or v1beta4)"},
    {OPT_TIMEOUT, "discovery-timeout", 0, true, "DURATION", "deadline for the whole discovery (default 5m)"},
    {OPT_OUT, "kubeconfig-out", 0, true, "FILE", "where to write (default /etc/kubernetes/bootstrap-kubelet.conf)"},
    {OPT_CLUSTER_NAME, "cluster-name", 0, true, "NAME", "cluster name in the kubeconfig (default kubernetes)"},
    {OPT_FORCE, "force", 0, false, NULL, "replace an existing kubeconfig with different content"},
    {OPT_DRY_RUN, "dry-run", 0, false, NULL, "print the kubeconfig on stdout, write nothing"},
    {OPT_OUTPUT, "output", 'o', true, "FORMAT", "text (default) or json"},
    {OPT_VERBOSE, "v", 'v', true, "LEVEL", "log verbosity: 0 steps, 1 details"},
    {OPT_FLAVOR, "flavor", 0, true, "kubeadm|k3s",
     "cluster kind (default: k3s for K10... tokens or when K3S_TOKEN/K3S_URL are set, else kubeadm)"},
    {OPT_NODE_LOCAL, "node-name", 0, true, "NAME", "kubeadm's: accepted; kjoin registers no node"},
    {OPT_NODE_LOCAL, "cri-socket", 0, true, "PATH", "kubeadm's: accepted, does not apply (no container runtime)"},
    {OPT_NODE_LOCAL, "ignore-preflight-errors", 0, true, "LIST", "kubeadm's: accepted, does not apply (no preflight)"},
    {OPT_NODE_LOCAL, "skip-phases", 0, true, "LIST", "kubeadm's: accepted, does not apply (kjoin runs discovery only)"},
    {OPT_NODE_LOCAL, "patches", 0, true, "DIR", "kubeadm's: accepted, does not apply (no manifests)"},
    {OPT_CONTROL_PLANE, "control-plane", 0, false, NULL, "kubeadm's control-plane join: refused"},
    {OPT_CONTROL_PLANE, "certificate-key", 0, true, "KEY", "kubeadm's control-plane join: refused"},
    {OPT_CONTROL_PLANE, "apiserver-advertise-address", 0, true, "ADDR", "kubeadm's control-plane join: refused"},
    {OPT_CONTROL_PLANE, "apiserver-bind-port", 0, true, "PORT", "kubeadm's control-plane join: refused"},
};

static const cli_verb join_verb = {
    .usage = "kjoin join ENDPOINT... [flags] | kjoin join --discovery-file SOURCE [flags] | kjoin join --config FILE",
    .summary = "Discover a cluster and write a TLS-bootstrap kubeconfig. With ENDPOINTs (host:port,\n"
               "ipv4:port or [ipv6]:port, optionally with https://; several are tried in turn) it\n"
               "runs token discovery with a CA pin; with --discovery-file it trusts a kubeconfig\n"
               "distributed out of band; --config reads both from a kubeadm JoinConfiguration.",
    .opts = join_opts,
    .n_opts = sizeof(join_opts) / sizeof(join_opts[0]),
    .min_args = 0,
    .max_args = -1, /* checked with a message that names the limit */
};

typedef enum flavor { FLAVOR_AUTO, FLAVOR_KUBEADM, FLAVOR_K3S } flavor;

typedef struct join_args {
    flavor flavor;
    const char *token, *discovery_token, *tls_token, *token_file, *discovery_file, *config;
    kjoin_pinset *pins;
    bool unsafe, force, dry_run, has_timeout;
    int64_t timeout_ms;
    const char *out_path, *cluster_name;
    cli_format format;
    long verbosity;
    const char *ignored[8]; /* kubeadm node-local flags given, reported once */
    size_t n_ignored;
    const char *refused;    /* a control-plane flag given */
} join_args;

/* What to run, from flags or from --config. */
typedef struct join_plan {
    const char *discovery_file;     /* file discovery when set */
    kjoin_endpoint endpoints[KJOIN_MAX_ENDPOINTS];
    size_t n_endpoints;
    kjoin_token disc, tls;
    bool have_disc, have_tls;
    bool k3s;                       /* K3s discovery through /cacerts */
    const char *k3s_why;            /* what chose K3s, for the log */
    kjoin_k3s_token k3s_token;
    const kjoin_pinset *pins;
    bool unsafe;
    int64_t timeout_ms;
} join_plan;

static kjoin_code on_opt(void *ctx, int id, const char *arg, kjoin_err *err)
{
    join_args *a = ctx;
    switch (id) {
    case OPT_NODE_LOCAL:
        for (size_t i = 0; i < a->n_ignored; i++)
            if (a->ignored[i] == cli_current_flag)
                return KJOIN_OK; /* reported once, however often given */
        if (a->n_ignored < sizeof(a->ignored) / sizeof(a->ignored[0]))
            a->ignored[a->n_ignored++] = cli_current_flag;
        break;
    case OPT_CONTROL_PLANE:
        a->refused = cli_current_flag;
        break;
    case OPT_TOKEN: a->token = arg; break;
    case OPT_DISCOVERY_TOKEN: a->discovery_token = arg; break;
    case OPT_TLS_TOKEN: a->tls_token = arg; break;
    case OPT_TOKEN_FILE: a->token_file = arg; break;
    case OPT_PIN: return kjoin_pinset_add(a->pins, arg, err);
    case OPT_UNSAFE: a->unsafe = true; break;
    case OPT_DISCOVERY_FILE: a->discovery_file = arg; return kjoin_discovery_source_check(arg, err);
    case OPT_CONFIG: a->config = arg; break;
    case OPT_TIMEOUT: a->has_timeout = true; return kjoin_duration_parse(arg, &a->timeout_ms, err);
    case OPT_OUT: a->out_path = arg; break;
    case OPT_CLUSTER_NAME: a->cluster_name = arg; break;
    case OPT_FORCE: a->force = true; break;
    case OPT_DRY_RUN: a->dry_run = true; break;
    case OPT_OUTPUT: return cli_parse_format(arg, &a->format, err);
    case OPT_VERBOSE: return cli_parse_long("-v", arg, 0, 10, &a->verbosity, err);
    case OPT_FLAVOR:
        if (strcmp(arg, "kubeadm") && strcmp(arg, "k3s"))
            return kjoin_err_set(err, KJOIN_E_USAGE, "--flavor takes kubeadm or k3s, not \"%s\"", arg);
        a->flavor = strcmp(arg, "k3s") == 0 ? FLAVOR_K3S : FLAVOR_KUBEADM;
        break;
    }
    return KJOIN_OK;
}

#define TOKEN_TEXT_MAX 600

/* The text that --token, --token-file or KJOIN_TOKEN gives (a secret: the
 * caller wipes it); *found is false when none of them is set. KJOIN_TOKEN
 * counts only without token flags. */
static kjoin_code shared_text(const join_args *a, char buf[TOKEN_TEXT_MAX], bool *found, kjoin_err *err)
{
    *found = true;
    if (a->token && a->token_file)
        return kjoin_err_set(err, KJOIN_E_USAGE, "give --token or --token-file, not both");
    if (a->token_file)
        return kjoin_token_read_line(a->token_file, buf, TOKEN_TEXT_MAX, err);
    const char *env = getenv("KJOIN_TOKEN"), *k3s_env = getenv("K3S_TOKEN");
    if ((!env || !*env) && a->flavor != FLAVOR_KUBEADM && k3s_env && *k3s_env)
        env = k3s_env; /* what K3s agents are given */
    const char *text = a->token ? a->token : env && *env && !a->discovery_token && !a->tls_token ? env : NULL;
    *found = text != NULL;
    if (text && strlen(text) >= TOKEN_TEXT_MAX)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the token is too long");
    if (text)
        memcpy(buf, text, strlen(text) + 1);
    return KJOIN_OK;
}

/* Why the cluster is K3s, or NULL when it is not: the flag, the token's
 * K10 prefix, or the variables K3s agents are configured with. */
static const char *k3s_reason(const join_args *a, bool have_text, const char *text)
{
    const char *t = getenv("K3S_TOKEN"), *u = getenv("K3S_URL");
    if (a->flavor == FLAVOR_K3S)
        return "--flavor k3s";
    if (a->flavor == FLAVOR_KUBEADM)
        return NULL;
    if (have_text && kjoin_token_is_k3s(text))
        return "a K10 token";
    return u && *u ? "K3S_URL is set" : t && *t ? "K3S_TOKEN is set" : NULL;
}

/* kubeadm's precedence: a specific flag wins over the shared token, and the
 * TLS-bootstrap token defaults to the discovery token. A K3s token (by
 * --flavor, else by its form) switches to K3s discovery. */
static kjoin_code resolve_tokens(const join_args *a, join_plan *p, kjoin_err *err)
{
    char text[TOKEN_TEXT_MAX] = "";
    kjoin_token shared = {0};
    bool have_shared = false;
    kjoin_err inner;
    kjoin_code rc = shared_text(a, text, &have_shared, err);
    p->k3s_why = rc ? NULL : k3s_reason(a, have_shared, text);
    p->k3s = p->k3s_why != NULL;
    if (!rc && p->k3s) {
        if (!have_shared || a->discovery_token || a->tls_token)
            rc = kjoin_err_set(err, KJOIN_E_USAGE,
                               "K3s discovery takes one token (--token-file, --token or KJOIN_TOKEN), not "
                               "--discovery-token or --tls-bootstrap-token");
        else
            rc = kjoin_k3s_token_parse(text, &p->k3s_token, err);
        OPENSSL_cleanse(text, sizeof(text));
        return rc;
    }
    if (!rc && have_shared && (rc = kjoin_token_parse(text, &shared, &inner)))
        kjoin_err_set(err, rc, "%s%s", a->token_file ? "token file: " : !a->token ? "KJOIN_TOKEN: " : "", inner.msg);
    OPENSSL_cleanse(text, sizeof(text));
    if (!rc && a->discovery_token)
        rc = kjoin_token_parse(a->discovery_token, &p->disc, err), p->have_disc = !rc;
    else if (!rc && have_shared)
        p->disc = shared, p->have_disc = true;
    if (!rc && a->tls_token)
        rc = kjoin_token_parse(a->tls_token, &p->tls, err), p->have_tls = !rc;
    else if (!rc && (have_shared || p->have_disc))
        p->tls = have_shared ? shared : p->disc, p->have_tls = true;
    kjoin_token_clear(&shared);
    return rc;
}

/* The plan from flags and positional endpoints. */
static kjoin_code plan_from_flags(const join_args *a, char **endpoints, size_t n, join_plan *p, kjoin_err *err)
{
    kjoin_code rc = KJOIN_OK;
    if (n > KJOIN_MAX_ENDPOINTS)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%zu endpoints given: at most %d endpoints", n, KJOIN_MAX_ENDPOINTS);
    if (n && a->discovery_file)
        return kjoin_err_set(err, KJOIN_E_USAGE, "give ENDPOINTs (token discovery) or --discovery-file, not both");
    const char *k3s_url = a->flavor != FLAVOR_KUBEADM ? getenv("K3S_URL") : NULL;
    bool from_env = !n && !a->discovery_file && k3s_url && *k3s_url;
    if (!n && !a->discovery_file && !from_env)
        return kjoin_err_set(err, KJOIN_E_USAGE, "give an API server ENDPOINT, --discovery-file or --config; see --help");
    for (size_t i = 0; !rc && i < n; i++)
        rc = cli_flag_err("endpoint", kjoin_endpoint_parse(endpoints[i], &p->endpoints[i], err), err);
    if (from_env)
        rc = cli_flag_err("K3S_URL", kjoin_endpoint_parse(k3s_url, &p->endpoints[0], err), err), n = 1;
    p->n_endpoints = n;
    if (!rc)
        rc = resolve_tokens(a, p, err);
    if (rc)
        return rc;
    p->discovery_file = a->discovery_file;
    p->pins = a->pins;
    p->unsafe = a->unsafe;
    if (p->k3s)
        return a->discovery_file ? kjoin_err_set(err, KJOIN_E_USAGE,
                                                 "--discovery-file is for kubeadm clusters, but K3s was chosen (%s); "
                                                 "pass --flavor kubeadm if the cluster is not K3s", p->k3s_why)
               : a->unsafe && kjoin_pinset_count(a->pins)
                   ? kjoin_err_set(err, KJOIN_E_USAGE,
                                   "--discovery-token-unsafe-skip-ca-verification contradicts --discovery-token-ca-cert-hash")
                   : KJOIN_OK;
    if (a->discovery_file && (a->discovery_token || a->unsafe))
        return kjoin_err_set(err, KJOIN_E_USAGE,
                             "--discovery-token and --discovery-token-unsafe-skip-ca-verification are for token "
                             "discovery, not --discovery-file");
    if (!a->discovery_file && !p->have_disc)
        return kjoin_err_set(err, KJOIN_E_USAGE,
                             "no bootstrap token: pass --token-file FILE, --token, --discovery-token or set KJOIN_TOKEN");
    if (a->discovery_file && !p->have_tls)
        return kjoin_err_set(err, KJOIN_E_USAGE,
                             "file discovery needs the token to write into the kubeconfig: pass "
                             "--tls-bootstrap-token, --token or --token-file");
    if (a->unsafe && kjoin_pinset_count(a->pins))
        return kjoin_err_set(err, KJOIN_E_USAGE,
                             "--discovery-token-unsafe-skip-ca-verification contradicts --discovery-token-ca-cert-hash");
    return KJOIN_OK;
}

/* The plan from a JoinConfiguration; only output flags may go with it. */
static kjoin_code plan_from_config(const join_args *a, size_t n_args, kjoin_join_config *cfg, join_plan *p,
                                   kjoin_err *err)
{
    if (a->flavor == FLAVOR_K3S)
        return kjoin_err_set(err, KJOIN_E_USAGE, "--config holds a kubeadm JoinConfiguration, not a K3s join");
    if (n_args || a->token || a->discovery_token || a->tls_token || a->token_file || a->discovery_file ||
        a->unsafe || a->has_timeout || kjoin_pinset_count(a->pins))
        return kjoin_err_set(err, KJOIN_E_USAGE,
                             "--config cannot be mixed with ENDPOINTs or discovery flags (as kubeadm); put them "
                             "in the JoinConfiguration");
    char *text = NULL;
    size_t len = 0;
    kjoin_err inner;
    kjoin_code rc = kjoin_file_read(a->config, KJOIN_KUBECONFIG_MAX, &text, &len, err);
    if (!rc && (rc = kjoin_join_config_parse(text, len, cfg, &inner)))
        kjoin_err_set(err, rc, "%s: %s", a->config, inner.msg);
    free(text);
    if (rc)
        return rc;
    for (size_t i = 0; i < cfg->n_skipped; i++)
        fprintf(stderr, "[config] Skipping %s\n", cfg->skipped[i]);
    p->discovery_file = cfg->file;
    if (cfg->has_bootstrap_token) {
        p->endpoints[0] = cfg->endpoint;
        p->n_endpoints = 1;
        p->disc = cfg->token;
        p->have_disc = true;
    }
    p->have_tls = cfg->has_tls_bootstrap_token || cfg->has_bootstrap_token;
    p->tls = cfg->has_tls_bootstrap_token ? cfg->tls_bootstrap_token : cfg->token;
    p->pins = cfg->pins;
    p->unsafe = cfg->unsafe_skip_ca_verification;
    if (cfg->has_timeout)
        p->timeout_ms = cfg->timeout_ms;
    if (p->discovery_file && !p->have_tls)
        return kjoin_err_set(err, KJOIN_E_USAGE,
                             "%s: file discovery needs discovery.tlsBootstrapToken, the token written into the "
                             "kubeconfig", a->config);
    return KJOIN_OK;
}

static void log_line(void *ctx, int level, const char *line)
{
    if (level <= *(const long *)ctx)
        fprintf(stderr, "%s\n", line);
}

static void print_result(const join_args *a, const kjoin_join_result *r, const join_plan *p, const char *join_id)
{
    json_object *root = json_object_new_object(), *certs = json_object_new_array();
    json_object_object_add(root, "joinID", json_object_new_string(join_id));
    json_object_object_add(root, "kubeconfig", a->dry_run ? NULL : json_object_new_string(a->out_path));
    json_object_object_add(root, "server", json_object_new_string(r->server));
    json_object_object_add(root, "endpoint", json_object_new_string(r->endpoint));
    json_object_object_add(root, "discovery", json_object_new_string(p->k3s ? "k3s" : p->discovery_file ? "file" : "token"));
    json_object_object_add(root, "flavor", json_object_new_string(p->k3s ? "k3s" : "kubeadm"));
    json_object_object_add(root, "clusterName",
                           json_object_new_string(a->cluster_name ? a->cluster_name : "kubernetes"));
    const char *token_id = p->k3s ? (p->k3s_token.is_bootstrap ? p->k3s_token.bootstrap.id : NULL)
                                   : p->have_disc ? p->disc.id : p->tls.id;
    json_object_object_add(root, "tokenID", token_id ? json_object_new_string(token_id) : NULL);
    for (size_t i = 0; i < kjoin_bundle_count(r->bundle); i++) {
        const kjoin_cert_info *c = kjoin_bundle_cert(r->bundle, i);
        if (c->trust == KJOIN_TRUST_ANCHOR || c->trust == KJOIN_TRUST_CHAINED)
            json_object_array_add(certs, cli_cert_json(c, false));
    }
    json_object_object_add(root, "caCertificates", certs);
    json_object_object_add(root, "attempts", json_object_new_int((int)r->attempts));
    json_object_object_add(root, "elapsedMs", json_object_new_int64(r->elapsed_ms));
    cli_print_json(root);
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

static kjoin_code discover(const join_args *a, const join_plan *p, const char *join_id, kjoin_join_result *result,
                           kjoin_err *err)
{
    char masked[KJOIN_TOKEN_STR_MAX], limit[32];
    kjoin_token_masked(p->have_disc ? &p->disc : &p->tls, masked);
    kjoin_duration_format(p->timeout_ms, limit, sizeof(limit));
    kjoin_discovery_common common = {.tls_bootstrap_token = &p->tls,
                                     .pins = p->pins,
                                     .timeout_ms = p->timeout_ms,
                                     .cluster_name = a->cluster_name,
                                     .audit_id = join_id,
                                     .log = log_line,
                                     .log_ctx = (void *)&a->verbosity};
    if (p->k3s) {
        const kjoin_k3s_token *t = &p->k3s_token;
        if (t->is_bootstrap)
            kjoin_token_masked(&t->bootstrap, masked);
        else
            snprintf(masked, sizeof(masked), "%.12s:********", *t->username ? t->username : "node");
        fprintf(stderr, "[discovery] Join ID %s: K3s cluster (%s), token with%s CA hash, credentials %s, %zu "
                        "endpoint(s), timeout %s\n",
                join_id, p->k3s_why, t->has_hash ? "" : "out", masked, p->n_endpoints, limit);
        common.tls_bootstrap_token = t->is_bootstrap ? &t->bootstrap : NULL;
        common.username = *t->username ? t->username : "node"; /* what K3s agents send */
        common.password = t->password;
        kjoin_k3s_discovery kd = {.common = common,
                                  .endpoints = p->endpoints,
                                  .n_endpoints = p->n_endpoints,
                                  .ca_hash = t->has_hash ? t->hash : NULL,
                                  .unsafe_skip_ca_verification = p->unsafe};
        return kjoin_discover_k3s(&kd, result, err);
    }
    if (p->discovery_file) {
        char shown[1024];
        fprintf(stderr, "[discovery] Join ID %s: discovery file %s, token %s, timeout %s\n", join_id,
                kjoin_url_redact(p->discovery_file, shown, sizeof(shown)), masked, limit);
        kjoin_file_discovery fd = {.common = common, .source = p->discovery_file};
        return kjoin_discover_file(&fd, result, err);
    }
    fprintf(stderr, "[discovery] Join ID %s: token %s, %zu endpoint(s), timeout %s\n", join_id, masked,
            p->n_endpoints, limit);
    if (p->unsafe)
        fprintf(stderr, "[discovery] WARNING: --discovery-token-unsafe-skip-ca-verification is set: the CA is "
                        "not pinned, so anyone who can answer on the endpoint and knows the token can "
                        "impersonate the API server\n");
    kjoin_token_discovery td = {.common = common,
                                .endpoints = p->endpoints,
                                .n_endpoints = p->n_endpoints,
                                .discovery_token = &p->disc,
                                .unsafe_skip_ca_verification = p->unsafe};
    return kjoin_discover_token(&td, result, err);
}

static kjoin_code write_output(const join_args *a, const kjoin_join_result *r, kjoin_err *err)
{
    if (a->dry_run) {
        if (a->format == CLI_TEXT)
            fwrite(r->kubeconfig, 1, r->kubeconfig_len, stdout);
        return KJOIN_OK;
    }
    kjoin_write_result wr;
    kjoin_code rc = kjoin_file_write_atomic(a->out_path, r->kubeconfig, r->kubeconfig_len, a->force, &wr, err);
    if (!rc)
        fprintf(stderr, "[kubeconfig] %s %s (mode 0600)\n",
                wr == KJOIN_WRITE_UNCHANGED ? "Unchanged:" : wr == KJOIN_WRITE_REPLACED ? "Replaced" : "Wrote",
                a->out_path);
    return rc;
}

int cmd_join(int argc, char **argv)
{
    join_args a = {.format = cli_format_from_argv(argc, argv),
                   .timeout_ms = 5 * 60 * 1000,
                   .out_path = "/etc/kubernetes/bootstrap-kubelet.conf",
                   .pins = kjoin_pinset_new()};
    join_plan p = {0};
    kjoin_join_config cfg = {0};
    kjoin_join_result result = {0};
    kjoin_err err = {0};
    int first = 0;
    kjoin_code rc = a.pins ? KJOIN_OK : kjoin_err_set(&err, KJOIN_E_OTHER, "out of memory");
    if (!rc) {
        int parsed = cli_parse(&join_verb, argc, argv, on_opt, &a, &first, &err);
        if (parsed < 0) {
            kjoin_pinset_free(a.pins);
            return 0;
        }
        rc = (kjoin_code)parsed;
    }
    /* Every input is checked here, before any network access. */
    size_t n_args = rc ? 0 : (size_t)(argc - first);
    if (!rc && a.refused)
        rc = kjoin_err_set(&err, KJOIN_E_USAGE,
                           "--%s is for joining a control-plane node, which kjoin does not do; use kubeadm join "
                           "--control-plane for that", a.refused);
    for (size_t i = 0; !rc && i < a.n_ignored; i++)
        fprintf(stderr, "[join] --%s is a kubeadm node-local flag that does not apply to kjoin: ignored\n",
                a.ignored[i]);
    p.timeout_ms = a.timeout_ms;
    if (!rc)
        rc = a.config ? plan_from_config(&a, n_args, &cfg, &p, &err)
                      : plan_from_flags(&a, argv + first, n_args, &p, &err);
    cli_scrub_secret((char *)a.token);
    cli_scrub_secret((char *)a.discovery_token);
    cli_scrub_secret((char *)a.tls_token);
    if (!rc && a.cluster_name && !valid_cluster_name(a.cluster_name))
        rc = kjoin_err_set(&err, KJOIN_E_USAGE, "invalid --cluster-name \"%s\": use letters, digits, '-', '.', '_'",
                           a.cluster_name);
    if (!rc && !*a.out_path)
        rc = kjoin_err_set(&err, KJOIN_E_USAGE, "--kubeconfig-out must not be empty");

    uuid_t uu;
    char join_id[37];
    uuid_generate_random(uu);
    uuid_unparse_lower(uu, join_id);
    if (!rc)
        rc = discover(&a, &p, join_id, &result, &err);
    if (!rc)
        rc = write_output(&a, &result, &err);
    if (!rc && a.format == CLI_JSON)
        print_result(&a, &result, &p, join_id);
    kjoin_token_clear(&p.disc);
    kjoin_token_clear(&p.tls);
    kjoin_k3s_token_clear(&p.k3s_token);
    kjoin_join_result_release(&result);
    kjoin_join_config_release(&cfg);
    kjoin_pinset_free(a.pins);
    return rc ? cli_fail(a.format, &err) : 0;
}
