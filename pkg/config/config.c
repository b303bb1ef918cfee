#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include <kjoin/config.h>
#include <kjoin/private/util.h>
#include <kjoin/private/discovery.h>

#include "../yamldoc/yamldoc.h"

#define BAD KJOIN_E_USAGE /* a configuration file is the user's input */

static const char *const supported[] = {"kubeadm.k8s.io/v1beta3", "kubeadm.k8s.io/v1beta4"};

static void free_secret(char *s)
{
    kjoin_free_wiped_str(s);
}

void kjoin_join_config_release(kjoin_join_config *c)
{
    if (!c)
        return;
    kjoin_pinset_free(c->pins);
    free(c->endpoint);
    free_secret(c->token);
    free_secret(c->tls_bootstrap_token);
    free(c->file);
    free(c->node_name);
    free(c->ca_cert_path);
    free(c->cri_socket);
    free(c->patches_dir);
    free(c->ignore_preflight);
    free(c->skip_phases);
    for (size_t i = 0; i < c->n_taints; i++)
        free(c->taints[i]);
    for (size_t i = 0; i < c->n_extra_args; i++)
        free(c->extra_args[i]);
    free(c->taints);
    free(c->extra_args);
    free(c->advertise_address);
    kjoin_certificate_key_clear(&c->certificate_key);
    memset(c, 0, sizeof(*c));
}

static kjoin_code keep(const char *value, char **out, kjoin_err *err)
{
    if (!(*out = strdup(value)))
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    return KJOIN_OK;
}

