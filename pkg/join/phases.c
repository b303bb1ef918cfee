/* The join, a worker's or a control-plane node's, as one table of steps in kubeadm's order. Each step
 * belongs to a kubeadm phase (and runs when that phase does) or is one of
 * kjoin's own (discovery, writing discovery's files, the TLS bootstrap),
 * which runs when its rule says. Which steps run is decided once, from the
 * specification, before anything runs: then the node name is resolved, and
 * the steps run in order. Discovery runs in memory when kubelet-start
 * follows, so that nothing is written before the cluster checks pass. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kjoin/private/kubeapi.h>
#include <kjoin/private/kubeconfig.h>
#include <kjoin/private/patch.h>
#include <kjoin/phases.h>
#include <kjoin/private/controlplane.h>
#include <kjoin/private/report.h>
#include <kjoin/private/util.h>

#include "internal.h"

enum {
    NEEDS_PLAN = 1,      /* the join inputs resolved (tokens read, endpoints parsed) */
    NEEDS_DISCOVERY = 2, /* the verified bootstrap kubeconfig, in memory */
};

typedef struct join_run {
    const kjoin_phases_spec *spec;
    kjoin_phases_outcome *out;
    unsigned phases;           /* the kubeadm phases that run */
    kjoin_code etcd_verdict;   /* --check of a control plane: the first etcd check that failed (KJOIN_OK: none) */
    bool planned;
    kjoin_join_plan plan;
    int64_t start, deadline;
    char *ca;                  /* discovery's trusted CA bundle (PEM) */
    size_t ca_len;
    kjoin_kubeapi *bootstrap_api; /* the one client with the verified bootstrap kubeconfig */
    kjoin_cluster_configuration *cluster; /* a control-plane join's: the cluster's ClusterConfiguration */
    kjoin_cp_context cx;       /* and what every control-plane step shares, decided once from it */
    char kubelet_server[320];  /* the server the kubelet's kubeconfigs name when not discovery's: a control-plane
                                * node's own API server, or a worker's per-node load balancer (spec) */
    kjoin_cp_replaced *replaced; /* what this run's control-plane steps replaced, as it was (for a take-back) */
    kjoin_cp_record *before;   /* the control-plane record as this run found it, once its checks passed: what
                                * the run writes after is taken back if it fails before the node's own files */
    const kjoin_certificate_key *certificate_key; /* the spec's, or key: read from the sources it names */
    kjoin_certificate_key key;
    kjoin_join_context ctx;    /* the one context of every step, the node's and the control plane's */
    /* The steps' own state, gone with the run (the outcome keeps what the caller is told): */
    kjoin_node_join node;      /* the node's side: preflight's report, kubelet-start's and the wait's state */
    struct kjoin_patchset *patches; /* node.patches_dir read, before anything else; NULL without one */
    kjoin_download_certs_result certs;                  /* control-plane-prepare's download-certs */
    kjoin_node_certs_result node_certs;                 /* its certs */
    kjoin_control_plane_kubeconfigs_result kubeconfigs; /* its kubeconfig */
    kjoin_control_plane_manifests_result manifests;     /* its static Pod manifests */
    char *local_bootstrap;     /* the kubelet's bootstrap kubeconfig naming kubelet_server: holds the token */
    size_t local_bootstrap_len;
} join_run;

typedef struct step {
    unsigned bit;              /* the kubeadm phase it is part of (KJOIN_PHASE_*); 0: kjoin's own step */
    unsigned needs;            /* NEEDS_*: what must be done before it */
    bool (*when)(const join_run *r); /* whether it runs (kjoin's own steps), or also runs (a phase's) */
    kjoin_code (*run)(join_run *r, kjoin_err *err);
} step;

#define logf_(r, level, ...) kjoin_logf((r)->spec->join.log, (r)->spec->join.log_ctx, level, __VA_ARGS__)

/* ---- the steps ---------------------------------------------------------- */

static void print_findings(const join_run *r, size_t from)
{
    const kjoin_preflight_report *p = &r->node.report;
    for (size_t i = from; i < p->n; i++) {
        const kjoin_preflight_finding *f = &p->items[i];
        /* shown under -q too: the failure's summary points at the ERROR lines */
        logf_(r, KJOIN_LOG_WARNING, "[preflight] %s %s: %s",
              !f->error ? "WARNING" : f->ignored ? "WARNING (ignored)" : "ERROR", f->name, f->message);
    }
}

static kjoin_code run_preflight(join_run *r, kjoin_err *err)
{
    /* The forwarding check follows the API server's address family. */
    const char *host = r->plan.n_endpoints ? r->plan.endpoints[0].host : NULL;
    kjoin_node_spec node = r->spec->node;
    node.control_plane = r->spec->control_plane;
    logf_(r, 0, "[preflight] Running pre-flight checks");
    kjoin_code rc = kjoin_preflight_node(&node, r->out->node_name.name, host, &r->node.report, err);
    print_findings(r, 0);
    return rc;
}

static kjoin_code run_discovery(join_run *r, kjoin_err *err)
{
    /* What preflight left of the one deadline. */
    int64_t left = r->deadline - kjoin_now_ms();
    r->plan.timeout_ms = !(r->out->ran & KJOIN_PHASE_PREFLIGHT) ? r->deadline - r->start : left > 0 ? left : 1;
    r->planned = false; /* the plan is spent (and wiped) by the discovery */
    kjoin_code rc = kjoin_join__planned(&r->spec->join, &r->plan, false, &r->out->join, err);
    if (rc)
        return rc;
    r->out->discovered = true;
    r->ca = kjoin_join_trusted_ca_pem(&r->out->join.result, &r->ca_len);
    r->node.bootstrap_kubeconfig = r->out->join.result.kubeconfig;
    r->node.bootstrap_len = r->out->join.result.kubeconfig_len;
    r->ctx.ca_pem = r->ca;
    r->ctx.ca_len = r->ca_len;
    return KJOIN_OK;
}

/* The one API client with the bootstrap identity, made from the verified
 * bootstrap kubeconfig the first time a step reads the cluster with it. */
static kjoin_code bootstrap_client(join_run *r, kjoin_err *err)
{
    if (r->bootstrap_api)
        return KJOIN_OK;
    kjoin_kubeapi_config cfg;
    kjoin_kubeapi_options o = kjoin_join_context_api_options(&r->ctx, 0, 0);
    kjoin_code rc = kjoin_kubeapi_config_parse(r->node.bootstrap_kubeconfig, r->node.bootstrap_len, NULL,
                                               NULL, &cfg, err);
    if (!rc && (rc = kjoin_kubeapi_new(&cfg, &o, &r->bootstrap_api, err)))
        kjoin_kubeapi_config_release(&cfg);
    r->ctx.bootstrap_api = r->bootstrap_api;
    return rc;
}

static kjoin_code run_check(join_run *r, kjoin_err *err)
{
    size_t seen = r->node.report.n;
    kjoin_code rc = bootstrap_client(r, err);
    if (!rc)
        rc = kjoin_kubelet_check(&r->node, r->phases & KJOIN_PHASE_PREFLIGHT, err);
    print_findings(r, seen);
    return rc;
}

static kjoin_code run_write(join_run *r, kjoin_err *err) { return kjoin_kubelet_write(&r->node, err); }
static kjoin_code run_launch(join_run *r, kjoin_err *err) { return kjoin_kubelet_launch(&r->node, err); }
static kjoin_code run_wait(join_run *r, kjoin_err *err) { return kjoin_kubelet_wait(&r->node, err); }

/* No node phase runs: discovery is the join (as kubeadm's phases have it,
 * skipping preflight and kubelet-start; a K3s cluster). */
static bool discovering_alone(const join_run *r)
{
    return !(r->phases & (KJOIN_PHASE_ALL | KJOIN_PHASES_CONTROL_PLANE));
}

