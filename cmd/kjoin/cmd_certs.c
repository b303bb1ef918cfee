/* kjoin certs init | issue node|client | rotate | check-expiration | manifests */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <kjoin/certs.h>
#include <kjoin/util.h>

#include "cli.h"
#include "verbs.h"

/* Exit code of `certs rotate` when something was rotated (cron wrappers can
 * then restart or SIGHUP the consumers). */
#define EXIT_ROTATED 10
#define MAX_LIST 16

enum {
    OPT_DIR, OPT_NOW, OPT_OUTPUT, OPT_DRY_RUN, OPT_CA_CERT, OPT_CA_KEY, OPT_CA_DUR, OPT_NODE_DUR, OPT_CLIENT_DUR,
    OPT_CA_WIN, OPT_NODE_WIN, OPT_CLIENT_WIN, OPT_MIN, OPT_KEY_TYPE, OPT_USER, OPT_NAME, OPT_SAN, OPT_GROUP,
    OPT_NAMESPACE, OPT_PREFIX,
};

static const cli_opt certs_opts[] = {
    {OPT_DIR, "dir", 0, true, "DIR", "the certs directory (required)"},
    {OPT_NOW, "now", 0, true, "RFC3339", "stand-in for the clock, e.g. 2030-01-01T00:00:00Z"},
    {OPT_OUTPUT, "output", 'o', true, "FORMAT", "text (default) or json"},
    {OPT_DRY_RUN, "dry-run", 0, false, NULL, "rotate: say what would change, write nothing"},
    {OPT_CA_CERT, "ca-cert", 0, true, "FILE", "init: use this CA (and chain) instead of a self-signed one"},
    {OPT_CA_KEY, "ca-key", 0, true, "FILE", "init: the key of --ca-cert"},
    {OPT_CA_DUR, "ca-duration", 0, true, "DURATION", "init: CA lifetime (default 87600h)"},
    {OPT_NODE_DUR, "node-duration", 0, true, "DURATION", "init: node certificate lifetime (default 8760h)"},
    {OPT_CLIENT_DUR, "client-duration", 0, true, "DURATION", "init: client certificate lifetime (default 8760h)"},
    {OPT_CA_WIN, "ca-expiry-window", 0, true, "DURATION", "init: rotate the CA this long before it expires (17520h)"},
    {OPT_NODE_WIN, "node-expiry-window", 0, true, "DURATION", "init: node expiry window (default 168h)"},
    {OPT_CLIENT_WIN, "client-expiry-window", 0, true, "DURATION", "init: client expiry window (default 168h)"},
    {OPT_MIN, "minimum-duration", 0, true, "DURATION", "init: time between rotation runs (default derived)"},
    {OPT_KEY_TYPE, "key-type", 0, true, "TYPE", "init: ecdsa-p256 (default), rsa2048, rsa3072, rsa4096, ed25519"},
    {OPT_USER, "user", 0, true, "USER", "init, issue client: the client user (default root)"},
    {OPT_NAME, "name", 0, true, "NAME", "issue node: the node's name (files node.NAME.crt/.key)"},
    {OPT_SAN, "san", 0, true, "NAME-OR-IP", "init, issue node: a subject alternative name; repeatable"},
    {OPT_GROUP, "group", 0, true, "GROUP", "issue client: an organisation (O=) of the certificate; repeatable"},
    {OPT_NAMESPACE, "namespace", 0, true, "NS", "manifests: the Secrets' namespace (default default)"},
    {OPT_PREFIX, "prefix", 0, true, "NAME", "manifests: prefix of the Secret names (default kjoin)"},
};

static const cli_verb certs_verb = {
    .usage = "kjoin certs init|issue node|issue client|rotate|check-expiration|manifests --dir DIR [flags]",
    .summary = "A self-signing certificate manager: a CA, node and client certificates in a\n"
               "CockroachDB-style certs directory, with expiry windows and CA rotation that\n"
               "never disrupts peers. `rotate` is the job for cron; it exits 0 when nothing was\n"
               "due and 10 when something was rotated. See docs/certs.md.",
    .opts = certs_opts,
    .n_opts = sizeof(certs_opts) / sizeof(certs_opts[0]),
    .min_args = 0,
    .max_args = 0,
};

