/* A kubeconfig's credentials, resolved as kubectl resolves them. */
#include <libgen.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include <kjoin/private/kubeapi.h>
#include <kjoin/private/kubeconfig.h>
#include <kjoin/private/util.h>

#include "../yamldoc/yamldoc.h"

#define BAD KJOIN_E_USAGE /* a kubeconfig handed to a command is the user's input */
#define PATH_MAX_LEN 4096

static void free_secret(char *p, size_t len)
{
    kjoin_free_wiped(p, len);
}

void kjoin_kubeapi_config_release(kjoin_kubeapi_config *c)
{
    if (!c)
        return;
    free(c->path);
    free(c->context);
    free(c->server);
    free(c->ca_pem);
    free(c->cert_pem);
    free_secret(c->key_pem, c->key_len);
    free_secret(c->token, c->token ? strlen(c->token) : 0);
    memset(c, 0, sizeof(*c));
}

/* A string value that may be absent (*out NULL); where names it in errors. */
static kjoin_code get_str(kjoin_yaml *y, yaml_node_t *map, const char *where, const char *key, const char **out,
                          kjoin_err *err)
{
    yaml_node_t *n = NULL;
    kjoin_code rc = kjoin_yaml__get(y, map, key, &n, BAD, err);
    *out = NULL;
    if (rc || kjoin_yaml__is_null(n))
        return rc;
    if (!(*out = kjoin_yaml__str(n)))
        return kjoin_err_set(err, BAD, "%s.%s at line %zu is not a string", where, key, KJOIN_YAML_LINE(n));
    return KJOIN_OK;
}

/* The "what" of the entry of list "section" named name. */
static kjoin_code named_entry(kjoin_yaml *y, const char *section, const char *field, const char *name,
                              yaml_node_t **out, kjoin_err *err)
{
    yaml_node_t *seq = NULL, *found = NULL;
    kjoin_code rc = kjoin_yaml__get(y, kjoin_yaml__root(y), section, &seq, BAD, err);
    if (rc)
        return rc;
    if (seq && !kjoin_yaml__is_null(seq) && seq->type != YAML_SEQUENCE_NODE)
        return kjoin_err_set(err, BAD, "kubeconfig: %s at line %zu is not a list", section, KJOIN_YAML_LINE(seq));
    for (size_t i = 0; i < kjoin_yaml__len(seq); i++) {
        yaml_node_t *entry = kjoin_yaml__item(y, seq, i);
        const char *n = NULL;
        if ((rc = get_str(y, entry, section, "name", &n, err)))
            return rc;
        if (!n || strcmp(n, name) != 0)
            continue;
        if (found)
            return kjoin_err_set(err, BAD, "kubeconfig: two %s are named \"%s\"", section, name);
        if ((rc = kjoin_yaml__get(y, entry, field, &found, BAD, err)))
            return rc;
        if (!found || found->type != YAML_MAPPING_NODE)
            return kjoin_err_set(err, BAD, "kubeconfig: %s entry \"%s\" has no %s mapping", section, name, field);
    }
    if (!found)
        return kjoin_err_set(err, BAD, "kubeconfig: no %.8s named \"%s\"", field, name);
    *out = found;
    return KJOIN_OK;
}

/* The bytes of inline base64 data or of a file relative to dir. what names the
 * field for messages. *out NULL when neither is set. */
static kjoin_code data_or_file(const char *data, const char *file, const char *dir, const char *what,
                               char **out, size_t *out_len, kjoin_err *err)
{
    *out = NULL;
    *out_len = 0;
    kjoin_err inner;
    if (data && file)
        return kjoin_err_set(err, BAD, "kubeconfig: both %s-data and %s are set", what, what);
    if (data) {
        unsigned char *bytes = NULL;
        if (kjoin_b64_decode(data, strlen(data), false, &bytes, out_len, &inner))
            return kjoin_err_set(err, BAD, "kubeconfig: %s-data: %s", what, inner.msg);
        *out = (char *)bytes;
        return KJOIN_OK;
    }
    if (!file)
        return KJOIN_OK;
    if (!dir && file[0] != '/')
        return kjoin_err_set(err, BAD, "kubeconfig: %s \"%s\" is a relative path, but the kubeconfig has no folder",
                             what, file);
    char full[PATH_MAX_LEN];
    int n = snprintf(full, sizeof(full), "%s%s%s", file[0] == '/' ? "" : dir, file[0] == '/' ? "" : "/", file);
    if (n < 0 || (size_t)n >= sizeof(full))
        return kjoin_err_set(err, BAD, "kubeconfig: the %s path is longer than %zu bytes", what, sizeof(full) - 1);
    if (kjoin_file_read(full, KJOIN_KUBECONFIG_MAX, out, out_len, &inner))
        return kjoin_err_set(err, BAD, "kubeconfig: %s: %s", what, inner.msg);
    return KJOIN_OK;
}