/* Discovery alone leaves its kubeconfig (and the CA where one was asked
 * for) on disk (a dry run's under its root). */
static bool discovery_alone(const join_run *r) { return discovering_alone(r) && !r->spec->check; }

/* The check: what the cluster says of this join, with the bootstrap
 * identity discovery verified; nothing on the node changes. */
static bool checking(const join_run *r) { return r->spec->check; }
static kjoin_code run_join_check(join_run *r, kjoin_err *err)
{
    kjoin_code rc = bootstrap_client(r, err);
    if (rc)
        return rc;
    r->out->checked = true;
    rc = kjoin_join_check_cluster(r->bootstrap_api, r->out->node_name.name, r->ca, r->ca_len, &r->out->check, err);
    kjoin_err images;
    if (kjoin_join_check_images(r->bootstrap_api, r->spec->node.cri_socket, &r->out->check, &images))
        logf_(r, 1, "[check] The images were not asked for: %s", images.msg);
    else if (*r->out->check.images_missing)
        logf_(r, KJOIN_LOG_WARNING, "[check] WARNING Images: not on this node: %s (the kubelet has them pulled; a node "
                                    "without a way to a registry imports them: an image archive)",
              r->out->check.images_missing);
    const char *etcd = r->out->etcd_check.problems;
    if (!r->etcd_verdict)
        return rc;
    if (!rc)
        return kjoin_err_set(err, r->etcd_verdict, "the join would not succeed: %s", etcd);
    char worker[KJOIN_ERR_MSG_MAX];
    memcpy(worker, err->msg, sizeof(worker));
    return kjoin_err_set(err, rc, "%.250s; %.250s", worker, etcd);
}

/* A dry run, as kubeadm's: the checks run for real, and every file is
 * written under the dry run's root and shown; nothing starts, so nothing
 * is waited for. */
static bool for_real(const join_run *r) { return !r->spec->dry_run; }
/* A dry run, and the check of a control plane, write only under the dry run's root: nothing recorded. */
static bool writes_nothing(const join_run *r) { return r->spec->dry_run || r->spec->check; }

static kjoin_code run_write_discovered(join_run *r, kjoin_err *err)
{
    const kjoin_phases_spec *s = r->spec;
    const kjoin_join_context *cx = &r->ctx;
    const char *ca = s->ca_with_discovery ? s->node.paths.ca_cert_path : NULL;
    char kc_at[4200], ca_at[4200] = "";
    kjoin_code rc = kjoin_join_context_write_path(cx, r->out->kubeconfig_path, kc_at, sizeof(kc_at), err);
    if (!rc && ca)
        rc = kjoin_join_context_write_path(cx, ca, ca_at, sizeof(ca_at), err);
    if (!rc)
        rc = kjoin_dry_run_copy_file(cx, r->out->kubeconfig_path, err);
    if (!rc && ca)
        rc = kjoin_dry_run_copy_file(cx, ca, err);
    if (!rc) /* a dry run's writes are not the node's: not said, only shown */
        rc = kjoin_join__write(&r->out->join, kc_at, ca ? ca_at : NULL, s->node.force, cx->dry_run ? NULL : s->join.log,
                               s->join.log_ctx, err);
    if (rc || !cx->dry_run)
        return rc;
    kjoin_join_outcome *o = &r->out->join;
    if (o->kubeconfig_write != KJOIN_WRITE_UNCHANGED)
        rc = kjoin_join_context_wrote(cx, kc_at, 0600, err);
    if (!rc && ca && o->ca_write != KJOIN_WRITE_UNCHANGED)
        rc = kjoin_join_context_wrote(cx, ca_at, 0644, err);
    o->written = o->ca_written = false;
    return rc;
}

/* With kubelet-start (before the kubelet starts) or after discovery alone;
 * a phase run alone that neither starts nor discovers has no use for it. */
static bool wants_tls_bootstrap(const join_run *r)
{
    return r->spec->tls_bootstrap && ((r->phases & KJOIN_PHASE_KUBELET_START) || discovering_alone(r));
}

/* kjoin's own TLS bootstrap, from the bootstrap kubeconfig on disk, for the
 * node's name, within what is left of the deadline. */
static kjoin_code run_tls_bootstrap(join_run *r, kjoin_err *err)
{
    const kjoin_phases_spec *s = r->spec;
    kjoin_bootstrap_spec b = s->bootstrap;
    b.version = KJOIN_BOOTSTRAP_SPEC_VERSION;
    int64_t left = r->deadline - kjoin_now_ms();
    b.bootstrap_kubeconfig = r->out->kubeconfig_path;
    b.node_name = r->out->node_name.name;
    b.ca_cert_path = s->node.paths.ca_cert_path;
    b.kubeconfig_out = s->node.paths.kubelet_kubeconfig;
    b.timeout_ms = left > 0 ? left : 1;
    b.audit_id = s->join.audit_id;
    b.log = s->join.log;
    b.log_ctx = s->join.log_ctx;
    kjoin_code rc = kjoin_tls_bootstrap(&b, &r->out->tls, err);
    r->out->tls_bootstrapped = !rc;
    return rc;
}

static bool wants_download(const join_run *r);

/* A control-plane join reads the cluster's ClusterConfiguration once, with
 * the bootstrap token: where the certificates go, what they name. */
static kjoin_code run_read_cluster(join_run *r, kjoin_err *err)
{
    const kjoin_phases_spec *s = r->spec;
    if (!(r->cluster = calloc(1, sizeof(*r->cluster))))
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    kjoin_code rc = bootstrap_client(r, err);
    if (!rc)
        rc = kjoin_control_plane_cluster(r->bootstrap_api, r->cluster, err);
    if (!rc)
        r->ctx.cluster = r->cluster; /* kubelet-start reads it from here, not the cluster again */
    if (!rc)
        rc = kjoin_cp_context_init(&r->cx, r->cluster, s->node.paths.kubernetes_dir, err);
    if (rc)
        return rc;
    kjoin_cp_context *cx = &r->cx;
    cx->join = &r->ctx;
    cx->bind_port = kjoin_api_server_port(s->bind_port);
    cx->record = !writes_nothing(r);
    cx->force = s->node.force;
    cx->downloads_certs = wants_download(r);
    cx->written = writes_nothing(r) ? NULL : &r->out->control_plane_files; /* a dry run's are shown instead */
    if (!r->replaced && !(r->replaced = kjoin_cp_replaced_new()))
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    cx->replaced = r->replaced;
    memcpy(r->out->cert_dir, cx->cert_dir, sizeof(cx->cert_dir));
    /* kubeadm before 1.22 also records each control-plane node in
     * kubeadm-config's ClusterStatus (its update-status), which its reset
     * and upgrade read: kjoin does not, so it joins no such node whole. */
    if (!r->spec->only && !cx->release->whole_control_plane_join)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "a control-plane node of a v1.%d cluster is also recorded in "
                           "kubeadm-config's ClusterStatus (kubeadm's update-status phase), which kjoin does not do: "
                           "join it with that release's kubeadm (kjoin's phases run one at a time)", cx->minor);
    if (!rc)
        rc = kjoin_cp_dry_run_copy(cx, err);
    return rc;
}

static bool control_plane_phase(const join_run *r) { return r->spec->control_plane; }

/* kubeadm's checks before a control-plane node joins, with the cluster's
 * ClusterConfiguration and the node's address. */
static kjoin_code run_control_plane_preflight(join_run *r, kjoin_err *err)
{
    size_t seen = r->node.report.n;
    logf_(r, 0, "[preflight] Running pre-flight checks before initializing the new control plane instance");
    /* The images, when kjoin knows the release's manifests (else control-plane-prepare says why). */
    char images[KJOIN_CP_IMAGES_N][400];
    const char *list[KJOIN_CP_IMAGES_N];
    size_t n = 0;
    if (!kjoin_control_plane_images(r->cluster, r->cx.minor, images, NULL))
        for (size_t i = 0; i < KJOIN_CP_IMAGES_N; i++)
            if (*images[i]) /* etcd's is "" with an external etcd */
                list[n++] = images[i];
    kjoin_code rc = kjoin_preflight_control_plane(&r->spec->node, &r->cx, list, n, &r->node.report, err);
    print_findings(r, seen);
    return rc;
}

