/* The RFC's Kubernetes objects for the Secrets store: the ServiceAccount,
 * Role and RoleBinding a run needs, the pre-install Job that runs init, and
 * the two rotation CronJobs, with the Helm hook annotations and weights of
 * the RFC's table so that the same YAML drops into a chart. */
#include <stdio.h>
#include <string.h>

#include <kjoin/private/certs.h>
#include <kjoin/private/util.h>

#include "../yamldoc/yamldoc.h"
#include "secret.h"

#define MINUTE 60LL
#define HOUR 3600LL
#define DAY (24 * HOUR)

/* Cron can only repeat at intervals that divide its fields. The ladder:
 * the longest that is not longer than the period, so a run comes at least
 * every period. The self-signer wrote the period itself into the fields
 * ("*" "/11" in the month fires on Jan 1 and Dec 1, not every 11 months). */
kjoin_code kjoin_certs_schedule(int64_t period, int minute, int hour, char out[KJOIN_CERTS_CRON_MAX],
                                int64_t *interval, kjoin_err *err)
{
    static const int hour_steps[] = {12, 8, 6, 4, 3, 2, 1}, minute_steps[] = {30, 20, 15, 10, 5, 1};
    if (period >= 31 * DAY) {
        snprintf(out, KJOIN_CERTS_CRON_MAX, "%d %d 1 * *", minute, hour);
        *interval = 31 * DAY; /* the longest month */
        return KJOIN_OK;
    }
    if (period >= 7 * DAY) {
        snprintf(out, KJOIN_CERTS_CRON_MAX, "%d %d * * 0", minute, hour);
        *interval = 7 * DAY;
        return KJOIN_OK;
    }
    if (period >= DAY) {
        snprintf(out, KJOIN_CERTS_CRON_MAX, "%d %d * * *", minute, hour);
        *interval = DAY;
        return KJOIN_OK;
    }
    for (size_t i = 0; i < sizeof(hour_steps) / sizeof(hour_steps[0]); i++)
        if (period >= hour_steps[i] * HOUR) {
            snprintf(out, KJOIN_CERTS_CRON_MAX, "%d */%d * * *", minute, hour_steps[i]);
            *interval = hour_steps[i] * HOUR;
            return KJOIN_OK;
        }
    for (size_t i = 0; i < sizeof(minute_steps) / sizeof(minute_steps[0]); i++)
        if (period >= minute_steps[i] * MINUTE) {
            snprintf(out, KJOIN_CERTS_CRON_MAX, "*/%d * * * *", minute_steps[i]);
            *interval = minute_steps[i] * MINUTE;
            return KJOIN_OK;
        }
    char p[32];
    return kjoin_err_set(err, KJOIN_E_USAGE, "a rotation period of %s is shorter than cron's minute",
                         kjoin_duration_format(period * 1000, p, sizeof(p)));
}

static void put(json_object *o, const char *k, const char *v) { json_object_object_add(o, k, json_object_new_string(v)); }

static json_object *strings(const char *const *v, size_t n)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < n; i++)
        json_object_array_add(a, json_object_new_string(v[i]));
    return a;
}

/* apiVersion, kind and metadata; a Helm pre-install hook when weight > 0. */
static json_object *object(const char *api, const char *kind, const char *name, const char *ns, const char *prefix,
                           int weight, bool delete_when_done)
{
    json_object *o = json_object_new_object(), *meta = json_object_new_object(), *labels = json_object_new_object();
    put(o, "apiVersion", api);
    put(o, "kind", kind);
    put(meta, "name", name);
    put(meta, "namespace", ns);
    put(labels, "app.kubernetes.io/managed-by", "kjoin");
    put(labels, "app.kubernetes.io/part-of", prefix);
    json_object_object_add(meta, "labels", labels);
    if (weight > 0) {
        json_object *ann = json_object_new_object();
        char w[16];
        snprintf(w, sizeof(w), "%d", weight);
        put(ann, "helm.sh/hook", "pre-install,pre-upgrade");
        put(ann, "helm.sh/hook-weight", w);
        put(ann, "helm.sh/hook-delete-policy", delete_when_done ? "before-hook-creation,hook-succeeded"
                                                                 : "before-hook-creation");
        json_object_object_add(meta, "annotations", ann);
    }
    json_object_object_add(o, "metadata", meta);
    return o;
}

