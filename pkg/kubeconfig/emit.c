#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include <kjoin/private/kubeconfig.h>
#include <kjoin/private/util.h>

#include "../yamldoc/yamldoc.h"

/* client-go writes kubeconfigs with sigs.k8s.io/yaml, whose encoder (go-yaml
 * v2) double-quotes a string exactly when its resolver would read it plain
 * as something else (kjoin_yaml__resolve): the same rule here makes the
 * same bytes, so a token "45mq9d.h283..." is plain there, and so here. */
static bool needs_quotes(const char *v) { return kjoin_yaml__resolve(v, NULL) != KJOIN_YAML_STRING; }

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
    bool certified = !cfg->token && !cfg->username;
    KJOIN_AUTO_FREE char *cert_b64 = certified ? kjoin_b64_encode(cfg->cert_pem, cfg->cert_len, false) : NULL;
    char *key_b64 = certified ? kjoin_b64_encode(cfg->key_pem, cfg->key_len, false) : NULL;
    if (!context || !ca_b64 || (certified && (!cert_b64 || !key_b64))) {
        kjoin_free_wiped_str(key_b64);
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    snprintf(context, ctx_len, "%s@%s", user, cluster);

    kjoin_yaml_sink s = {0};
    yaml_emitter_t e;
    const char *context_kv[] = {"cluster", cluster, "user", user};
    const char *token_kv[] = {"token", cfg->token};
    const char *basic_kv[] = {"password", cfg->password, "username", cfg->username};
    const char *cert_kv[] = {"client-certificate-data", cert_b64, "client-key-data", key_b64};
    bool ok = open_config(&e, &s, cluster, ca_b64, cfg->server) &&
              named_list(&e, "contexts", "context", context, context_kv, 4) &&
              pair(&e, "current-context", context) && kind_config(&e) &&
              named_list(&e, "users", "user", user, cfg->token ? token_kv : certified ? cert_kv : basic_kv,
                         cfg->token ? 2 : 4) && map_end(&e);
    kjoin_free_wiped_str(key_b64);
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