/* kubeadm's mark-control-plane, with the node's admin.conf. */
static kjoin_code run_mark(join_run *r, kjoin_err *err)
{
    const kjoin_node_spec *n = &r->spec->node;
    kjoin_mark_control_plane_spec m = {.taints = n->taints, .n_taints = n->n_taints, .taints_set = n->taints_set};
    kjoin_code rc = kjoin_mark_control_plane(&r->cx, &m, err);
    r->out->marked = !rc && !r->spec->dry_run; /* a dry run's only says it would */
    return rc;
}

/* control-plane-prepare's steps: those asked for (all by default) but those skipped. */
static unsigned prepare_steps_of(const kjoin_phases_spec *s)
{
    return (s->prepare ? s->prepare : KJOIN_PREPARE_ALL) & ~s->skip_prepare;
}
static unsigned prepare_steps(const join_run *r) { return prepare_steps_of(r->spec); }

/* As kubeadm's: without a certificate key the shared CAs must be on disk
 * already, and download-certs has nothing to do. */
static bool wants_download(const join_run *r)
{
    return (prepare_steps(r) & KJOIN_PREPARE_DOWNLOAD_CERTS) && r->certificate_key;
}
static bool wants_node_certs(const join_run *r) { return prepare_steps(r) & KJOIN_PREPARE_CERTS; }
static bool wants_kubeconfigs(const join_run *r) { return prepare_steps(r) & KJOIN_PREPARE_KUBECONFIG; }
static bool wants_manifests(const join_run *r) { return prepare_steps(r) & KJOIN_PREPARE_CONTROL_PLANE; }
/* A control-plane node's preflight, certs and kubeconfig need its address. */
static bool wants_address(const join_run *r)
{
    bool prepared = (r->phases & KJOIN_PHASE_CONTROL_PLANE_PREPARE) &&
                    (wants_node_certs(r) || wants_kubeconfigs(r) || wants_manifests(r));
    return r->spec->control_plane &&
           ((r->phases & (KJOIN_PHASE_PREFLIGHT | KJOIN_PHASE_KUBELET_START | KJOIN_PHASE_ETCD_JOIN |
                          KJOIN_PHASE_WAIT_CONTROL_PLANE)) ||
            prepared);
}

/* kubeadm's ControlPlaneKubeletLocalMode (1.31 set on, 1.33 unless set
 * off, then always): a control-plane node's kubelet bootstraps through, and
 * then talks to, this node's own API server, which etcd-join brings up. */
static bool kubelet_local(const join_run *r)
{
    return r->spec->control_plane && r->cluster &&
           kjoin_gate_on(r->cx.release->kubelet_local_mode, r->cluster->kubelet_local_mode);
}

static bool own_kubelet_server(const join_run *r) { return kubelet_local(r) || r->spec->kubelet_server; }
static bool checks_kubelet_server(const join_run *r) { return r->spec->check && r->spec->kubelet_server; }

/* The server asked for answers as the cluster's API server, with the
 * cluster's CA and the bootstrap identity, before anything is written: a
 * load balancer passes TLS through to the API servers. It runs already (a
 * service, or a static Pod a kubelet runs before the join, as kubespray's):
 * asked within KUBELET_SERVER_ASK_MS, not the join's whole deadline. */
#define KUBELET_SERVER_ASK_MS 10000
static kjoin_code kubelet_server_answers(const join_run *r, const char *server, kjoin_err *err)
{
    kjoin_kubeapi_config cfg;
    kjoin_kubeapi *api = NULL;
    kjoin_kubeapi_response resp = {0};
    kjoin_kubeapi_options o = kjoin_join_context_api_options(&r->ctx, KUBELET_SERVER_ASK_MS, 0);
    kjoin_err in;
    kjoin_code rc = kjoin_kubeapi_config_parse(r->local_bootstrap, r->local_bootstrap_len, NULL, NULL, &cfg, &in);
    if (!rc && (rc = kjoin_kubeapi_new(&cfg, &o, &api, &in)))
        kjoin_kubeapi_config_release(&cfg);
    if (!rc)
        rc = kjoin_kubeapi_request(api, "GET", "/version", NULL, &resp, &in);
    if (!rc)
        rc = kjoin_kubeapi_check(&resp, "get version", &in);
    kjoin_kubeapi_response_release(&resp);
    kjoin_kubeapi_free(api);
    if (rc)
        return kjoin_err_set(err, rc, "the kubelet's server %s does not answer as the cluster's API server: %s%s", server,
                             in.msg, rc == KJOIN_E_TRUST ? " (a load balancer in front of the API servers passes TLS "
                                                           "through, and their certificate must name the address the "
                                                           "kubelet uses: apiServer.certSANs)" : "");
    return KJOIN_OK;
}

/* The kubelet's kubeconfigs name a server of their own: kubeadm's
 * ControlPlaneKubeletLocalMode's (this node's own API server), or the
 * per-node load balancer asked for (kubespray's localhost proxy), which
 * must answer first. The cluster is still read through discovery's. */
static kjoin_code run_kubelet_server(join_run *r, kjoin_err *err)
{
    char *server = r->kubelet_server;
    size_t cap = sizeof(r->kubelet_server);
    if (r->spec->kubelet_server) {
        snprintf(server, cap, "%s", r->spec->kubelet_server); /* checked by kjoin_url_server_check */
        size_t n = strlen(server);
        if (server[n - 1] == '/')
            server[n - 1] = '\0';
    } else {
        const char *addr = r->cx.advertise_address;
        bool v6 = strchr(addr, ':') != NULL;
        snprintf(server, cap, "https://%s%s%s:%d", v6 ? "[" : "", addr, v6 ? "]" : "", r->cx.bind_port);
    }
    kjoin_node_join *n = &r->node;
    kjoin_code rc = kjoin_kubeconfig_replace_server(n->bootstrap_kubeconfig, n->bootstrap_len, server,
                                                    &r->local_bootstrap, &r->local_bootstrap_len, err);
    if (!rc && r->spec->kubelet_server)
        rc = kubelet_server_answers(r, server, err);
    if (rc)
        return rc;
    n->kubelet_bootstrap = r->local_bootstrap;
    n->kubelet_bootstrap_len = r->local_bootstrap_len;
    n->kubelet_server = server;
    if (r->spec->kubelet_server)
        logf_(r, 0, "[kubelet-start] The kubelet talks to the cluster through %s (it answered as the API server)",
              server);
    else
        logf_(r, 0, "[kubelet-start] The kubelet bootstraps through this node's own API server at %s", server);
    return KJOIN_OK;
}

/* The node's API server address: as given, or the one it reaches the
 * cluster's API server from. */
static kjoin_code run_advertise_address(join_run *r, kjoin_err *err)
{
    char *addr = r->cx.advertise_address;
    size_t cap = sizeof(r->cx.advertise_address);
    kjoin_code rc = KJOIN_OK;
    if (!r->spec->advertise_address)
        rc = kjoin_local_address_for(r->out->join.result.server, addr, cap, err);
    else if (snprintf(addr, cap, "%s", r->spec->advertise_address) >= (int)cap)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "the advertise address is too long");
    memcpy(r->out->advertise_address, addr, sizeof(r->out->advertise_address));
    return rc;
}

