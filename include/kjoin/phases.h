/* A worker join as `kubeadm join` runs it: preflight, discovery, then
 * kubelet-start and kubelet-wait-bootstrap, each phase skippable by its
 * kubeadm name, and kjoin's own TLS bootstrap as a step between them. One
 * specification in, passed down whole; the phase table, what each phase
 * needs and the dry-run rule live in pkg/join, so a program gets the same
 * join as the kjoin command by filling the specification. */
#ifndef KJOIN_PHASES_H
#define KJOIN_PHASES_H

#include <kjoin/bootstrap.h>
#include <kjoin/controlplane.h>
#include <kjoin/join.h>
#include <kjoin/node.h>

/* kubeadm's worker phases; a set of them is a bit mask. */
enum {
    KJOIN_PHASE_PREFLIGHT = 1,
    KJOIN_PHASE_KUBELET_START = 2,
    KJOIN_PHASE_KUBELET_WAIT_BOOTSTRAP = 4,
    KJOIN_PHASE_ALL = 7, /* a worker's */
    /* A control-plane join's phases, in the order they run with the
     * worker's: control-plane-prepare (its steps below), check-etcd (the
     * cluster's etcd members healthy before this node adds one), kubelet-start,
     * etcd-join (control-plane-join/etcd before 1.31's kubeadm: the member
     * added, etcd.yaml, the learner promoted), kubelet-wait-bootstrap,
     * control-plane-join (mark-control-plane), wait-control-plane (this
     * node's API server, controller manager and scheduler healthy). */
    KJOIN_PHASE_CONTROL_PLANE_PREPARE = 8,
    KJOIN_PHASE_CONTROL_PLANE_JOIN = 16,
    KJOIN_PHASE_ETCD_JOIN = 32,
    KJOIN_PHASE_WAIT_CONTROL_PLANE = 64,
    KJOIN_PHASE_CHECK_ETCD = 128,
    KJOIN_PHASES_CONTROL_PLANE = 248
};

/* control-plane-prepare's steps, by kubeadm's sub-phase names. */
enum {
    KJOIN_PREPARE_DOWNLOAD_CERTS = 1, /* the shared CAs from the kubeadm-certs Secret */
    KJOIN_PREPARE_CERTS = 2,          /* the node's own certificates, signed by them */
    KJOIN_PREPARE_KUBECONFIG = 4,     /* admin.conf, controller-manager.conf, scheduler.conf */
    KJOIN_PREPARE_CONTROL_PLANE = 8,  /* the static Pod manifests of the API server, controller manager, scheduler */
    KJOIN_PREPARE_ALL = 15
};

/* kubeadm's join phases, the one table every list of them comes from (the
 * lookup and its message, kjoin join phase --help, --skip-phases' help and
 * completion, the man page, the -o json phase list): each phase in the order
 * a join runs them, its sub-phases after it, then the names kubeadm also
 * accepts (help NULL: not listed). */
typedef struct kjoin_phase_info {
    const char *name;   /* kubeadm's: "kubelet-start", "control-plane-prepare/download-certs" */
    unsigned bit;       /* KJOIN_PHASE_* */
    unsigned steps;     /* a step of control-plane-prepare (KJOIN_PREPARE_*); 0: the whole phase */
    const char *help;   /* one line; NULL for another name of a listed phase */
} kjoin_phase_info;
/* The table and, into *n, its length. */
const kjoin_phase_info *kjoin_phase_table(size_t *n);

/* One phase by kubeadm's name, a sub-phase's among them: its bit and, for a step of
 * control-plane-prepare, that step (*steps; 0 for the whole phase).
 * Errors: KJOIN_E_USAGE for a name kubeadm's join does not have. */
kjoin_code kjoin_phase_lookup(const char *name, size_t len, unsigned *bit, unsigned *steps, kjoin_err *err);
/* Adds the phases a comma-separated list names (kubeadm's names; its
 * control-plane phases mean nothing on a worker) to *mask. Errors:
 * KJOIN_E_USAGE for a name kubeadm's join does not have, or a step of
 * control-plane-prepare (kjoin_skip_phases takes those). */
