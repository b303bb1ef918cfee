/* kjoin token generate | create | list | delete: kubeadm's token UX. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include <kjoin/approver.h>
#include <kjoin/controlplane.h>
#include <kjoin/kubeapi.h>
#include <kjoin/pin.h>
#include <kjoin/token.h>
#include <kjoin/util.h>

#include "cli.h"
#include "verbs.h"

#define SECRETS_PATH "/api/v1/namespaces/kube-system/secrets"
#define DEFAULT_GROUP "system:bootstrappers:kubeadm:default-node-token"

enum {
    OPT_OUTPUT, OPT_KUBECONFIG, OPT_CONTEXT, OPT_TTL, OPT_USAGES, OPT_GROUPS, OPT_DESCRIPTION, OPT_PRINT_JOIN,
    OPT_TOKEN_FILE, OPT_SHOW_SECRETS, OPT_TIMEOUT, OPT_VERBOSE, OPT_QUIET, OPT_CERTIFICATE_KEY, OPT_NODE_NAME,
    OPT_SINGLE_USE,
};

#define O_OUTPUT {OPT_OUTPUT, "output", 'o', true, "FORMAT", "text (default) or json"}
#define O_KUBECONFIG {OPT_KUBECONFIG, "kubeconfig", 0, true, "FILE", \
    "admin credentials (default: $KUBECONFIG, else " KJOIN_KUBEAPI_DEFAULT_KUBECONFIG ")"}
#define O_CONTEXT {OPT_CONTEXT, "context", 0, true, "NAME", "the kubeconfig context to use (default: current)"}
#define O_TIMEOUT {OPT_TIMEOUT, "timeout", 0, true, "DURATION", "deadline for the whole command (default 1m)"}
#define O_VERBOSE {OPT_VERBOSE, "v", 'v', true, "LEVEL", "log verbosity: 4 each request, 6 response headers"}, \
                  {OPT_QUIET, "quiet", 'q', false, NULL, "print errors only"}

static const cli_opt generate_opts[] = {O_OUTPUT};
static const cli_opt create_opts[] = {
    O_KUBECONFIG, O_CONTEXT,
    {OPT_TTL, "ttl", 0, true, "DURATION", "lifetime of the token; 0 never expires (default 24h0m0s)"},
    {OPT_USAGES, "usages", 0, true, "LIST", "signing,authentication (default both)"},
    {OPT_GROUPS, "groups", 0, true, "LIST",
     "extra groups, each system:bootstrappers:... (default " DEFAULT_GROUP "; with --node-name none)"},
    {OPT_DESCRIPTION, "description", 0, true, "TEXT", "a human-readable description"},
    {OPT_PRINT_JOIN, "print-join-command", 0, false, NULL, "print the whole kjoin join command line"},
    {OPT_CERTIFICATE_KEY, "certificate-key", 0, true, "KEY",
     "with --print-join-command: the control-plane join line, with this key (kubeadm init phase upload-certs's)"},
    {OPT_TOKEN_FILE, "token-file", 0, true, "FILE", "take the token from the first line of FILE (- for stdin)"},
    {OPT_NODE_NAME, "node-name", 0, true, "NAME",
     "bind the token to this one node: 'kjoin approver' approves only its kubelet client certificate"},
    {OPT_SINGLE_USE, "single-use", 0, false, NULL, "with --node-name: the token makes its node once, then is deleted"},
    O_TIMEOUT, O_OUTPUT, O_VERBOSE,
};
static const cli_opt list_opts[] = {
    O_KUBECONFIG, O_CONTEXT,
    {OPT_SHOW_SECRETS, "show-secrets", 0, false, NULL, "show whole tokens, not id.****************"},
    O_TIMEOUT, O_OUTPUT, O_VERBOSE,
};
static const cli_opt delete_opts[] = {O_KUBECONFIG, O_CONTEXT, O_TIMEOUT, O_OUTPUT, O_VERBOSE};

#define VERB_OPTS(t) .opts = t, .n_opts = sizeof(t) / sizeof(t[0])

static const cli_verb generate_verb = {
    .usage = "kjoin token generate [flags]",
    .summary = "Print a new random bootstrap token ([a-z0-9]{6}.[a-z0-9]{16}) drawn from\n"
               "OpenSSL's CSPRNG. Nothing is sent to a cluster: use 'kjoin token create' for that.",
    VERB_OPTS(generate_opts), .min_args = 0, .max_args = 0,
};
static const cli_verb create_verb = {
    .usage = "kjoin token create [TOKEN] [flags]",
    .summary = "Create a bootstrap token on the cluster (a bootstrap.kubernetes.io/token Secret in\n"
               "kube-system, as kubeadm writes it) and print it. Without TOKEN or --token-file a\n"
               "random one is made. Needs create on secrets in kube-system.",
    VERB_OPTS(create_opts), .min_args = 0, .max_args = 1,
};
static const cli_verb list_verb = {
    .usage = "kjoin token list [flags]",
    .summary = "List the cluster's bootstrap tokens with kubeadm's columns. Secrets are masked\n"
               "unless --show-secrets. Needs list on secrets in kube-system.",
    VERB_OPTS(list_opts), .min_args = 0, .max_args = 0,
};
static const cli_verb delete_verb = {
    .usage = "kjoin token delete ID|TOKEN... [flags]",
    .summary = "Delete bootstrap tokens by id or whole token. A token that does not exist is\n"
               "reported and the command exits 6 after trying the rest.",
    VERB_OPTS(delete_opts), .min_args = 1, .max_args = -1,
};

typedef struct token_args {
    cli_format format;
    const char *kubeconfig, *context, *token_file, *groups, *description, *node_name;
    char *certificate_key;  /* --certificate-key's copy (a secret: wiped) */
    bool print_join, show_secrets, groups_set, single_use;
    int64_t ttl_ms, timeout_ms;
    long verbosity;
    kjoin_token_spec spec;
} token_args;

