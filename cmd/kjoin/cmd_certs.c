/* kjoin certs init | issue node|client | rotate | adopt-ca | check-expiration | manifests | ca-set |
 * certificate-key | upload-certs */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <time.h>

#include <kjoin/certs.h>
#include <kjoin/controlplane.h>
#include <kjoin/kubeapi.h>
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
    OPT_NAMESPACE, OPT_PREFIX, OPT_STORE, OPT_KUBECONFIG, OPT_CONTEXT, OPT_TIMEOUT, OPT_VERBOSE, OPT_CA_SECRET,
    OPT_ONLY, OPT_JOB, OPT_IMAGE, OPT_CRONJOB_API, OPT_ROTATED_EXIT, OPT_ROOT_CERT, OPT_ROOT_KEY, OPT_INTERMEDIATE,
    OPT_INTERMEDIATE_DUR, OPT_LAYOUT, OPT_ROTATE, OPT_CERTIFICATE_KEY, OPT_CERTIFICATE_KEY_FILE, OPT_CERT_DIR,
    OPT_SKIP_KEY_PRINT, OPT_CONFIG,
};

static const cli_opt certs_opts[] = {
    {OPT_DIR, "dir", 0, true, "DIR", "the certs directory (the dir store); for ca-set, where the layout goes"},
    {OPT_NOW, "now", 0, true, "RFC3339", "stand-in for the clock, e.g. 2030-01-01T00:00:00Z"},
    {OPT_OUTPUT, "output", 'o', true, "FORMAT", "text (default) or json"},
    {OPT_DRY_RUN, "dry-run", 0, false, NULL, "say what would change, write nothing"},
    {OPT_CA_CERT, "ca-cert", 0, true, "FILE", "use this CA (and chain) instead of a self-signed one"},
    {OPT_CA_KEY, "ca-key", 0, true, "FILE", "the key of --ca-cert"},
    {OPT_CA_DUR, "ca-duration", 0, true, "DURATION", "CA lifetime (default 87600h)"},
    {OPT_NODE_DUR, "node-duration", 0, true, "DURATION", "node certificate lifetime (default 8760h)"},
    {OPT_CLIENT_DUR, "client-duration", 0, true, "DURATION", "client certificate lifetime (default 8760h)"},
    {OPT_CA_WIN, "ca-expiry-window", 0, true, "DURATION", "rotate the CA this long before it expires (17520h)"},
    {OPT_NODE_WIN, "node-expiry-window", 0, true, "DURATION", "node expiry window (default 168h)"},
    {OPT_CLIENT_WIN, "client-expiry-window", 0, true, "DURATION", "client expiry window (default 168h)"},
    {OPT_MIN, "minimum-duration", 0, true, "DURATION", "time between rotation runs (default derived)"},
    {OPT_KEY_TYPE, "key-type", 0, true, "TYPE", "ecdsa-p256 (default), rsa2048, rsa3072, rsa4096, ed25519"},
    {OPT_USER, "user", 0, true, "USER", "the client user (default root)"},
    {OPT_NAME, "name", 0, true, "NAME", "the node's name (files node.NAME.crt/.key)"},
    {OPT_SAN, "san", 0, true, "NAME-OR-IP", "a subject alternative name of the node certificate; repeatable"},
    {OPT_GROUP, "group", 0, true, "GROUP", "an organisation (O=) of the certificate; repeatable"},
    {OPT_NAMESPACE, "namespace", 0, true, "NS", "the Secrets' namespace (default default)"},
    {OPT_PREFIX, "prefix", 0, true, "NAME", "prefix of the Secret names (default kjoin)"},
    {OPT_STORE, "store", 0, true, "STORE", "dir (default: --dir) or secrets (Kubernetes Secrets)"},
    {OPT_KUBECONFIG, "kubeconfig", 0, true, "FILE",
     "the kubeconfig (default $KUBECONFIG, else /etc/kubernetes/admin.conf; --store secrets in a pod: its service "
     "account)"},
    {OPT_CONTEXT, "context", 0, true, "NAME", "the kubeconfig context (default its current-context)"},
    {OPT_TIMEOUT, "timeout", 0, true, "DURATION", "deadline for the whole command (default 1m)"},
    {OPT_VERBOSE, "v", 'v', true, "LEVEL", "log verbosity, 4 each request"},
    {OPT_CA_SECRET, "ca-secret", 0, true, "NAME", "secrets: use the CA in this Secret (ca.crt, ca.key); never written"},
    {OPT_ONLY, "only", 0, true, "WHAT", "rotate only ca or leaves (the RFC's two CronJobs); default both"},
    {OPT_JOB, "job", 0, false, NULL, "print the RBAC, Job and CronJobs that run the Secrets store"},
    {OPT_IMAGE, "image", 0, true, "IMAGE", "the container image with kjoin, for --job"},
    {OPT_CRONJOB_API, "cronjob-api", 0, true, "VERSION", "batch/v1 (default) or batch/v1beta1 (Kubernetes < 1.21)"},
    {OPT_ROTATED_EXIT, "rotated-exit-code", 0, true, "N", "exit code when something was rotated (default 10)"},
    {OPT_ROOT_CERT, "root-cert", 0, true, "FILE", "the organisation's CA that signs (first), with its chain to the root"},
    {OPT_ROOT_KEY, "root-key", 0, true, "FILE", "the key of --root-cert's first certificate"},
    {OPT_INTERMEDIATE, "intermediate", 0, false, NULL, "sign the cluster CAs with an intermediate made under the root"},
    {OPT_INTERMEDIATE_DUR, "intermediate-duration", 0, true, "DURATION",
     "intermediate lifetime (default 87600h, or to the root's end)"},
    {OPT_LAYOUT, "layout", 0, true, "LAYOUT", "k3s (server/tls) or kubeadm (/etc/kubernetes)"},
    {OPT_ROTATE, "rotate", 0, false, NULL, "replace the set in --dir with a new one under the same root"},
    {OPT_CERTIFICATE_KEY, "certificate-key", 0, true, "KEY",
     "upload-certs: encrypt with this key (64 hex digits) instead of a new one (prefer --certificate-key-file)"},
    {OPT_CERTIFICATE_KEY_FILE, "certificate-key-file", 0, true, "FILE", "read --certificate-key from FILE (- for stdin)"},
    {OPT_CERT_DIR, "cert-dir", 0, true, "DIR",
     "upload-certs: the shared certificates' directory (default --config's certificatesDir, else /etc/kubernetes/pki)"},
    {OPT_CONFIG, "config", 0, true, "FILE",
     "upload-certs: this node's kubeadm configuration (its ClusterConfiguration: certificatesDir, etcd.external's files)"},
    {OPT_SKIP_KEY_PRINT, "skip-certificate-key-print", 0, false, NULL, "upload-certs: do not print the key"},
};

