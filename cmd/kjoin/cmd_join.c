/* kjoin join: token or file discovery, then the TLS-bootstrap kubeconfig
 * written atomically. Flags follow kubeadm join; --config reads a kubeadm
 * JoinConfiguration instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <uuid/uuid.h>

#include <kjoin/config.h>
#include <kjoin/bootstrap.h>
#include <kjoin/join.h>
#include <kjoin/kubeconfig.h>
#include <kjoin/util.h>
#include <kjoin/controlplane.h>
#include <kjoin/phases.h>

#include "cli.h"
#include "verbs.h"

enum {
    OPT_TOKEN,
    OPT_DISCOVERY_TOKEN,
    OPT_TLS_TOKEN,
    OPT_TOKEN_FILE,
    OPT_PIN,
    OPT_UNSAFE,
    OPT_WAIT_FOR_TOKEN,
    OPT_DISCOVERY_FILE,
    OPT_CONFIG,
    OPT_TIMEOUT,
    OPT_OUT,
    OPT_CLUSTER_NAME,
    OPT_FORCE,
    OPT_DRY_RUN,
    OPT_CHECK,
    OPT_OUTPUT,
    OPT_VERBOSE,
    OPT_FLAVOR,
    OPT_NODE_NAME,
    OPT_CA_CERT_PATH,
    OPT_QUIET,
    OPT_TLS_BOOTSTRAP,
    OPT_KUBELET_KUBECONFIG,
    OPT_KUBELET_PKI_DIR,
    OPT_KEY_TYPE,
    OPT_SKIP_PHASES,
    OPT_IGNORE_PREFLIGHT,
    OPT_CRI_SOCKET,
    OPT_PATCHES,
    OPT_KUBECONFIG,
    OPT_KUBELET_LOG,
    OPT_CONTROL_PLANE,
    OPT_CERTIFICATE_KEY,
    OPT_CERTIFICATE_KEY_FILE,
    OPT_ADVERTISE_ADDRESS,
    OPT_BIND_PORT,
    OPT_NO_REPORT,
    OPT_KUBELET_SERVER,
    OPT_NODE_IP,
    OPT_PROXY,
    OPT_NO_PROXY,
    OPT_IMAGES,
};

static const cli_opt join_opts[] = {
    {OPT_TOKEN, "token", 0, true, "TOKEN", "bootstrap token for discovery and TLS bootstrap (prefer --token-file)"},
    {OPT_DISCOVERY_TOKEN, "discovery-token", 0, true, "TOKEN", "token for discovery only"},
    {OPT_TLS_TOKEN, "tls-bootstrap-token", 0, true, "TOKEN", "token written into the kubeconfig"},
    {OPT_TOKEN_FILE, "token-file", 0, true, "FILE", "read --token from FILE (- for stdin), trimmed: its first line; for K3s all of it"},
    {OPT_PIN, "discovery-token-ca-cert-hash", 0, true, "PIN",
     "sha256:<hex> (SPKI) or root-sha256:<hex> (root DER); repeatable, comma-separated"},
    {OPT_UNSAFE, "discovery-token-unsafe-skip-ca-verification", 0, false, NULL,
     "token discovery without CA pinning (unsafe: trusts whoever answers)"},
    {OPT_WAIT_FOR_TOKEN, "wait-for-token", 0, false, NULL,
     "keep waiting for a token the API server rejects (one made after this node boots); by default such a token ends the join (exit 8)"},
    {OPT_DISCOVERY_FILE, "discovery-file", 0, true, "SOURCE", "discover from a kubeconfig: a path, - or an https:// URL"},
    {OPT_CONFIG, "config", 0, true, "FILE", "a kubeadm JoinConfiguration (v1beta3 or v1beta4)"},
    {OPT_TIMEOUT, "discovery-timeout", 0, true, "DURATION", "one deadline for the whole join, discovery and the kubelet's bootstrap (default 5m)"},
    {OPT_OUT, "kubeconfig-out", 0, true, "FILE", "the bootstrap kubeconfig (default /etc/kubernetes/bootstrap-kubelet.conf)"},
    {OPT_CLUSTER_NAME, "cluster-name", 0, true, "NAME", "cluster name in the kubeconfig (default kubernetes)"},
    {OPT_FORCE, "force", 0, false, NULL, "replace an existing kubeconfig with different content"},
    {OPT_DRY_RUN, "dry-run", 0, false, NULL, "run the checks and discovery, print every file the join would write (tokens and keys masked), write, start and change nothing"},
    {OPT_CHECK, "check", 0, false, NULL,
     "ask the cluster whether this join would succeed (token, node name, kubelet configuration, CSR approval, clock; "
     "with --control-plane, the etcd members' health and peer URLs): discovery and a few reads, nothing written or "
     "started; the exit code is the join's"},
    {OPT_OUTPUT, "output", 'o', true, "FORMAT", "text (default) or json"},
    {OPT_VERBOSE, "v", 'v', true, "LEVEL", "log verbosity: 0 steps, 1 details, 4 each request, 6 response headers"},
    {OPT_FLAVOR, "flavor", 0, true, "kubeadm|k3s",
     "cluster kind (default: k3s for K10... tokens or when K3S_TOKEN/K3S_URL are set, else kubeadm)"},
    {OPT_NODE_NAME, "node-name", 0, true, "NAME", "the node's name (lower-case DNS name), shown in the result"},
    {OPT_CA_CERT_PATH, "ca-cert-path", 0, true, "FILE", "also write the trusted cluster CA there (mode 0644), as kubeadm's ca.crt"},
    {OPT_QUIET, "quiet", 'q', false, NULL, "print errors only"},
    {OPT_TLS_BOOTSTRAP, "tls-bootstrap", 0, false, NULL,
     "go on to the node's own client certificate and kubelet.conf (see kjoin tls-bootstrap)"},
    {OPT_KUBELET_KUBECONFIG, "kubelet-kubeconfig", 0, true, "FILE", "with --tls-bootstrap: kubelet.conf (default /etc/kubernetes/kubelet.conf)"},
    {OPT_KUBELET_PKI_DIR, "kubelet-pki-dir", 0, true, "DIR", "with --tls-bootstrap: the client certificates (default /var/lib/kubelet/pki)"},
    {OPT_KEY_TYPE, "key-type", 0, true, "TYPE", "with --tls-bootstrap: ecdsa-p256 (default), rsa2048, rsa3072, rsa4096, ed25519"},
    {OPT_SKIP_PHASES, "skip-phases", 0, true, "LIST",
     "phases not to run, by kubeadm's names ('kjoin join phase --help' lists them); discovery alone: "
     "preflight,kubelet-start"},
    {OPT_IGNORE_PREFLIGHT, "ignore-preflight-errors", 0, true, "LIST", "preflight checks whose errors are only warnings (names, or all)"},
    {OPT_CRI_SOCKET, "cri-socket", 0, true, "PATH", "the container runtime's socket (default: containerd's or CRI-O's, whichever exists)"},
    {OPT_PATCHES, "patches", 0, true, "DIR", "kubeadm's patches directory: its kubeletconfiguration patches (strategic, merge, json) go into config.yaml"},
    {OPT_KUBECONFIG, "kubeconfig", 0, true, "FILE", "kubeadm's admin kubeconfig, for a control-plane join: accepted, does not apply to a worker"},
    {OPT_NO_REPORT, "no-report", 0, false, NULL,
     "a join that fails after discovery does not file a join report in the cluster (kjoin reports lists them)"},
    {OPT_PROXY, "proxy", 0, true, "URL",
     "the kubelet and containerd go out through this http(s)://HOST:PORT proxy (systemd drop-ins), the cluster's own "
     "addresses past it (NO_PROXY)"},
    {OPT_NO_PROXY, "no-proxy", 0, true, "LIST", "with --proxy: more comma-separated NO_PROXY entries"},
    {OPT_IMAGES, "images", 0, true, "ARCHIVE",
     "import this image archive (docker or OCI) into containerd's k8s.io namespace before the kubelet starts (a node "
     "without a way to a registry)"},
    {OPT_NODE_IP, "node-ip", 0, true, "IP[,IP]",
     "the kubelet's node-ip (default on a dual-stack cluster: the addresses of the default routes' interfaces, "
     "when the node has both families)"},
    {OPT_KUBELET_SERVER, "kubelet-server", 0, true, "URL",
     "a worker's kubelet talks to the cluster through this https://HOST[:PORT] (a per-node load balancer) instead of "
     "the discovered server; checked before anything is written"},
    {OPT_KUBELET_LOG, "kubelet-log", 0, true, "FILE",
     "without systemd: the file the kubelet's output goes to (the printed start command appends to it); the wait reads its last error there"},
    {OPT_CONTROL_PLANE, "control-plane", 0, false, NULL,
     "a control-plane join, as kubeadm's: the node gets the cluster's shared CAs, its own certificates, kubeconfigs, "
     "static Pods and etcd member"},
    {OPT_CERTIFICATE_KEY, "certificate-key", 0, true, "KEY",
     "the key kubeadm init --upload-certs printed (prefer --certificate-key-file or KJOIN_CERTIFICATE_KEY)"},
    {OPT_CERTIFICATE_KEY_FILE, "certificate-key-file", 0, true, "FILE", "read --certificate-key from FILE (- for stdin)"},
    {OPT_ADVERTISE_ADDRESS, "apiserver-advertise-address", 0, true, "ADDR",
     "a control-plane node's API server address (default: the one it reaches the API server from)"},
    {OPT_BIND_PORT, "apiserver-bind-port", 0, true, "PORT", "a control-plane node's API server port (default 6443)"},
};

static const cli_verb join_verb = {
    .usage = "kjoin join [phase NAME] ENDPOINT... [flags] | kjoin join --discovery-file SOURCE [flags] | kjoin join --config FILE",
    .summary = "Join this machine to a cluster as kubeadm join does: preflight, discovery,\n"
               "kubelet-start (the cluster's kubelet configuration, the node's flags, the kubelet\n"
               "started) and kubelet-wait-bootstrap (until the Node is registered); with\n"
               "--control-plane also kubeadm's control-plane phases (certificates, kubeconfigs, static\n"
               "Pods, the etcd member, the Node marked, the control plane healthy). With ENDPOINTs\n"
               "(host:port, ipv4:port or [ipv6]:port, optionally with https://; several are tried in\n"
               "turn) discovery uses a token and a CA pin; with --discovery-file it trusts a kubeconfig\n"
               "distributed out of band; --config reads both from a kubeadm JoinConfiguration.\n"
               "Discovery alone (the bootstrap kubeconfig only): --skip-phases preflight,kubelet-start.\n"
               "'kjoin join phase NAME' runs one phase.",
    .opts = join_opts,
    .n_opts = sizeof(join_opts) / sizeof(join_opts[0]),
    .min_args = 0,
    .max_args = -1, /* checked with a message that names the limit */
};