static kjoin_code read_cluster(kjoin_yaml *y, yaml_node_t *cl, const char *dir, kjoin_kubeapi_config *c,
                               kjoin_err *err)
{
    const char *server, *ca, *ca_file, *insecure, *proxy;
    kjoin_code rc;
    if ((rc = get_str(y, cl, "cluster", "server", &server, err)) ||
        (rc = get_str(y, cl, "cluster", "certificate-authority-data", &ca, err)) ||
        (rc = get_str(y, cl, "cluster", "certificate-authority", &ca_file, err)) ||
        (rc = get_str(y, cl, "cluster", "insecure-skip-tls-verify", &insecure, err)) ||
        (rc = get_str(y, cl, "cluster", "proxy-url", &proxy, err)))
        return rc;
    if (!server || strncmp(server, "https://", 8) != 0 || !server[8])
        return kjoin_err_set(err, BAD, "kubeconfig: the cluster's server must be an https:// URL");
    if (insecure && strcmp(insecure, "false") != 0)
        return kjoin_err_set(err, BAD, "kubeconfig: the cluster sets insecure-skip-tls-verify, which kjoin refuses");
    if (proxy)
        return kjoin_err_set(err, BAD, "kubeconfig: the cluster sets proxy-url, which kjoin does not support "
                                       "(use HTTPS_PROXY)");
    if (!(c->server = strdup(server)))
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    size_t n = strlen(c->server);
    while (n > 8 && c->server[n - 1] == '/')
        c->server[--n] = '\0';
    return data_or_file(ca, ca_file, dir, "certificate-authority", &c->ca_pem, &c->ca_len, err);
}

static kjoin_code read_user(kjoin_yaml *y, yaml_node_t *u, const char *dir, kjoin_kubeapi_config *c, kjoin_err *err)
{
    static const char *const refused[] = {"exec", "auth-provider", "username", "password", "as", "as-groups"};
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        yaml_node_t *n = NULL;
        kjoin_code rc = kjoin_yaml__get(y, u, refused[i], &n, BAD, err);
        if (rc)
            return rc;
        if (n && !kjoin_yaml__is_null(n))
            return kjoin_err_set(err, BAD, "kubeconfig: the user sets \"%s\" (line %zu), which kjoin does not "
                                           "support; use a client certificate or a bearer token",
                                 refused[i], KJOIN_YAML_LINE(n));
    }
    const char *cert, *cert_file, *key, *key_file, *token, *token_file;
    kjoin_code rc;
    if ((rc = get_str(y, u, "user", "client-certificate-data", &cert, err)) ||
        (rc = get_str(y, u, "user", "client-certificate", &cert_file, err)) ||
        (rc = get_str(y, u, "user", "client-key-data", &key, err)) ||
        (rc = get_str(y, u, "user", "client-key", &key_file, err)) ||
        (rc = get_str(y, u, "user", "token", &token, err)) ||
        (rc = get_str(y, u, "user", "tokenFile", &token_file, err)))
        return rc;
    if ((rc = data_or_file(cert, cert_file, dir, "client-certificate", &c->cert_pem, &c->cert_len, err)) ||
        (rc = data_or_file(key, key_file, dir, "client-key", &c->key_pem, &c->key_len, err)))
        return rc;
    if (!c->cert_pem != !c->key_pem)
        return kjoin_err_set(err, BAD, "kubeconfig: the user has a client %s without its %s",
                             c->cert_pem ? "certificate" : "key", c->cert_pem ? "key" : "certificate");
    if (token && token_file)
        return kjoin_err_set(err, BAD, "kubeconfig: the user sets both token and tokenFile");
    if (token && !(c->token = strdup(token)))
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    if (token_file) {
        char *text = NULL;
        size_t len = 0;
        if ((rc = data_or_file(NULL, token_file, dir, "tokenFile", &text, &len, err)))
            return rc;
        size_t n = strcspn(text, "\r\n"); /* the first line, as client-go trims it */
        OPENSSL_cleanse(text + n, len - n);
        c->token = text;
        if (!*c->token)
            return kjoin_err_set(err, BAD, "kubeconfig: tokenFile %s is empty", token_file);
    }
    return KJOIN_OK;
}