/* kubeadm's certs: the node's own certificates, for its name and address. */
static kjoin_code run_node_certs(join_run *r, kjoin_err *err)
{
    logf_(r, 0, "[certs] Using certificateDir folder \"%s\"", r->cx.cert_dir);
    kjoin_code rc = kjoin_node_certs(&r->cx, &r->node_certs, err);
    for (int i = 0; !rc && i < KJOIN_NODE_CERTS_N; i++)
        logf_(r, 0, "[certs] %s %s certificate and key", r->node_certs.kept[i] ? "Using the existing" : "Generating",
              kjoin_node_cert_name(i));
    if (!rc && r->node_certs.skipped_sans)
        logf_(r, KJOIN_LOG_WARNING, "[certs] %zu of the cluster's extra certificate names are no IP address or DNS "
              "name and were left out, as kubeadm leaves them out", r->node_certs.skipped_sans);
    return rc;
}

/* kubeadm's kubeconfig: admin.conf, controller-manager.conf, scheduler.conf. */
static kjoin_code run_kubeconfigs(join_run *r, kjoin_err *err)
{
    logf_(r, 0, "[kubeconfig] Using kubeconfig folder \"%s\"", r->cx.kubernetes_dir);
    kjoin_code rc = kjoin_control_plane_kubeconfigs(&r->cx, &r->kubeconfigs, err);
    for (int i = 0; !rc && i < KJOIN_KUBECONFIGS_N; i++)
        logf_(r, 0, "[kubeconfig] %s \"%s\" kubeconfig file",
              r->kubeconfigs.kept[i] ? "Using the existing" : "Writing", kjoin_kubeconfig_file_name(i));
    return rc;
}

/* kubeadm's control-plane: the static Pod manifests. */
static kjoin_code run_manifests(join_run *r, kjoin_err *err)
{
    logf_(r, 0, "[control-plane] Using manifest folder \"%s\"", r->cx.manifests_dir);
    kjoin_code rc = kjoin_control_plane_manifests(&r->cx, &r->manifests, err);
    for (int i = 0; !rc && i < KJOIN_MANIFESTS_N; i++)
        logf_(r, 0, "[control-plane] %s static Pod manifest for \"%s\"",
              r->manifests.kept[i] ? "Keeping the same" : "Creating", kjoin_manifest_component(i));
    return rc;
}

/* kubeadm's wait-control-plane: this node's three components healthy. */
static kjoin_code run_wait_control_plane(join_run *r, kjoin_err *err)
{
    return kjoin_wait_control_plane(&r->cx, &r->out->control_plane_health, err);
}

/* The one client with the node's admin.conf, for the steps after
 * control-plane-prepare that act as the node's admin. */
static bool needs_admin(const join_run *r)
{
    return r->phases & (KJOIN_PHASE_CHECK_ETCD | KJOIN_PHASE_ETCD_JOIN | KJOIN_PHASE_CONTROL_PLANE_JOIN);
}

/* kubeadm's check-etcd, with the node's admin.conf and etcd certificates. */
/* Whether the cluster (once read) keeps its etcd outside the control-plane nodes. */
static bool external_etcd(const join_run *r) { return r->cluster && r->cluster->external_etcd; }

static kjoin_code run_check_etcd(join_run *r, kjoin_err *err)
{
    if (external_etcd(r)) { /* no stacked member of this cluster's to check */
        logf_(r, 0, "[check-etcd] Skipping etcd check in external mode");
        return KJOIN_OK;
    }
    if (r->spec->check) { /* what it finds is part of the check's verdict */
        r->out->etcd_checked = true;
        return kjoin_check_etcd_members(&r->cx, &r->out->etcd_check, &r->etcd_verdict, err);
    }
    return kjoin_check_etcd(&r->cx, &r->out->etcd_members_healthy, err);
}
static kjoin_code run_admin_client(join_run *r, kjoin_err *err)
{
    kjoin_kubeapi *owned = NULL;
    kjoin_code rc = kjoin_cp_admin_client(&r->cx, &owned, err);
    r->cx.admin_api = owned;
    return rc;
}

/* kubeadm's etcd-join, with the node's admin.conf and etcd certificates. */
static kjoin_code run_etcd_join(join_run *r, kjoin_err *err)
{
    if (external_etcd(r)) {
        logf_(r, 0, "[control-plane-join] Using external etcd - no local stacked instance added");
        return KJOIN_OK;
    }
    free(r->before); /* etcd-join takes back its own member and manifest; before it, nothing was written */
    r->before = NULL;
    return kjoin_etcd_join(&r->cx, &r->out->etcd, err);
}

/* What the control-plane steps of this run write (KJOIN_CP_WRITES_*). */
static unsigned cp_writes(const join_run *r)
{
    unsigned w = 0;
    if (!r->spec->control_plane)
        return 0;
    if (r->phases & KJOIN_PHASE_CONTROL_PLANE_PREPARE)
        w |= (wants_download(r) ? KJOIN_CP_WRITES_SHARED : 0) | (wants_node_certs(r) ? KJOIN_CP_WRITES_CERTS : 0) |
             (wants_kubeconfigs(r) ? KJOIN_CP_WRITES_KUBECONFIGS : 0) |
             (wants_manifests(r) ? KJOIN_CP_WRITES_MANIFESTS : 0);
    if ((r->phases & KJOIN_PHASE_ETCD_JOIN) && !external_etcd(r))
        w |= KJOIN_CP_WRITES_ETCD;
    return w;
}
static bool writes_control_plane(const join_run *r) { return cp_writes(r) != 0; }

/* Every refusal that needs only the flags, the machine and the cluster's
 * configuration, before the first control-plane file (a dry run's too):
 * then the record as it is, so that a later failure takes back what this
 * run wrote. */
static kjoin_code run_check_writes(join_run *r, kjoin_err *err)
{
    kjoin_code rc = kjoin_control_plane_check(&r->cx, cp_writes(r), err);
    return rc || writes_nothing(r) ? rc : kjoin_cp_record_begin(r->cx.kubernetes_dir, &r->before, err);
}

/* kubeadm's download-certs, with the token and the CA discovery verified. */
static kjoin_code run_download_certs(join_run *r, kjoin_err *err)
{
    return kjoin_download_certs(&r->cx, r->certificate_key, &r->certs, err);
}

static bool needs_discovery(const join_run *r);

/* kubeadm's join phases in order (its control-plane ones have no step on a
 * worker: their names are accepted, and skipping them changes nothing). */
static const step steps[] = {
    {KJOIN_PHASE_PREFLIGHT, NEEDS_PLAN, NULL, run_preflight},
    {0, NEEDS_PLAN, needs_discovery, run_discovery},
    {0, NEEDS_DISCOVERY, control_plane_phase, run_read_cluster},
    {0, NEEDS_DISCOVERY, wants_address, run_advertise_address},
    {KJOIN_PHASE_PREFLIGHT, NEEDS_DISCOVERY, control_plane_phase, run_control_plane_preflight},
    /* kubelet-start's checks, before anything is written (as kubeadm's preflight before download-certs) */
    {KJOIN_PHASE_KUBELET_START, NEEDS_DISCOVERY, own_kubelet_server, run_kubelet_server},
    {KJOIN_PHASE_KUBELET_START, NEEDS_DISCOVERY, NULL, run_check},
    {0, NEEDS_DISCOVERY, writes_control_plane, run_check_writes},
    {KJOIN_PHASE_CONTROL_PLANE_PREPARE, NEEDS_DISCOVERY, wants_download, run_download_certs},
    {KJOIN_PHASE_CONTROL_PLANE_PREPARE, NEEDS_DISCOVERY, wants_node_certs, run_node_certs},
    {KJOIN_PHASE_CONTROL_PLANE_PREPARE, NEEDS_DISCOVERY, wants_kubeconfigs, run_kubeconfigs},
    {KJOIN_PHASE_CONTROL_PLANE_PREPARE, NEEDS_DISCOVERY, wants_manifests, run_manifests},
    {0, NEEDS_DISCOVERY, needs_admin, run_admin_client},
    {KJOIN_PHASE_CHECK_ETCD, NEEDS_DISCOVERY, NULL, run_check_etcd},
    {KJOIN_PHASE_KUBELET_START, NEEDS_DISCOVERY, NULL, run_write},
    {0, NEEDS_DISCOVERY, discovery_alone, run_write_discovered},
    {0, NEEDS_DISCOVERY, checks_kubelet_server, run_kubelet_server},
    {0, NEEDS_DISCOVERY, checking, run_join_check},
    {0, NEEDS_DISCOVERY, wants_tls_bootstrap, run_tls_bootstrap},
    {KJOIN_PHASE_KUBELET_START, NEEDS_DISCOVERY, for_real, run_launch},
    {KJOIN_PHASE_ETCD_JOIN, NEEDS_DISCOVERY, NULL, run_etcd_join},
    {KJOIN_PHASE_KUBELET_WAIT_BOOTSTRAP, 0, for_real, run_wait},
    {KJOIN_PHASE_CONTROL_PLANE_JOIN, NEEDS_DISCOVERY, NULL, run_mark},
    {KJOIN_PHASE_WAIT_CONTROL_PLANE, NEEDS_DISCOVERY, NULL, run_wait_control_plane},
};
#define N_STEPS (sizeof(steps) / sizeof(steps[0]))