/* The flags, as given, into the one join specification; the library
 * decides what they mean together. */
typedef struct join_args {
    kjoin_phases_spec w;
    const char *config;
    const char *not_with_config; /* the first flag kubeadm refuses beside --config */
    bool skip_given;        /* --skip-phases named phases: it replaces the file's skipPhases */
    cli_format format;
    long verbosity;
    bool kubeconfig;        /* kubeadm's --kubeconfig given: said once not to apply */
    kjoin_pinset *pins;
    char *secrets[3];       /* copies of the token flags, whose argv text is scrubbed at once */
    char *certificate_key_file; /* --certificate-key-file's copy (argv keeps no key) */
    char *certificate_key_text; /* --certificate-key's copy (argv scrubbed) */
    char *env[3];           /* KJOIN_TOKEN, K3S_TOKEN, KJOIN_CERTIFICATE_KEY: taken out of the environment */
    const char *bootstrap_flag; /* a --tls-bootstrap flag given (refused without it) */
    char ignore[4096];      /* every --ignore-preflight-errors, added up as kubeadm's (a string slice) */
} join_args;

/* A token flag's value: copied, and scrubbed from argv so ps never shows it. */
static const char *take_secret(join_args *a, int slot, const char *arg)
{
    if (a->secrets[slot]) {
        kjoin_free_wiped_str(a->secrets[slot]);
    }
    a->secrets[slot] = strdup(arg);
    cli_scrub_secret((char *)arg);
    return a->secrets[slot] ? a->secrets[slot] : "";
}