kjoin_code kjoin_phases_parse(const char *list, unsigned *mask, kjoin_err *err);
/* kubeadm's --skip-phases list into the specification: its phases into
 * spec->skip, the steps of control-plane-prepare it names
 * ("control-plane-prepare/download-certs") into spec->skip_prepare. Errors:
 * as kjoin_phase_lookup. */
struct kjoin_phases_spec;
kjoin_code kjoin_skip_phases(struct kjoin_phases_spec *spec, const char *list, kjoin_err *err);
/* The name of one phase bit. */
const char *kjoin_phase_name(unsigned phase);

/* Everything a join is told. Fill it after kjoin_phases_spec_init(), its one
 * initialiser (a specification of another version is refused). */
#define KJOIN_PHASES_SPEC_VERSION 3
typedef struct kjoin_phases_spec {
    unsigned version;                  /* KJOIN_PHASES_SPEC_VERSION */
    kjoin_join_spec join;              /* discovery's inputs. Its kubeconfig_out, ca_cert_path, force and dry_run
                                        * must stay unset (refused): node.paths says where the node's files go,
                                        * node.force and dry_run below what happens to them */
    kjoin_node_spec node;              /* the node: its paths, name, runtime, taints, kubelet arguments, checks */
    bool tls_bootstrap;                /* kjoin's own TLS bootstrap before the kubelet starts (or after discovery
                                        * alone) */
    kjoin_bootstrap_spec bootstrap;    /* with tls_bootstrap: key type, PKI directory, CSR; its bootstrap_kubeconfig,
                                        * node_name, ca_cert_path, kubeconfig_out, timeout, audit_id and log must
                                        * stay unset (refused): the join takes them from the fields above */
    unsigned skip;                     /* KJOIN_PHASE_* not to run; skipping kubelet-start skips the wait too */
    unsigned skip_prepare;             /* KJOIN_PREPARE_*: control-plane-prepare's steps not to run */
    unsigned only;                     /* one phase alone (kjoin join phase NAME); 0: all but skip */
    bool ca_with_discovery;            /* discovery alone also writes the CA to node.paths.ca_cert_path (kubeadm
                                        * writes it only in kubelet-start) */
    bool dry_run;                      /* as kubeadm's: preflight, discovery and the cluster checks run; every
                                        * step writes under one directory of its own, its files shown
                                        * (outcome.planned), none written on the node, nothing started, nothing
                                        * changed in the cluster */
    const char *join_id;               /* recorded for reset and sent as Audit-ID */
    bool control_plane;                /* kubeadm's control-plane join: its phases too */
    bool check;                        /* ask the cluster whether the join would succeed (discovery, then
                                        * kjoin_join_check_cluster): nothing is written or started; no phase runs */
    unsigned prepare;                  /* KJOIN_PREPARE_*: control-plane-prepare's steps to run; 0: all */
    const kjoin_certificate_key *certificate_key; /* opens the kubeadm-certs Secret (a JoinConfiguration's); with
                                        * none of the sources below either, download-certs is skipped (as
                                        * kubeadm's): the shared CAs must be on disk already */
    const char *advertise_address;     /* this node's API server address; NULL: the address it reaches the
                                        * cluster's API server from */
    int bind_port;                     /* this node's API server port; 0: 6443 */
    kjoin_stage_timeouts timeouts;     /* kubeadm's timeouts.*: each stage's own bound within join.timeout_ms */
    /* The certificate key's other sources, decided by the join (one of the
     * first two; they win over certificate_key, which wins over the
     * environment's), for a control-plane join only: */
    const char *certificate_key_text;  /* 64 hex digits (a secret: wiped by the caller) */
    const char *certificate_key_file;  /* a file readable by its owner alone, or "-" for standard input */
    const char *env_certificate_key;   /* KJOIN_CERTIFICATE_KEY's value, used when nothing else names a key */
    bool no_report;                    /* a join that fails after discovery established trust files no join report
                                        * (kjoin/report.h); a check or a dry run never files one */
    const char *kubelet_server;        /* a worker's: https://HOST[:PORT] its kubelet's kubeconfigs name instead of
                                        * discovery's server (a per-node load balancer); it must answer as the
                                        * cluster's API server (its CA, the bootstrap identity) before anything
                                        * is written, the check asks it too. NULL: discovery's */
} kjoin_phases_spec;