static void note(kjoin_join_config *c, const char *fmt, const char *a, size_t line)
{
    if (c->n_notes < KJOIN_CONFIG_MAX_NOTES)
        snprintf(c->notes[c->n_notes++], sizeof(c->notes[0]), fmt, a, line);
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

/* A token field: checked now (so the message has its place), kept as text. */
static kjoin_code token_field(kjoin_yaml *y, yaml_node_t *map, const char *where, const char *key, char **out,
                              kjoin_err *err)
{
    char what[80];
    const char *value;
    yaml_node_t *node;
    kjoin_token t;
    kjoin_err in;
    kjoin_code rc = string_field(y, map, where, key, &value, &node, err);
    if (rc || !value)
        return rc;
    snprintf(what, sizeof(what), "%s.%s", where, key);
    if ((rc = placed(kjoin_token_parse(value, &t, &in), what, node, &in, err)))
        return rc;
    kjoin_token_clear(&t);
    return keep(value, out, err);
}

static kjoin_code bool_field(kjoin_yaml *y, yaml_node_t *map, const char *where, const char *key, bool *out,
                             kjoin_err *err)
{
    const char *value;
    yaml_node_t *node;
    kjoin_code rc = string_field(y, map, where, key, &value, &node, err);
    if (rc || !value)
        return rc;
    /* YAML 1.1's booleans (yes, on, ...), as kubeadm's reader takes them. */
    if (!kjoin_yaml__bool(node, out))
        return kjoin_err_set(err, BAD, "%s.%s at line %zu must be true or false", where, key, KJOIN_YAML_LINE(node));
    return KJOIN_OK;
}

static kjoin_code read_bootstrap_token(kjoin_yaml *y, yaml_node_t *bt, kjoin_join_config *c, kjoin_err *err)
{
    static const char *const keys[] = {"token", "apiServerEndpoint", "caCertHashes", "unsafeSkipCAVerification"};
    const char *where = "discovery.bootstrapToken", *endpoint;
    yaml_node_t *en, *hashes = NULL;
    kjoin_endpoint parsed;
    kjoin_err in;
    kjoin_code rc;
    if ((rc = only_keys(y, bt, where, keys, 4, err)) || (rc = token_field(y, bt, where, "token", &c->token, err)) ||
        (rc = string_field(y, bt, where, "apiServerEndpoint", &endpoint, &en, err)) ||
        (rc = bool_field(y, bt, where, "unsafeSkipCAVerification", &c->spec.join.unsafe_skip_ca_verification, err)) ||
        (rc = kjoin_yaml__get(y, bt, "caCertHashes", &hashes, BAD, err)))
        return rc;
    if (!c->token)
        return kjoin_err_set(err, BAD, "%s.token is not set", where);
    if (!endpoint)
        return kjoin_err_set(err, BAD, "%s.apiServerEndpoint is not set", where);
    if ((rc = placed(kjoin_endpoint_parse(endpoint, &parsed, &in), "discovery.bootstrapToken.apiServerEndpoint", en,
                     &in, err)) ||
        (rc = keep(endpoint, &c->endpoint, err)))
        return rc;
    if (hashes && !kjoin_yaml__is_null(hashes) && hashes->type != YAML_SEQUENCE_NODE)
        return kjoin_err_set(err, BAD, "%s.caCertHashes at line %zu must be a list", where, KJOIN_YAML_LINE(hashes));
    for (size_t i = 0; i < kjoin_yaml__len(hashes); i++) {
        yaml_node_t *h = kjoin_yaml__item(y, hashes, i);
        const char *pin = kjoin_yaml__str(h);
        rc = pin ? kjoin_pinset_add(c->pins, pin, &in) : kjoin_err_set(&in, BAD, "a CA pin must be a string");
        if ((rc = placed(rc, "discovery.bootstrapToken.caCertHashes", h, &in, err)))
            return rc;
    }
    return KJOIN_OK;
}

static kjoin_code read_duration(kjoin_yaml *y, yaml_node_t *map, const char *where, const char *key, int64_t *out,
                                kjoin_err *err)
{
    char what[64];
    const char *value;
    yaml_node_t *node;
    kjoin_err in;
    kjoin_code rc = string_field(y, map, where, key, &value, &node, err);
    if (rc || !value)
        return rc;
    snprintf(what, sizeof(what), "%s.%s", where, key);
    return placed(kjoin_duration_parse(value, out, &in), what, node, &in, err);
}

static kjoin_code read_discovery(kjoin_yaml *y, yaml_node_t *root, bool v1beta3, kjoin_join_config *c,
                                 kjoin_err *err)
{
    static const char *const keys[] = {"bootstrapToken", "file", "tlsBootstrapToken", "timeout"};
    static const char *const file_keys[] = {"kubeConfigPath"};
    yaml_node_t *d = NULL, *bt = NULL, *file = NULL, *node = NULL;
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
        if ((rc = placed(kjoin_discovery_source_check(value, &in), "discovery.file.kubeConfigPath", node, &in, err)) ||
            (rc = keep(value, &c->file, err)))
            return rc;
    }
    if ((c->token != NULL) == (c->file != NULL))
        return kjoin_err_set(err, BAD, "discovery.bootstrapToken or discovery.file must be set, and not both");
    if ((rc = token_field(y, d, "discovery", "tlsBootstrapToken", &c->tls_bootstrap_token, err)))
        return rc;
    /* The timeout moved from discovery.timeout (v1beta3) to timeouts.discovery (v1beta4). */
    return v1beta3 ? read_duration(y, d, "discovery", "timeout", &c->spec.join.timeout_ms, err) : KJOIN_OK;
}

/* Fields of map that mean nothing for kjoin: each noted once, the rest
 * refused by only_keys. */
static kjoin_code read_inapplicable(kjoin_yaml *y, yaml_node_t *map, const char *where, const char *const *keys,
                                    size_t n, kjoin_join_config *c, kjoin_err *err)
{
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *v = NULL;
        char what[96];
        kjoin_code rc = kjoin_yaml__get(y, map, keys[i], &v, BAD, err);
        if (rc)
            return rc;
        snprintf(what, sizeof(what), "%s%s", where, keys[i]);
        if (v && !kjoin_yaml__is_null(v))
            note(c, "%s (line %zu) does not apply to kjoin: ignored", what, KJOIN_YAML_LINE(v));
    }
    return KJOIN_OK;
}

