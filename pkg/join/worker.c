/* The worker join's phases in kubeadm's order. Discovery runs in memory when
 * kubelet-start follows, so that nothing is written before the cluster
 * checks pass; kubelet-start writes the bootstrap kubeconfig itself. */
#include <string.h>

#include <kjoin/worker.h>

#include "internal.h"

void kjoin_worker_outcome_release(kjoin_worker_outcome *o)
{
    if (o && o->discovered)
        kjoin_join_outcome_release(&o->join);
    if (o)
        o->discovered = false;
}

static void print_findings(const kjoin_join_spec *j, const kjoin_preflight_report *r, size_t from)
{
    for (size_t i = from; i < r->n; i++) {
        const kjoin_preflight_finding *f = &r->items[i];
        kjoin_logf(j->log, j->log_ctx, f->error && !f->ignored ? 0 : KJOIN_LOG_WARNING, "[preflight] %s %s: %s",
                   !f->error ? "WARNING" : f->ignored ? "WARNING (ignored)" : "ERROR", f->name, f->message);
    }
}

/* kubelet-start's and kubelet-wait-bootstrap's part, after discovery (or
 * without it, for the wait alone). */
static kjoin_code node_phases(const kjoin_worker_spec *spec, const kjoin_preflight_spec *pf, unsigned ph,
                              int64_t deadline, kjoin_worker_outcome *out, kjoin_err *err)
{
    const kjoin_join_spec *j = spec->join;
    size_t ca_len = 0, seen = out->preflight.n;
    char *ca = out->discovered ? kjoin_join_trusted_ca_pem(&out->join.result, &ca_len) : NULL;
    kjoin_kubelet_start_spec ks = {
        .paths = pf->paths,
        .bootstrap_kubeconfig = out->discovered ? out->join.result.kubeconfig : NULL,
        .bootstrap_len = out->discovered ? out->join.result.kubeconfig_len : 0,
        .ca_pem = ca,
        .ca_len = ca_len,
        .node_name = j->node_name,
        .preflight = pf,
        .report = &out->preflight,
        .taints = spec->taints,
        .n_taints = spec->n_taints,
        .extra_args = spec->extra_args,
        .n_extra_args = spec->n_extra_args,
        .phases = ph,
        .join_id = spec->join_id,
        .deadline_ms = deadline,
        .before_start = spec->before_start,
        .before_start_ctx = spec->before_start_ctx,
        .audit_id = j->audit_id,
        .log = j->log,
        .log_ctx = j->log_ctx,
    };
    kjoin_code rc = kjoin_kubelet_start(&ks, &out->kubelet, err);
    print_findings(j, &out->preflight, seen);
    free(ca);
    for (size_t i = 0; i < out->kubelet.n_steps; i++) {
        const char *n = out->kubelet.steps[i].name;
        int which = !strcmp(n, "kubelet-healthz") || !strcmp(n, "node-registered") ? 2 : 1;
        out->phase_ms[which] += out->kubelet.steps[i].ms;
    }
    if (!rc)
        out->ran |= ph & (KJOIN_PHASE_KUBELET_START | KJOIN_PHASE_KUBELET_WAIT_BOOTSTRAP);
    return rc;
}

/* The node's paths: the bootstrap kubeconfig and the CA where discovery is
 * told to write them, for the checks and the writes alike. */
static kjoin_preflight_spec node_paths(const kjoin_worker_spec *spec)
{
    kjoin_preflight_spec pf = spec->preflight;
    pf.paths.bootstrap_kubeconfig = spec->join->kubeconfig_out;
    if (spec->join->ca_cert_path)
        pf.paths.ca_cert_path = spec->join->ca_cert_path;
    return pf;
}

static kjoin_code wait_alone(const kjoin_worker_spec *spec, kjoin_worker_outcome *out, int64_t deadline,
                             kjoin_err *err)
{
    kjoin_preflight_spec pf = node_paths(spec);
    return node_phases(spec, &pf, KJOIN_PHASE_KUBELET_WAIT_BOOTSTRAP, deadline, out, err);
}

kjoin_code kjoin_worker_join(const kjoin_worker_spec *spec, kjoin_worker_outcome *out, kjoin_err *err)
{
    kjoin_join_spec *j = spec->join;
    unsigned ph = spec->phases;
    int64_t t = kjoin_now_ms(), timeout = j->timeout_ms ? j->timeout_ms : KJOIN_JOIN_DEFAULT_TIMEOUT_MS;
    int64_t deadline = t + timeout;
    kjoin_code rc = KJOIN_OK;
    memset(out, 0, sizeof(*out));
    /* kubelet-wait-bootstrap alone needs neither discovery nor its inputs. */
    if (ph == KJOIN_PHASE_KUBELET_WAIT_BOOTSTRAP)
        return wait_alone(spec, out, deadline, err);
    kjoin_join_plan plan;
    if ((rc = kjoin_join_resolve(j, &plan, err)))
        return rc;
    /* A K3s agent runs its kubelet itself, from its own configuration:
     * kubeadm's node phases have nothing to do there. */
    if (plan.kind == KJOIN_DISCOVERY_K3S && (ph & KJOIN_PHASE_ALL)) {
        kjoin_logf(j->log, j->log_ctx, 0, "[join] A K3s cluster: its agent starts the kubelet, so only discovery runs");
        ph &= ~(unsigned)KJOIN_PHASE_ALL;
    }
    kjoin_preflight_spec pf = node_paths(spec);
    if (ph & KJOIN_PHASE_PREFLIGHT) {
        /* The forwarding check follows the API server's address family. */
        if (plan.n_endpoints)
            pf.endpoint_host = plan.endpoints[0].host;
        kjoin_logf(j->log, j->log_ctx, 0, "[preflight] Running pre-flight checks");
        rc = kjoin_preflight_node(&pf, &out->preflight, err);
        print_findings(j, &out->preflight, 0);
        out->phase_ms[0] = kjoin_now_ms() - t;
        if (rc) {
            kjoin_join_plan_clear(&plan);
            return rc;
        }
        out->ran |= KJOIN_PHASE_PREFLIGHT;
    }
    bool discover = (ph & KJOIN_PHASE_KUBELET_START) || !(ph & KJOIN_PHASE_ALL);
    if (!discover)
        kjoin_join_plan_clear(&plan);
    if (discover) {
        bool dry = j->dry_run;
        t = kjoin_now_ms();
        j->dry_run = dry || (ph & KJOIN_PHASE_KUBELET_START);
        /* What preflight left of the one deadline. */
        plan.timeout_ms = !(out->ran & KJOIN_PHASE_PREFLIGHT) ? timeout : deadline - t > 0 ? deadline - t : 1;
        rc = kjoin_join__planned(j, &plan, &out->join, err);
        j->dry_run = dry;
        if (rc)
            return rc;
        out->discovered = true;
    }
    if (!(ph & (KJOIN_PHASE_KUBELET_START | KJOIN_PHASE_KUBELET_WAIT_BOOTSTRAP)) || j->dry_run)
        return KJOIN_OK;
    return node_phases(spec, &pf, ph, deadline, out, err);
}