static kjoin_code on_opt(void *ctx, int id, const char *arg, kjoin_err *err)
{
    join_args *a = ctx;
    kjoin_join_spec *s = &a->w.join;
    kjoin_node_spec *n = &a->w.node;
    /* kubeadm takes only --node-name, --dry-run, --ignore-preflight-errors,
     * --skip-* and -v beside --config (its isAllowedFlag); kjoin's own output
     * and TLS-bootstrap flags, which no file field holds, are fine too. */
    bool refused = id == OPT_TOKEN || id == OPT_DISCOVERY_TOKEN || id == OPT_TLS_TOKEN || id == OPT_TOKEN_FILE ||
                   id == OPT_PIN || id == OPT_UNSAFE || id == OPT_DISCOVERY_FILE || id == OPT_TIMEOUT ||
                   id == OPT_CA_CERT_PATH || id == OPT_CRI_SOCKET || id == OPT_PATCHES || id == OPT_CERTIFICATE_KEY;
    if (refused && !a->not_with_config)
        a->not_with_config = cli_current_flag;
    switch (id) {
    case OPT_CONTROL_PLANE: a->w.control_plane = true; break;
    case OPT_ADVERTISE_ADDRESS: a->w.advertise_address = arg; break;
    case OPT_BIND_PORT: {
        char *end;
        long port = strtol(arg, &end, 10);
        if (!*arg || *end || port < 1 || port > 65535)
            return kjoin_err_set(err, KJOIN_E_USAGE, "--apiserver-bind-port \"%.16s\" is not a port (1-65535)", arg);
        a->w.bind_port = (int)port;
        break;
    }
    case OPT_CERTIFICATE_KEY:
        kjoin_free_wiped_str(a->certificate_key_text);
        a->certificate_key_text = strdup(arg);
        cli_scrub_secret((char *)arg);
        break;
    case OPT_CERTIFICATE_KEY_FILE:
        /* A key given where the file goes would stay in ps: argv keeps no key. */
        free(a->certificate_key_file);
        a->certificate_key_file = strdup(arg);
        kjoin_mask_keys((char *)arg);
        if (!a->certificate_key_file)
            return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
        break;
    case OPT_SKIP_PHASES:
        a->skip_given = *arg != '\0';
        return kjoin_skip_phases(&a->w, arg, err); /* now, so the message names the flag */
    case OPT_IGNORE_PREFLIGHT: {
        size_t used = strlen(a->ignore);
        if (snprintf(a->ignore + used, sizeof(a->ignore) - used, "%s%s", used ? "," : "", arg) >=
            (int)(sizeof(a->ignore) - used))
            return kjoin_err_set(err, KJOIN_E_USAGE, "--ignore-preflight-errors names more than %zu characters of "
                                 "checks", sizeof(a->ignore) - 1);
        n->ignore_preflight = a->ignore;
        break;
    }
    case OPT_CRI_SOCKET: n->cri_socket = arg; break;
    case OPT_NO_REPORT: a->w.no_report = true; break;
    case OPT_KUBELET_SERVER: a->w.kubelet_server = arg; break;
    case OPT_NODE_IP: a->w.node.node_ip = arg; break;
    case OPT_PROXY: a->w.node.proxy = arg; break;
    case OPT_NO_PROXY: a->w.node.no_proxy = arg; break;
    case OPT_IMAGES: a->w.node.images = arg; break;
    case OPT_PATCHES: n->patches_dir = arg; break;
    case OPT_KUBELET_LOG: n->kubelet_log = arg; break;
    case OPT_KUBECONFIG: a->kubeconfig = true; break;
    case OPT_TOKEN: s->token = take_secret(a, 0, arg); break;
    case OPT_DISCOVERY_TOKEN: s->discovery_token = take_secret(a, 1, arg); break;
    case OPT_TLS_TOKEN: s->tls_bootstrap_token = take_secret(a, 2, arg); break;
    case OPT_TOKEN_FILE: s->token_file = arg; break;
    case OPT_PIN: return kjoin_pinset_add(a->pins, arg, err);
    case OPT_UNSAFE: s->unsafe_skip_ca_verification = true; break;
    case OPT_WAIT_FOR_TOKEN: s->wait_for_token = true; break;
    case OPT_DISCOVERY_FILE: s->discovery_file = arg; return kjoin_discovery_source_check(arg, err);
    case OPT_CONFIG: a->config = arg; break;
    case OPT_TIMEOUT: return kjoin_duration_parse(arg, &s->timeout_ms, err);
    case OPT_OUT: n->paths.bootstrap_kubeconfig = arg; break;
    case OPT_CLUSTER_NAME: s->cluster_name = arg; break;
    case OPT_NODE_NAME: n->name = arg; break;
    case OPT_TLS_BOOTSTRAP: a->w.tls_bootstrap = true; break;
    case OPT_QUIET: a->verbosity = -1; break;
    case OPT_KUBELET_KUBECONFIG: n->paths.kubelet_kubeconfig = arg, a->bootstrap_flag = cli_current_flag; break;
    case OPT_KUBELET_PKI_DIR: a->w.bootstrap.pki_dir = arg, a->bootstrap_flag = cli_current_flag; break;
    case OPT_KEY_TYPE:
        a->bootstrap_flag = cli_current_flag;
        return kjoin_key_type_parse(arg, &a->w.bootstrap.key_type, err);
    case OPT_CA_CERT_PATH: n->paths.ca_cert_path = arg, a->w.ca_with_discovery = true; break;
    case OPT_FORCE: n->force = true; break;
    case OPT_DRY_RUN: a->w.dry_run = true; break;
    case OPT_CHECK: a->w.check = true; break;
    case OPT_OUTPUT: return cli_parse_format(arg, &a->format, err);
    case OPT_VERBOSE: return cli_parse_long("-v", arg, 0, 10, &a->verbosity, err);
    case OPT_FLAVOR:
        if (strcmp(arg, "kubeadm") && strcmp(arg, "k3s"))
            return kjoin_err_set(err, KJOIN_E_USAGE, "--flavor takes kubeadm or k3s, not \"%s\"", arg);
        s->flavor = strcmp(arg, "k3s") == 0 ? KJOIN_FLAVOR_K3S : KJOIN_FLAVOR_KUBEADM;
        break;
    }
    return KJOIN_OK;
}