/* Appends text to a growing list. */
static kjoin_code push(char ***list, size_t *n, const char *text, kjoin_err *err)
{
    char **grown = realloc(*list, (*n + 1) * sizeof(**list));
    if (!grown)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    *list = grown;
    if (keep(text, &grown[*n], err))
        return KJOIN_E_OTHER;
    (*n)++;
    return KJOIN_OK;
}

/* A sequence of strings, kept comma-separated (ignorePreflightErrors, skipPhases). */
static kjoin_code string_list(kjoin_yaml *y, yaml_node_t *map, const char *where, const char *key, char **out,
                              kjoin_err *err)
{
    yaml_node_t *seq = NULL;
    char joined[1024] = "";
    kjoin_code rc = kjoin_yaml__get(y, map, key, &seq, BAD, err);
    if (rc || !seq || kjoin_yaml__is_null(seq))
        return rc;
    if (seq->type != YAML_SEQUENCE_NODE)
        return kjoin_err_set(err, BAD, "%s%s at line %zu must be a list", where, key, KJOIN_YAML_LINE(seq));
    for (size_t i = 0; i < kjoin_yaml__len(seq); i++) {
        yaml_node_t *item = kjoin_yaml__item(y, seq, i);
        const char *v = kjoin_yaml__str(item);
        size_t used = strlen(joined);
        if (!v || !*v || strchr(v, ','))
            return kjoin_err_set(err, BAD, "%s%s at line %zu: each item is one name", where, key,
                                 KJOIN_YAML_LINE(item));
        if ((size_t)snprintf(joined + used, sizeof(joined) - used, "%s%s", used ? "," : "", v) >=
            sizeof(joined) - used)
            return kjoin_err_set(err, BAD, "%s%s at line %zu is too long", where, key, KJOIN_YAML_LINE(seq));
    }
    return keep(joined, out, err);
}

/* taints: [{key, value, effect}] as the kubelet's --register-with-taints takes them. */
static kjoin_code read_taints(kjoin_yaml *y, yaml_node_t *nr, kjoin_join_config *c, kjoin_err *err)
{
    static const char *const keys[] = {"key", "value", "effect", "timeAdded"};
    static const char *const effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute"};
    yaml_node_t *seq = NULL, *node;
    kjoin_code rc = kjoin_yaml__get(y, nr, "taints", &seq, BAD, err);
    if (rc || !seq || kjoin_yaml__is_null(seq))
        return rc;
    if (seq->type != YAML_SEQUENCE_NODE)
        return kjoin_err_set(err, BAD, "nodeRegistration.taints at line %zu must be a list", KJOIN_YAML_LINE(seq));
    c->spec.node.taints_set = true;
    for (size_t i = 0; i < kjoin_yaml__len(seq); i++) {
        yaml_node_t *t = kjoin_yaml__item(y, seq, i);
        const char *key, *value, *effect;
        char text[400];
        if ((rc = only_keys(y, t, "nodeRegistration.taints[]", keys, 4, err)) ||
            (rc = string_field(y, t, "nodeRegistration.taints[]", "key", &key, &node, err)) ||
            (rc = string_field(y, t, "nodeRegistration.taints[]", "value", &value, &node, err)) ||
            (rc = string_field(y, t, "nodeRegistration.taints[]", "effect", &effect, &node, err)))
            return rc;
        bool known = false;
        for (size_t e = 0; effect && e < 3; e++)
            known |= !strcmp(effect, effects[e]);
        if (!key || !*key || strpbrk(key, "=:,") || (value && strpbrk(value, "=:,")) || !known)
            return kjoin_err_set(err, BAD, "nodeRegistration.taints at line %zu: a taint needs a key, an effect "
                                 "(NoSchedule, PreferNoSchedule or NoExecute) and no \"=\", \":\" or \",\" in them",
                                 KJOIN_YAML_LINE(t));
        if ((size_t)snprintf(text, sizeof(text), "%s%s%s:%s", key, value && *value ? "=" : "",
                             value ? value : "", effect) >= sizeof(text))
            return kjoin_err_set(err, BAD, "nodeRegistration.taints at line %zu is too long", KJOIN_YAML_LINE(t));
        if ((rc = push(&c->taints, &c->n_taints, text, err)))
            return rc;
    }
    return KJOIN_OK;
}

