/* kjoin join: token discovery, then the TLS-bootstrap kubeconfig written
 * atomically. Flags follow kubeadm join. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <uuid/uuid.h>

#include <kjoin/discovery.h>
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
    OPT_TIMEOUT,
    OPT_OUT,
    OPT_CLUSTER_NAME,
    OPT_FORCE,
    OPT_DRY_RUN,
    OPT_OUTPUT,
    OPT_VERBOSE,
};

static const cli_opt join_opts[] = {
    {OPT_TOKEN, "token", 0, true, "TOKEN", "bootstrap token for discovery and TLS bootstrap (prefer --token-file)"},
    {OPT_DISCOVERY_TOKEN, "discovery-token", 0, true, "TOKEN", "token for discovery only"},
    {OPT_TLS_TOKEN, "tls-bootstrap-token", 0, true, "TOKEN", "token written into the kubeconfig"},
    {OPT_TOKEN_FILE, "token-file", 0, true, "FILE", "read --token from the first line of FILE (- for stdin)"},
    {OPT_PIN, "discovery-token-ca-cert-hash", 0, true, "PIN",
     "sha256:<hex> (SPKI) or root-sha256:<hex> (root DER); repeatable, comma-separated"},
    {OPT_UNSAFE, "discovery-token-unsafe-skip-ca-verification", 0, false, NULL,
     "join without CA pinning (unsafe: trusts whoever answers)"},
    {OPT_TIMEOUT, "discovery-timeout", 0, true, "DURATION", "deadline for the whole discovery (default 5m)"},
    {OPT_OUT, "kubeconfig-out", 0, true, "FILE", "where to write (default /etc/kubernetes/bootstrap-kubelet.conf)"},
    {OPT_CLUSTER_NAME, "cluster-name", 0, true, "NAME", "cluster name in the kubeconfig (default kubernetes)"},
    {OPT_FORCE, "force", 0, false, NULL, "replace an existing kubeconfig with different content"},
    {OPT_DRY_RUN, "dry-run", 0, false, NULL, "print the kubeconfig on stdout, write nothing"},
    {OPT_OUTPUT, "output", 'o', true, "FORMAT", "text (default) or json"},
    {OPT_VERBOSE, "v", 'v', true, "LEVEL", "log verbosity: 0 steps, 1 details"},
};

static const cli_verb join_verb = {
    .usage = "kjoin join ENDPOINT... [flags]",
    .summary = "Discover a cluster from a bootstrap token and a CA pin, verify it, and write a\n"
               "TLS-bootstrap kubeconfig. ENDPOINT is host:port, ipv4:port or [ipv6]:port,\n"
               "optionally with https://; several are tried in turn (HA control planes).",
    .opts = join_opts,
    .n_opts = sizeof(join_opts) / sizeof(join_opts[0]),
    .min_args = 1,
    .max_args = KJOIN_MAX_ENDPOINTS,
};

typedef struct join_args {
    const char *token, *discovery_token, *tls_token, *token_file;
    kjoin_pinset *pins;
    bool unsafe, force, dry_run;
    int64_t timeout_ms;
    const char *out_path, *cluster_name;
    cli_format format;
    long verbosity;
} join_args;

static kjoin_code on_opt(void *ctx, int id, const char *arg, kjoin_err *err)
{
    join_args *a = ctx;
    switch (id) {
    case OPT_TOKEN: a->token = arg; break;
    case OPT_DISCOVERY_TOKEN: a->discovery_token = arg; break;
    case OPT_TLS_TOKEN: a->tls_token = arg; break;
    case OPT_TOKEN_FILE: a->token_file = arg; break;
    case OPT_PIN: return kjoin_pinset_add(a->pins, arg, err);
    case OPT_UNSAFE: a->unsafe = true; break;
    case OPT_TIMEOUT: return kjoin_duration_parse(arg, &a->timeout_ms, err);
    case OPT_OUT: a->out_path = arg; break;
    case OPT_CLUSTER_NAME: a->cluster_name = arg; break;
    case OPT_FORCE: a->force = true; break;
    case OPT_DRY_RUN: a->dry_run = true; break;
    case OPT_OUTPUT: return cli_parse_format(arg, &a->format, err);
    case OPT_VERBOSE: return cli_parse_long("-v", arg, 0, 10, &a->verbosity, err);
    }
    return KJOIN_OK;
}

/* The token that --token, --token-file or KJOIN_TOKEN gives; *found is
 * false when none of them is set. KJOIN_TOKEN counts only without token flags. */
