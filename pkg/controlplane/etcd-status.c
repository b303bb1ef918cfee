/* What a joining etcd member is doing, read from what others say of it:
 * etcd's status (its gateway's JSON), the kubelet's Pod of it (the API
 * server's JSON) and etcd's own fsync figures (its Prometheus text). All
 * three are untrusted: every field is checked, every text made printable. */
#include <kjoin/private/controlplane.h>

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include <kjoin/private/util.h>
#include <kjoin/util.h>

/* The one JSON object that is all of len bytes, or NULL. */
static json_object *object_whole(const char *text, size_t len)
{
    json_object *j = kjoin_json_whole(text, len);
    if (!json_object_is_type(j, json_type_object)) {
        json_object_put(j);
        j = NULL;
    }
    return j;
}

/* A uint64 as etcd's gateway writes it: a decimal string (or a number). */
static bool uint64_of(json_object *o, const char *key, uint64_t *out)
{
    json_object *v = kjoin_json_at(o, key);
    const char *s = json_object_is_type(v, json_type_string) || json_object_is_type(v, json_type_int)
                        ? json_object_get_string(v)
                        : NULL;
    char *end;
    *out = 0;
    if (!s || !*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 20)
        return false;
    errno = 0;
    unsigned long long n = strtoull(s, &end, 10);
    if (errno || *end)
        return false;
    *out = n;
    return true;
}

kjoin_code kjoin_etcd_status_parse(const char *json, size_t len, kjoin_etcd_status *out, kjoin_err *err)
{
    json_object *j = object_whole(json, len);
    uint64_t member = 0, leader = 0;
    memset(out, 0, sizeof(*out));
    bool ok = j && uint64_of(kjoin_json_obj(j, "header"), "member_id", &member) && member &&
              uint64_of(j, "raftIndex", &out->raft_index);
    if (ok) {
        uint64_of(j, "leader", &leader); /* none while an election runs */
        if (!uint64_of(j, "raftAppliedIndex", &out->applied_index)) /* etcd 3.3's has none: its log's */
            out->applied_index = out->raft_index;
        json_object *l = kjoin_json_at(j, "isLearner");
        out->learner = json_object_is_type(l, json_type_boolean) && json_object_get_boolean(l);
        snprintf(out->member_id, sizeof(out->member_id), "%" PRIu64, member);
        if (leader)
            snprintf(out->leader_id, sizeof(out->leader_id), "%" PRIu64, leader);
    }
    json_object_put(j);
    return ok ? KJOIN_OK : kjoin_err_set(err, KJOIN_E_API, "etcd's status answer is not one kjoin reads");
}

/* "reason: message" of a container state's member (waiting, terminated). */
static bool state_why(json_object *state, const char *which, char *why, size_t cap)
{
    json_object *s = kjoin_json_obj(state, which), *code = kjoin_json_at(s, "exitCode");
    if (!s)
        return false;
    const char *reason = kjoin_json_str(s, "reason"), *message = kjoin_json_str(s, "message");
    char exit[32] = "";
    if (json_object_is_type(code, json_type_int))
        snprintf(exit, sizeof(exit), "exit code %" PRId64, json_object_get_int64(code));
    snprintf(why, cap, "%s%s%s%s%s", reason ? reason : which, *exit ? ", " : "", exit, message && *message ? ": " : "",
             message ? message : "");
    return true;
}

bool kjoin_pod_not_running(const char *json, size_t len, const char *container, char *why, size_t cap)
{
    json_object *j = object_whole(json, len), *status = kjoin_json_obj(j, "status"),
                *list = kjoin_json_at(status, "containerStatuses"), *mine = NULL;
    char raw[1024] = "";
    bool not_running = false;
    *why = '\0';
    for (size_t i = 0; json_object_is_type(list, json_type_array) && i < json_object_array_length(list); i++) {
        json_object *c = json_object_array_get_idx(list, i);
        const char *name = kjoin_json_str(c, "name");
        if (name && !strcmp(name, container))
            mine = c;
    }
    if (mine) {
        json_object *state = kjoin_json_obj(mine, "state"), *last = kjoin_json_obj(mine, "lastState");
        if (kjoin_json_obj(state, "running")) {
            not_running = false;
        } else if (state_why(state, "waiting", raw, sizeof(raw))) {
            /* a container restarted: why it ended last is the news, not the back-off */
            char ended[512];
            if (state_why(last, "terminated", ended, sizeof(ended)))
                snprintf(raw + strlen(raw), sizeof(raw) - strlen(raw), " (it last ended: %s)", ended);
            not_running = true;
        } else {
            not_running = state_why(state, "terminated", raw, sizeof(raw));
        }
    } else if (j) {
        const char *phase = kjoin_json_str(status, "phase");
        snprintf(raw, sizeof(raw), "the Pod is %s and its container %s has no status yet",
                 phase && *phase ? phase : "without a phase", container);
        not_running = true;
    }
    json_object_put(j);
    if (not_running)
        kjoin_mask_keys(kjoin_printable(why, cap, raw, false));
    return not_running;
}

/* The value of the sample named name (no labels) in Prometheus' text. */
static bool sample(const char *text, size_t len, const char *name, double *out)
{
    size_t n = strlen(name);
    for (const char *p = text, *end = text + len; p < end;) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        size_t line = eol ? (size_t)(eol - p) : (size_t)(end - p);
        if (line > n + 1 && line < 128 && !memcmp(p, name, n) && p[n] == ' ') {
            char v[128], *stop;
            memcpy(v, p + n + 1, line - n - 1);
            v[line - n - 1] = '\0';
            errno = 0;
            double d = strtod(v, &stop);
            if (!errno && stop != v && (*stop == '\0' || *stop == ' ') && d >= 0 && d < 1e300) {
                *out = d;
                return true;
            }
            return false;
        }
        p += line + 1;
    }
    return false;
}

double kjoin_etcd_fsync_mean_ms(const char *text, size_t len)
{
    double sum, count;
    if (!sample(text, len, "etcd_disk_wal_fsync_duration_seconds_sum", &sum) ||
        !sample(text, len, "etcd_disk_wal_fsync_duration_seconds_count", &count) || count < 1)
        return -1;
    return sum * 1000 / count;
}

bool kjoin_etcd_progress_line(const kjoin_etcd_status *mine, const kjoin_etcd_status *leader, const uint64_t *last,
                              long secs, char *line, size_t cap)
{
    uint64_t of = leader->raft_index ? leader->raft_index : 1,
             done = mine->applied_index < of ? mine->applied_index : of;
    /* (in long double: done * 100 overflows near the largest indices; 100% only when caught up) */
    int pct = done >= of ? 100 : (int)((long double)done * 100 / (long double)of);
    snprintf(line, cap, "The new member has applied %" PRIu64 " of the leader's %" PRIu64 " entries (%d%%, %ld s)",
             mine->applied_index, leader->raft_index, pct < 100 || done >= of ? pct : 99, secs);
    /* behind, and no further than at the last line */
    return last && mine->applied_index <= *last && mine->applied_index < leader->raft_index;
}