/* "0", "0s", "0h"...: no expiry, as kubeadm's --ttl 0. */
static bool is_zero_duration(const char *s)
{
    size_t z = strspn(s, "0");
    return z > 0 && strspn(s + z, "hms") == strlen(s + z) && strlen(s + z) <= 1;
}

static kjoin_code on_opt(void *ctx, int id, const char *arg, kjoin_err *err)
{
    token_args *a = ctx;
    switch (id) {
    case OPT_OUTPUT: return cli_parse_format(arg, &a->format, err);
    case OPT_KUBECONFIG: a->kubeconfig = arg; break;
    case OPT_CONTEXT: a->context = arg; break;
    case OPT_TTL:
        if (is_zero_duration(arg)) {
            a->ttl_ms = 0;
            return KJOIN_OK;
        }
        return cli_flag_err("--ttl", kjoin_duration_parse(arg, &a->ttl_ms, err), err);
    case OPT_USAGES: return cli_flag_err("--usages", kjoin_token_usages_parse(arg, &a->spec, err), err);
    case OPT_GROUPS:
        a->groups = arg;
        a->groups_set = true;
        return cli_flag_err("--groups", kjoin_token_groups_check(arg, err), err);
    case OPT_DESCRIPTION:
        if (strlen(arg) >= KJOIN_TOKEN_DESCRIPTION_MAX)
            return kjoin_err_set(err, KJOIN_E_USAGE, "--description is longer than %d characters",
                                 KJOIN_TOKEN_DESCRIPTION_MAX - 1);
        a->description = arg;
        break;
    case OPT_PRINT_JOIN: a->print_join = true; break;
    case OPT_CERTIFICATE_KEY: {
        kjoin_certificate_key key;
        kjoin_code rc = kjoin_certificate_key_parse(arg, &key, err);
        kjoin_certificate_key_clear(&key);
        if (rc)
            return cli_flag_err("--certificate-key", rc, err);
        kjoin_free_wiped_str(a->certificate_key);
        if (!(a->certificate_key = strdup(arg)))
            return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
        cli_scrub_secret((char *)arg);
        break;
    }
    case OPT_TOKEN_FILE: a->token_file = arg; break;
    case OPT_NODE_NAME: a->node_name = arg; break;
    case OPT_SINGLE_USE: a->single_use = true; break;
    case OPT_SHOW_SECRETS: a->show_secrets = true; break;
    case OPT_TIMEOUT: return cli_flag_err("--timeout", kjoin_duration_parse(arg, &a->timeout_ms, err), err);
    case OPT_VERBOSE: return cli_parse_long("-v", arg, 0, 10, &a->verbosity, err);
    case OPT_QUIET: a->verbosity = -1; break;
    }
    return KJOIN_OK;
}