static bool runs(const join_run *r, const step *s)
{
    return s->run && (!s->bit || (r->phases & s->bit)) && (!s->when || s->when(r));
}

/* Discovery runs for any later step that needs it, and alone when no node
 * phase runs. */
static bool needs_discovery(const join_run *r)
{
    if (discovering_alone(r))
        return true;
    for (size_t i = 0; i < N_STEPS; i++)
        if (steps[i].run != run_discovery && (steps[i].needs & NEEDS_DISCOVERY) && runs(r, &steps[i]))
            return true;
    return false;
}

static unsigned needs_of_run(const join_run *r)
{
    unsigned n = 0;
    for (size_t i = 0; i < N_STEPS; i++)
        n |= runs(r, &steps[i]) ? steps[i].needs : 0;
    return n;
}

/* ---- the phases asked for ----------------------------------------------- */

/* kubeadm's phase names, in the order a join runs them, its sub-phases among
 * them, and what each runs. */
static const kjoin_phase_info phase_table[] = {
    {"preflight", KJOIN_PHASE_PREFLIGHT, 0, "the node's checks (and a control-plane node's)"},
    {"control-plane-prepare", KJOIN_PHASE_CONTROL_PLANE_PREPARE, 0,
     "a control-plane node's files: download-certs, certs, kubeconfig, control-plane"},
    {"control-plane-prepare/all", KJOIN_PHASE_CONTROL_PLANE_PREPARE, 0, "all four steps"},
    {"control-plane-prepare/download-certs", KJOIN_PHASE_CONTROL_PLANE_PREPARE, KJOIN_PREPARE_DOWNLOAD_CERTS,
     "the shared CAs from the kubeadm-certs Secret"},
    {"control-plane-prepare/certs", KJOIN_PHASE_CONTROL_PLANE_PREPARE, KJOIN_PREPARE_CERTS,
     "the node's own certificates, signed by them"},
    {"control-plane-prepare/kubeconfig", KJOIN_PHASE_CONTROL_PLANE_PREPARE, KJOIN_PREPARE_KUBECONFIG,
     "admin.conf, controller-manager.conf, scheduler.conf"},
    {"control-plane-prepare/control-plane", KJOIN_PHASE_CONTROL_PLANE_PREPARE, KJOIN_PREPARE_CONTROL_PLANE,
     "the static Pods of the API server, controller manager, scheduler"},
    {"check-etcd", KJOIN_PHASE_CHECK_ETCD, 0, "the cluster's etcd members healthy (a control-plane node)"},
    {"kubelet-start", KJOIN_PHASE_KUBELET_START, 0, "the kubelet's files, the kubelet started"},
    {"etcd-join", KJOIN_PHASE_ETCD_JOIN, 0, "this node's etcd member (a control-plane node)"},
    {"kubelet-wait-bootstrap", KJOIN_PHASE_KUBELET_WAIT_BOOTSTRAP, 0, "until the kubelet has its identity and its Node"},
    /* kubeadm 1.37's control-plane-join is mark-control-plane alone */
    {"control-plane-join", KJOIN_PHASE_CONTROL_PLANE_JOIN, 0, "mark-control-plane: the Node's labels and taints"},
    {"control-plane-join/all", KJOIN_PHASE_CONTROL_PLANE_JOIN, 0, "the same"},
    {"control-plane-join/mark-control-plane", KJOIN_PHASE_CONTROL_PLANE_JOIN, 0, "the same"},
    {"wait-control-plane", KJOIN_PHASE_WAIT_CONTROL_PLANE, 0, "until this node's control plane is healthy"},
    {"control-plane-join/etcd", KJOIN_PHASE_ETCD_JOIN, 0, NULL}, /* etcd-join's name before kubeadm 1.31 */
};
#define N_PHASE_NAMES (sizeof(phase_table) / sizeof(phase_table[0]))

const kjoin_phase_info *kjoin_phase_table(size_t *n)
{
    *n = N_PHASE_NAMES;
    return phase_table;
}

kjoin_code kjoin_phase_lookup(const char *name, size_t len, unsigned *bit, unsigned *prepare, kjoin_err *err)
{
    for (size_t i = 0; i < N_PHASE_NAMES; i++)
        if (strlen(phase_table[i].name) == len && !strncmp(name, phase_table[i].name, len)) {
            *bit = phase_table[i].bit;
            *prepare = phase_table[i].steps;
            return KJOIN_OK;
        }
    const char *names[N_PHASE_NAMES], *near;
    /* "preflight, control-plane-prepare (/all, /download-certs, ...), ... and
     * wait-control-plane": the listed names */
    char listed[1024] = "";
    size_t phases = 0;
    for (size_t i = 0; i < N_PHASE_NAMES; i++)
        phases += phase_table[i].help && !strchr(phase_table[i].name, '/');
    for (size_t i = 0, n = 0; i < N_PHASE_NAMES; i++) {
        names[i] = phase_table[i].name;
        const char *slash = strchr(names[i], '/');
        size_t used = strlen(listed);
        if (!phase_table[i].help)
            continue;
        bool first_sub = slash && i > 0 && !strchr(phase_table[i - 1].name, '/');
        bool last_sub = slash && (i + 1 == N_PHASE_NAMES || !phase_table[i + 1].help ||
                                  strncmp(phase_table[i + 1].name, names[i], (size_t)(slash - names[i]) + 1) != 0);
        if (slash)
            snprintf(listed + used, sizeof(listed) - used, "%s%s%s", first_sub ? " (" : ", ", slash, last_sub ? ")" : "");
        else {
            const char *sep = !n ? "" : n + 1 == phases ? " and " : ", ";
            snprintf(listed + used, sizeof(listed) - used, "%s%s", sep, names[i]);
            n++;
        }
    }
    near = kjoin_did_you_mean(name, len, names, N_PHASE_NAMES);
    return kjoin_err_set(err, KJOIN_E_USAGE, "unknown phase \"%.*s\"%s%s%s; kubeadm's join has %s",
                         (int)(len > 60 ? 60 : len), name, near ? " (did you mean \"" : "", near ? near : "",
                         near ? "\"?)" : "", listed);
}

/* The names in list into *mask, and steps of control-plane-prepare into
 * *prepare (refused when prepare is NULL). */
