#include <stdio.h>
#include <string.h>

#include <kjoin/config.h>
#include <kjoin/util.h>

#include "../yamldoc/yamldoc.h"

#define BAD KJOIN_E_USAGE /* a configuration file is the user's input */

static const char *const supported[] = {"kubeadm.k8s.io/v1beta3", "kubeadm.k8s.io/v1beta4"};

void kjoin_join_config_release(kjoin_join_config *c)
{
    if (!c)
        return;
    kjoin_pinset_free(c->pins);
    free(c->file);
    kjoin_token_clear(&c->token);
    kjoin_token_clear(&c->tls_bootstrap_token);
    memset(c, 0, sizeof(*c));
}

/* Refuses any key of map that is not in allowed, naming it with its place. */
static kjoin_code only_keys(kjoin_yaml *y, yaml_node_t *map, const char *where, const char *const *allowed,
                            size_t n, kjoin_err *err)
{
    if (map->type != YAML_MAPPING_NODE)
        return kjoin_err_set(err, BAD, "%s at line %zu, column %zu must be a mapping", where,
                             KJOIN_YAML_LINE(map), KJOIN_YAML_COL(map));
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(&y->doc, p->key);
        const char *key = kjoin_yaml__str(k);
        bool known = false;
        for (size_t i = 0; key && i < n && !known; i++)
            known = strcmp(key, allowed[i]) == 0;
        if (!known)
            return kjoin_err_set(err, BAD, "unknown field %s.%s at line %zu, column %zu", where, key ? key : "?",
                                 KJOIN_YAML_LINE(k), KJOIN_YAML_COL(k));
    }
    return KJOIN_OK;
}

/* A string field; *out NULL when absent. *node is its node for messages. */
static kjoin_code string_field(kjoin_yaml *y, yaml_node_t *map, const char *where, const char *key,
                               const char **out, yaml_node_t **node, kjoin_err *err)
{
    kjoin_code rc = kjoin_yaml__get(y, map, key, node, BAD, err);
    *out = NULL;
    if (rc || !*node || kjoin_yaml__is_null(*node))
        return rc;
    if (!(*out = kjoin_yaml__str(*node)))
        return kjoin_err_set(err, BAD, "%s.%s at line %zu, column %zu must be a string%s", where, key,
                             KJOIN_YAML_LINE(*node), KJOIN_YAML_COL(*node),
                             (*node)->type == YAML_SEQUENCE_NODE ? " (quote IPv6 endpoints: \"[fd00::1]:6443\")" : "");
    return KJOIN_OK;
}

/* Turns a value check's failure into one that names the field and its place. */
static kjoin_code placed(kjoin_code rc, const char *what, yaml_node_t *node, const kjoin_err *inner, kjoin_err *err)
{
    if (!rc)
        return KJOIN_OK;
    return kjoin_err_set(err, BAD, "%s at line %zu, column %zu: %s", what, KJOIN_YAML_LINE(node),
                         KJOIN_YAML_COL(node), inner->msg);
}