typedef struct certs_args {
    const char *dir, *ca_cert, *ca_key, *user, *name, *ns, *prefix;
    int64_t now;
    cli_format format;
    bool dry_run;
    kjoin_certs_settings s;
    const char *sans[MAX_LIST], *groups[MAX_LIST];
    size_t n_sans, n_groups;
} certs_args;

static kjoin_code parse_now(const char *arg, int64_t *out, kjoin_err *err)
{
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    const char *end = strptime(arg, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (!end || *end)
        return kjoin_err_set(err, KJOIN_E_USAGE, "--now takes an RFC 3339 time in UTC such as 2030-01-01T00:00:00Z, not \"%s\"", arg);
    *out = (int64_t)timegm(&tm);
    return KJOIN_OK;
}

static kjoin_code seconds(const char *arg, int64_t *out, kjoin_err *err)
{
    int64_t ms = 0;
    kjoin_code rc = kjoin_duration_parse(arg, &ms, err);
    if (!rc)
        *out = ms / 1000;
    return rc;
}

static kjoin_code on_opt(void *ctx, int id, const char *arg, kjoin_err *err)
{
    certs_args *a = ctx;
    switch (id) {
    case OPT_DIR: a->dir = arg; break;
    case OPT_NOW: return parse_now(arg, &a->now, err);
    case OPT_OUTPUT: return cli_parse_format(arg, &a->format, err);
    case OPT_DRY_RUN: a->dry_run = true; break;
    case OPT_CA_CERT: a->ca_cert = arg; break;
    case OPT_CA_KEY: a->ca_key = arg; break;
    case OPT_CA_DUR: return seconds(arg, &a->s.ca_duration, err);
    case OPT_NODE_DUR: return seconds(arg, &a->s.node_duration, err);
    case OPT_CLIENT_DUR: return seconds(arg, &a->s.client_duration, err);
    case OPT_CA_WIN: return seconds(arg, &a->s.ca_window, err);
    case OPT_NODE_WIN: return seconds(arg, &a->s.node_window, err);
    case OPT_CLIENT_WIN: return seconds(arg, &a->s.client_window, err);
    case OPT_MIN: return seconds(arg, &a->s.minimum, err);
    case OPT_KEY_TYPE: return kjoin_key_type_parse(arg, &a->s.key_type, err);
    case OPT_USER: a->user = arg; break;
    case OPT_NAME: a->name = arg; break;
    case OPT_SAN:
    case OPT_GROUP: {
        const char **list = id == OPT_SAN ? a->sans : a->groups;
        size_t *n = id == OPT_SAN ? &a->n_sans : &a->n_groups;
        if (*n == MAX_LIST)
            return kjoin_err_set(err, KJOIN_E_USAGE, "at most %d --san or --group values", MAX_LIST);
        list[(*n)++] = arg;
        break;
    }
    case OPT_NAMESPACE: a->ns = arg; break;
    case OPT_PREFIX: a->prefix = arg; break;
    }
    return KJOIN_OK;
}

static int print_report(const certs_args *a, const kjoin_certs_report *r, bool rotate)
{
    if (a->format == CLI_JSON) {
        json_object *o = json_object_new_object(), *lines = json_object_new_array(), *restart = json_object_new_array();
        for (size_t i = 0; i < r->n; i++)
            json_object_array_add(lines, json_object_new_string(r->lines[i]));
        if (r->restart_nodes)
            json_object_array_add(restart, json_object_new_string("nodes"));
        if (r->reload_clients)
            json_object_array_add(restart, json_object_new_string("clients"));
        json_object_object_add(o, "changed", json_object_new_boolean(r->changed));
        json_object_object_add(o, "dryRun", json_object_new_boolean(a->dry_run));
        json_object_object_add(o, "actions", lines);
        json_object_object_add(o, "restart", restart);
        cli_print_json(o);
    } else {
        for (size_t i = 0; i < r->n; i++)
            printf("[certs] %s\n", r->lines[i]);
        if (r->restart_nodes)
            printf("[certs] restart (or SIGHUP) the nodes so that they load the new certificates\n");
        if (r->reload_clients)
            printf("[certs] clients must reload their certificate and CA files\n");
        if (a->dry_run && r->changed)
            printf("[certs] dry run: nothing was written\n");
    }
    return rotate && r->changed && !a->dry_run ? EXIT_ROTATED : 0;
}

/* kubeadm's residual-time format: 45s, 12m, 5h, 300d, 9y; <invalid> once past. */
static void residual(int64_t s, char *out, size_t cap)
{
    if (s < -1)
        snprintf(out, cap, "<invalid>");
    else if (s < 60)
        snprintf(out, cap, "%llds", (long long)(s < 0 ? 0 : s));
    else if (s < 3600)
        snprintf(out, cap, "%lldm", (long long)(s / 60));
    else if (s < 86400)
        snprintf(out, cap, "%lldh", (long long)(s / 3600));
    else if (s < 365LL * 86400)
        snprintf(out, cap, "%lldd", (long long)(s / 86400));
    else
        snprintf(out, cap, "%lldy", (long long)(s / (365LL * 86400)));
}

static int check_expiration(const certs_args *a, kjoin_err *err)
{
    kjoin_certs_status st[64];
    size_t n = 0;
    if (kjoin_certs_check(a->dir, a->now, st, 64, &n, err))
        return cli_fail(a->format, err);
    bool any_due = false;
    json_object *certs = json_object_new_array(), *cas = json_object_new_array();
    for (int pass = 0; pass < 2; pass++) {
        if (a->format == CLI_TEXT)
            printf(pass == 0 ? "%-24s %-22s %-15s %-23s %-20s %s\n" : "\n%-24s %-22s %-15s %-20s %s\n",
                   pass == 0 ? "CERTIFICATE" : "CERTIFICATE AUTHORITY", "EXPIRES", "RESIDUAL TIME",
                   pass == 0 ? "CERTIFICATE AUTHORITY" : "EXTERNALLY MANAGED", pass == 0 ? "EXTERNALLY MANAGED" : "ROTATION DUE",
                   pass == 0 ? "ROTATION DUE" : "");
        for (size_t i = 0; i < n; i++) {
            if (st[i].is_ca != (pass == 1))
                continue;
            char when[40], res[24], iso[32];
            time_t t = (time_t)st[i].not_after;
            struct tm tm;
            gmtime_r(&t, &tm);
            strftime(when, sizeof(when), "%b %d, %Y %H:%M UTC", &tm);
            strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%SZ", &tm);
            residual(st[i].not_after - a->now, res, sizeof(res));
            any_due |= st[i].due;
            if (a->format == CLI_TEXT && pass == 0)
                printf("%-24s %-22s %-15s %-23s %-20s %s\n", st[i].name, when, res, st[i].ca_name, "no",
                       st[i].due ? (st[i].needs_regeneration ? "yes (needsRegeneration)" : "yes") : "no");
            else if (a->format == CLI_TEXT)
                printf("%-24s %-22s %-15s %-20s %s\n", st[i].name, when, res, st[i].user_provided ? "yes" : "no",
                       st[i].due ? (st[i].user_provided ? "yes (replace it yourself)" : "yes") : "no");
            json_object *o = json_object_new_object();
            json_object_object_add(o, "name", json_object_new_string(st[i].name));
            json_object_object_add(o, "expirationDate", json_object_new_string(iso));
            json_object_object_add(o, "residualTime", json_object_new_int64(st[i].not_after - a->now));
            json_object_object_add(o, "externallyManaged", json_object_new_boolean(st[i].user_provided));
            if (!st[i].is_ca)
                json_object_object_add(o, "caName", json_object_new_string(st[i].ca_name));
            json_object_object_add(o, "rotationDue", json_object_new_boolean(st[i].due));
            json_object_object_add(o, "needsRegeneration", json_object_new_boolean(st[i].needs_regeneration));
            json_object_array_add(pass == 0 ? certs : cas, o);
        }
    }
    if (a->format == CLI_JSON) {
        json_object *root = json_object_new_object();
        json_object_object_add(root, "kind", json_object_new_string("CertificateExpirationInfo"));
        json_object_object_add(root, "certificates", certs);
        json_object_object_add(root, "certificateAuthorities", cas);
        json_object_object_add(root, "rotationDue", json_object_new_boolean(any_due));
        cli_print_json(root);
    } else {
        json_object_put(certs);
        json_object_put(cas);
        printf("\nrotation due: %s\n", any_due ? "yes (run kjoin certs rotate)" : "no");
    }
    return 0;
}

int cmd_certs(int argc, char **argv)
{
    certs_args a = {.format = cli_format_from_argv(argc, argv), .now = (int64_t)time(NULL),
                    .s = kjoin_certs_defaults(), .ns = "default", .prefix = "kjoin"};
    kjoin_err err = {0};
    const char *sub = argc >= 2 ? argv[1] : "";
    const char *kind = strcmp(sub, "issue") == 0 && argc >= 3 ? argv[2] : NULL;
    int skip = kind ? 2 : 1, first = 0;
    static const char *const subs[] = {"init", "issue", "rotate", "check-expiration", "manifests"};
    bool known = false;
    for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
        known |= strcmp(sub, subs[i]) == 0;
    if (!known || (strcmp(sub, "issue") == 0 && (!kind || (strcmp(kind, "node") && strcmp(kind, "client"))))) {
        kjoin_err_set(&err, KJOIN_E_USAGE, "usage: %s", certs_verb.usage);
        return cli_fail(a.format, &err);
    }
    int p = cli_parse(&certs_verb, argc - skip, argv + skip, on_opt, &a, &first, &err);
    if (p < 0)
        return 0;
    if (p)
        return cli_fail(a.format, &err);
    if (!a.dir) {
        kjoin_err_set(&err, KJOIN_E_USAGE, "--dir is required");
        return cli_fail(a.format, &err);
    }
    kjoin_certs_report report;
    kjoin_code rc;
    if (strcmp(sub, "init") == 0) {
        kjoin_certs_init_opts o = {.settings = a.s, .ca_cert = a.ca_cert, .ca_key = a.ca_key, .user = a.user,
                                   .sans = a.sans, .n_sans = a.n_sans};
        rc = kjoin_certs_init(a.dir, &o, a.now, &report, &err);
    } else if (kind && strcmp(kind, "node") == 0) {
        rc = a.name ? kjoin_certs_issue_node(a.dir, a.name, a.sans, a.n_sans, a.now, &report, &err)
                    : kjoin_err_set(&err, KJOIN_E_USAGE, "issue node needs --name");
    } else if (kind) {
        rc = a.user ? kjoin_certs_issue_client(a.dir, a.user, a.groups, a.n_groups, a.now, &report, &err)
                    : kjoin_err_set(&err, KJOIN_E_USAGE, "issue client needs --user");
    } else if (strcmp(sub, "rotate") == 0) {
        rc = kjoin_certs_rotate(a.dir, a.now, a.dry_run, &report, &err);
    } else if (strcmp(sub, "check-expiration") == 0) {
        return check_expiration(&a, &err);
    } else {
        char *json = NULL;
        if ((rc = kjoin_certs_manifests(a.dir, a.ns, a.prefix, &json, &err)))
            return cli_fail(a.format, &err);
        puts(json);
        free(json);
        return 0;
    }
    return rc ? cli_fail(a.format, &err) : print_report(&a, &report, strcmp(sub, "rotate") == 0);
}