static json_object *rule(const char *const *verbs, size_t n_verbs, const char *const *names, size_t n_names)
{
    json_object *r = json_object_new_object();
    const char *core = "", *secrets = "secrets";
    json_object_object_add(r, "apiGroups", strings(&core, 1));
    json_object_object_add(r, "resources", strings(&secrets, 1));
    if (n_names)
        json_object_object_add(r, "resourceNames", strings(names, n_names));
    json_object_object_add(r, "verbs", strings(verbs, n_verbs));
    return r;
}

/* The pod of the Job and of both CronJobs: kjoin with args, as the
 * service account, never restarted in place (the Job retries once). */
static json_object *job_spec(const char *sa, const char *image, const char *const *args, size_t n)
{
    json_object *spec = json_object_new_object(), *tmpl = json_object_new_object(), *pod = json_object_new_object(),
                *c = json_object_new_object(), *containers = json_object_new_array(), *sec = json_object_new_object();
    const char *cmd = "kjoin";
    put(c, "name", "kjoin");
    put(c, "image", image);
    json_object_object_add(c, "command", strings(&cmd, 1));
    json_object_object_add(c, "args", strings(args, n));
    json_object_object_add(sec, "allowPrivilegeEscalation", json_object_new_boolean(false));
    json_object_object_add(sec, "readOnlyRootFilesystem", json_object_new_boolean(true));
    json_object_object_add(c, "securityContext", sec);
    json_object_array_add(containers, c);
    put(pod, "serviceAccountName", sa);
    put(pod, "restartPolicy", "Never");
    json_object_object_add(pod, "containers", containers);
    json_object_object_add(tmpl, "spec", pod);
    json_object_object_add(spec, "backoffLimit", json_object_new_int(1));
    json_object_object_add(spec, "template", tmpl);
    return spec;
}

static json_object *cronjob(const kjoin_certs_job_opts *o, const char *name, const char *schedule, const char *sa,
                            const char *const *args, size_t n)
{
    json_object *cj = object(o->cronjob_api ? o->cronjob_api : "batch/v1", "CronJob", name, o->ns, o->prefix, 0, false);
    json_object *spec = json_object_new_object(), *jt = json_object_new_object();
    put(spec, "schedule", schedule);
    put(spec, "concurrencyPolicy", "Forbid"); /* kjoin's compare-and-swap covers the other CronJob */
    json_object_object_add(spec, "successfulJobsHistoryLimit", json_object_new_int(1));
    json_object_object_add(jt, "spec", job_spec(sa, o->image, args, n));
    json_object_object_add(spec, "jobTemplate", jt);
    json_object_object_add(cj, "spec", spec);
    return cj;
}

#define MAX_ARGS 40
#define MAX_DOCS 6