static kjoin_code read_bootstrap_token(kjoin_yaml *y, yaml_node_t *bt, kjoin_join_config *c, kjoin_err *err)
{
    static const char *const keys[] = {"token", "apiServerEndpoint", "caCertHashes", "unsafeSkipCAVerification"};
    const char *where = "discovery.bootstrapToken", *token, *endpoint, *unsafe;
    yaml_node_t *tn, *en, *hashes = NULL, *un;
    kjoin_err in;
    kjoin_code rc;
    if ((rc = only_keys(y, bt, where, keys, 4, err)) ||
        (rc = string_field(y, bt, where, "token", &token, &tn, err)) ||
        (rc = string_field(y, bt, where, "apiServerEndpoint", &endpoint, &en, err)) ||
        (rc = string_field(y, bt, where, "unsafeSkipCAVerification", &unsafe, &un, err)) ||
        (rc = kjoin_yaml__get(y, bt, "caCertHashes", &hashes, BAD, err)))
        return rc;
    if (!token)
        return kjoin_err_set(err, BAD, "%s.token is not set", where);
    if (!endpoint)
        return kjoin_err_set(err, BAD, "%s.apiServerEndpoint is not set", where);
    if ((rc = placed(kjoin_token_parse(token, &c->token, &in), "discovery.bootstrapToken.token", tn, &in, err)) ||
        (rc = placed(kjoin_endpoint_parse(endpoint, &c->endpoint, &in), "discovery.bootstrapToken.apiServerEndpoint",
                     en, &in, err)))
        return rc;
    if (unsafe && strcmp(unsafe, "true") != 0 && strcmp(unsafe, "false") != 0)
        return kjoin_err_set(err, BAD, "%s.unsafeSkipCAVerification at line %zu must be true or false", where,
                             KJOIN_YAML_LINE(un));
    c->unsafe_skip_ca_verification = unsafe && strcmp(unsafe, "true") == 0;
    if (hashes && !kjoin_yaml__is_null(hashes) && hashes->type != YAML_SEQUENCE_NODE)
        return kjoin_err_set(err, BAD, "%s.caCertHashes at line %zu must be a list", where, KJOIN_YAML_LINE(hashes));
    for (size_t i = 0; i < kjoin_yaml__len(hashes); i++) {
        yaml_node_t *h = kjoin_yaml__item(y, hashes, i);
        const char *pin = kjoin_yaml__str(h);
        rc = pin ? kjoin_pinset_add(c->pins, pin, &in)
                 : kjoin_err_set(&in, BAD, "a CA pin must be a string");
        if ((rc = placed(rc, "discovery.bootstrapToken.caCertHashes", h, &in, err)))
            return rc;
    }
    c->has_bootstrap_token = true;
    return KJOIN_OK;
}

static kjoin_code read_timeout(const char *value, yaml_node_t *node, const char *what, kjoin_join_config *c,
                               kjoin_err *err)
{
    kjoin_err in;
    kjoin_code rc = placed(kjoin_duration_parse(value, &c->timeout_ms, &in), what, node, &in, err);
    c->has_timeout = rc == KJOIN_OK;
    return rc;
}