/* The specification's fields as this command's flags name them... */
static const cli_field flag_names[] = {
    {"endpoints", "ENDPOINT"},
    {"discovery_file", "--discovery-file"},
    {"token", "--token"},
    {"token_file", "--token-file"},
    {"discovery_token", "--discovery-token"},
    {"tls_bootstrap_token", "--tls-bootstrap-token"},
    {"pins", "--discovery-token-ca-cert-hash"},
    {"unsafe_skip_ca_verification", "--discovery-token-unsafe-skip-ca-verification"},
    {"wait_for_token", "--wait-for-token"},
    {"timeout_ms", "--discovery-timeout"},
    {"cluster_name", "--cluster-name"},
    {"node_name", "--node-name"},
    {"bootstrap_kubeconfig", "--kubeconfig-out"},
    {"ca_cert_path", "--ca-cert-path"},
    {"flavor", "--flavor"},
    {"force", "--force"},
    {"dry_run", "--dry-run"},
    {"check", "--check"},
    {"tls_bootstrap", "--tls-bootstrap"},
    {"kubelet_kubeconfig", "--kubelet-kubeconfig"},
    {"cri_socket", "--cri-socket"},
    {"patches_dir", "--patches"},
    {"control_plane", "--control-plane"},
    {"certificate_key", "--certificate-key"},
    {"certificate_key_file", "--certificate-key-file"},
    {"advertise_address", "--apiserver-advertise-address"},
    {"bind_port", "--apiserver-bind-port"},
    {"kubelet_server", "--kubelet-server"},
    {"node_ip", "--node-ip"},
    {"proxy", "--proxy"},
    {"no_proxy", "--no-proxy"},
    {"images", "--images"},
    {"only", "kjoin join phase"},
};

/* ...and as a JoinConfiguration names them. */
static const cli_field config_names[] = {
    {"endpoints", "discovery.bootstrapToken.apiServerEndpoint"},
    {"discovery_file", "discovery.file.kubeConfigPath"},
    {"token", "discovery.bootstrapToken.token"},
    {"tls_bootstrap_token", "discovery.tlsBootstrapToken"},
    {"pins", "discovery.bootstrapToken.caCertHashes"},
    {"unsafe_skip_ca_verification", "discovery.bootstrapToken.unsafeSkipCAVerification"},
    {"wait_for_token", "--wait-for-token"},
    {"node_name", "nodeRegistration.name"},
    {"ca_cert_path", "caCertPath"},
    {"cluster_name", "--cluster-name"},
    {"bootstrap_kubeconfig", "--kubeconfig-out"},
    {"force", "--force"},
    {"dry_run", "dryRun"},
    {"tls_bootstrap", "--tls-bootstrap"},
    {"cri_socket", "nodeRegistration.criSocket"},
    {"patches_dir", "patches.directory"},
    {"certificate_key", "controlPlane.certificateKey"},
    {"certificate_key_file", "--certificate-key-file"},
    {"control_plane", "controlPlane"},
    {"kubelet_server", "--kubelet-server"},
    {"node_ip", "--node-ip"},
    {"proxy", "--proxy"},
    {"no_proxy", "--no-proxy"},
    {"images", "--images"},
};

typedef struct log_ctx {
    long verbosity;
    const cli_field *names;
    size_t n_names;
    json_object *events; /* -o json: the step lines, kept for the result */
    int64_t t0;
} log_ctx;

/* At most this many events in -o json's result (the first ones: how the join went). */
#define EVENTS_MAX 400

static void log_line(void *ctx, int level, const char *line)
{
    const log_ctx *l = ctx;
    char named[KJOIN_ERR_MSG_MAX * 2];
    if (level > l->verbosity && !(l->events && level <= 0))
        return;
    cli_name_fields(named, sizeof(named), line, l->names, l->n_names);
    if (l->events && level <= 0 && json_object_array_length(l->events) < EVENTS_MAX) {
        json_object *e = json_object_new_object();
        json_object_object_add(e, "ms", json_object_new_int64(kjoin_now_ms() - l->t0));
        json_object_object_add(e, "message", json_object_new_string(named));
        json_object_array_add(l->events, e);
    }
    if (level <= l->verbosity)
        cli_out(stderr, "%s\n", named);
}

/* The specification from a JoinConfiguration; only output flags may go
 * with it, as with kubeadm. The ignore lists of the flag and of the file
 * add up, as with kubeadm, into ignore. */
static kjoin_code spec_from_config(const join_args *a, size_t n_args, kjoin_join_config *cfg, char *ignore,
                                   size_t cap, kjoin_err *err)
{
    const kjoin_phases_spec *f = &a->w;
    if (f->join.flavor == KJOIN_FLAVOR_K3S)
        return kjoin_err_set(err, KJOIN_E_USAGE, "--config holds a kubeadm JoinConfiguration, not a K3s join");
    if (n_args)
        return kjoin_err_set(err, KJOIN_E_USAGE, "--config cannot be mixed with ENDPOINT arguments (as kubeadm): put "
                             "the endpoint in the JoinConfiguration (discovery.bootstrapToken.apiServerEndpoint)");
    if (a->not_with_config)
        return kjoin_err_set(err, KJOIN_E_USAGE, "--config cannot be mixed with --%s (as kubeadm, which takes only "
                             "--node-name, --dry-run, --ignore-preflight-errors, --skip-phases and -v with it): put "
                             "it in the JoinConfiguration", a->not_with_config);
    char *text = NULL;
    size_t len = 0;
    kjoin_err inner;
    kjoin_code rc = kjoin_file_read(a->config, KJOIN_KUBECONFIG_MAX, &text, &len, err);
    if (!rc && (rc = kjoin_join_config_parse(text, len, cfg, &inner)))
        kjoin_err_set(err, rc, "%s: %s", a->config, inner.msg);
    kjoin_free_wiped(text, len);
    if (rc)
        return rc;
    for (size_t i = 0; a->verbosity >= 0 && i < cfg->n_notes; i++)
        cli_out(stderr, "[config] %s\n", cfg->notes[i]);
    kjoin_phases_spec *s = &cfg->spec;
    const char *flag_ignore = f->node.ignore_preflight, *file_ignore = s->node.ignore_preflight;
    if (snprintf(ignore, cap, "%s%s%s", flag_ignore ? flag_ignore : "", flag_ignore && file_ignore ? "," : "",
                 file_ignore ? file_ignore : "") >= (int)cap)
        return kjoin_err_set(err, KJOIN_E_USAGE, "--ignore-preflight-errors and ignorePreflightErrors name more "
                                                 "than %zu characters of checks", cap - 1);
    s->node.ignore_preflight = ignore;
    if (f->node.name) /* kubeadm: --node-name over nodeRegistration.name */
        s->node.name = f->node.name;
    s->node.paths.bootstrap_kubeconfig = f->node.paths.bootstrap_kubeconfig;
    s->node.paths.kubelet_kubeconfig = f->node.paths.kubelet_kubeconfig;
    s->join.cluster_name = f->join.cluster_name;
    s->join.wait_for_token = f->join.wait_for_token;
    s->node.force = f->node.force;
    s->no_report = f->no_report;
    s->kubelet_server = f->kubelet_server;
    if (f->node.node_ip)
        s->node.node_ip = f->node.node_ip;
    s->node.proxy = f->node.proxy;
    s->node.no_proxy = f->node.no_proxy;
    s->node.images = f->node.images;
    s->node.kubelet_log = f->node.kubelet_log;
    s->dry_run = s->dry_run || f->dry_run;
    s->check = f->check;
    if (a->skip_given) /* kubeadm: --skip-phases, when given, instead of skipPhases */
        s->skip = f->skip, s->skip_prepare = f->skip_prepare;
    s->only = f->only;
    s->tls_bootstrap = f->tls_bootstrap;
    s->bootstrap = f->bootstrap;
    s->prepare = f->prepare;
    /* The control-plane flags, when given, over the file's controlPlane. */
    s->control_plane = s->control_plane || f->control_plane;
    if (f->advertise_address)
        s->advertise_address = f->advertise_address;
    if (f->bind_port)
        s->bind_port = f->bind_port;
    return KJOIN_OK;
}