static kjoin_code connect_api(const token_args *a, kjoin_kubeapi **out, kjoin_err *err)
{
    return cli_kubeapi(a->kubeconfig, a->context, false, a->timeout_ms, &a->verbosity, out, err);
}

static const char *usages_text(const kjoin_token_spec *s)
{
    return s->usage_authentication && s->usage_signing ? "authentication,signing"
           : s->usage_authentication                    ? "authentication"
           : s->usage_signing                           ? "signing"
                                                        : "";
}

static json_object *usages_json(const kjoin_token_spec *s)
{
    json_object *u = json_object_new_array();
    if (s->usage_authentication)
        json_object_array_add(u, json_object_new_string("authentication"));
    if (s->usage_signing)
        json_object_array_add(u, json_object_new_string("signing"));
    return u;
}

/* nodeName, singleUse and (when known) used, for a bound token. */
static void binding_json(json_object *o, const kjoin_token_spec *s, const bool *spent)
{
    if (!*s->bound_node)
        return;
    json_object_object_add(o, "nodeName", json_object_new_string(s->bound_node));
    json_object_object_add(o, "singleUse", json_object_new_boolean(s->single_use));
    if (spent)
        json_object_object_add(o, "used", json_object_new_boolean(*spent));
}

static json_object *groups_json(const char *groups)
{
    json_object *g = json_object_new_array();
    for (const char *p = groups; *p;) {
        size_t n = strcspn(p, ",");
        json_object_array_add(g, json_object_new_string_len(p, (int)n));
        p += n + (p[n] == ',');
    }
    return g;
}

/* The line that joins with this token: the server and the sha256: pins of
 * the kubeconfig's root CAs. */
/* kjoin join's line for the cluster of api with token (and with key, a
 * control-plane node's line, as kubeadm prints it). */
static kjoin_code join_command(const kjoin_kubeapi *api, const char *token, const char *key, const char *node,
                               char *out, size_t cap, kjoin_err *err)
{
    size_t ca_len = 0;
    const char *ca = kjoin_kubeapi_ca_pem(api, &ca_len);
    const char *server = kjoin_kubeapi_server(api) + strlen("https://");
    if (!ca)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the kubeconfig has no CA, so there is no pin for a join command");
    kjoin_bundle *b = NULL;
    kjoin_err inner;
    if (kjoin_bundle_parse(ca, ca_len, &b, &inner))
        return kjoin_err_set(err, KJOIN_E_USAGE, "the kubeconfig's CA: %s", inner.msg);
    char pins[KJOIN_BUNDLE_MAX_CERTS * KJOIN_PIN_STR_MAX] = "";
    size_t used = 0;
    for (size_t i = 0; i < kjoin_bundle_count(b); i++) {
        const kjoin_cert_info *c = kjoin_bundle_cert(b, i);
        if (c->role == KJOIN_CERT_ROOT)
            used += (size_t)snprintf(pins + used, sizeof(pins) - used, "%s%s", used ? "," : "", c->spki_pin);
    }
    kjoin_bundle_free(b);
    int n = snprintf(out, cap, "kjoin join %.*s --token %s --discovery-token-ca-cert-hash %s%s%s%s%s",
                     (int)strcspn(server, "/"), server, token, pins, key ? " --control-plane --certificate-key " : "",
                     key ? key : "", *node ? " --node-name " : "", node);
    if (n < 0 || (size_t)n >= cap)
        return kjoin_err_set(err, KJOIN_E_OTHER, "the join command is longer than %zu bytes", cap - 1);
    return KJOIN_OK;
}