static kjoin_code shared_token(const join_args *a, kjoin_token *out, bool *found, kjoin_err *err)
{
    *found = true;
    if (a->token && a->token_file)
        return kjoin_err_set(err, KJOIN_E_USAGE, "give --token or --token-file, not both");
    if (a->token_file)
        return kjoin_token_read_file(a->token_file, out, err);
    if (a->token)
        return kjoin_token_parse(a->token, out, err);
    const char *env = getenv("KJOIN_TOKEN");
    if (env && *env && !a->discovery_token && !a->tls_token) {
        kjoin_err inner;
        if (kjoin_token_parse(env, out, &inner))
            return kjoin_err_set(err, KJOIN_E_USAGE, "KJOIN_TOKEN: %s", inner.msg);
        return KJOIN_OK;
    }
    *found = false;
    return KJOIN_OK;
}

/* kubeadm's precedence: a specific flag wins over the shared token, and the
 * TLS-bootstrap token defaults to the discovery token. */
static kjoin_code resolve_tokens(const join_args *a, kjoin_token *disc, kjoin_token *tls, kjoin_err *err)
{
    kjoin_token shared = {0};
    bool have_shared = false;
    kjoin_code rc = shared_token(a, &shared, &have_shared, err);
    if (!rc && a->discovery_token)
        rc = kjoin_token_parse(a->discovery_token, disc, err);
    else if (!rc && have_shared)
        *disc = shared;
    else if (!rc)
        rc = kjoin_err_set(err, KJOIN_E_USAGE,
                           "no bootstrap token: pass --token-file FILE, --token, --discovery-token or set KJOIN_TOKEN");
    if (!rc && a->tls_token)
        rc = kjoin_token_parse(a->tls_token, tls, err);
    else if (!rc)
        *tls = have_shared ? shared : *disc;
    kjoin_token_clear(&shared);
    return rc;
}

/* Overwrites the secret of a token given on the command line, so that it
 * does not stay visible in ps (it was visible until now: prefer --token-file). */
static void scrub_argv_token(const char *arg)
{
    char *dot = arg ? strchr(arg, '.') : NULL;
    if (dot)
        memset(dot + 1, '*', strlen(dot + 1));
}

static void log_line(void *ctx, int level, const char *line)
{
    if (level <= *(const long *)ctx)
        fprintf(stderr, "%s\n", line);
}

