/* The approver's Lease, read and written as client-go's leader election
 * does (LeaseLock): holderIdentity, leaseDurationSeconds, acquireTime,
 * renewTime, leaseTransitions; an update names the resourceVersion read. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <kjoin/private/util.h>

#include "internal.h"

void kjoin_approver__micro_time(int64_t unix_ms, char out[40])
{
    time_t s = (time_t)(unix_ms / 1000);
    struct tm tm;
    gmtime_r(&s, &tm);
    char day[24];
    strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, 40, "%s.%06dZ", day, (int)(unix_ms % 1000) * 1000);
}

static bool copy_str(json_object *o, const char *key, char *out, size_t cap)
{
    json_object *v = NULL;
    out[0] = '\0';
    if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
        return true;
    if (!json_object_is_type(v, json_type_string) || strlen(json_object_get_string(v)) >= cap)
        return false;
    snprintf(out, cap, "%s", json_object_get_string(v));
    return true;
}

static bool copy_int(json_object *o, const char *key, int64_t *out)
{
    json_object *v = NULL;
    *out = 0;
    if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
        return true;
    if (!json_object_is_type(v, json_type_int))
        return false;
    *out = json_object_get_int64(v);
    return *out >= 0 && *out < (1LL << 31);
}

bool kjoin_approver__lease_parse(const char *json, size_t len, lease_record *out)
{
    json_tokener *tok = json_tokener_new_ex(16);
    json_object *o = tok && len < (1 << 20) ? json_tokener_parse_ex(tok, json, (int)len) : NULL, *kind = NULL,
                *meta = NULL, *spec = NULL;
    bool ok = o && json_object_object_get_ex(o, "kind", &kind) && json_object_is_type(kind, json_type_string) &&
              !strcmp(json_object_get_string(kind), "Lease") && json_object_object_get_ex(o, "metadata", &meta) &&
              copy_str(meta, "resourceVersion", out->resource_version, sizeof(out->resource_version));
    if (ok && json_object_object_get_ex(o, "spec", &spec) && json_object_is_type(spec, json_type_object))
        ok = copy_str(spec, "holderIdentity", out->holder, sizeof(out->holder)) &&
             copy_int(spec, "leaseDurationSeconds", &out->duration_s) &&
             copy_str(spec, "acquireTime", out->acquire_time, sizeof(out->acquire_time)) &&
             copy_str(spec, "renewTime", out->renew_time, sizeof(out->renew_time)) &&
             copy_int(spec, "leaseTransitions", &out->transitions);
    else if (ok)
        out->holder[0] = out->acquire_time[0] = out->renew_time[0] = '\0', out->duration_s = out->transitions = 0;
    json_object_put(o);
    json_tokener_free(tok);
    return ok;
}

char *kjoin_approver__lease_body(const char *ns, const char *name, const lease_record *r)
{
    json_object *o = json_object_new_object(), *meta = json_object_new_object(), *spec = json_object_new_object();
    json_object_object_add(o, "apiVersion", json_object_new_string("coordination.k8s.io/v1"));
    json_object_object_add(o, "kind", json_object_new_string("Lease"));
    json_object_object_add(meta, "name", json_object_new_string(name));
    json_object_object_add(meta, "namespace", json_object_new_string(ns));
    if (*r->resource_version)
        json_object_object_add(meta, "resourceVersion", json_object_new_string(r->resource_version));
    json_object_object_add(o, "metadata", meta);
    json_object_object_add(spec, "holderIdentity", json_object_new_string(r->holder));
    json_object_object_add(spec, "leaseDurationSeconds", json_object_new_int64(r->duration_s));
    if (*r->acquire_time)
        json_object_object_add(spec, "acquireTime", json_object_new_string(r->acquire_time));
    if (*r->renew_time)
        json_object_object_add(spec, "renewTime", json_object_new_string(r->renew_time));
    json_object_object_add(spec, "leaseTransitions", json_object_new_int64(r->transitions));
    json_object_object_add(o, "spec", spec);
    const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
    char *body = text ? strdup(text) : NULL;
    json_object_put(o);
    return body;
}

bool kjoin_approver__lease_next(const lease_record *seen, int64_t observed_ms, int64_t now_ms, const char *identity,
                                int64_t duration_s, const char *stamp, lease_record *want)
{
    memset(want, 0, sizeof(*want));
    snprintf(want->holder, sizeof(want->holder), "%s", identity);
    want->duration_s = duration_s;
    snprintf(want->acquire_time, sizeof(want->acquire_time), "%s", stamp);
    snprintf(want->renew_time, sizeof(want->renew_time), "%s", stamp);
    if (!seen)
        return true; /* no Lease yet: made with this instance holding it */
    bool mine = !strcmp(seen->holder, identity);
    int64_t held_ms = (seen->duration_s > 0 ? seen->duration_s : 1) * 1000;
    if (*seen->holder && !mine && observed_ms + held_ms > now_ms)
        return false; /* another holds it, and renewed it within its duration as this instance saw */
    if (mine) { /* a renewal: the same tenure */
        snprintf(want->acquire_time, sizeof(want->acquire_time), "%s", seen->acquire_time);
        want->transitions = seen->transitions;
    } else { /* taken over: another tenure */
        want->transitions = seen->transitions + 1;
    }
    snprintf(want->resource_version, sizeof(want->resource_version), "%s", seen->resource_version);
    return true;
}

bool kjoin_approver__lease_current(const lease_record *r, int64_t now_s)
{
    struct tm tm = {0};
    const char *end = *r->renew_time ? strptime(r->renew_time, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
    int64_t renewed = end ? (int64_t)timegm(&tm) : 0;
    /* (+1: renewTime's fraction, dropped here) */
    return *r->holder && renewed > 0 && now_s - renewed <= r->duration_s + 1;
}