/* --node-name and --single-use into the spec, and the groups: a bound
 * token's are the caller's only (never kubeadm's default group). */
static kjoin_code bind_to_node(const token_args *a, kjoin_token_spec *s, kjoin_err *err)
{
    snprintf(s->groups, sizeof(s->groups), "%s", a->groups_set ? a->groups : a->node_name ? "" : DEFAULT_GROUP);
    if (a->single_use && !a->node_name)
        return kjoin_err_set(err, KJOIN_E_USAGE, "--single-use needs --node-name");
    if (!a->node_name)
        return KJOIN_OK;
    kjoin_node_name n;
    char group[300];
    kjoin_code rc = kjoin_node_name_resolve(a->node_name, "", &n, err);
    if (!rc)
        rc = kjoin_token_node_group(n.name, group, sizeof(group), err);
    if (rc)
        return cli_flag_err("--node-name", rc, err);
    snprintf(s->bound_node, sizeof(s->bound_node), "%s", n.name);
    s->single_use = a->single_use;
    return KJOIN_OK;
}

/* Before a bound token is made: the cluster must not approve any node name
 * for its groups (a binding would be none), and the groups get a joining
 * node's permissions. */
static kjoin_code bound_permissions(kjoin_kubeapi *api, const kjoin_token_spec *s, kjoin_err *err)
{
    char groups[KJOIN_TOKEN_GROUPS_MAX + 64];
    bool auto_approved = false;
    snprintf(groups, sizeof(groups), KJOIN_TOKEN_BOUND_GROUP "%s%s", *s->groups ? "," : "", s->groups);
    kjoin_code rc = kjoin_approver_auto_approved(api, s->token.id, groups, &auto_approved, err);
    if (!rc && auto_approved)
        rc = kjoin_err_set(err, KJOIN_E_USAGE,
                           "the cluster approves a node client certificate of any name for this token's groups (RBAC "
                           "grants create on certificatesigningrequests/nodeclient to system:bootstrappers or to one "
                           "of --groups): a token bound to %s would not be; remove that binding or those groups",
                           s->bound_node);
    if (!rc)
        rc = kjoin_approver_bound_rbac(api, err);
    return rc;
}

/* The token to create: the argument, --token-file, or a new one. */
static kjoin_code token_to_create(const token_args *a, char *arg, kjoin_token *out, kjoin_err *err)
{
    if (arg && a->token_file)
        return kjoin_err_set(err, KJOIN_E_USAGE, "give TOKEN or --token-file, not both");
    if (a->token_file)
        return kjoin_token_read_file(a->token_file, out, err);
    if (!arg)
        return kjoin_token_generate(out, err);
    kjoin_code rc = kjoin_token_parse(arg, out, err);
    cli_scrub_secret(arg);
    return rc;
}