static kjoin_code push_arg(kjoin_join_config *c, const char *name, const char *value, yaml_node_t *at, kjoin_err *err)
{
    char text[1200];
    if (!name || !*name || !value || (size_t)snprintf(text, sizeof(text), "%s=%s", name, value) >= sizeof(text))
        return kjoin_err_set(err, BAD, "nodeRegistration.kubeletExtraArgs at line %zu: each argument needs a name "
                             "and a value", KJOIN_YAML_LINE(at));
    return push(&c->extra_args, &c->n_extra_args, text, err);
}

/* kubeletExtraArgs: a map in v1beta3, a list of {name, value} in v1beta4. */
static kjoin_code read_extra_args(kjoin_yaml *y, yaml_node_t *nr, kjoin_join_config *c, kjoin_err *err)
{
    static const char *const keys[] = {"name", "value"};
    yaml_node_t *args = NULL, *node;
    bool v1beta3 = !strcmp(c->api_version, supported[0]);
    kjoin_code rc = kjoin_yaml__get(y, nr, "kubeletExtraArgs", &args, BAD, err);
    if (rc || !args || kjoin_yaml__is_null(args))
        return rc;
    if (v1beta3 ? args->type != YAML_MAPPING_NODE : args->type != YAML_SEQUENCE_NODE)
        return kjoin_err_set(err, BAD, "nodeRegistration.kubeletExtraArgs at line %zu must be %s in %s",
                             KJOIN_YAML_LINE(args), v1beta3 ? "a map of name: value" : "a list of {name, value}",
                             c->api_version);
    if (v1beta3) {
        for (yaml_node_pair_t *p = args->data.mapping.pairs.start; p < args->data.mapping.pairs.top; p++)
            if ((rc = push_arg(c, kjoin_yaml__str(yaml_document_get_node(&y->doc, p->key)),
                               kjoin_yaml__str(yaml_document_get_node(&y->doc, p->value)), args, err)))
                return rc;
        return KJOIN_OK;
    }
    for (size_t i = 0; i < kjoin_yaml__len(args); i++) {
        yaml_node_t *a = kjoin_yaml__item(y, args, i);
        const char *name, *value;
        if ((rc = only_keys(y, a, "nodeRegistration.kubeletExtraArgs[]", keys, 2, err)) ||
            (rc = string_field(y, a, "nodeRegistration.kubeletExtraArgs[]", "name", &name, &node, err)) ||
            (rc = string_field(y, a, "nodeRegistration.kubeletExtraArgs[]", "value", &value, &node, err)) ||
            (rc = push_arg(c, name, value ? value : "", a, err)))
            return rc;
    }
    return KJOIN_OK;
}