static kjoin_code parse_phases(const char *list, unsigned *mask, unsigned *prepare, kjoin_err *err)
{
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, ",");
        unsigned bit = 0, one = 0;
        kjoin_code rc = len ? kjoin_phase_lookup(p, len, &bit, &one, err) : KJOIN_OK;
        if (rc)
            return rc;
        if (one && !prepare)
            return kjoin_err_set(err, KJOIN_E_USAGE, "\"%.*s\" is a step of control-plane-prepare, not a phase",
                                 (int)(len > 60 ? 60 : len), p);
        if (one)
            *prepare |= one;
        else
            *mask |= bit;
        p += len + (p[len] == ',');
    }
    return KJOIN_OK;
}

kjoin_code kjoin_phases_parse(const char *list, unsigned *mask, kjoin_err *err)
{
    return parse_phases(list, mask, NULL, err);
}

kjoin_code kjoin_skip_phases(kjoin_phases_spec *spec, const char *list, kjoin_err *err)
{
    return parse_phases(list, &spec->skip, &spec->skip_prepare, err);
}

const char *kjoin_phase_name(unsigned phase)
{
    for (size_t i = 0; i < N_PHASE_NAMES; i++)
        if (phase_table[i].bit == phase)
            return phase_table[i].name;
    return "?";
}

/* Whether the specification names a certificate key, the environment's
 * aside (which matters to a control-plane join only). */
static bool certificate_key_named(const kjoin_phases_spec *s)
{
    return s->certificate_key || s->certificate_key_text || s->certificate_key_file;
}
static bool certificate_key_given(const kjoin_phases_spec *s)
{
    return certificate_key_named(s) || (s->env_certificate_key && *s->env_certificate_key);
}

/* The certificate key from its sources, as the token's are decided: given
 * as text, in a file, in the specification (a JoinConfiguration's), else in
 * the environment; one of the first two. For a control-plane join only. */
static kjoin_code resolve_certificate_key(join_run *r, kjoin_err *err)
{
    const kjoin_phases_spec *s = r->spec;
    if (!s->control_plane)
        return certificate_key_named(s) ? kjoin_err_set(err, KJOIN_E_USAGE, "`%s` is for a control-plane join: add "
                                                        "`control_plane`", s->certificate_key_file
                                                                               ? "certificate_key_file"
                                                                               : "certificate_key")
                                        : KJOIN_OK;
    if (s->certificate_key_text && s->certificate_key_file)
        return kjoin_err_set(err, KJOIN_E_USAGE, "`certificate_key` and `certificate_key_file` are both given: give one");
    kjoin_code rc = KJOIN_OK;
    if (s->certificate_key_file)
        rc = kjoin_certificate_key_read(s->certificate_key_file, &r->key, err);
    else if (s->certificate_key_text)
        rc = kjoin_certificate_key_parse(s->certificate_key_text, &r->key, err);
    else if (s->certificate_key)
        r->certificate_key = s->certificate_key;
    else if (s->env_certificate_key && *s->env_certificate_key)
        rc = kjoin_certificate_key_parse(s->env_certificate_key, &r->key, err);
    else
        return KJOIN_OK; /* none: the shared CAs must be on disk (download-certs has nothing to do) */
    if (!rc && !r->certificate_key)
        r->certificate_key = &r->key;
    return rc;
}

/* The specification's own checks, and the phases to run: one alone, or all
 * but those skipped. The wait waits
 * for what kubelet-start started: skipping that skips the wait too. */
static kjoin_code phases_of(const kjoin_phases_spec *s, unsigned *out, kjoin_err *err)
{
    unsigned skip = s->skip;
    const kjoin_node_paths *p = &s->node.paths;
    const struct {
        const char *field, *value;
    } paths[] = {
        {"kubernetes_dir", p->kubernetes_dir},        {"kubelet_dir", p->kubelet_dir},
        {"bootstrap_kubeconfig", p->bootstrap_kubeconfig}, {"kubelet_kubeconfig", p->kubelet_kubeconfig},
        {"ca_cert_path", p->ca_cert_path},
    };
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
        if (paths[i].value && !*paths[i].value)
            return kjoin_err_set(err, KJOIN_E_USAGE, "`%s` is empty", paths[i].field);
    /* The embedded specifications' fields the join decides itself: set, they would be ignored. */
    const kjoin_bootstrap_spec *b = &s->bootstrap;
    if (s->join.kubeconfig_out || s->join.ca_cert_path || s->join.force || s->join.dry_run)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the join's discovery writes where `node.paths` says, with "
                             "`node.force` and `dry_run`: `join`'s own kubeconfig_out, ca_cert_path, force and "
                             "dry_run are for kjoin_join alone");
    if (b->bootstrap_kubeconfig || b->node_name || b->ca_cert_path || b->kubeconfig_out || b->timeout_ms || b->log ||
        b->audit_id)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the join's TLS bootstrap takes its kubeconfigs, CA, node name, "
                             "deadline and log from the join: `bootstrap` holds only the key, the PKI directory and "
                             "the CSR");
    if (s->only & (s->only - 1) || s->only & ~(unsigned)(KJOIN_PHASE_ALL | KJOIN_PHASES_CONTROL_PLANE))
        return kjoin_err_set(err, KJOIN_E_USAGE, "`only` names one phase");
    if (!s->control_plane && (s->only & KJOIN_PHASES_CONTROL_PLANE))
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s is a control-plane join's phase: set `control_plane`",
                             kjoin_phase_name(s->only));
    if (s->control_plane && s->only & (KJOIN_PHASE_KUBELET_START | KJOIN_PHASE_KUBELET_WAIT_BOOTSTRAP))
        return kjoin_err_set(err, KJOIN_E_USAGE, "a control-plane node's %s runs within its whole join, not alone "
                                                 "(its kubelet needs the manifests and the etcd member)",
                             kjoin_phase_name(s->only));
    if (s->control_plane && !certificate_key_given(s) && s->prepare == KJOIN_PREPARE_DOWNLOAD_CERTS)
        return kjoin_err_set(err, KJOIN_E_USAGE, "download-certs needs `certificate_key`, the key kubeadm init "
                                                 "--upload-certs printed");
    /* The node's address and port, checked here once: every step takes them from the context. */
    if (s->advertise_address && !kjoin_is_ip(s->advertise_address))
        return kjoin_err_set(err, KJOIN_E_USAGE, "the API server's advertise address \"%.64s\" is not an IP address",
                             s->advertise_address);
    if (s->bind_port < 0 || s->bind_port > 65535)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the API server's bind port %d is not a port", s->bind_port);
    if ((s->advertise_address || s->bind_port) && !s->control_plane)
        return kjoin_err_set(err, KJOIN_E_USAGE, "`%s` is for a control-plane join: add `control_plane`",
                             s->advertise_address ? "advertise_address" : "bind_port");
    if (s->prepare & ~(unsigned)KJOIN_PREPARE_ALL)
        return kjoin_err_set(err, KJOIN_E_USAGE, "`prepare` names steps control-plane-prepare does not have");
    if (s->tls_bootstrap && s->dry_run)
        return kjoin_err_set(err, KJOIN_E_USAGE, "`tls_bootstrap` writes the node's files: not with `dry_run`");
    if (skip & KJOIN_PHASE_KUBELET_START)
        skip |= KJOIN_PHASE_KUBELET_WAIT_BOOTSTRAP;
    unsigned all = KJOIN_PHASE_ALL | (s->control_plane ? KJOIN_PHASES_CONTROL_PLANE : 0);
    if (!prepare_steps_of(s))
        skip |= KJOIN_PHASE_CONTROL_PLANE_PREPARE;
    *out = s->only ? s->only : all & ~skip;
    return KJOIN_OK;
}

/* The patches directory, read (and every patch parsed) before anything
 * else happens; what does not apply to a worker said once. */
