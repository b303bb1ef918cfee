#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>

#include <kjoin/kubeconfig.h>
#include <kjoin/util.h>

#include "../yamldoc/yamldoc.h"

/* ---- which strings client-go quotes --------------------------------------
 * client-go writes kubeconfigs with sigs.k8s.io/yaml, whose encoder (go-yaml
 * v2, encode.go stringv and resolve.go) double-quotes a string exactly when
 * its resolver would read it plain as something else: null, a bool, an int,
 * a float, a timestamp, or a base-60 float. The same rule here makes the
 * same bytes: a token "45mq9d.h283..." is plain there, and so here. */

static bool matches(const char *pattern, const char *s)
{
    regex_t re;
    if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0)
        return false;
    bool m = regexec(&re, s, 0, NULL, 0) == 0;
    regfree(&re);
    return m;
}

/* Go's strconv.ParseInt(s, 0, 64) or ParseUint(s, 0, 64) succeeding. */
static bool go_int(const char *s)
{
    bool neg = *s == '-', sign = *s == '-' || *s == '+';
    const char *p = s + sign;
    unsigned base = 10;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        base = 16, p += 2;
    else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B'))
        base = 2, p += 2;
    else if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O'))
        base = 8, p += 2;
    else if (p[0] == '0' && p[1])
        base = 8, p += 1;
    if (!*p)
        return false;
    uint64_t v = 0;
    for (; *p; p++) {
        unsigned d = *p >= '0' && *p <= '9' ? (unsigned)(*p - '0')
                     : *p >= 'a' && *p <= 'f' ? (unsigned)(*p - 'a' + 10)
                     : *p >= 'A' && *p <= 'F' ? (unsigned)(*p - 'A' + 10) : 99;
        if (d >= base || v > (UINT64_MAX - d) / base)
            return false;
        v = v * base + d;
    }
    /* ParseInt takes a sign within int64; ParseUint no sign, within uint64. */
    return neg ? v <= (uint64_t)INT64_MAX + 1 : sign ? v <= (uint64_t)INT64_MAX : true;
}

/* Go's strconv.ParseFloat succeeding on a decimal form: only an overflow
 * fails (an underflow is 0). */
static bool go_float(const char *s)
{
    errno = 0;
    double d = strtod(s, NULL);
    return !(errno == ERANGE && isinf(d));
}

static bool leap(long y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

/* go-yaml's parseTimestamp: YYYY-M-D, then optionally [Tt]H:M:S[.frac] with a
 * zone (Z or +hh:mm), or " H:M:S[.frac]" without one, each field in range. */
static bool go_timestamp(const char *s)
{
    static const char date[] = "^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}";
    static const char frac[] = "(\\.[0-9]+)?";
    char with_zone[200], no_zone[200], date_only[64];
    snprintf(date_only, sizeof(date_only), "%s$", date);
    snprintf(with_zone, sizeof(with_zone), "%s[Tt][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}%s(Z|[-+][0-9]{2}:[0-9]{2})$", date, frac);
    snprintf(no_zone, sizeof(no_zone), "%s [0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}%s$", date, frac);
    if (!matches(date_only, s) && !matches(with_zone, s) && !matches(no_zone, s))
        return false;
    long y = strtol(s, NULL, 10), m = strtol(s + 5, NULL, 10), d = strtol(strchr(s + 5, '-') + 1, NULL, 10);
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12 || d < 1 || d > days[m - 1] + (m == 2 && leap(y)))
        return false;
    const char *t = s + strcspn(s, "Tt ");
    if (!*t)
        return true;
    long hh = strtol(t + 1, NULL, 10), mm = strtol(strchr(t, ':') + 1, NULL, 10),
         ss = strtol(strchr(strchr(t, ':') + 1, ':') + 1, NULL, 10);
    const char *zone = strpbrk(t + 1, "Z+-");
    if (zone && *zone != 'Z' && (strtol(zone + 1, NULL, 10) > 23 || strtol(zone + 4, NULL, 10) > 59))
        return false; /* time.Parse: a zone out of range */
    return hh <= 23 && mm <= 59 && ss <= 59;
}