#define N_OPTS (sizeof(certs_opts) / sizeof(certs_opts[0]))
#define BIT(o) (1ull << (o))
#define SECRETS (BIT(OPT_STORE) | BIT(OPT_NAMESPACE) | BIT(OPT_PREFIX) | BIT(OPT_KUBECONFIG) | BIT(OPT_CONTEXT) | \
                 BIT(OPT_TIMEOUT) | BIT(OPT_VERBOSE))
#define COMMON (BIT(OPT_DIR) | BIT(OPT_NOW) | BIT(OPT_OUTPUT) | SECRETS)

/* Each verb takes only its own flags: a flag that would be ignored is an error. */
typedef struct certs_verb {
    const char *name, *usage, *summary;
    unsigned long long flags;
} certs_verb;

enum {
    V_INIT, V_ISSUE_NODE, V_ISSUE_CLIENT, V_ROTATE, V_ADOPT_CA, V_CHECK, V_MANIFESTS, V_CA_SET, V_CERT_KEY, V_UPLOAD,
    N_VERBS
};

static const certs_verb certs_verbs[N_VERBS] = {
    {"init", "kjoin certs init --dir DIR | --store secrets [--namespace NS] [--prefix NAME] [flags]",
     "Create the CA, node and client certificates (in Secrets: idempotent, finishes a killed run).",
     COMMON | BIT(OPT_CA_CERT) | BIT(OPT_CA_KEY) | BIT(OPT_CA_DUR) | BIT(OPT_NODE_DUR) | BIT(OPT_CLIENT_DUR) |
         BIT(OPT_CA_WIN) | BIT(OPT_NODE_WIN) | BIT(OPT_CLIENT_WIN) | BIT(OPT_MIN) | BIT(OPT_KEY_TYPE) |
         BIT(OPT_USER) | BIT(OPT_SAN) | BIT(OPT_CA_SECRET)},
    {"issue node", "kjoin certs issue node --dir DIR --name NAME [--san NAME-OR-IP...]",
     "Issue a further node certificate (node.NAME.crt/.key) from the directory's CA.",
     COMMON | BIT(OPT_NAME) | BIT(OPT_SAN)},
    {"issue client", "kjoin certs issue client --dir DIR --user USER [--group GROUP...]",
     "Issue a client certificate (client.USER.crt/.key) from the directory's CA.",
     COMMON | BIT(OPT_USER) | BIT(OPT_GROUP)},
    {"rotate", "kjoin certs rotate --dir DIR | --store secrets [--only ca|leaves] [--dry-run]",
     "Renew what is due (the cron job): exit 0 when nothing was due, 10 when rotated.",
     COMMON | BIT(OPT_DRY_RUN) | BIT(OPT_ONLY) | BIT(OPT_ROTATED_EXIT)},
    {"adopt-ca", "kjoin certs adopt-ca --dir DIR --ca-cert FILE --ca-key FILE",
     "Adopt a new CA explicitly; the certificates are reissued under it on the next rotate.",
     BIT(OPT_DIR) | BIT(OPT_NOW) | BIT(OPT_OUTPUT) | BIT(OPT_CA_CERT) | BIT(OPT_CA_KEY)},
    {"check-expiration", "kjoin certs check-expiration --dir DIR [-o json]",
     "Show each certificate's expiry and whether its rotation is due, as kubeadm does.", COMMON},
    {"manifests", "kjoin certs manifests --dir DIR | --job --image IMAGE [--namespace NS] [--prefix NAME] [durations]",
     "Print the certificates as Secret manifests, or (--job) the RBAC, Job and CronJobs of the Secrets store.",
     BIT(OPT_DIR) | BIT(OPT_OUTPUT) | BIT(OPT_NAMESPACE) | BIT(OPT_PREFIX) | BIT(OPT_JOB) | BIT(OPT_IMAGE) |
         BIT(OPT_CRONJOB_API) | BIT(OPT_CA_SECRET) | BIT(OPT_CA_DUR) | BIT(OPT_NODE_DUR) | BIT(OPT_CLIENT_DUR) |
         BIT(OPT_CA_WIN) | BIT(OPT_NODE_WIN) | BIT(OPT_CLIENT_WIN) | BIT(OPT_MIN) | BIT(OPT_KEY_TYPE)},
    {"ca-set",
     "kjoin certs ca-set --dir DIR --layout k3s|kubeadm --root-cert FILE --root-key FILE [--intermediate] [--rotate]",
     "Make a control plane's CAs under your organisation's root, pinned by the root (see docs/ca-set.md).",
     BIT(OPT_DIR) | BIT(OPT_NOW) | BIT(OPT_OUTPUT) | BIT(OPT_ROOT_CERT) | BIT(OPT_ROOT_KEY) | BIT(OPT_INTERMEDIATE) |
         BIT(OPT_INTERMEDIATE_DUR) | BIT(OPT_LAYOUT) | BIT(OPT_ROTATE) | BIT(OPT_CA_DUR) | BIT(OPT_KEY_TYPE)},
    {"certificate-key", "kjoin certs certificate-key",
     "Print a new certificate key (as kubeadm certs certificate-key), for upload-certs and the join.", BIT(OPT_OUTPUT)},
    {"upload-certs",
     "kjoin certs upload-certs [--certificate-key-file FILE] [--kubeconfig FILE] [--config FILE] [--cert-dir DIR] [-o json]",
     "Upload this control-plane node's shared certificates for joining control-plane nodes, as kubeadm init phase "
     "upload-certs --upload-certs does: the kubeadm-certs Secret, encrypted, gone after two hours.",
     BIT(OPT_OUTPUT) | BIT(OPT_CERTIFICATE_KEY) | BIT(OPT_CERTIFICATE_KEY_FILE) | BIT(OPT_CERT_DIR) | BIT(OPT_CONFIG) |
         BIT(OPT_SKIP_KEY_PRINT) | BIT(OPT_KUBECONFIG) | BIT(OPT_CONTEXT) | BIT(OPT_TIMEOUT) | BIT(OPT_VERBOSE)},
};