static int run_create(token_args *a, int argc, char **argv, int first)
{
    kjoin_err err;
    kjoin_kubeapi *api = NULL;
    kjoin_kubeapi_response resp = {0};
    KJOIN_AUTO_FREE char *secret_json = NULL;
    char token[KJOIN_TOKEN_STR_MAX] = "", cmdline[KJOIN_BUNDLE_MAX_CERTS * KJOIN_PIN_STR_MAX + 512] = "";
    char expires[32] = "", what[96];
    kjoin_token_spec *s = &a->spec;
    if (!s->usage_signing && !s->usage_authentication)
        s->usage_signing = s->usage_authentication = true;
    kjoin_code rc = bind_to_node(a, s, &err);
    if (rc)
        return cli_fail(a->format, &err);
    if (!a->description && *s->bound_node)
        snprintf(s->description, sizeof(s->description), "kjoin: bound to node %.400s%s", s->bound_node,
                 s->single_use ? ", single use" : "");
    else
        snprintf(s->description, sizeof(s->description), "%s", a->description ? a->description : "");
    s->expires = a->ttl_ms ? (long long)time(NULL) + (a->ttl_ms + 999) / 1000 : 0;
    if (a->certificate_key && !a->print_join) { /* kubeadm's rule */
        kjoin_err_set(&err, KJOIN_E_USAGE, "--certificate-key is only used with --print-join-command");
        return cli_fail(a->format, &err);
    }
    rc = token_to_create(a, first < argc ? argv[first] : NULL, &s->token, &err);
    if (!rc)
        rc = kjoin_token_secret_encode(s, &secret_json, &err);
    if (!rc)
        rc = connect_api(a, &api, &err);
    if (!rc && *s->bound_node)
        rc = bound_permissions(api, s, &err);
    if (!rc)
        rc = kjoin_kubeapi_request(api, "POST", SECRETS_PATH, secret_json, &resp, &err);
    snprintf(what, sizeof(what), "create token %s (secret kube-system/bootstrap-token-%s)", s->token.id, s->token.id);
    if (!rc)
        rc = kjoin_kubeapi_check(&resp, what, &err);
    kjoin_token_format(&s->token, token);
    if (!rc && a->print_join)
        rc = join_command(api, token, a->certificate_key, s->bound_node, cmdline, sizeof(cmdline), &err);
    if (!rc && s->expires)
        cli_rfc3339(s->expires, expires, sizeof(expires));
    if (!rc && a->format == CLI_JSON) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "token", json_object_new_string(token));
        json_object_object_add(o, "tokenID", json_object_new_string(s->token.id));
        json_object_object_add(o, "expires", *expires ? json_object_new_string(expires) : NULL);
        json_object_object_add(o, "usages", usages_json(s));
        json_object_object_add(o, "groups", groups_json(s->groups));
        json_object_object_add(o, "description", json_object_new_string(s->description));
        binding_json(o, s, NULL);
        if (a->print_join)
            json_object_object_add(o, "joinCommand", json_object_new_string(cmdline));
        cli_print_json(o); /* the one place a secret is printed: the user asked for it */
    } else if (!rc) {
        printf("%s\n", a->print_join ? cmdline : token); /* asked for: not through the sanitiser, which masks it */
    }
    if (secret_json)
        OPENSSL_cleanse(secret_json, strlen(secret_json));
    OPENSSL_cleanse(token, sizeof(token));
    OPENSSL_cleanse(cmdline, sizeof(cmdline));
    kjoin_token_clear(&s->token);
    kjoin_kubeapi_response_release(&resp);
    kjoin_kubeapi_free(api);
    return rc ? cli_fail(a->format, &err) : 0;
}

/* kubeadm's TTL column: what is left, as Go's duration.ShortHumanDuration. */
static void ttl_text(long long expires, long long now, char *buf, size_t cap)
{
    if (!expires)
        snprintf(buf, cap, "<forever>");
    else
        cli_short_duration(expires - now, buf, cap);
}