/* A file of the node as -o json shows it: its path and its mode, "0644". */
static json_object *file_json(const char *path, unsigned mode)
{
    char text[8];
    json_object *o = json_object_new_object();
    snprintf(text, sizeof(text), "%04o", mode);
    json_object_object_add(o, "path", json_object_new_string(path));
    json_object_object_add(o, "mode", json_object_new_string(text));
    return o;
}

static json_object *node_json(const kjoin_phases_outcome *w)
{
    const kjoin_kubelet_start_result *k = &w->kubelet;
    const kjoin_preflight_report *pf = &w->preflight;
    json_object *node = json_object_new_object(), *phases = json_object_new_array(),
                *findings = json_object_new_array(), *files = json_object_new_array(), *steps = json_object_new_array();
    /* In the order they ran (kubeadm's, the table's: each phase's first
     * name); phase_ms is in bit order. */
    size_t n_table;
    const kjoin_phase_info *table = kjoin_phase_table(&n_table);
    unsigned listed = 0;
    for (size_t i = 0; i < n_table; i++) {
        unsigned bit = table[i].bit;
        if (!(w->ran & bit) || (listed & bit))
            continue;
        listed |= bit;
        json_object *p = json_object_new_object();
        json_object_object_add(p, "name", json_object_new_string(table[i].name));
        json_object_object_add(p, "elapsedMs", json_object_new_int64(w->phase_ms[__builtin_ctz(bit)]));
        json_object_array_add(phases, p);
    }
    for (size_t i = 0; i < pf->n; i++) {
        const kjoin_preflight_finding *f = &pf->items[i];
        json_object *o = json_object_new_object();
        json_object_object_add(o, "name", json_object_new_string(f->name));
        json_object_object_add(o, "level", json_object_new_string(!f->error ? "warning" : f->ignored ? "ignored" : "error"));
        json_object_object_add(o, "message", json_object_new_string(f->message));
        json_object_array_add(findings, o);
    }
    for (size_t i = 0; i < k->n_files; i++)
        json_object_array_add(files, file_json(k->files[i].path, k->files[i].mode));
    for (size_t i = 0; i < k->n_steps; i++) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "name", json_object_new_string(k->steps[i].name));
        json_object_object_add(o, "elapsedMs", json_object_new_int64(k->steps[i].ms));
        json_object_array_add(steps, o);
    }
    json_object_object_add(node, "phases", phases);
    json_object_object_add(node, "preflight", findings);
    json_object_object_add(node, "files", files);
    json_object_object_add(node, "steps", steps);
    if (w->ran & KJOIN_PHASE_KUBELET_START) {
        json_object_object_add(node, "serverMinor", json_object_new_int(k->server_minor));
        json_object_object_add(node, "kubeletConfigMap", json_object_new_string(k->config_map));
        json_object_object_add(node, "kubernetesVersion",
                               k->kubernetes_version[0] ? json_object_new_string(k->kubernetes_version) : NULL);
        json_object_object_add(node, "criSocket", json_object_new_string(pf->cri_socket));
        json_object_object_add(node, "nodeIP", k->node_ip[0] ? json_object_new_string(k->node_ip) : NULL);
        json_object_object_add(node, "nodeIPFound", json_object_new_boolean(k->node_ip_found));
        json_object_object_add(node, "noProxy", k->no_proxy[0] ? json_object_new_string(k->no_proxy) : NULL);
        json_object_object_add(node, "containerdRestarted", json_object_new_boolean(k->containerd_restarted));
        json_object *images = json_object_new_object();
        json_object_object_add(images, "sandbox", k->sandbox_image[0] ? json_object_new_string(k->sandbox_image) : NULL);
        json_object_object_add(images, "kubeProxy",
                               k->kube_proxy_image[0] ? json_object_new_string(k->kube_proxy_image) : NULL);
        json_object_object_add(images, "missing", json_object_new_string(k->images_missing));
        json_object_object_add(images, "imported", json_object_new_int64((int64_t)k->images_imported));
        json_object_object_add(node, "images", images);
        json_object_object_add(node, "kubelet", json_object_new_string(pf->kubelet_version));
        json_object_object_add(node, "systemd", json_object_new_boolean(k->systemd));
        json_object_object_add(node, "kubeletStartCommand",
                               k->start_command[0] ? json_object_new_string(k->start_command) : NULL);
    }
    if (w->ran & KJOIN_PHASE_KUBELET_WAIT_BOOTSTRAP) {
        json_object_object_add(node, "nodeRegistered", json_object_new_boolean(k->node_registered));
        json_object_object_add(node, "bootstrapKubeconfigRemoved", json_object_new_boolean(k->bootstrap_removed));
    }
    return node;
}

/* A control plane's check of its etcd: each member, and this node's peer URL. */
static json_object *etcd_check_json(const kjoin_etcd_check *c)
{
    json_object *o = json_object_new_object(), *list = json_object_new_array();
    for (size_t i = 0; i < c->n; i++) {
        const kjoin_etcd_member_check *m = &c->members[i];
        json_object *j = json_object_new_object();
        json_object_object_add(j, "name", json_object_new_string(m->name));
        json_object_object_add(j, "peerURL", json_object_new_string(m->peer_url));
        json_object_object_add(j, "learner", json_object_new_boolean(m->learner));
        json_object_object_add(j, "healthy", json_object_new_boolean(m->healthy));
        json_object_object_add(j, "peerReachable", json_object_new_boolean(m->peer_reachable));
        json_object_array_add(list, j);
    }
    json_object_object_add(o, "members", list);
    json_object_object_add(o, "memberAlready", json_object_new_boolean(c->member_already));
    json_object_object_add(o, "peerPortFree", json_object_new_boolean(c->peer_port_free));
    json_object_object_add(o, "problems", json_object_new_string(c->problems));
    return o;
}