static void print_result(const join_args *a, const kjoin_join_result *r, const kjoin_token *disc,
                         const char *join_id)
{
    json_object *root = json_object_new_object(), *certs = json_object_new_array();
    json_object_object_add(root, "joinID", json_object_new_string(join_id));
    json_object_object_add(root, "kubeconfig", a->dry_run ? NULL : json_object_new_string(a->out_path));
    json_object_object_add(root, "server", json_object_new_string(r->server));
    json_object_object_add(root, "endpoint", json_object_new_string(r->endpoint));
    json_object_object_add(root, "clusterName",
                           json_object_new_string(a->cluster_name ? a->cluster_name : "kubernetes"));
    json_object_object_add(root, "tokenID", json_object_new_string(disc->id));
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

int cmd_join(int argc, char **argv)
{
    join_args a = {.timeout_ms = 5 * 60 * 1000,
                   .out_path = "/etc/kubernetes/bootstrap-kubelet.conf",
                   .pins = kjoin_pinset_new()};
    kjoin_token disc = {0}, tls = {0};
    kjoin_endpoint endpoints[KJOIN_MAX_ENDPOINTS];
    kjoin_join_result result = {0};
    kjoin_err err = {0};
    int first = 0;
    kjoin_code rc = a.pins ? KJOIN_OK : kjoin_err_set(&err, KJOIN_E_OTHER, "out of memory");
    if (!rc) {
        int p = cli_parse(&join_verb, argc, argv, on_opt, &a, &first, &err);
        if (p < 0) {
            kjoin_pinset_free(a.pins);
            return 0;
        }
        rc = (kjoin_code)p;
    }
    /* Every input is checked here, before any network access. */
    size_t n_endpoints = rc ? 0 : (size_t)(argc - first);
    for (size_t i = 0; !rc && i < n_endpoints; i++)
        rc = kjoin_endpoint_parse(argv[first + (int)i], &endpoints[i], &err);
    if (!rc)
        rc = resolve_tokens(&a, &disc, &tls, &err);
    scrub_argv_token(a.token);
    scrub_argv_token(a.discovery_token);
    scrub_argv_token(a.tls_token);
    if (!rc && a.cluster_name && !valid_cluster_name(a.cluster_name))
        rc = kjoin_err_set(&err, KJOIN_E_USAGE, "invalid --cluster-name \"%s\": use letters, digits, '-', '.', '_'",
                           a.cluster_name);
    if (!rc && !*a.out_path)
        rc = kjoin_err_set(&err, KJOIN_E_USAGE, "--kubeconfig-out must not be empty");
    if (!rc && a.unsafe && kjoin_pinset_count(a.pins))
        rc = kjoin_err_set(&err, KJOIN_E_USAGE,
                           "--discovery-token-unsafe-skip-ca-verification contradicts --discovery-token-ca-cert-hash");
    if (rc)
        goto out;

    uuid_t uu;
    char join_id[37], masked[KJOIN_TOKEN_STR_MAX], limit[32];
    uuid_generate_random(uu);
    uuid_unparse_lower(uu, join_id);
    kjoin_token_masked(&disc, masked);
    fprintf(stderr, "[discovery] Join ID %s: token %s, %zu endpoint(s), timeout %s\n", join_id, masked,
            n_endpoints, kjoin_duration_format(a.timeout_ms, limit, sizeof(limit)));
    if (a.unsafe)
        fprintf(stderr, "[discovery] WARNING: --discovery-token-unsafe-skip-ca-verification is set: the CA is "
                        "not pinned, so anyone who can answer on the endpoint and knows the token can "
                        "impersonate the API server\n");

    kjoin_token_discovery opts = {.endpoints = endpoints,
                                  .n_endpoints = n_endpoints,
                                  .discovery_token = &disc,
                                  .tls_bootstrap_token = &tls,
                                  .pins = a.pins,
                                  .unsafe_skip_ca_verification = a.unsafe,
                                  .timeout_ms = a.timeout_ms,
                                  .cluster_name = a.cluster_name,
                                  .audit_id = join_id,
                                  .log = log_line,
                                  .log_ctx = &a.verbosity};
    rc = kjoin_discover_token(&opts, &result, &err);
    if (rc)
        goto out;
    if (a.dry_run) {
        if (a.format == CLI_TEXT)
            fwrite(result.kubeconfig, 1, result.kubeconfig_len, stdout);
    } else {
        kjoin_write_result wr;
        rc = kjoin_file_write_atomic(a.out_path, result.kubeconfig, result.kubeconfig_len, a.force, &wr, &err);
        if (rc)
            goto out;
        fprintf(stderr, "[kubeconfig] %s %s (mode 0600)\n",
                wr == KJOIN_WRITE_UNCHANGED ? "Unchanged:" : wr == KJOIN_WRITE_REPLACED ? "Replaced" : "Wrote",
                a.out_path);
    }
    if (a.format == CLI_JSON)
        print_result(&a, &result, &disc, join_id);
out:
    kjoin_token_clear(&disc);
    kjoin_token_clear(&tls);
    kjoin_join_result_release(&result);
    kjoin_pinset_free(a.pins);
    return rc ? cli_fail(a.format, &err) : 0;
}