/* Whether go-yaml v2 would write v double-quoted (see above). */
static bool needs_quotes(const char *v)
{
    static const char *const special[] = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON",
                                          "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF",
                                          "", "~", "null", "Null", "NULL", ".nan", ".NaN", ".NAN", ".inf", ".Inf",
                                          ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"};
    char c = v[0];
    if ((c >= '0' && c <= '9') || c == '+' || c == '-') {
        /* base-60 floats are quoted whatever the resolver says */
        if (strchr(v, ':') && matches("^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\\.[0-9_]*)?$", v))
            return true;
    }
    if (!(strchr("yYnNtTfFoO~.", c) || (c >= '0' && c <= '9') || c == '+' || c == '-') || !c) {
        return !c; /* the resolver looks only at these starts; "" is null */
    }
    for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++)
        if (!strcmp(v, special[i]))
            return true;
    if (c == '.')
        return matches("^\\.[0-9]+([eE][-+]?[0-9]+)?$", v) && go_float(v);
    if (!((c >= '0' && c <= '9') || c == '+' || c == '-'))
        return false;
    if (go_timestamp(v))
        return true;
    char plain[1024];
    size_t o = 0;
    for (const char *p = v; *p && o + 1 < sizeof(plain); p++)
        if (*p != '_')
            plain[o++] = *p;
    plain[o] = '\0';
    if (strlen(v) >= sizeof(plain))
        return false; /* longer than any number */
    if (go_int(plain))
        return true;
    return matches("^[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?$", plain) && go_float(plain);
}

static bool scalar(yaml_emitter_t *e, const char *v)
{
    yaml_event_t ev;
    yaml_scalar_style_t style =
        needs_quotes(v) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_PLAIN_SCALAR_STYLE;
    return yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)v, (int)strlen(v), 1, 1,
                                        style) &&
           yaml_emitter_emit(e, &ev);
}

static bool map_start(yaml_emitter_t *e, bool flow)
{
    yaml_event_t ev;
    return yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
                                               flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE) &&
           yaml_emitter_emit(e, &ev);
}

static bool map_end(yaml_emitter_t *e)
{
    yaml_event_t ev;
    return yaml_mapping_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev);
}

static bool seq_start(yaml_emitter_t *e)
{
    yaml_event_t ev;
    return yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE) &&
           yaml_emitter_emit(e, &ev);
}

static bool seq_end(yaml_emitter_t *e)
{
    yaml_event_t ev;
    return yaml_sequence_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev);
}

static bool pair(yaml_emitter_t *e, const char *k, const char *v) { return scalar(e, k) && scalar(e, v); }

static bool inner_map(yaml_emitter_t *e, const char *kind, const char *const *kv, size_t nkv)
{
    bool ok = scalar(e, kind) && map_start(e, false);
    for (size_t i = 0; ok && i < nkv; i += 2)
        ok = pair(e, kv[i], kv[i + 1]);
    return ok && map_end(e);
}

/* "<key>:" with a list of one entry holding "name" and a "<kind>" mapping,
 * keys in sorted order as kubectl writes them. */
static bool named_list(yaml_emitter_t *e, const char *key, const char *kind, const char *name,
                       const char *const *kv, size_t nkv)
{
    bool kind_first = strcmp(kind, "name") < 0;
    return scalar(e, key) && seq_start(e) && map_start(e, false) &&
           (!kind_first || inner_map(e, kind, kv, nkv)) && pair(e, "name", name) &&
           (kind_first || inner_map(e, kind, kv, nkv)) && map_end(e) && seq_end(e);
}

/* A plain scalar as it is (null, ""). */
static bool raw(yaml_emitter_t *e, const char *v, yaml_scalar_style_t style)
{
    yaml_event_t ev;
    return yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)v, (int)strlen(v), 1, 1, style) &&
           yaml_emitter_emit(e, &ev);
}

static bool begin(yaml_emitter_t *e, kjoin_yaml_sink *s)
{
    yaml_event_t ev;
    if (!yaml_emitter_initialize(e))
        return false;
    yaml_emitter_set_output(e, kjoin_yaml__sink_write, s);
    yaml_emitter_set_width(e, -1);
    yaml_emitter_set_unicode(e, 1);
    return yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) && yaml_emitter_emit(e, &ev) &&
           yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) && yaml_emitter_emit(e, &ev);
}

/* Ends the document and hands the bytes over; the emitter's own buffers,
 * which held them too, are wiped before they are freed. */
static kjoin_code finish(yaml_emitter_t *e, kjoin_yaml_sink *s, bool ok, char **out, size_t *out_len, kjoin_err *err)
{
    yaml_event_t ev;
    ok = ok && yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(e, &ev) &&
         yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev);
    if (e->buffer.start)
        OPENSSL_cleanse(e->buffer.start, (size_t)(e->buffer.end - e->buffer.start));
    if (e->raw_buffer.start)
        OPENSSL_cleanse(e->raw_buffer.start, (size_t)(e->raw_buffer.end - e->raw_buffer.start));
    yaml_emitter_delete(e);
    if (!ok || s->failed) {
        kjoin_free_wiped(s->buf, s->len);
        return kjoin_err_set(err, KJOIN_E_OTHER, "cannot emit the kubeconfig YAML");
    }
    *out = s->buf;
    if (out_len)
        *out_len = s->len;
    return KJOIN_OK;
}