static kjoin_code read_node_registration(kjoin_yaml *y, yaml_node_t *root, kjoin_join_config *c, kjoin_err *err)
{
    static const char *const keys[] = {"name",          "criSocket",       "taints",         "kubeletExtraArgs",
                                       "ignorePreflightErrors", "imagePullPolicy", "imagePullSerial"};
    const char *name, *cri;
    yaml_node_t *nr = NULL, *node;
    kjoin_code rc = kjoin_yaml__get(y, root, "nodeRegistration", &nr, BAD, err);
    if (rc || !nr || kjoin_yaml__is_null(nr))
        return rc;
    /* The images are a control-plane node's (its preflight pulls them: one at a time unless
     * imagePullSerial is false). */
    const char *policy;
    int serial = -1;
    if ((rc = only_keys(y, nr, "nodeRegistration", keys, 7, err)) ||
        (rc = kjoin_yaml__boolean(y, nr, "nodeRegistration", "imagePullSerial", &serial, BAD, err)) ||
        (rc = string_field(y, nr, "nodeRegistration", "imagePullPolicy", &policy, &node, err)))
        return rc;
    c->pull_parallel = serial == 0;
    if (policy && strcmp(policy, "IfNotPresent") && strcmp(policy, "Always") && strcmp(policy, "Never"))
        return kjoin_err_set(err, BAD, "nodeRegistration.imagePullPolicy at line %zu is \"%.40s\": Always, "
                             "IfNotPresent or Never", KJOIN_YAML_LINE(node), policy);
    c->pull_policy = !policy || *policy == 'I' ? KJOIN_PULL_IF_NOT_PRESENT
                     : *policy == 'A'          ? KJOIN_PULL_ALWAYS
                                               : KJOIN_PULL_NEVER;
    if ((rc = string_field(y, nr, "nodeRegistration", "name", &name, &node, err)) ||
        (name && (rc = keep(name, &c->node_name, err))) ||
        (rc = string_field(y, nr, "nodeRegistration", "criSocket", &cri, &node, err)) ||
        (cri && (rc = keep(cri, &c->cri_socket, err))) ||
        (rc = string_list(y, nr, "nodeRegistration.", "ignorePreflightErrors", &c->ignore_preflight, err)) ||
        (rc = read_taints(y, nr, c, err)))
        return rc;
    return read_extra_args(y, nr, c, err);
}

/* patches.directory: kubeadm's patches, for the kubelet's configuration. */
static kjoin_code read_patches(kjoin_yaml *y, yaml_node_t *root, kjoin_join_config *c, kjoin_err *err)
{
    static const char *const keys[] = {"directory"};
    yaml_node_t *p = NULL, *node;
    const char *dir;
    kjoin_code rc = kjoin_yaml__get(y, root, "patches", &p, BAD, err);
    if (rc || !p || kjoin_yaml__is_null(p))
        return rc;
    if ((rc = only_keys(y, p, "patches", keys, 1, err)) ||
        (rc = string_field(y, p, "patches", "directory", &dir, &node, err)) || !dir)
        return rc;
    if (!*dir)
        return kjoin_err_set(err, BAD, "patches.directory at line %zu is empty", KJOIN_YAML_LINE(node));
    return keep(dir, &c->patches_dir, err);
}

/* controlPlane: the node's API server address and port, and the
 * certificate key (checked, and never quoted). */
static kjoin_code read_control_plane(kjoin_yaml *y, yaml_node_t *cp, kjoin_join_config *c, kjoin_err *err)
{
    static const char *const keys[] = {"localAPIEndpoint", "certificateKey"}, *const endpoint[] = {"advertiseAddress",
                                                                                                      "bindPort"};
    yaml_node_t *ep = NULL, *node;
    const char *value;
    kjoin_err in;
    kjoin_code rc = only_keys(y, cp, "controlPlane", keys, 2, err);
    c->spec.control_plane = true;
    if (!rc && !(rc = string_field(y, cp, "controlPlane", "certificateKey", &value, &node, err)) && value) {
        if ((rc = placed(kjoin_certificate_key_parse(value, &c->certificate_key, &in), "controlPlane.certificateKey",
                         node, &in, err)))
            return rc;
        c->has_certificate_key = true;
    }
    if (rc || (rc = kjoin_yaml__get(y, cp, "localAPIEndpoint", &ep, BAD, err)) || !ep || kjoin_yaml__is_null(ep))
        return rc;
    if ((rc = only_keys(y, ep, "controlPlane.localAPIEndpoint", endpoint, 2, err)) ||
        (rc = string_field(y, ep, "controlPlane.localAPIEndpoint", "advertiseAddress", &value, &node, err)) ||
        (value && *value && (rc = keep(value, &c->advertise_address, err))) ||
        (rc = string_field(y, ep, "controlPlane.localAPIEndpoint", "bindPort", &value, &node, err)) || !value)
        return rc;
    char *end;
    long port = strtol(value, &end, 10);
    if (!*value || *end || port < 0 || port > 65535)
        return kjoin_err_set(err, BAD, "controlPlane.localAPIEndpoint.bindPort at line %zu is not a port",
                             KJOIN_YAML_LINE(node));
    c->spec.bind_port = (int)port;
    return KJOIN_OK;
}