/* The check's answers, each by name. */
static json_object *check_json(const kjoin_phases_outcome *w)
{
    const kjoin_join_check *c = &w->check;
    json_object *o = json_object_new_object();
    if (w->etcd_checked)
        json_object_object_add(o, "etcd", etcd_check_json(&w->etcd_check));
    json_object_object_add(o, "tokenValid", json_object_new_boolean(c->token_valid));
    json_object_object_add(o, "nodeNameFree", json_object_new_boolean(c->node_name_free));
    json_object_object_add(o, "kubeletConfig", json_object_new_boolean(c->kubelet_config));
    json_object_object_add(o, "csrAutoApproved", json_object_new_boolean(c->csr_auto_approved));
    if (c->csr_approver)
        json_object_object_add(o, "approver", json_object_new_string(c->approver));
    json_object_object_add(o, "clockWithinCA", json_object_new_boolean(c->clock_ok));
    json_object_object_add(o, "problems", json_object_new_string(c->problems));
    if (c->images_checked) {
        json_object *images = json_object_new_object();
        json_object_object_add(images, "sandbox", json_object_new_string(c->images_sandbox));
        json_object_object_add(images, "kubeProxy", c->images_kube_proxy[0] ? json_object_new_string(c->images_kube_proxy)
                                                                            : NULL);
        json_object_object_add(images, "missing", json_object_new_string(c->images_missing));
        json_object_object_add(o, "images", images);
    }
    return o;
}

static void print_check(const kjoin_phases_outcome *w)
{
    const kjoin_join_check *c = &w->check;
    static const char *const verdict[] = {"no", "yes"};
    cli_out(stderr, "[check] token valid: %s\n[check] node name %s free: %s\n[check] kubelet configuration in the "
                    "cluster: %s\n[check] node client CSRs approved by the cluster: %s\n[check] clock within the "
                    "cluster CA's validity: %s\n",
            verdict[c->token_valid], w->node_name.name, verdict[c->node_name_free], verdict[c->kubelet_config],
            verdict[c->csr_auto_approved], verdict[c->clock_ok]);
    if (c->csr_approver)
        cli_out(stderr, "[check] node client CSRs of a node-bound token approved by kjoin approver %s: yes\n",
                c->approver);
}

static void print_result(const kjoin_phases_spec *s, const kjoin_phases_outcome *w, const char *join_id,
                         json_object *events)
{
    const kjoin_join_outcome *o = &w->join;
    const kjoin_join_result *r = &o->result;
    static const char *const kinds[] = {"token", "file", "k3s"};
    json_object *root = json_object_new_object(), *certs = json_object_new_array();
    bool wrote = o->written || (w->ran & KJOIN_PHASE_KUBELET_START);
    json_object_object_add(root, "joinID", json_object_new_string(join_id));
    json_object_object_add(root, "kubeconfig", w->discovered && wrote ? json_object_new_string(w->kubeconfig_path) : NULL);
    json_object_object_add(root, "caCertPath", o->ca_written ? json_object_new_string(s->node.paths.ca_cert_path) : NULL);
    json_object_object_add(root, "dryRun", json_object_new_boolean(s->dry_run));
    if (w->discovered) {
        json_object_object_add(root, "server", json_object_new_string(r->server));
        json_object_object_add(root, "endpoint", json_object_new_string(r->endpoint));
        json_object_object_add(root, "discovery", json_object_new_string(kinds[o->kind]));
        json_object_object_add(root, "flavor", json_object_new_string(o->k3s ? "k3s" : "kubeadm"));
        json_object_object_add(root, "tokenID", *o->token_id ? json_object_new_string(o->token_id) : NULL);
        for (size_t i = 0; i < kjoin_bundle_count(r->bundle); i++) {
            const kjoin_cert_info *c = kjoin_bundle_cert(r->bundle, i);
            if (c->trust == KJOIN_TRUST_ANCHOR || c->trust == KJOIN_TRUST_CHAINED)
                json_object_array_add(certs, cli_cert_json(c, false));
        }
        json_object_object_add(root, "attempts", json_object_new_int((int)r->attempts));
        json_object_object_add(root, "elapsedMs", json_object_new_int64(r->elapsed_ms));
    }
    json_object_object_add(root, "clusterName",
                           json_object_new_string(s->join.cluster_name ? s->join.cluster_name : "kubernetes"));
    json_object_object_add(root, "nodeName", json_object_new_string(w->node_name.name));
    json_object_object_add(root, "caCertificates", certs);
    json_object_object_add(root, "node", node_json(w));
    if (w->ran & KJOIN_PHASE_ETCD_JOIN) {
        json_object *e = json_object_new_object();
        json_object_object_add(e, "memberID", json_object_new_string(w->etcd.member_id));
        json_object_object_add(e, "added", json_object_new_boolean(w->etcd.added));
        json_object_object_add(e, "promoted", json_object_new_boolean(w->etcd.promoted));
        json_object_object_add(e, "members", json_object_new_int((int)w->etcd.members));
        json_object_object_add(root, "etcd", e);
    }
    if (w->ran & KJOIN_PHASE_WAIT_CONTROL_PLANE) {
        json_object *h = json_object_new_object();
        for (int i = 0; i < KJOIN_MANIFESTS_N; i++)
            json_object_object_add(h, kjoin_manifest_component(i),
                                   w->control_plane_health.healthy_ms[i]
                                       ? json_object_new_int64(w->control_plane_health.healthy_ms[i])
                                       : NULL);
        json_object_object_add(root, "controlPlaneHealthyMs", h);
    }
    if (w->ran & KJOIN_PHASE_CONTROL_PLANE_JOIN)
        json_object_object_add(root, "controlPlaneMarked", json_object_new_boolean(w->marked));
    if (w->ran & KJOIN_PHASE_CONTROL_PLANE_PREPARE) { /* what the steps wrote, never the content */
        json_object *cp = json_object_new_object(), *files = json_object_new_array();
        for (size_t i = 0; i < w->control_plane_files.n; i++)
            if (!strstr(w->control_plane_files.v[i].path, "/etcd.yaml")) /* etcd-join's: its own field */
                json_object_array_add(files, file_json(w->control_plane_files.v[i].path, w->control_plane_files.v[i].mode));
        json_object_object_add(cp, "certificatesDir", json_object_new_string(w->cert_dir));
        if (*w->advertise_address)
            json_object_object_add(cp, "advertiseAddress", json_object_new_string(w->advertise_address));
        json_object_object_add(cp, "files", files);
        json_object_object_add(root, "controlPlane", cp);
    }
    if (s->dry_run) {
        json_object *would = json_object_new_array();
        for (size_t i = 0; i < w->planned.n; i++) {
            const kjoin_planned_file *f = &w->planned.files[i];
            json_object *file = file_json(f->path, f->mode);
            json_object_object_add(file, "content", json_object_new_string(f->content));
            json_object_array_add(would, file);
        }
        json_object_object_add(root, "wouldWrite", would);
    }
    if (w->tls_bootstrapped)
        json_object_object_add(root, "tlsBootstrap", cli_bootstrap_json(&s->bootstrap, &w->tls));
    if (w->checked)
        json_object_object_add(root, "check", check_json(w));
    json_object_object_add(root, "events", json_object_get(events));
    cli_print_json(root);
}