/* The cli_verb of v: its usage, summary and only the flags it takes. */
static cli_verb verb_of(const certs_verb *v, cli_opt opts[N_OPTS])
{
    size_t n = 0;
    for (size_t i = 0; i < N_OPTS; i++)
        if (v->flags & BIT(certs_opts[i].id))
            opts[n++] = certs_opts[i];
    return (cli_verb){.usage = v->usage, .summary = v->summary, .opts = opts, .n_opts = n, .min_args = 0,
                      .max_args = 0};
}

typedef struct certs_args {
    const char *dir, *ca_cert, *ca_key, *user, *name, *ns, *prefix, *store, *kubeconfig, *context, *ca_secret;
    int64_t now, timeout_ms;
    long verbosity;
    cli_format format;
    bool dry_run, job;
    const char *image, *cronjob_api;
    long rotated_exit;
    kjoin_certs_scope scope;
    kjoin_certs_settings s;
    kjoin_ca_set_opts ca_set;
    const char *layout;
    const char *sans[MAX_LIST], *groups[MAX_LIST];
    size_t n_sans, n_groups;
    kjoin_certificate_key key; /* upload-certs: given (a secret, wiped) */
    bool has_key, skip_key_print;
    const char *cert_dir;
    const char *config; /* upload-certs: this node's kubeadm configuration file */
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
    case OPT_CA_DUR: {
        kjoin_code rc = seconds(arg, &a->s.ca_duration, err);
        a->ca_set.ca_duration = a->s.ca_duration; /* ca-set: given, not the default */
        return rc;
    }
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
    case OPT_STORE:
        if (strcmp(arg, "dir") && strcmp(arg, "secrets"))
            return kjoin_err_set(err, KJOIN_E_USAGE, "--store takes dir or secrets, not \"%.40s\"", arg);
        a->store = arg;
        break;
    case OPT_KUBECONFIG: a->kubeconfig = arg; break;
    case OPT_CONTEXT: a->context = arg; break;
    case OPT_TIMEOUT: return cli_flag_err("--timeout", kjoin_duration_parse(arg, &a->timeout_ms, err), err);
    case OPT_VERBOSE: return cli_parse_long("-v", arg, 0, 10, &a->verbosity, err);
    case OPT_CA_SECRET: a->ca_secret = arg; break;
    case OPT_JOB: a->job = true; break;
    case OPT_IMAGE: a->image = arg; break;
    case OPT_CRONJOB_API: a->cronjob_api = arg; break;
    case OPT_ROTATED_EXIT: return cli_parse_long("--rotated-exit-code", arg, 0, 125, &a->rotated_exit, err);
    case OPT_ROOT_CERT: a->ca_set.root_cert = arg; break;
    case OPT_ROOT_KEY: a->ca_set.root_key = arg; break;
    case OPT_INTERMEDIATE: a->ca_set.intermediate = true; break;
    case OPT_INTERMEDIATE_DUR: return seconds(arg, &a->ca_set.intermediate_duration, err);
    case OPT_ROTATE: a->ca_set.rotate = true; break;
    case OPT_LAYOUT:
        a->layout = arg;
        return cli_flag_err("--layout", kjoin_ca_layout_parse(arg, &a->ca_set.layout, err), err);
    case OPT_CERTIFICATE_KEY:
    case OPT_CERTIFICATE_KEY_FILE: {
        if (a->has_key)
            return kjoin_err_set(err, KJOIN_E_USAGE, "give the certificate key once: --certificate-key or "
                                                     "--certificate-key-file");
        kjoin_code rc = id == OPT_CERTIFICATE_KEY ? kjoin_certificate_key_parse(arg, &a->key, err)
                                                  : kjoin_certificate_key_read(arg, &a->key, err);
        if (id == OPT_CERTIFICATE_KEY)
            cli_scrub_secret((char *)arg);
        else
            kjoin_mask_keys((char *)arg); /* a key given where the file goes */
        a->has_key = !rc;
        return cli_flag_err(id == OPT_CERTIFICATE_KEY ? "--certificate-key" : "--certificate-key-file", rc, err);
    }
    case OPT_CERT_DIR: a->cert_dir = arg; break;
    case OPT_CONFIG: a->config = arg; break;
    case OPT_SKIP_KEY_PRINT: a->skip_key_print = true; break;
    case OPT_ONLY:
        if (strcmp(arg, "ca") && strcmp(arg, "leaves"))
            return kjoin_err_set(err, KJOIN_E_USAGE, "--only takes ca or leaves, not \"%.40s\"", arg);
        a->scope = arg[0] == 'c' ? KJOIN_CERTS_CA : KJOIN_CERTS_LEAVES;
        break;
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
            cli_out(stdout, "[certs] %s\n", r->lines[i]);
        if (r->restart_nodes)
            cli_out(stdout, "[certs] restart (or SIGHUP) the nodes so that they load the new certificates\n");
        if (r->reload_clients)
            cli_out(stdout, "[certs] clients must reload their certificate and CA files\n");
        if (a->dry_run && r->changed)
            cli_out(stdout, "[certs] dry run: nothing was written\n");
    }
    return rotate && r->changed && !a->dry_run ? (int)a->rotated_exit : 0;
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