static kjoin_code read_discovery(kjoin_yaml *y, yaml_node_t *root, bool v1beta3, kjoin_join_config *c,
                                 kjoin_err *err)
{
    static const char *const keys[] = {"bootstrapToken", "file", "tlsBootstrapToken", "timeout"};
    static const char *const file_keys[] = {"kubeConfigPath"};
    yaml_node_t *d = NULL, *bt = NULL, *file = NULL, *node = NULL, *timeouts = NULL;
    const char *value;
    kjoin_err in;
    kjoin_code rc = kjoin_yaml__get(y, root, "discovery", &d, BAD, err);
    if (rc)
        return rc;
    if (!d)
        return kjoin_err_set(err, BAD, "the JoinConfiguration has no discovery section");
    if ((rc = only_keys(y, d, "discovery", keys, v1beta3 ? 4 : 3, err)) ||
        (rc = kjoin_yaml__get(y, d, "bootstrapToken", &bt, BAD, err)) ||
        (rc = kjoin_yaml__get(y, d, "file", &file, BAD, err)))
        return rc;
    if (bt && !kjoin_yaml__is_null(bt) && (rc = read_bootstrap_token(y, bt, c, err)))
        return rc;
    if (file && !kjoin_yaml__is_null(file)) {
        if ((rc = only_keys(y, file, "discovery.file", file_keys, 1, err)) ||
            (rc = string_field(y, file, "discovery.file", "kubeConfigPath", &value, &node, err)))
            return rc;
        if (!value)
            return kjoin_err_set(err, BAD, "discovery.file.kubeConfigPath is not set");
        if ((rc = placed(kjoin_discovery_source_check(value, &in), "discovery.file.kubeConfigPath", node, &in, err)))
            return rc;
        if (!(c->file = strdup(value)))
            return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    if (c->has_bootstrap_token == (c->file != NULL))
        return kjoin_err_set(err, BAD, "discovery.bootstrapToken or discovery.file must be set, and not both");
    if ((rc = string_field(y, d, "discovery", "tlsBootstrapToken", &value, &node, err)))
        return rc;
    if (value) {
        rc = placed(kjoin_token_parse(value, &c->tls_bootstrap_token, &in), "discovery.tlsBootstrapToken", node, &in, err);
        if (rc)
            return rc;
        c->has_tls_bootstrap_token = true;
    }
    /* The timeout moved from discovery.timeout (v1beta3) to timeouts.discovery (v1beta4). */
    if (v1beta3) {
        if ((rc = string_field(y, d, "discovery", "timeout", &value, &node, err)))
            return rc;
        return value ? read_timeout(value, node, "discovery.timeout", c, err) : KJOIN_OK;
    }
    if ((rc = kjoin_yaml__get(y, root, "timeouts", &timeouts, BAD, err)) || !timeouts ||
        kjoin_yaml__is_null(timeouts))
        return rc;
    if ((rc = string_field(y, timeouts, "timeouts", "discovery", &value, &node, err)))
        return rc;
    return value ? read_timeout(value, node, "timeouts.discovery", c, err) : KJOIN_OK;
}

/* One document of the stream: a JoinConfiguration is read, others noted. */
static kjoin_code read_document(kjoin_yaml *y, bool *found, kjoin_join_config *c, kjoin_err *err)
{
    yaml_node_t *root = kjoin_yaml__root(y), *an = NULL, *kn = NULL;
    const char *api = NULL, *kind = NULL;
    kjoin_code rc;
    if (kjoin_yaml__is_null(root))
        return KJOIN_OK; /* an empty document, as after a final "---" */
    if (root->type != YAML_MAPPING_NODE)
        return kjoin_err_set(err, BAD, "the document at line %zu is not a mapping", KJOIN_YAML_LINE(root));
    if ((rc = string_field(y, root, "document", "apiVersion", &api, &an, err)) ||
        (rc = string_field(y, root, "document", "kind", &kind, &kn, err)))
        return rc;
    if (!kind || strcmp(kind, "JoinConfiguration") != 0) {
        if (c->n_skipped < KJOIN_CONFIG_MAX_SKIPPED)
            snprintf(c->skipped[c->n_skipped++], sizeof(c->skipped[0]), "%.40s (%.50s) at line %zu",
                     kind ? kind : "a document without kind", api ? api : "no apiVersion", KJOIN_YAML_LINE(root));
        return KJOIN_OK;
    }
    size_t v = 0;
    while (api && v < 2 && strcmp(api, supported[v]) != 0)
        v++;
    if (!api || v == 2)
        return kjoin_err_set(err, BAD, "JoinConfiguration at line %zu has apiVersion \"%s\"; supported: %s, %s",
                             KJOIN_YAML_LINE(root), api ? api : "", supported[0], supported[1]);
    if (*found)
        return kjoin_err_set(err, BAD, "a second JoinConfiguration at line %zu", KJOIN_YAML_LINE(root));
    *found = true;
    snprintf(c->api_version, sizeof(c->api_version), "%s", api);
    return read_discovery(y, root, v == 0, c, err);
}

/* Whether line number line (0-based) of text contains needle. */
static bool line_has(const char *text, size_t len, size_t line, const char *needle)
{
    const char *p = text, *end = text + len;
    for (size_t i = 0; i < line && p < end; i++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = (size_t)((nl ? nl : end) - p), k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(p + i, needle, k) == 0)
            return true;
    return false;
}

kjoin_code kjoin_join_config_parse(const char *yaml, size_t len, kjoin_join_config *out, kjoin_err *err)
{
    kjoin_join_config c = {.pins = kjoin_pinset_new()};
    yaml_parser_t parser;
    if (!c.pins || !yaml_parser_initialize(&parser)) {
        kjoin_pinset_free(c.pins);
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, len);
    bool found = false;
    kjoin_code rc = KJOIN_OK;
    for (;;) {
        kjoin_yaml y = {0};
        if (!yaml_parser_load(&parser, &y.doc)) {
            size_t line = parser.problem_mark.line;
            rc = kjoin_err_set(err, BAD, "YAML error at line %zu, column %zu: %s%s", line + 1,
                               parser.problem_mark.column + 1, parser.problem ? parser.problem : "unknown problem",
                               line_has(yaml, len, line, "]:") ? " (quote IPv6 endpoints: \"[fd00::1]:6443\")" : "");
            break;
        }
        y.loaded = true;
        bool end = !kjoin_yaml__root(&y);
        if (!end)
            rc = read_document(&y, &found, &c, err);
        kjoin_yaml__release(&y);
        if (end || rc)
            break;
    }
    yaml_parser_delete(&parser);
    if (!rc && !found)
        rc = kjoin_err_set(err, BAD, "no JoinConfiguration (%s or %s) in the configuration", supported[0], supported[1]);
    if (rc) {
        kjoin_join_config_release(&c);
        return rc;
    }
    *out = c;
    return KJOIN_OK;
}