/* A dry run's files, as kubeadm prints them: each line of the content
 * after a tab (already masked and made printable by the library). */
static void print_planned(const kjoin_planned_files *plan)
{
    for (size_t i = 0; i < plan->n; i++) {
        const kjoin_planned_file *f = &plan->files[i];
        printf("[dryrun] Would write file \"%s\" (mode %04o) with content:\n", f->path, f->mode);
        for (const char *line = f->content; *line;) {
            size_t len = strcspn(line, "\n");
            printf("\t%.*s\n", (int)len, line);
            line += len + (line[len] == '\n');
        }
    }
}

/* A control-plane join that took back what it wrote: the failure's own
 * reason, what was taken back and what was left. */
/* What -o json's error adds for a join: the join ID, where it failed, the
 * failed preflight checks (a reason of their own), what a control-plane
 * join took back. */
static json_object *error_json(const kjoin_phases_outcome *o, const char *join_id, kjoin_code rc, json_object *events)
{
    json_object *e = json_object_new_object(), *checks = json_object_new_array();
    if (events)
        json_object_object_add(e, "events", json_object_get(events));
    if (*join_id) /* none yet when the flags were refused */
        json_object_object_add(e, "joinID", json_object_new_string(join_id));
    if (o->failed_in)
        json_object_object_add(e, "phase", json_object_new_string(o->failed_in));
    json_object_object_add(e, "reported", json_object_new_boolean(o->reported));
    if (o->failed_in && !strcmp(o->failed_in, "etcd-join"))
        json_object_object_add(e, "etcdMemberRemoved", json_object_new_boolean(o->etcd.unstarted_removed));
    if (o->checked)
        json_object_object_add(e, "check", check_json(o));
    const kjoin_preflight_report *p = &o->preflight;
    for (size_t i = 0; o->failed_in && !strcmp(o->failed_in, "preflight") && i < p->n; i++)
        if (p->items[i].error && !p->items[i].ignored)
            json_object_array_add(checks, json_object_new_string(p->items[i].name));
    if (rc == KJOIN_E_USAGE && json_object_array_length(checks)) {
        json_object_object_add(e, "reason", json_object_new_string("PreflightFailed"));
        json_object_object_add(e, "failedChecks", checks);
    } else {
        json_object_put(checks);
    }
    const kjoin_cp_reset_result *b = o->taken_back;
    if (!b)
        return e;
    json_object *removed = json_object_new_array(), *left = json_object_new_array();
    if (o->taken_back_cause)
        json_object_object_add(e, "cause", json_object_new_string(kjoin_code_reason(o->taken_back_cause)));
    for (size_t i = 0; i < b->n_removed; i++)
        json_object_array_add(removed, json_object_new_string(b->removed[i]));
    for (size_t i = 0; i < b->n_left; i++)
        json_object_array_add(left, json_object_new_string(b->left[i]));
    json_object_object_add(e, "takenBack", removed);
    json_object_object_add(e, "left", left);
    return e;
}

/* The secrets the environment hands kjoin, taken once: the variable is
 * wiped in place (also from /proc/self/environ) and dropped, so that no
 * child (crictl, ctr, systemctl, the kubelet asked its version) inherits
 * it. */
static const char *const env_secrets[] = {"KJOIN_TOKEN", "K3S_TOKEN", "KJOIN_CERTIFICATE_KEY"};
enum { ENV_TOKEN, ENV_K3S_TOKEN, ENV_CERTIFICATE_KEY };

static void take_env_secrets(join_args *a)
{
    for (size_t i = 0; i < sizeof(env_secrets) / sizeof(env_secrets[0]); i++) {
        char *v = getenv(env_secrets[i]);
        if (!v)
            continue;
        a->env[i] = strdup(v);
        OPENSSL_cleanse(v, strlen(v));
        unsetenv(env_secrets[i]);
    }
}

/* kubeadm's join phases, as `kjoin join phase --help` lists them: the
 * library's one table. */
static void print_phases_help(void)
{
    size_t n;
    const kjoin_phase_info *t = kjoin_phase_table(&n);
    fputs("Usage: kjoin join phase NAME [STEP] ENDPOINT... [flags]\n"
          "\n"
          "Runs one phase of kubeadm's join (its flags are kjoin join's; kubeadm's\n"
          "\"phase A B\" and kjoin's \"phase A/B\" name the same step):\n",
          stdout);
    for (size_t i = 0; i < n; i++)
        if (t[i].help)
            printf("  %-38s %s\n", t[i].name, t[i].help);
}