static int check_expiration(const certs_args *a, const kjoin_certs_store *store, kjoin_err *err)
{
    kjoin_certs_status st[64];
    size_t n = 0;
    if (kjoin_certs_check(store, a->now, st, 64, &n, err))
        return cli_fail(a->format, err);
    bool any_due = false;
    json_object *certs = json_object_new_array(), *cas = json_object_new_array();
    for (int pass = 0; pass < 2; pass++) {
        if (a->format == CLI_TEXT)
            cli_out(stdout, pass == 0 ? "%-24s %-22s %-15s %-23s %-20s %s\n" : "\n%-24s %-22s %-15s %-20s %s\n",
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
            cli_rfc3339(st[i].not_after, iso, sizeof(iso));
            residual(st[i].not_after - a->now, res, sizeof(res));
            any_due |= st[i].due;
            if (a->format == CLI_TEXT && pass == 0)
                cli_out(stdout, "%-24s %-22s %-15s %-23s %-20s %s\n", st[i].name, when, res, st[i].ca_name, "no",
                       !st[i].due ? "no" : st[i].not_yet_valid ? "yes (not valid yet)"
                       : st[i].needs_regeneration ? "yes (needsRegeneration)" : "yes");
            else if (a->format == CLI_TEXT)
                cli_out(stdout, "%-24s %-22s %-15s %-20s %s\n", st[i].name, when, res, st[i].user_provided ? "yes" : "no",
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
            json_object_object_add(o, "notYetValid", json_object_new_boolean(st[i].not_yet_valid));
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
        cli_out(stdout, "\nrotation due: %s\n", any_due ? "yes (run kjoin certs rotate)" : "no");
    }
    return 0;
}

static int print_ca_set(const certs_args *a, const kjoin_ca_set_result *r)
{
    char when[32];
    if (r->root_key_shared)
        cli_out(stderr, "WARNING: the root's key %s is readable by group or others: chmod 600 it\n", a->ca_set.root_key);
    if (a->format == CLI_JSON) {
        json_object *o = json_object_new_object(), *cas = json_object_new_array(), *pins = json_object_new_object();
        json_object_object_add(o, "dir", json_object_new_string(a->ca_set.dir));
        json_object_object_add(o, "layout", json_object_new_string(a->layout));
        json_object_object_add(o, "written", json_object_new_boolean(r->written));
        json_object_object_add(o, "rotated", json_object_new_boolean(r->rotated));
        json_object_object_add(o, "finished", json_object_new_boolean(r->finished));
        json_object_object_add(o, "root", json_object_new_string(r->root));
        json_object_object_add(o, "signer", json_object_new_string(r->signer));
        json_object_object_add(o, "intermediate", json_object_new_string(r->intermediate));
        for (size_t i = 0; i < r->n; i++) {
            json_object *c = json_object_new_object();
            cli_rfc3339(r->cas[i].not_after, when, sizeof(when));
            json_object_object_add(c, "role", json_object_new_string(r->cas[i].role));
            json_object_object_add(c, "file", json_object_new_string(r->cas[i].file));
            json_object_object_add(c, "subject", json_object_new_string(r->cas[i].subject));
            json_object_object_add(c, "notAfter", json_object_new_string(when));
            json_object_object_add(c, "bundle", json_object_new_int64((int64_t)r->cas[i].bundle));
            json_object_array_add(cas, c);
        }
        json_object_object_add(o, "cas", cas);
        json_object_object_add(o, "bundleFile", json_object_new_string(r->bundle_file));
        json_object_object_add(o, "bundle", json_object_new_int64((int64_t)r->bundle));
        json_object_object_add(pins, "rootSha256", json_object_new_string(r->root_pin));
        json_object_object_add(pins, "sha256", json_object_new_string(r->spki_pin));
        json_object_object_add(o, "pins", pins);
        cli_print_json(o);
        return 0;
    }
    cli_out(stdout, "[ca-set] %s %s set in %s under \"%s\"%s%s%s\n",
           r->finished ? "finished the" : !r->written ? "already holds the" : r->rotated ? "rotated to a new" : "wrote a",
           a->layout, a->ca_set.dir, r->root, *r->intermediate ? " (intermediate \"" : "", r->intermediate,
           *r->intermediate ? "\")" : "");
    for (size_t i = 0; i < r->n; i++) {
        cli_rfc3339(r->cas[i].not_after, when, sizeof(when));
        cli_out(stdout, "[ca-set] %-24s %-22s until %s, %zu certificate%s in the file\n", r->cas[i].file, r->cas[i].role, when,
               r->cas[i].bundle, r->cas[i].bundle == 1 ? "" : "s");
    }
    cli_out(stdout, "[ca-set] %s: the server CA's bundle (%zu certificates), what cluster-info and the nodes carry\n",
           r->bundle_file, r->bundle);
    cli_out(stdout, "[ca-set] the pins of the root, %s:\n", r->rotated || !r->written ? "unchanged" : "the same after every --rotate");
    cli_out(stdout, "[ca-set]   %s   (kjoin join --discovery-token-ca-cert-hash; K3s token K10%s::...)\n", r->root_pin,
           r->root_pin + strlen("root-sha256:"));
    cli_out(stdout, "[ca-set]   %s   (kubeadm join --discovery-token-ca-cert-hash)\n", r->spki_pin);
    if (r->written || r->finished)
        cli_out(stdout, "[ca-set] restart the control plane so that it loads the new CAs\n");
    return 0;
}

/* The store the flags name: --dir, or --store secrets with an API client
 * from --kubeconfig, $KUBECONFIG, the pod's service account, or admin.conf
 * (client-go's order, kubeadm's default). */
static kjoin_code open_store(const certs_args *a, bool secrets_ok, kjoin_certs_store *st, kjoin_err *err)
{
    bool secrets = a->store && strcmp(a->store, "secrets") == 0;
    *st = (kjoin_certs_store){.dir = a->dir, .ns = a->ns, .prefix = a->prefix, .ca_secret = a->ca_secret};
    if (secrets && !secrets_ok)
        return kjoin_err_set(err, KJOIN_E_USAGE, "this command works on a directory (--dir), not --store secrets");
    if (!secrets && !a->dir)
        return kjoin_err_set(err, KJOIN_E_USAGE, "--dir is required (or --store secrets)");
    if (secrets && a->dir)
        return kjoin_err_set(err, KJOIN_E_USAGE, "--dir and --store secrets are two stores: give one");
    if (!secrets && (a->kubeconfig || a->context || a->ca_secret || a->timeout_ms || a->verbosity))
        return kjoin_err_set(err, KJOIN_E_USAGE, "--kubeconfig, --context, --ca-secret, --timeout and -v need --store secrets");
    if (!secrets)
        return KJOIN_OK;
    st->dir = NULL;
    return cli_kubeapi(a->kubeconfig, a->context, true, a->timeout_ms, &a->verbosity, &st->api, err);
}

/* upload-certs --config: the ClusterConfiguration of this node's kubeadm
 * configuration file, as kubeadm init phase upload-certs --config reads it. */
static kjoin_code local_configuration(const char *path, kjoin_local_configuration **out, kjoin_err *err)
{
    char *text = NULL;
    size_t len = 0;
    kjoin_err inner;
    kjoin_code rc = kjoin_file_read(path, 1 << 20, &text, &len, err);
    if (!rc && kjoin_local_configuration_parse(text, len, out, &inner)) /* the operator's input: exit 2 */
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "--config %s: %s", path, inner.msg);
    free(text);
    return rc;
}

/* certificate-key; upload-certs with kubeadm's lines (the key last, so a
 * script can take the last line) or, with -o json, the key and the Secret's
 * owner token and expiry. */
static int certificate_key(certs_args *a, bool upload)
{
    kjoin_err err = {0};
    kjoin_upload_certs_result r;
    kjoin_kubeapi *api = NULL;
    char hex[2 * KJOIN_CERTIFICATE_KEY_LEN + 1];
    kjoin_local_configuration *local = NULL;
    kjoin_code rc = upload && a->config ? local_configuration(a->config, &local, &err) : KJOIN_OK; /* input first */
    if (!rc && !a->has_key)
        rc = kjoin_certificate_key_generate(&a->key, &err);
    if (!rc && upload && !(rc = cli_kubeapi(a->kubeconfig, a->context, false, a->timeout_ms, &a->verbosity, &api, &err))) {
        if (a->format == CLI_TEXT)
            printf("[upload-certs] Storing the certificates in Secret \"kubeadm-certs\" in the \"kube-system\" "
                   "Namespace\n");
        rc = kjoin_upload_certs(api, local, a->cert_dir, &a->key, (int64_t)time(NULL), &r, &err);
    }
    kjoin_kubeapi_free(api);
    kjoin_local_configuration_free(local);
    kjoin_certificate_key_format(&a->key, hex);
    kjoin_certificate_key_clear(&a->key);
    if (rc) {
        OPENSSL_cleanse(hex, sizeof(hex));
        return cli_fail(a->format, &err);
    }
    if (a->format == CLI_JSON) {
        json_object *o = json_object_new_object();
        if (!a->skip_key_print)
            json_object_object_add(o, "certificateKey", json_object_new_string(hex));
        if (upload) {
            char expires[32];
            struct tm tm;
            time_t t = (time_t)r.expires;
            strftime(expires, sizeof(expires), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
            json_object_object_add(o, "secret", json_object_new_string("kube-system/kubeadm-certs"));
            json_object_object_add(o, "ownerTokenID", json_object_new_string(r.token_id));
            json_object_object_add(o, "expires", json_object_new_string(expires));
            json_object_object_add(o, "certDir", json_object_new_string(r.cert_dir));
        }
        cli_print_json(o);
    } else if (upload && !a->skip_key_print) {
        printf("[upload-certs] Using certificate key:\n%s\n", hex);
    } else if (!upload) {
        printf("%s\n", hex);
    }
    OPENSSL_cleanse(hex, sizeof(hex));
    return 0;
}

int cmd_certs(int argc, char **argv)
{
    certs_args a = {.format = cli_format_from_argv(argc, argv), .now = (int64_t)time(NULL),
                    .s = kjoin_certs_defaults(), .ns = "default", .prefix = "kjoin",
                    .rotated_exit = EXIT_ROTATED};
    kjoin_err err = {0};
    /* "issue node" and "issue client" are two words: read them as one. */
    char issue[16];
    if (argc >= 3 && strcmp(argv[1], "issue") == 0 && (!strcmp(argv[2], "node") || !strcmp(argv[2], "client"))) {
        snprintf(issue, sizeof(issue), "issue %s", argv[2]);
        argv[2] = issue;
        argv[1] = argv[0];
        argv++, argc--;
    }
    const char *names[N_VERBS];
    cli_verb verbs[N_VERBS];
    const cli_verb *verb_ptrs[N_VERBS];
    cli_opt opts[N_VERBS][N_OPTS];
    for (size_t i = 0; i < N_VERBS; i++) {
        names[i] = certs_verbs[i].name;
        verbs[i] = verb_of(&certs_verbs[i], opts[i]);
        verb_ptrs[i] = &verbs[i];
    }
    int which = cli_group(argc, argv, "kjoin certs",
                          "A self-signing certificate manager: a CA, node and client certificates in a\n"
                          "CockroachDB-style certs directory, with expiry windows and CA rotation that\n"
                          "never disrupts peers. See docs/certs.md.",
                          names, verb_ptrs, N_VERBS);
    if (which < 0)
        return -which - 1;
    int first = 0;
    int p = cli_parse(&verbs[which], argc - 1, argv + 1, on_opt, &a, &first, &err);
    if (p < 0)
        return 0;
    if (p)
        return cli_fail(a.format, &err);
    if (which == V_CERT_KEY || which == V_UPLOAD)
        return certificate_key(&a, which == V_UPLOAD);
    if (which == V_CA_SET) {
        kjoin_ca_set_result r;
        a.ca_set.dir = a.dir;
        a.ca_set.key_type = a.s.key_type;
        if (!a.dir || !a.layout || !a.ca_set.root_cert || !a.ca_set.root_key)
            kjoin_err_set(&err, KJOIN_E_USAGE, "ca-set needs --dir, --layout, --root-cert and --root-key");
        else if (!kjoin_certs_ca_set(&a.ca_set, a.now, &r, &err))
            return print_ca_set(&a, &r);
        return cli_fail(a.format, &err);
    }
    kjoin_certs_store st = {0};
    kjoin_certs_report report;
    kjoin_code rc = which == V_MANIFESTS ? KJOIN_OK : open_store(&a, which != V_ADOPT_CA, &st, &err);
    if (rc)
        return cli_fail(a.format, &err);
    if (which == V_INIT) {
        kjoin_certs_init_opts o = {.settings = a.s, .ca_cert = a.ca_cert, .ca_key = a.ca_key, .user = a.user,
                                   .sans = a.sans, .n_sans = a.n_sans};
        rc = kjoin_certs_init(&st, &o, a.now, &report, &err);
    } else if (which == V_ISSUE_NODE) {
        rc = a.name ? kjoin_certs_issue_node(&st, a.name, a.sans, a.n_sans, a.now, &report, &err)
                    : kjoin_err_set(&err, KJOIN_E_USAGE, "issue node needs --name");
    } else if (which == V_ISSUE_CLIENT) {
        rc = a.user ? kjoin_certs_issue_client(&st, a.user, a.groups, a.n_groups, a.now, &report, &err)
                    : kjoin_err_set(&err, KJOIN_E_USAGE, "issue client needs --user");
    } else if (which == V_ADOPT_CA) {
        rc = a.ca_cert && a.ca_key ? kjoin_certs_adopt_ca(&st, a.ca_cert, a.ca_key, a.now, &report, &err)
                                   : kjoin_err_set(&err, KJOIN_E_USAGE, "adopt-ca needs --ca-cert and --ca-key");
    } else if (which == V_ROTATE) {
        rc = kjoin_certs_rotate(&st, a.now, a.scope, a.dry_run, &report, &err);
    } else if (which == V_CHECK) {
        int code = check_expiration(&a, &st, &err);
        kjoin_kubeapi_free(st.api);
        return code;
    } else if (a.job) {
        kjoin_certs_job_opts o = {.ns = a.ns, .prefix = a.prefix, .image = a.image, .ca_secret = a.ca_secret,
                                  .cronjob_api = a.cronjob_api, .settings = a.s};
        char *yaml = NULL;
        if (a.dir)
            rc = kjoin_err_set(&err, KJOIN_E_USAGE, "--job prints the objects of the Secrets store: it takes no --dir");
        else if (!a.image)
            rc = kjoin_err_set(&err, KJOIN_E_USAGE, "--job needs --image");
        else
            rc = kjoin_certs_job_manifests(&o, &yaml, &err);
        if (rc)
            return cli_fail(a.format, &err);
        fputs(yaml, stdout);
        free(yaml);
        return 0;
    } else if (!a.dir) {
        kjoin_err_set(&err, KJOIN_E_USAGE, "--dir is required (or --job)");
        return cli_fail(a.format, &err);
    } else if (a.image || a.cronjob_api || a.ca_secret) {
        kjoin_err_set(&err, KJOIN_E_USAGE, "--image, --cronjob-api and --ca-secret belong to --job");
        return cli_fail(a.format, &err);
    } else {
        char *json = NULL;
        if ((rc = kjoin_certs_manifests(a.dir, a.ns, a.prefix, &json, &err)))
            return cli_fail(a.format, &err);
        puts(json);
        kjoin_free_wiped_str(json); /* it holds private keys */
        return 0;
    }
    kjoin_kubeapi_free(st.api);
    return rc ? cli_fail(a.format, &err) : print_report(&a, &report, which == V_ROTATE);
}