/* A kubeconfig's opening: the document, apiVersion, and its one cluster
 * (without certificate-authority-data when ca_b64 is empty: kubelet and
 * kubectl then use the system roots). */
static bool open_config(yaml_emitter_t *e, kjoin_yaml_sink *s, const char *cluster, const char *ca_b64, const char *server)
{
    const char *kv[] = {"certificate-authority-data", ca_b64, "server", server};
    size_t skip = *ca_b64 ? 0 : 2;
    return begin(e, s) && map_start(e, false) && pair(e, "apiVersion", "v1") &&
           named_list(e, "clusters", "cluster", cluster, kv + skip, 4 - skip);
}

/* "kind: Config". client-go wrote "preferences: {}" after it until 1.33;
 * the newest kubeadm, kubelet and kubectl leave the empty preferences out,
 * and so does kjoin (the e2e suite compares with the newest kubeadm). */
static bool kind_config(yaml_emitter_t *e)
{
    return pair(e, "kind", "Config");
}

kjoin_code kjoin_kubeconfig_emit_bootstrap(const kjoin_bootstrap_config *cfg, char **out,
                                           size_t *out_len, kjoin_err *err)
{
    const char *cluster = cfg->cluster_name ? cfg->cluster_name : "kubernetes";
    const char *user = cfg->user ? cfg->user : cfg->token ? "tls-bootstrap-token-user" : cfg->username;
    size_t ctx_len = strlen(user) + 1 + strlen(cluster) + 1;
    KJOIN_AUTO_FREE char *context = malloc(ctx_len);
    KJOIN_AUTO_FREE char *ca_b64 = kjoin_b64_encode(cfg->ca_pem, cfg->ca_len, false);
    if (!context || !ca_b64)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    snprintf(context, ctx_len, "%s@%s", user, cluster);

    kjoin_yaml_sink s = {0};
    yaml_emitter_t e;
    const char *context_kv[] = {"cluster", cluster, "user", user};
    const char *token_kv[] = {"token", cfg->token};
    const char *basic_kv[] = {"password", cfg->password, "username", cfg->username};
    bool ok = open_config(&e, &s, cluster, ca_b64, cfg->server) &&
              named_list(&e, "contexts", "context", context, context_kv, 4) &&
              pair(&e, "current-context", context) && kind_config(&e) &&
              (cfg->token ? named_list(&e, "users", "user", user, token_kv, 2)
                           : named_list(&e, "users", "user", user, basic_kv, 4)) && map_end(&e);
    return finish(&e, &s, ok, out, out_len, err);
}

kjoin_code kjoin_kubeconfig_emit_cluster_info(const char *server, const char *ca_pem, size_t ca_len, char **out,
                                              size_t *out_len, kjoin_err *err)
{
    KJOIN_AUTO_FREE char *ca_b64 = kjoin_b64_encode(ca_pem, ca_len, false);
    if (!ca_b64)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    kjoin_yaml_sink s = {0};
    yaml_emitter_t e;
    bool ok = open_config(&e, &s, "", ca_b64, server) && scalar(&e, "contexts") &&
              raw(&e, "null", YAML_PLAIN_SCALAR_STYLE) && scalar(&e, "current-context") &&
              raw(&e, "", YAML_DOUBLE_QUOTED_SCALAR_STYLE) && kind_config(&e) && scalar(&e, "users") &&
              raw(&e, "null", YAML_PLAIN_SCALAR_STYLE) && map_end(&e);
    return finish(&e, &s, ok, out, out_len, err);
}

kjoin_code kjoin_kubeconfig_emit_kubelet(const char *server, const char *ca_pem, size_t ca_len, const char *pem_path,
                                         char **out, size_t *out_len, kjoin_err *err)
{
    KJOIN_AUTO_FREE char *ca_b64 = kjoin_b64_encode(ca_pem, ca_len, false);
    if (!ca_b64)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    kjoin_yaml_sink s = {0};
    yaml_emitter_t e;
    const char *context_kv[] = {"cluster", "default-cluster", "namespace", "default", "user", "default-auth"};
    const char *user_kv[] = {"client-certificate", pem_path, "client-key", pem_path};
    bool ok = open_config(&e, &s, "default-cluster", ca_b64, server) &&
              named_list(&e, "contexts", "context", "default-context", context_kv, 6) &&
              pair(&e, "current-context", "default-context") && kind_config(&e) &&
              named_list(&e, "users", "user", "default-auth", user_kv, 4) && map_end(&e);
    return finish(&e, &s, ok, out, out_len, err);
}