kjoin_code kjoin_certs_job_manifests(const kjoin_certs_job_opts *o, char **out, kjoin_err *err)
{
    kjoin_certs_settings s = o->settings;
    bool user_ca = o->ca_secret != NULL;
    char names[3][SECRET_NAME_MAX], sa[240], role[240], cron_leaves[32], cron_ca[32];
    int64_t leaf_interval = 0, ca_interval = 0;
    *out = NULL;
    if (!o->image || !*o->image || strchr(o->image, ' '))
        return kjoin_err_set(err, KJOIN_E_USAGE, "the Job needs a container image (`image`)");
    if (o->cronjob_api && strcmp(o->cronjob_api, "batch/v1") && strcmp(o->cronjob_api, "batch/v1beta1"))
        return kjoin_err_set(err, KJOIN_E_USAGE, "the CronJob API is batch/v1 or batch/v1beta1 (Kubernetes before 1.21)");
    kjoin_code rc = kjoin_certs__secrets_names_check(o->ns, o->prefix, o->ca_secret, err);
    if (!rc)
        rc = kjoin_certs_validate(&s, user_ca, err);
    /* Leaves: at least every minimum duration; the CA: every CA duration
     * minus its window. Both on the ladder, at other hours so they do not
     * start together; the minimum init stores is the real interval, which
     * is what "expiring before the next run" must mean. */
    if (!rc)
        rc = kjoin_certs_schedule(s.minimum, 0, 3, cron_leaves, &leaf_interval, err);
    if (!rc)
        rc = kjoin_certs_schedule(s.ca_duration - s.ca_window, 30, 1, cron_ca, &ca_interval, err);
    if (rc)
        return rc;
    s.minimum = leaf_interval;
    kjoin_certs__secret_name(o->prefix, "ca", names[0]);
    kjoin_certs__secret_name(o->prefix, "node", names[1]);
    kjoin_certs__secret_name(o->prefix, "client.root", names[2]);
    snprintf(sa, sizeof(sa), "%s-certs", o->prefix);
    snprintf(role, sizeof(role), "%s-certs", o->prefix);

    json_object *docs[MAX_DOCS];
    size_t n = 0;
    docs[n++] = object("v1", "ServiceAccount", sa, o->ns, o->prefix, 1, false);

    /* Create cannot be limited by name (the name is not known when it is
     * authorised); everything else is limited to the run's own Secrets. */
    json_object *r = object("rbac.authorization.k8s.io/v1", "Role", role, o->ns, o->prefix, 2, false),
                *rules = json_object_new_array();
    const char *create[] = {"create"}, *rw[] = {"get", "update"}, *ro[] = {"get"};
    const char *own[] = {names[1], names[2], names[0]};
    json_object_array_add(rules, rule(create, 1, NULL, 0));
    json_object_array_add(rules, rule(rw, 2, own, user_ca ? 2 : 3));
    if (user_ca)
        json_object_array_add(rules, rule(ro, 1, &o->ca_secret, 1));
    json_object_object_add(r, "rules", rules);
    docs[n++] = r;

    json_object *rb = object("rbac.authorization.k8s.io/v1", "RoleBinding", role, o->ns, o->prefix, 3, false);
    json_object *ref = json_object_new_object(), *subject = json_object_new_object(), *subjects = json_object_new_array();
    put(ref, "apiGroup", "rbac.authorization.k8s.io");
    put(ref, "kind", "Role");
    put(ref, "name", role);
    put(subject, "kind", "ServiceAccount");
    put(subject, "name", sa);
    put(subject, "namespace", o->ns);
    json_object_array_add(subjects, subject);
    json_object_object_add(rb, "roleRef", ref);
    json_object_object_add(rb, "subjects", subjects);
    docs[n++] = rb;

    /* init with the settings, the minimum being the leaves' real interval. */
    const char *args[MAX_ARGS];
    char bufs[8][32];
    size_t a = 0;
    const char *common[] = {"--store", "secrets", "--namespace", o->ns, "--prefix", o->prefix};
    args[a++] = "certs", args[a++] = "init";
    for (size_t i = 0; i < 6; i++)
        args[a++] = common[i];
    const struct {
        const char *flag;
        int64_t v;
    } durs[] = {{"--ca-duration", s.ca_duration},         {"--ca-expiry-window", s.ca_window},
                {"--node-duration", s.node_duration},     {"--node-expiry-window", s.node_window},
                {"--client-duration", s.client_duration}, {"--client-expiry-window", s.client_window},
                {"--minimum-duration", s.minimum}};
    for (size_t i = 0; i < sizeof(durs) / sizeof(durs[0]); i++) {
        if (user_ca && i < 2)
            continue;
        args[a++] = durs[i].flag;
        args[a++] = kjoin_duration_format(durs[i].v * 1000, bufs[i], sizeof(bufs[i]));
    }
    args[a++] = "--key-type";
    args[a++] = kjoin_key_type_name(s.key_type);
    if (user_ca)
        args[a++] = "--ca-secret", args[a++] = o->ca_secret;
    char job_name[240];
    snprintf(job_name, sizeof(job_name), "%s-certs-init", o->prefix);
    json_object *job = object("batch/v1", "Job", job_name, o->ns, o->prefix, 4, true);
    json_object_object_add(job, "spec", job_spec(sa, o->image, args, a));
    docs[n++] = job;

    /* The CronJobs: rotate exits 10 when it rotated, which is success here. */
    const char *rot[MAX_ARGS] = {"certs", "rotate", "--only", "leaves", "--rotated-exit-code", "0"};
    size_t r_n = 6;
    for (size_t i = 0; i < 6; i++)
        rot[r_n++] = common[i];
    char cj_name[240];
    snprintf(cj_name, sizeof(cj_name), "%s-certs-rotate-leaves", o->prefix);
    docs[n++] = cronjob(o, cj_name, cron_leaves, sa, rot, r_n);
    if (!user_ca) { /* the RFC: no CA CronJob for a CA the user provides */
        rot[3] = "ca";
        snprintf(cj_name, sizeof(cj_name), "%s-certs-rotate-ca", o->prefix);
        docs[n++] = cronjob(o, cj_name, cron_ca, sa, rot, r_n);
    }
    *out = kjoin_yaml__from_json(docs, n);
    for (size_t i = 0; i < n; i++)
        json_object_put(docs[i]);
    return *out ? KJOIN_OK : kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
}