static int run_list(token_args *a)
{
    kjoin_err err;
    kjoin_kubeapi *api = NULL;
    kjoin_kubeapi_response resp = {0};
    kjoin_token_list l = {0};
    kjoin_code rc = connect_api(a, &api, &err);
    if (!rc)
        rc = kjoin_kubeapi_request(api, "GET", SECRETS_PATH "?fieldSelector=type%3Dbootstrap.kubernetes.io%2Ftoken",
                                   NULL, &resp, &err);
    if (!rc)
        rc = kjoin_kubeapi_check(&resp, "list secrets in kube-system", &err);
    if (!rc)
        rc = kjoin_token_list_decode(resp.body, resp.len, &l, &err);
    kjoin_kubeapi_response_release(&resp);
    /* A bound token's state: whether a CSR of it was approved. */
    const char *ids[4096];
    bool used[4096] = {false}, any_bound = false;
    size_t n_bound = 0;
    for (size_t i = 0; !rc && i < l.n && n_bound < 4096; i++)
        if (*l.items[i].bound_node)
            ids[n_bound++] = l.items[i].token.id;
    any_bound = n_bound > 0;
    if (!rc && any_bound && kjoin_approver_used_tokens(api, ids, n_bound, used, &err))
        cli_out(stderr, "[token] WARNING: whether bound tokens were used is unknown: %s\n", err.msg);
    kjoin_kubeapi_free(api);
    if (rc)
        return cli_fail(a->format, &err);
    for (size_t i = 0; i < l.n_warnings; i++)
        cli_out(stderr, "[token] WARNING: %s\n", l.warnings[i]);
    long long now = (long long)time(NULL);
    json_object *arr = a->format == CLI_JSON ? json_object_new_array() : NULL;
    if (!arr)
        cli_out(stdout, "%-23s %-9s %-20s %-22s %-30s %s%s\n", "TOKEN", "TTL", "EXPIRES", "USAGES", "DESCRIPTION",
               "EXTRA GROUPS", any_bound ? "   BOUND TO" : "");
    for (size_t i = 0, b = 0; i < l.n; i++) {
        const kjoin_token_spec *s = &l.items[i];
        bool spent = *s->bound_node && b < n_bound && used[b++];
        char bound[400] = "";
        if (*s->bound_node)
            snprintf(bound, sizeof(bound), "   %s (%s%s)", s->bound_node, s->single_use ? "single use, " : "",
                     spent ? "used" : "unused");
        else if (any_bound)
            snprintf(bound, sizeof(bound), "   <none>");
        char token[KJOIN_TOKEN_STR_MAX], ttl[32], expires[32] = "<never>";
        if (a->show_secrets)
            kjoin_token_format(&s->token, token);
        else
            kjoin_token_masked(&s->token, token);
        ttl_text(s->expires, now, ttl, sizeof(ttl));
        if (s->expires)
            cli_rfc3339(s->expires, expires, sizeof(expires));
        if (arr) {
            json_object *o = json_object_new_object();
            json_object_object_add(o, "token", json_object_new_string(token));
            json_object_object_add(o, "tokenID", json_object_new_string(s->token.id));
            json_object_object_add(o, "ttl", json_object_new_string(ttl));
            json_object_object_add(o, "expires", s->expires ? json_object_new_string(expires) : NULL);
            json_object_object_add(o, "usages", usages_json(s));
            json_object_object_add(o, "groups", groups_json(s->groups));
            json_object_object_add(o, "description", json_object_new_string(s->description));
            binding_json(o, s, &spent);
            json_object_array_add(arr, o);
        } else {
            /* The token as asked for (masked unless --show-secrets); the
             * rest, the cluster's strings, through the sanitiser. */
            printf("%-23s ", token);
            cli_out(stdout, "%-9s %-20s %-22s %-30s %s%s\n", ttl, expires, usages_text(s),
                    *s->description ? s->description : "<none>", *s->groups ? s->groups : "<none>", bound);
        }
        OPENSSL_cleanse(token, sizeof(token));
    }
    if (arr) {
        json_object *root = json_object_new_object();
        json_object_object_add(root, "tokens", arr);
        cli_print_json(root);
    }
    kjoin_token_list_release(&l);
    return 0;
}