/* Zeroes *spec and sets the defaults: every phase, the default timeout,
 * the node's default paths. */
void kjoin_phases_spec_init(kjoin_phases_spec *spec);

typedef struct kjoin_phases_outcome {
    kjoin_node_name node_name;         /* resolved once, before anything else */
    bool discovered;
    kjoin_join_outcome join;           /* discovery; its write fields for discovery alone */
    char kubeconfig_path[4096];        /* the bootstrap kubeconfig's path */
    kjoin_preflight_report preflight;  /* preflight's findings; the runtime and kubelet found */
    kjoin_kubelet_start_result kubelet; /* kubelet-start's and kubelet-wait-bootstrap's results */
    kjoin_planned_files planned;       /* a dry run: the files the join would write, in order, tokens masked */
    bool tls_bootstrapped;
    kjoin_bootstrap_result tls;
    bool checked;                      /* the check ran (its verdict is the join's code) */
    kjoin_join_check check;
    char cert_dir[1024];               /* a control-plane node's certificates directory */
    char advertise_address[64];        /* the node's certificates' address */
    size_t etcd_members_healthy;                        /* check-etcd: the cluster's members that answered */
    bool etcd_checked;                                  /* --check of a control-plane join: etcd_check holds */
    kjoin_etcd_check etcd_check;                        /* the stacked etcd as this node sees it */
    kjoin_etcd_join_result etcd;                        /* etcd-join */
    kjoin_cp_files control_plane_files;                 /* every file the control-plane steps wrote, in order */
    kjoin_wait_control_plane_result control_plane_health; /* wait-control-plane */
    bool marked;                       /* control-plane-join's mark-control-plane */
    kjoin_cp_reset_result *taken_back; /* a control-plane join that failed after it wrote, before the node's own
                                        * files: what it took back and what it left (NULL: nothing written) */
    kjoin_code taken_back_cause;       /* then the failure's own code (the join's is KJOIN_E_TAKEN_BACK) */
    unsigned ran;                      /* the phases that ran to the end */
    const char *failed_in;             /* on failure, where: a kubeadm phase's name ("preflight"), or kjoin's own
                                        * step ("discovery", "tls-bootstrap", "join"); static text, NULL when
                                        * the join failed before its steps (the specification, the node name) */
    bool reported;                     /* the join failed, and a join report tells the cluster why */
    int64_t phase_ms[8];               /* preflight, kubelet-start, kubelet-wait-bootstrap, control-plane-prepare,
                                        * control-plane-join, etcd-join, wait-control-plane, check-etcd
                                        * (discovery's own time is join.result.elapsed_ms) */
} kjoin_phases_outcome;

/* Runs the phases the specification asks for. Findings and steps are
 * logged as they happen. *out is filled as far as the join got, also on
 * failure; release it with kjoin_phases_outcome_release(). A control-plane
 * join checks everything it can before its first write; one that fails
 * after that and before the node's own files are written takes back what
 * it wrote (KJOIN_E_TAKEN_BACK, the cause in out->taken_back_cause).
 * Errors: KJOIN_E_USAGE (the specification, the node name, a check),
 * KJOIN_E_TAKEN_BACK, and those of kjoin_join, kjoin_kubelet_* and
 * kjoin_tls_bootstrap. */