static kjoin_code read_patches(join_run *r, kjoin_err *err)
{
    const char *dir = r->spec->node.patches_dir;
    if (!dir)
        return KJOIN_OK;
    if (!(r->patches = calloc(1, sizeof(*r->patches))))
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    logf_(r, 0, "[patches] Reading patches from path \"%s\"", dir);
    kjoin_code rc = kjoin_patches_read(dir, r->patches, err);
    for (size_t i = 0; !rc && i < r->patches->n_notes; i++)
        logf_(r, KJOIN_LOG_WARNING, "%s", r->patches->notes[i]);
    if (!rc && !r->spec->control_plane && kjoin_patches_control_plane(r->patches))
        logf_(r, KJOIN_LOG_WARNING, "[patches] The control-plane targets' patches (etcd, kube-apiserver, "
              "kube-controller-manager, kube-scheduler) do not apply to a worker: ignored");
    return rc;
}

/* ---- the join ----------------------------------------------------------- */

void kjoin_phases_spec_init(kjoin_phases_spec *spec)
{
    memset(spec, 0, sizeof(*spec));
    spec->version = KJOIN_PHASES_SPEC_VERSION;
    spec->join.version = KJOIN_JOIN_SPEC_VERSION;
    spec->bootstrap.version = KJOIN_BOOTSTRAP_SPEC_VERSION;
    spec->join.flavor = KJOIN_FLAVOR_AUTO;
    spec->join.timeout_ms = KJOIN_JOIN_DEFAULT_TIMEOUT_MS;
    spec->node.paths.kubernetes_dir = KJOIN_NODE_KUBERNETES_DIR;
    spec->node.paths.kubelet_dir = KJOIN_NODE_KUBELET_DIR;
    spec->bootstrap.key_type = KJOIN_KEY_ECDSA_P256;
}

void kjoin_phases_outcome_release(kjoin_phases_outcome *o)
{
    if (!o)
        return;
    if (o->discovered)
        kjoin_join_outcome_release(&o->join);
    o->discovered = false;
    kjoin_planned_release(&o->planned);
    free(o->taken_back);
    o->taken_back = NULL;
}

/* Whether no later step of s's phase runs: the phase ran to its end. */
static bool last_of_phase(const join_run *r, size_t i)
{
    for (size_t k = i + 1; k < N_STEPS; k++)
        if (steps[k].bit == steps[i].bit && runs(r, &steps[k]))
            return false;
    return true;
}

/* A failure after this run's first control-plane write, before the node's
 * own files: what the run wrote is taken back (the record knows it), and
 * the error says so with a code of its own, the cause kept in the outcome.
 * Once the node's files are written (rc 0 here) the window closes. */
/* A file a take-back put back as it was before this run replaced it. */
static void put_back(void *ctx, const char *path, const char *why)
{
    join_run *r = ctx;
    if (why)
        logf_(r, KJOIN_LOG_WARNING, "[join] Could not put back %s as it was before this run: %s", path, why);
    else
        logf_(r, 1, "[join] Put back %s as it was before this run replaced it", path);
}

static kjoin_code take_back(join_run *r, kjoin_code rc, kjoin_err *err)
{
    kjoin_cp_record *before = r->before;
    kjoin_cp_reset_result *back = rc ? calloc(1, sizeof(*back)) : NULL;
    kjoin_err e;
    r->before = NULL;
    kjoin_code undo = back ? kjoin_cp_take_back(r->cx.kubernetes_dir, before, back, &e) : KJOIN_OK;
    free(before);
    /* What the run replaced (the operator asked for it) goes back as it was, once the run's own is gone. */
    size_t not_back = back && !undo ? kjoin_cp_replaced_restore(r->replaced, put_back, r) : 0;
    if (!back || (!undo && !back->had_record)) { /* nothing of this run's on disk */
        free(back);
        return rc;
    }
    r->out->taken_back = back;
    if (undo) { /* the record could not be read or written again: the cause stays the error */
        logf_(r, KJOIN_LOG_WARNING, "[join] What this run wrote could not be taken back: %s", e.msg);
        return rc;
    }
    char cause[KJOIN_ERR_MSG_MAX];
    memcpy(cause, err->msg, sizeof(cause));
    r->out->taken_back_cause = rc;
    for (size_t i = 0; i < back->n_removed; i++)
        logf_(r, 1, "[join] Took back %s", back->removed[i]);
    for (size_t i = 0; i < back->n_left; i++)
        logf_(r, KJOIN_LOG_WARNING, "[join] Left %s", back->left[i]);
    return kjoin_err_set(err, KJOIN_E_TAKEN_BACK, "%.380s; what this run had written was taken back (%zu paths)%s",
                         cause, back->n_removed, back->n_left || not_back ? ", but for some left (listed)" : "");
}

/* A join that failed once discovery established trust tells the cluster
 * why (a join report, kjoin/report.h): with the bootstrap identity and a
 * bound of its own, since the join's deadline may be what failed. A check
 * and a dry run change nothing there; a K3s cluster has no such identity;
 * the unsafe mode established no trust.
 * The report's own failure is said, never the join's outcome. */
#define REPORT_MS 5000
static void file_report(join_run *r, kjoin_code code, const kjoin_err *why)
{
    const kjoin_phases_spec *s = r->spec;
    /* discovered without a pin (the unsafe mode) is no trust: whoever answered is told nothing */
    if (!code || !r->out->discovered || s->join.unsafe_skip_ca_verification || s->no_report || s->check ||
        s->dry_run || !r->node.bootstrap_kubeconfig || (r->planned && r->plan.kind == KJOIN_DISCOVERY_K3S))
        return;
    kjoin_join_report rep = {.exit_code = code == KJOIN_E_TRANSIENT ? 1 : (int)code};
    snprintf(rep.join_id, sizeof(rep.join_id), "%s", s->join_id ? s->join_id : "");
    snprintf(rep.node, sizeof(rep.node), "%s", r->out->node_name.name);
    snprintf(rep.phase, sizeof(rep.phase), "%s", r->out->failed_in ? r->out->failed_in : "join");
    snprintf(rep.reason, sizeof(rep.reason), "%s", why->msg);
    snprintf(rep.kubelet, sizeof(rep.kubelet), "%s", r->node.kubelet_said);
    snprintf(rep.version, sizeof(rep.version), "%s", KJOIN_VERSION);
    kjoin_kubeapi_config cfg;
    kjoin_kubeapi *api = NULL;
    kjoin_kubeapi_options o = kjoin_join_context_api_options(&r->ctx, 0, 0);
    o.timeout_ms = REPORT_MS; /* its own: the join's deadline may be over */
    kjoin_err e;
    kjoin_code rc = kjoin_kubeapi_config_parse(r->node.bootstrap_kubeconfig, r->node.bootstrap_len, NULL, NULL, &cfg, &e);
    if (!rc && (rc = kjoin_kubeapi_new(&cfg, &o, &api, &e)))
        kjoin_kubeapi_config_release(&cfg);
    if (!rc)
        rc = kjoin_join_report_file(api, &rep, &e);
    kjoin_kubeapi_free(api);
    if (rc)
        logf_(r, KJOIN_LOG_WARNING, "[report] WARNING: The cluster was not told of this failure: %s", e.msg);
    else
        logf_(r, 0, "[report] The cluster was told of this failure: kubectl get csr kjoin-report-%s (kjoin reports)",
              rep.join_id);
    r->out->reported = !rc;
}