/* "kjoin join phase NAME ...": the phase's bit, and argv without the two words. */
static kjoin_code take_phase(int *argc, char **argv, unsigned *only, unsigned *steps, bool *help, kjoin_err *err)
{
    if (*argc < 2 || strcmp(argv[1], "phase") != 0)
        return KJOIN_OK;
    if (*argc >= 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
        *help = true;
        return KJOIN_OK;
    }
    if (*argc < 3 || argv[2][0] == '-')
        return kjoin_err_set(err, KJOIN_E_USAGE, "kjoin join phase needs the phase's name (kjoin join phase --help "
                                                 "lists them)");
    kjoin_code rc = strchr(argv[2], ',') ? kjoin_err_set(err, KJOIN_E_USAGE, "kjoin join phase NAME runs one phase")
                                         : kjoin_phase_lookup(argv[2], strlen(argv[2]), only, steps, err);
    /* kubeadm's own spelling of a sub-phase, "phase control-plane-prepare
     * download-certs", beside "control-plane-prepare/download-certs": a
     * second word that is a sub-phase of the first is taken as one. */
    int words = 2;
    char sub_phase[128];
    unsigned bit = 0, one = 0;
    if (!rc && *argc > 3 && argv[3][0] != '-' && !strchr(argv[3], '/') && !strchr(argv[3], ':') &&
        snprintf(sub_phase, sizeof(sub_phase), "%s/%s", argv[2], argv[3]) < (int)sizeof(sub_phase) &&
        !kjoin_phase_lookup(sub_phase, strlen(sub_phase), &bit, &one, NULL)) {
        *only = bit, *steps = one;
        words = 3;
    }
    for (int i = 1; !rc && i + words <= *argc; i++)
        argv[i] = argv[i + words];
    if (!rc)
        *argc -= words;
    return rc;
}

/* What the flags hold, secrets wiped. */
static void join_args_release(join_args *a)
{
    kjoin_pinset_free(a->pins);
    for (size_t i = 0; i < 3; i++) {
        kjoin_free_wiped_str(a->secrets[i]);
        kjoin_free_wiped_str(a->env[i]);
    }
    kjoin_free_wiped_str(a->certificate_key_text);
    kjoin_free_wiped_str(a->certificate_key_file);
}

int cmd_join(int argc, char **argv)
{
    join_args a = {.format = cli_format_from_argv(argc, argv), .pins = kjoin_pinset_new()};
    kjoin_join_config cfg = {0};
    kjoin_phases_outcome outcome = {0};
    kjoin_err err = {0};
    char join_id[CLI_RUN_ID_LEN] = "", ignore[1200] = "";
    log_ctx logs = {.names = flag_names, .n_names = sizeof(flag_names) / sizeof(flag_names[0])};
    int first = 0;
    kjoin_phases_spec_init(&a.w);
    take_env_secrets(&a);
    kjoin_code rc = a.pins ? KJOIN_OK : kjoin_err_set(&err, KJOIN_E_OTHER, "out of memory");
    bool phases = false;
    if (!rc && !(rc = take_phase(&argc, argv, &a.w.only, &a.w.prepare, &phases, &err)) && phases) {
        print_phases_help();
        join_args_release(&a);
        return 0;
    }
    if (!rc) {
        int parsed = cli_parse(&join_verb, argc, argv, on_opt, &a, &first, &err);
        if (parsed < 0) { /* --help: printed */
            join_args_release(&a);
            return 0;
        }
        rc = (kjoin_code)parsed;
    }
    size_t n_args = rc ? 0 : (size_t)(argc - first);
    if (!rc && a.kubeconfig && a.verbosity >= 0)
        cli_out(stderr, "[join] --kubeconfig is kubeadm's admin kubeconfig for a control-plane join: it does not "
                        "apply to a worker join\n");
    kjoin_phases_spec *w = &a.w;
    cli_field names[sizeof(config_names) / sizeof(config_names[0])];
    if (!rc && a.config) {
        /* The file's names, but a flag that overrides the file by its own. */
        memcpy(names, config_names, sizeof(names));
        for (size_t i = 0; a.w.node.name && i < sizeof(names) / sizeof(names[0]); i++)
            if (!strcmp(names[i].field, "node_name"))
                names[i].name = "--node-name";
        logs.names = names, logs.n_names = sizeof(names) / sizeof(names[0]);
        if (!(rc = spec_from_config(&a, n_args, &cfg, ignore, sizeof(ignore), &err)))
            w = &cfg.spec;
    } else if (!rc) {
        w->join.endpoints = (const char *const *)argv + first;
        w->join.n_endpoints = n_args;
        w->join.pins = a.pins;
        w->join.env_token = a.env[ENV_TOKEN];
        w->join.env_k3s_token = a.env[ENV_K3S_TOKEN];
        w->join.env_k3s_token_file = getenv("K3S_TOKEN_FILE");
        w->join.env_k3s_url = getenv("K3S_URL");
    }
    /* The certificate key's sources; the join decides which counts. */
    w->certificate_key_text = a.certificate_key_text;
    w->certificate_key_file = a.certificate_key_file;
    w->env_certificate_key = a.env[ENV_CERTIFICATE_KEY];
    w->join_id = cli_run_id(join_id);
    w->join.audit_id = join_id;
    w->join.log = log_line;
    w->join.log_ctx = &logs;
    logs.verbosity = a.verbosity;
    logs.t0 = kjoin_now_ms();
    if (a.format == CLI_JSON) /* the step lines, in the result too (stderr may be lost, as under cloud-init) */
        logs.events = json_object_new_array();
    if (!rc && !a.w.tls_bootstrap && a.bootstrap_flag)
        rc = kjoin_err_set(&err, KJOIN_E_USAGE, "--%s is for the TLS bootstrap: add --tls-bootstrap", a.bootstrap_flag);
    if (!rc && (rc = kjoin_join_phases(w, &outcome, &err)) && outcome.discovered && w->tls_bootstrap &&
        !outcome.tls_bootstrapped)
        cli_bootstrap_fail_names(&err);
    if (!rc && w->dry_run && a.format == CLI_TEXT)
        print_planned(&outcome.planned);
    if (outcome.checked && a.format == CLI_TEXT && a.verbosity >= 0)
        print_check(&outcome);
    if (!rc && outcome.checked && a.format == CLI_TEXT && a.verbosity >= 0)
        cli_out(stderr, "[check] The join would succeed: nothing on this node was changed\n");
    if (!rc && a.format == CLI_JSON)
        print_result(w, &outcome, join_id, logs.events);
    json_object *extra = rc ? error_json(&outcome, join_id, rc, logs.events) : NULL;
    json_object_put(logs.events);
    kjoin_phases_outcome_release(&outcome);
    kjoin_join_config_release(&cfg);
    join_args_release(&a);
    if (rc)
        cli_name_fields(err.msg, sizeof(err.msg), err.msg, logs.names, logs.n_names);
    return rc ? cli_fail_with(a.format, &err, extra) : 0;
}