kjoin_code kjoin_kubeapi_config_parse(const char *yaml, size_t len, const char *dir, const char *context,
                                      kjoin_kubeapi_config *out, kjoin_err *err)
{
    kjoin_yaml y;
    kjoin_kubeapi_config c = {0};
    const char *current = NULL, *cluster = NULL, *user = NULL;
    yaml_node_t *ctx = NULL, *cl = NULL, *u = NULL;
    kjoin_err inner;
    kjoin_code rc = kjoin_yaml__load(&y, yaml, len, BAD, &inner);
    if (rc)
        return kjoin_err_set(err, rc, "kubeconfig: %s", inner.msg);
    if (kjoin_yaml__root(&y)->type != YAML_MAPPING_NODE) {
        rc = kjoin_err_set(err, BAD, "kubeconfig: not a mapping");
        goto out;
    }
    if ((rc = get_str(&y, kjoin_yaml__root(&y), "kubeconfig", "current-context", &current, err)))
        goto out;
    if (context && *context)
        current = context;
    if (!current || !*current) {
        rc = kjoin_err_set(err, BAD, "kubeconfig: no current-context, and no context was named");
        goto out;
    }
    if ((rc = named_entry(&y, "contexts", "context", current, &ctx, err)) ||
        (rc = get_str(&y, ctx, "context", "cluster", &cluster, err)) ||
        (rc = get_str(&y, ctx, "context", "user", &user, err)))
        goto out;
    if (!cluster) {
        rc = kjoin_err_set(err, BAD, "kubeconfig: context \"%s\" names no cluster", current);
        goto out;
    }
    if ((rc = named_entry(&y, "clusters", "cluster", cluster, &cl, err)) ||
        (rc = read_cluster(&y, cl, dir, &c, err)))
        goto out;
    if (user && *user &&
        ((rc = named_entry(&y, "users", "user", user, &u, err)) || (rc = read_user(&y, u, dir, &c, err))))
        goto out;
    if (!(c.context = strdup(current)) || !(c.path = strdup(""))) {
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
        goto out;
    }
    *out = c;
    memset(&c, 0, sizeof(c));
out:
    kjoin_kubeapi_config_release(&c);
    kjoin_yaml__release(&y);
    return rc;
}

kjoin_code kjoin_kubeapi_config_load(const char *path, const char *context, kjoin_kubeapi_config *out,
                                     kjoin_err *err)
{
    char from_env[PATH_MAX_LEN];
    const char *env = getenv("KUBECONFIG");
    if (!path && env && *env) {
        size_t n = strcspn(env, ":"); /* the first file of the list */
        if (n >= sizeof(from_env))
            return kjoin_err_set(err, BAD, "KUBECONFIG's first path is longer than %zu bytes", sizeof(from_env) - 1);
        memcpy(from_env, env, n);
        from_env[n] = '\0';
        path = from_env;
    }
    if (!path)
        path = KJOIN_KUBEAPI_DEFAULT_KUBECONFIG;
    char *text = NULL, dir[PATH_MAX_LEN];
    size_t len = 0;
    if (strlen(path) >= sizeof(dir))
        return kjoin_err_set(err, BAD, "the kubeconfig path is longer than %zu bytes", sizeof(dir) - 1);
    snprintf(dir, sizeof(dir), "%s", path);
    kjoin_err inner;
    kjoin_code rc = kjoin_file_read(path, KJOIN_KUBECONFIG_MAX, &text, &len, &inner);
    if (rc)
        return kjoin_err_set(err, rc, "kubeconfig: %s", inner.msg);
    kjoin_kubeapi_config c;
    rc = kjoin_kubeapi_config_parse(text, len, dirname(dir), context, &c, &inner);
    kjoin_free_wiped(text, len);
    if (rc)
        return kjoin_err_set(err, rc, "%s: %s", path, inner.msg);
    free(c.path);
    if (!(c.path = strdup(path))) {
        kjoin_kubeapi_config_release(&c);
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    *out = c;
    return KJOIN_OK;
}

kjoin_code kjoin_kubeapi_config_in_cluster(const char *dir, kjoin_kubeapi_config *out, kjoin_err *err)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    if (!dir)
        dir = "/var/run/secrets/kubernetes.io/serviceaccount";
    if (!host || !*host || !port || !*port)
        return kjoin_err_set(err, BAD, "not in a pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset");
    if (strlen(host) > 253 || strspn(port, "0123456789") != strlen(port) || strlen(port) > 5)
        return kjoin_err_set(err, BAD, "KUBERNETES_SERVICE_HOST or KUBERNETES_SERVICE_PORT is malformed");
    kjoin_kubeapi_config c = {0};
    char url[300];
    bool v6 = strchr(host, ':') != NULL;
    snprintf(url, sizeof(url), "https://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "", port);
    kjoin_code rc = KJOIN_OK;
    if (!(c.server = strdup(url)) || !(c.context = strdup("in-cluster")) || !(c.path = strdup("")))
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    if (!rc)
        rc = data_or_file(NULL, "ca.crt", dir, "service account CA", &c.ca_pem, &c.ca_len, err);
    size_t tlen = 0;
    if (!rc)
        rc = data_or_file(NULL, "token", dir, "service account token", &c.token, &tlen, err);
    if (!rc) {
        size_t n = strcspn(c.token, "\r\n");
        OPENSSL_cleanse(c.token + n, tlen - n);
        *out = c;
        return KJOIN_OK;
    }
    kjoin_kubeapi_config_release(&c);
    return rc;
}

kjoin_code kjoin_kubeapi_config_find(const char *path, const char *context, bool in_cluster, kjoin_kubeapi_config *out,
                                     kjoin_err *err)
{
    if (in_cluster && !path && !context && !getenv("KUBECONFIG") && getenv("KUBERNETES_SERVICE_HOST"))
        return kjoin_kubeapi_config_in_cluster(NULL, out, err);
    return kjoin_kubeapi_config_load(path, context, out, err);
}