static kjoin_code run_all(join_run *r, kjoin_err *err)
{
    const kjoin_phases_spec *spec = r->spec;
    const kjoin_join_spec *j = &spec->join;
    kjoin_phases_outcome *out = r->out;
    kjoin_code rc;
    int64_t timeout = j->timeout_ms > 0 ? j->timeout_ms : KJOIN_JOIN_DEFAULT_TIMEOUT_MS;
    if (spec->check && timeout > KJOIN_JOIN_CHECK_TIMEOUT_MS)
        timeout = KJOIN_JOIN_CHECK_TIMEOUT_MS; /* a check answers now or says why not */
    r->deadline = r->start + timeout;
    kjoin_node_file_path(&spec->node.paths, KJOIN_NODE_FILE_BOOTSTRAP_KUBECONFIG, out->kubeconfig_path,
                         sizeof(out->kubeconfig_path));
    if ((rc = phases_of(spec, &r->phases, err)))
        return rc;
    if (spec->check) {
        if (spec->only || spec->dry_run)
            return kjoin_err_set(err, KJOIN_E_USAGE, "the check asks the cluster of a join as a whole: not of one phase "
                                                     "or a dry run");
        /* discovery, then the check; a control plane's also reads its etcd with the files it would make (under a
         * dry run's root: nothing on the node changes) */
        r->phases = spec->control_plane ? KJOIN_PHASE_CONTROL_PLANE_PREPARE | KJOIN_PHASE_CHECK_ETCD : 0;
    }
    /* One node name for every step, checked before anything is read or
     * written: kubeadm's (GetNodeNameAndHostname), where a hostname-override
     * among the kubelet's arguments wins, since the kubelet registers so. */
    const char *given = spec->node.name;
    for (size_t i = 0; i < spec->node.n_extra_args; i++)
        if (!strncmp(spec->node.extra_args[i], "hostname-override=", 18))
            given = spec->node.extra_args[i] + 18;
    if ((rc = kjoin_node_name_resolve(given, NULL, &out->node_name, err)))
        return rc;
    if (spec->kubelet_server && spec->control_plane)
        return kjoin_err_set(err, KJOIN_E_USAGE, "`kubelet_server` is a worker's: a control-plane node's kubelet "
                                                 "talks to the cluster as kubeadm sets it up");
    if (spec->kubelet_server && (rc = kjoin_url_server_check(spec->kubelet_server, "`kubelet_server`", err)))
        return rc;
    /* Every value that reaches the kubelet's flags file, and every place a
     * file goes, is checked now too (the kubelet's version, which adds a
     * flag, is not known yet; the places are checked again before writing). */
    /* The patches, read and parsed before anything else, for the phases that apply them. */
    if ((r->phases & (KJOIN_PHASE_KUBELET_START | KJOIN_PHASE_CONTROL_PLANE_PREPARE | KJOIN_PHASE_ETCD_JOIN)) &&
        (rc = read_patches(r, err)))
        return rc;
    if (r->phases & KJOIN_PHASE_KUBELET_START) {
        char *flags = NULL;
        rc = kjoin_kubelet_flags_env(&spec->node, &out->node_name, spec->node.cri_socket, 0, 0, NULL, NULL, &flags,
                                     err);
        free(flags);
        if (rc || (rc = kjoin_node_check_destinations(&spec->node.paths, err)))
            return rc;
    }
    if (needs_of_run(r) & NEEDS_PLAN) {
        if ((rc = kjoin_join_resolve(j, &r->plan, err)))
            return rc;
        r->planned = true;
        /* A K3s agent runs its kubelet itself, from its own configuration:
         * kubeadm's node phases have nothing to do there. */
        if (r->plan.kind == KJOIN_DISCOVERY_K3S && spec->control_plane) {
            kjoin_join_plan_clear(&r->plan);
            return kjoin_err_set(err, KJOIN_E_USAGE, "a K3s cluster has no kubeadm control-plane join: its servers "
                                                     "join with k3s server");
        }
        if (r->plan.kind == KJOIN_DISCOVERY_K3S && spec->check) {
            kjoin_join_plan_clear(&r->plan);
            return kjoin_err_set(err, KJOIN_E_USAGE, "a K3s cluster has no bootstrap token identity to ask the "
                                                     "cluster with: its agent checks the join itself");
        }
        if (r->plan.kind == KJOIN_DISCOVERY_K3S && (r->phases & KJOIN_PHASE_ALL)) {
            logf_(r, 0, "[join] A K3s cluster: its agent starts the kubelet, so only discovery runs");
            r->phases = 0;
        }
    }
    /* The certificate key last of the inputs: from here on every way out
     * goes through the end, which wipes it. */
    rc = resolve_certificate_key(r, err);
    /* The one context every step reads; discovery adds the CA, the first read of the cluster its client. */
    r->ctx = (kjoin_join_context){.deadline_ms = r->deadline, .timeouts = spec->timeouts, .join_id = spec->join_id,
                                  .audit_id = j->audit_id, .log = j->log, .log_ctx = j->log_ctx,
                                  .name = out->node_name, .patches = r->patches};
    /* A dry run's one root: every step writes under it; shown and removed at the end. */
    if (!rc && (spec->dry_run || (spec->check && spec->control_plane)))
        rc = kjoin_dry_run_begin("/tmp", &r->ctx.dry_run, err);
    r->node = (kjoin_node_join){.spec = &spec->node, .cx = &r->ctx};
    for (size_t i = 0; !rc && i < N_STEPS; i++) {
        if (!runs(r, &steps[i]))
            continue;
        int64_t t = kjoin_now_ms();
        rc = steps[i].run(r, err);
        if (rc)
            out->failed_in = steps[i].bit                      ? kjoin_phase_name(steps[i].bit)
                             : steps[i].run == run_discovery    ? "discovery"
                             : steps[i].run == run_tls_bootstrap ? "tls-bootstrap"
                             : steps[i].run == run_join_check    ? "check"
                                                                 : "join";
        if (steps[i].bit) /* phase_ms is in bit order */
            out->phase_ms[__builtin_ctz(steps[i].bit)] += kjoin_now_ms() - t;
        if (!rc && steps[i].bit && last_of_phase(r, i))
            out->ran |= steps[i].bit;
        if (r->before && (rc || steps[i].run == run_write))
            rc = take_back(r, rc, err); /* the node's own files written: the node goes on from there */
    }
    /* kubeadm's closing words, with what comes next. */
    if (!rc && (out->ran & KJOIN_PHASE_KUBELET_WAIT_BOOTSTRAP))
        logf_(r, 0, "[join] This node has joined the cluster as %s%s. It is NotReady until the cluster's network "
              "plugin runs on it; kubectl get nodes on a control-plane node shows it", out->node_name.name,
              (out->ran & KJOIN_PHASE_WAIT_CONTROL_PLANE) ? ", and a new control plane instance was created" : "");
    if (rc)
        file_report(r, rc, err);
    if (r->ctx.dry_run) { /* what its steps wrote, shown as the node's; then gone */
        if (!rc && spec->dry_run)
            rc = kjoin_dry_run_show(r->ctx.dry_run, &out->planned, err);
        kjoin_dry_run_end(r->ctx.dry_run, j->log, j->log_ctx);
        r->ctx.dry_run = NULL;
    }
    if (r->planned)
        kjoin_join_plan_clear(&r->plan);
    kjoin_kubeapi_free(r->cx.admin_api);
    kjoin_kubeapi_free(r->bootstrap_api);
    free(r->cluster);
    free(r->before);
    kjoin_cp_replaced_free(r->replaced);
    kjoin_certificate_key_clear(&r->key);
    return rc;
}

kjoin_code kjoin_join_phases(const kjoin_phases_spec *spec, kjoin_phases_outcome *out, kjoin_err *err)
{
    join_run r = {.spec = spec, .out = out, .start = kjoin_now_ms()};
    memset(out, 0, sizeof(*out));
    kjoin_code rc = kjoin_version_check(spec ? &spec->version : NULL, KJOIN_PHASES_SPEC_VERSION, "join specification",
                                        "kjoin_phases_spec_init", err);
    if (rc)
        return rc;
    rc = run_all(&r, err);
    /* What the caller is told outlives the run; the steps' own state does not. */
    out->preflight = r.node.report;
    out->kubelet = r.node.result;
    kjoin_node_join_release(&r.node);
    free(r.ca);
    kjoin_patchset_release(r.patches);
    free(r.patches);
    kjoin_free_wiped(r.local_bootstrap, r.local_bootstrap_len);
    return rc;
}