static kjoin_code read_top_level(kjoin_yaml *y, yaml_node_t *root, bool v1beta3, kjoin_join_config *c,
                                 kjoin_err *err)
{
    static const char *const keys[] = {"apiVersion", "kind",       "discovery", "nodeRegistration", "caCertPath",
                                       "dryRun",     "skipPhases", "patches",   "controlPlane",     "timeouts"};
    static const char *const timeouts[] = {"controlPlaneComponentHealthCheck", "kubeletHealthCheck",
                                           "kubernetesAPICall", "etcdAPICall", "tlsBootstrap", "upgradeManifests",
                                           "discovery"};
    yaml_node_t *cp = NULL, *t = NULL, *node;
    const char *value;
    kjoin_code rc;
    if ((rc = only_keys(y, root, "JoinConfiguration", keys, v1beta3 ? 9 : 10, err)) ||
        (rc = kjoin_yaml__get(y, root, "controlPlane", &cp, BAD, err)))
        return rc;
    if (cp && !kjoin_yaml__is_null(cp) && (rc = read_control_plane(y, cp, c, err)))
        return rc;
    if ((rc = read_patches(y, root, c, err)) || (rc = string_list(y, root, "", "skipPhases", &c->skip_phases, err)) ||
        (rc = bool_field(y, root, "JoinConfiguration", "dryRun", &c->spec.dry_run, err)) ||
        (rc = string_field(y, root, "JoinConfiguration", "caCertPath", &value, &node, err)) ||
        (value && (rc = keep(value, &c->ca_cert_path, err))) || (rc = read_node_registration(y, root, c, err)) ||
        (rc = read_discovery(y, root, v1beta3, c, err)))
        return rc;
    if (value && !*value)
        return kjoin_err_set(err, BAD, "caCertPath at line %zu is empty", KJOIN_YAML_LINE(node));
    if (v1beta3 || (rc = kjoin_yaml__get(y, root, "timeouts", &t, BAD, err)) || !t || kjoin_yaml__is_null(t))
        return rc;
    /* discovery: the join's one deadline (kubeadm's bounds discovery alone); the others bound their stage
     * within it; upgradeManifests is kubeadm upgrade's. */
    kjoin_stage_timeouts *st = &c->spec.timeouts;
    if ((rc = only_keys(y, t, "timeouts", timeouts, 7, err)) ||
        (rc = read_inapplicable(y, t, "timeouts.", timeouts + 5, 1, c, err)) ||
        (rc = read_duration(y, t, "timeouts", "controlPlaneComponentHealthCheck", &st->control_plane_ms, err)) ||
        (rc = read_duration(y, t, "timeouts", "kubeletHealthCheck", &st->kubelet_health_ms, err)) ||
        (rc = read_duration(y, t, "timeouts", "kubernetesAPICall", &st->api_call_ms, err)) ||
        (rc = read_duration(y, t, "timeouts", "etcdAPICall", &st->etcd_ms, err)) ||
        (rc = read_duration(y, t, "timeouts", "tlsBootstrap", &st->tls_bootstrap_ms, err)))
        return rc;
    return read_duration(y, t, "timeouts", "discovery", &c->spec.join.timeout_ms, err);
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
        char what[100];
        snprintf(what, sizeof(what), "%.40s (%.50s)", kind ? kind : "a document without kind",
                 api ? api : "no apiVersion");
        note(c, "Skipping %s at line %zu", what, KJOIN_YAML_LINE(root));
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
    return read_top_level(y, root, v == 0, c, err);
}

/* Points the specification at the fields it borrows (after the final copy). */
/* The worker specification from what the file holds; its strings stay
 * the configuration's. */