static int run_delete(token_args *a, int argc, char **argv, int first)
{
    kjoin_err err, last = {0};
    kjoin_kubeapi *api = NULL;
    kjoin_code rc = KJOIN_OK;
    /* Every argument is checked before anything is deleted. */
    for (int i = first; !rc && i < argc; i++) {
        kjoin_token t;
        if (strchr(argv[i], '.')) {
            rc = kjoin_token_parse(argv[i], &t, &err);
            cli_scrub_secret(argv[i]);
            kjoin_token_clear(&t);
        } else if (!kjoin_token_id_valid(argv[i])) {
            rc = kjoin_err_set(&err, KJOIN_E_USAGE, "\"%.40s\" is neither a token id ([a-z0-9]{6}) nor a token",
                               argv[i]);
        }
    }
    if (!rc)
        rc = connect_api(a, &api, &err);
    if (rc) {
        kjoin_kubeapi_free(api);
        return cli_fail(a->format, &err);
    }
    json_object *deleted = json_object_new_array(), *failed = json_object_new_array();
    for (int i = first; i < argc; i++) {
        char id[KJOIN_TOKEN_ID_LEN + 1], path[128], what[96];
        snprintf(id, sizeof(id), "%.6s", argv[i]);
        snprintf(path, sizeof(path), SECRETS_PATH "/bootstrap-token-%s", id);
        snprintf(what, sizeof(what), "delete token %s (secret kube-system/bootstrap-token-%s)", id, id);
        kjoin_kubeapi_response resp = {0};
        kjoin_code one = kjoin_kubeapi_request(api, "DELETE", path, NULL, &resp, &err);
        if (!one && resp.status == 404)
            one = kjoin_err_set(&err, KJOIN_E_API, "token %s: not found", id);
        else if (!one)
            one = kjoin_kubeapi_check(&resp, what, &err);
        kjoin_kubeapi_response_release(&resp);
        if (!one) {
            if (a->format == CLI_TEXT)
                cli_out(stdout, "bootstrap token \"%s\" deleted\n", id);
            json_object_array_add(deleted, json_object_new_string(id));
            continue;
        }
        cli_out(stderr, "kjoin: %s\n", err.msg);
        json_object_array_add(failed, json_object_new_string(id));
        last = err;
        if (one != KJOIN_E_API)
            break; /* a deadline or trust failure ends the command; the API's refusals do not */
    }
    kjoin_kubeapi_free(api);
    if (a->format == CLI_JSON) {
        json_object *root = json_object_new_object();
        json_object_object_add(root, "deleted", deleted);
        json_object_object_add(root, "failed", failed);
        if (last.code)
            json_object_object_add(root, "error", cli_error_json(&last));
        cli_print_json(root);
    } else {
        json_object_put(deleted);
        json_object_put(failed);
    }
    return cli_exit_code(last.code);
}

static const struct {
    const char *name;
    const cli_verb *verb;
} subverbs[] = {
    {"generate", &generate_verb}, {"create", &create_verb}, {"list", &list_verb}, {"delete", &delete_verb},
};

int cmd_token(int argc, char **argv)
{
    kjoin_err err;
    const cli_verb *verbs[sizeof(subverbs) / sizeof(subverbs[0])];
    const char *names[sizeof(subverbs) / sizeof(subverbs[0])];
    for (size_t i = 0; i < sizeof(subverbs) / sizeof(subverbs[0]); i++)
        verbs[i] = subverbs[i].verb, names[i] = subverbs[i].name;
    int which = cli_group(argc, argv, "kjoin token", "Bootstrap tokens: make one, or create, list and delete them on "
                                                     "the cluster.", names, verbs, sizeof(verbs) / sizeof(verbs[0]));
    if (which < 0)
        return -which - 1;
    token_args a = {.format = cli_format_from_argv(argc, argv), .ttl_ms = 24LL * 3600 * 1000,
                    .timeout_ms = 60 * 1000};
    int first = 0;
    int p = cli_parse(verbs[which], argc - 1, argv + 1, on_opt, &a, &first, &err);
    if (p < 0)
        return 0;
    if (p)
        return cli_fail(a.format, &err);
    first += 1; /* into argv */
    switch (which) {
    case 0: {
        kjoin_token t;
        if (kjoin_token_generate(&t, &err))
            return cli_fail(a.format, &err);
        char s[KJOIN_TOKEN_STR_MAX];
        kjoin_token_format(&t, s);
        if (a.format == CLI_JSON) {
            json_object *o = json_object_new_object();
            json_object_object_add(o, "token", json_object_new_string(s));
            json_object_object_add(o, "tokenID", json_object_new_string(t.id));
            cli_print_json(o);
        } else {
            printf("%s\n", s); /* asked for: not through the sanitiser, which masks it */
        }
        OPENSSL_cleanse(s, sizeof(s));
        kjoin_token_clear(&t);
        return 0;
    }
    case 1: {
        int rc = run_create(&a, argc, argv, first);
        kjoin_free_wiped_str(a.certificate_key);
        return rc;
    }
    case 2: return run_list(&a);
    default: return run_delete(&a, argc, argv, first);
    }
}