kjoin_code kjoin_join_phases(const kjoin_phases_spec *spec, kjoin_phases_outcome *out, kjoin_err *err);
void kjoin_phases_outcome_release(kjoin_phases_outcome *o);

/* ---- kjoin reset of a node kjoin joined, worker or control plane ---------- */

/* kubeadm reset's phases; a set of them is a bit mask. */
enum {
    KJOIN_RESET_PREFLIGHT = 1,          /* the records read and the refusals made: nothing changed yet */
    KJOIN_RESET_REMOVE_ETCD_MEMBER = 2, /* a control-plane node's etcd member out of the cluster */
    KJOIN_RESET_CLEANUP_NODE = 4,       /* the kubelet stopped, its Pods stopped, the joins' files removed */
    KJOIN_RESET_ALL = 7
};
/* kubeadm reset's phase names (a comma-separated list) into *mask. Errors:
 * KJOIN_E_USAGE for a name kubeadm's reset does not have. */
kjoin_code kjoin_reset_phases_parse(const char *list, unsigned *mask, kjoin_err *err);

/* What a reset is told. Begin with KJOIN_RESET_SPEC_INIT (another version is
 * refused). */
#define KJOIN_RESET_SPEC_VERSION 1
typedef struct kjoin_reset_spec {
    unsigned version;                  /* KJOIN_RESET_SPEC_VERSION */
    kjoin_kubelet_reset_spec node;     /* the node's paths, systemd, the log; its dry_run is set from dry_run */
    int64_t timeout_ms;                /* the etcd member's removal; 0: a minute */
    const char *audit_id;
    unsigned skip;                     /* KJOIN_RESET_*: phases not to run */
    bool dry_run;                      /* every decision made, every removal reported, nothing changed */
    const char *cri_socket;            /* the runtime whose Pods are stopped; NULL: the one the kubelet used */
    bool cleanup_tmp_dir;              /* cleanup-node also removes kubeadm's <kubernetes_dir>/tmp (its backups),
                                        * which no join of kjoin's makes: asked for by name, as kubeadm's flag */
} kjoin_reset_spec;
#define KJOIN_RESET_SPEC_INIT {.version = KJOIN_RESET_SPEC_VERSION}

typedef struct kjoin_reset_result {
    kjoin_kubelet_reset_result node;           /* the worker's join (and the kubelet) */
    kjoin_cp_reset_result *control_plane; /* the control-plane join's (had_record false: none) */
    char control_plane_refused[KJOIN_ERR_MSG_MAX]; /* its record is not kjoin's: its part left ("" otherwise) */
    bool changed;                      /* anything was changed (false: refused before the first change) */
    bool dry_run;                      /* nothing was changed: removed lists what would be */
    size_t pods;                       /* the Pods (or their running containers) found in the runtime */
    bool pods_stopped;                 /* and stopped */
    char pods_not_stopped[KJOIN_ERR_MSG_MAX]; /* why not */
} kjoin_reset_result;

/* Undoes what kjoin's joins made on this node, in kubeadm reset's order,
 * deciding before it changes anything: both records read and the kubelet
 * stopped (a refusal there changes nothing), then this node's etcd member
 * out of the cluster, the Pods the kubelet started stopped through the
 * runtime's client (crictl, else containerd's ctr), the files of the
 * worker's and the control plane's join that still hold what was written,
 * and the directories the joins made once empty. A control-plane record
 * kjoin cannot read leaves the control plane's part, not the worker's:
 * KJOIN_E_USAGE after the rest is done. Release out with
 * kjoin_reset_result_release. Errors: as kjoin_kubelet_reset_stop,
 * kjoin_kubelet_reset_remove and kjoin_cp_reset_*. */
kjoin_code kjoin_reset(const kjoin_reset_spec *s, kjoin_reset_result *out, kjoin_err *err);
void kjoin_reset_result_release(kjoin_reset_result *r);

#endif