static kjoin_code fill_spec(kjoin_join_config *c, kjoin_err *err)
{
    kjoin_phases_spec *s = &c->spec;
    kjoin_err in;
    c->endpoint_list[0] = c->endpoint;
    s->join.endpoints = c->endpoint ? c->endpoint_list : NULL;
    s->join.n_endpoints = c->endpoint ? 1 : 0;
    s->join.token = c->token;
    s->join.tls_bootstrap_token = c->tls_bootstrap_token;
    s->join.pins = c->pins;
    s->join.discovery_file = c->file;
    s->join.flavor = KJOIN_FLAVOR_KUBEADM;
    s->node.name = c->node_name;
    s->node.paths.ca_cert_path = c->ca_cert_path;
    s->ca_with_discovery = c->ca_cert_path != NULL; /* one meaning, as --ca-cert-path's: where the CA goes */
    s->node.cri_socket = c->cri_socket;
    s->node.pull_policy = c->pull_policy;
    s->node.pull_parallel = c->pull_parallel;
    s->node.patches_dir = c->patches_dir;
    s->node.ignore_preflight = c->ignore_preflight;
    s->node.taints = (const char *const *)c->taints;
    s->node.n_taints = c->n_taints;
    s->node.extra_args = (const char *const *)c->extra_args;
    s->node.n_extra_args = c->n_extra_args;
    s->advertise_address = c->advertise_address;
    s->certificate_key = c->has_certificate_key ? &c->certificate_key : NULL;
    if (kjoin_skip_phases(s, c->skip_phases, &in))
        return kjoin_err_set(err, KJOIN_E_USAGE, "skipPhases: %s", in.msg);
    return KJOIN_OK;
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

/* One document of a configuration file: fn's reader, and whether it (not
 * the YAML stream) said the error. */
typedef struct config_reader {
    kjoin_code (*read)(kjoin_yaml *y, yaml_node_t *root, bool *found, void *out, kjoin_err *err);
    bool found, refused;
    void *out;
} config_reader;

static kjoin_code read_one(kjoin_yaml *y, yaml_node_t *root, void *ctx, kjoin_err *err)
{
    config_reader *r = ctx;
    kjoin_code rc = r->read(y, root, &r->found, r->out, err);
    r->refused = rc != KJOIN_OK;
    return rc;
}

/* Reads each document of a configuration file with r; a YAML syntax error
 * gets a hint where an unquoted IPv6 endpoint caused it. */
static kjoin_code read_config(const char *yaml, size_t len, config_reader *r, kjoin_err *err)
{
    size_t line = 0;
    kjoin_code rc = kjoin_yaml__each_document(yaml, len, BAD, read_one, r, &line, err);
    if (rc && err && !r->refused && line_has(yaml, len, line, "]:")) {
        size_t used = strlen(err->msg);
        snprintf(err->msg + used, sizeof(err->msg) - used, " (quote IPv6 endpoints: \"[fd00::1]:6443\")");
    }
    return rc;
}

static kjoin_code read_join(kjoin_yaml *y, yaml_node_t *root, bool *found, void *out, kjoin_err *err)
{
    (void)root;
    return read_document(y, found, out, err);
}

kjoin_code kjoin_join_config_parse(const char *yaml, size_t len, kjoin_join_config *out, kjoin_err *err)
{
    kjoin_join_config c = {.pins = kjoin_pinset_new()};
    kjoin_phases_spec_init(&c.spec);
    if (!c.pins)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    config_reader r = {.read = read_join, .out = &c};
    kjoin_code rc = read_config(yaml, len, &r, err);
    bool found = r.found;
    if (!rc && !found)
        rc = kjoin_err_set(err, BAD, "no JoinConfiguration (%s or %s) in the configuration", supported[0], supported[1]);
    if (!rc)
        rc = fill_spec(&c, err);
    if (rc) {
        kjoin_join_config_release(&c);
        return rc;
    }
    *out = c;
    /* The specification points into the configuration: at its new place. */
    return fill_spec(out, NULL);
}

/* ---- ResetConfiguration ----------------------------------------------------- */

void kjoin_reset_config_release(kjoin_reset_config *c)
{
    if (!c)
        return;
    free(c->cri_socket);
    free(c->skip_phases);
    memset(c, 0, sizeof(*c));
}

static void reset_note(kjoin_reset_config *c, const char *what, size_t line)
{
    if (c->n_notes < KJOIN_CONFIG_MAX_NOTES)
        snprintf(c->notes[c->n_notes++], sizeof(c->notes[0]), "%.100s (line %zu) does not apply to kjoin: ignored",
                 what, line);
}

static kjoin_code read_reset(kjoin_yaml *y, yaml_node_t *root, bool *found, kjoin_reset_config *c, kjoin_err *err)
{
    static const char *const keys[] = {"apiVersion", "kind", "criSocket", "skipPhases", "dryRun", "cleanupTmpDir",
                                       "force", "certificatesDir", "ignorePreflightErrors", "unmountFlags"};
    static const char *const inapplicable[] = {"force", "certificatesDir", "ignorePreflightErrors", "unmountFlags"};
    const char *api = NULL, *kind = NULL, *sock = NULL;
    yaml_node_t *an, *kn, *sn;
    kjoin_code rc;
    if (kjoin_yaml__is_null(root))
        return KJOIN_OK;
    if (root->type != YAML_MAPPING_NODE)
        return kjoin_err_set(err, BAD, "the document at line %zu is not a mapping", KJOIN_YAML_LINE(root));
    if ((rc = string_field(y, root, "document", "apiVersion", &api, &an, err)) ||
        (rc = string_field(y, root, "document", "kind", &kind, &kn, err)))
        return rc;
    if (!kind || strcmp(kind, "ResetConfiguration")) {
        reset_note(c, kind ? kind : "a document without kind", KJOIN_YAML_LINE(root));
        return KJOIN_OK;
    }
    if (!api || strcmp(api, supported[1]))
        return kjoin_err_set(err, BAD, "ResetConfiguration at line %zu has apiVersion \"%s\"; supported: %s",
                             KJOIN_YAML_LINE(root), api ? api : "", supported[1]);
    if (*found)
        return kjoin_err_set(err, BAD, "a second ResetConfiguration at line %zu", KJOIN_YAML_LINE(root));
    *found = true;
    if ((rc = only_keys(y, root, "ResetConfiguration", keys, sizeof(keys) / sizeof(keys[0]), err)) ||
        (rc = string_field(y, root, "ResetConfiguration", "criSocket", &sock, &sn, err)) ||
        (sock && (rc = keep(sock, &c->cri_socket, err))) ||
        (rc = string_list(y, root, "", "skipPhases", &c->skip_phases, err)) ||
        (rc = bool_field(y, root, "ResetConfiguration", "dryRun", &c->dry_run, err)) ||
        (rc = bool_field(y, root, "ResetConfiguration", "cleanupTmpDir", &c->cleanup_tmp_dir, err)))
        return rc;
    for (size_t i = 0; i < sizeof(inapplicable) / sizeof(inapplicable[0]); i++) {
        yaml_node_t *v = NULL;
        if ((rc = kjoin_yaml__get(y, root, inapplicable[i], &v, BAD, err)))
            return rc;
        if (v && !kjoin_yaml__is_null(v))
            reset_note(c, inapplicable[i], KJOIN_YAML_LINE(v));
    }
    return KJOIN_OK;
}

static kjoin_code read_reset_one(kjoin_yaml *y, yaml_node_t *root, bool *found, void *out, kjoin_err *err)
{
    return read_reset(y, root, found, out, err);
}

kjoin_code kjoin_reset_config_parse(const char *yaml, size_t len, kjoin_reset_config *out, kjoin_err *err)
{
    kjoin_reset_config c = {0};
    config_reader r = {.read = read_reset_one, .out = &c};
    kjoin_code rc = read_config(yaml, len, &r, err);
    bool found = r.found;
    if (!rc && !found)
        rc = kjoin_err_set(err, BAD, "no ResetConfiguration (%s) in the configuration", supported[1]);
    if (rc) {
        kjoin_reset_config_release(&c);
        return rc;
    }
    *out = c;
    return KJOIN_OK;
}
