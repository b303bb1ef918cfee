/* Rewriting one value of a kubeconfig: the current cluster's
 * certificate-authority-data or server, in place, every other byte kept. The result is
 * parsed again and compared with the original node for node before anyone
 * may write it, so a scalar style the splice does not foresee can never
 * produce a file kubelet or kubectl cannot read. */
#include <string.h>

#include <kjoin/private/kubeconfig.h>
#include <kjoin/private/util.h>

#include "internal.h"

#define CA_KEY "certificate-authority-data"

/* The scalar node key (certificate-authority-data, server) of the current
 * context's cluster (or of the only cluster when there is no current
 * context), or NULL. */
static yaml_node_t *current_cluster_value(kjoin_yaml *y, const char *key)
{
    yaml_node_t *root = kjoin_yaml__root(y), *cc = NULL, *contexts = NULL, *clusters = NULL, *ctx = NULL,
                *cluster = NULL, *data = NULL;
    const char *name = NULL;
    if (!kjoin_yaml__get(y, root, "current-context", &cc, KJOIN_E_USAGE, NULL) && kjoin_yaml__str(cc) &&
        *kjoin_yaml__str(cc) && !kjoin_yaml__get(y, root, "contexts", &contexts, KJOIN_E_USAGE, NULL)) {
        yaml_node_t *entry = kjoin_kubeconfig__find_named(y, contexts, kjoin_yaml__str(cc)), *c = NULL;
        if (entry && !kjoin_yaml__get(y, entry, "context", &ctx, KJOIN_E_USAGE, NULL) &&
            !kjoin_yaml__get(y, ctx, "cluster", &c, KJOIN_E_USAGE, NULL))
            name = kjoin_yaml__str(c);
    }
    kjoin_yaml__get(y, root, "clusters", &clusters, KJOIN_E_USAGE, NULL);
    yaml_node_t *entry = name ? kjoin_kubeconfig__find_named(y, clusters, name)
                         : kjoin_yaml__len(clusters) == 1 ? kjoin_yaml__item(y, clusters, 0)
                                                          : NULL;
    if (entry && !kjoin_yaml__get(y, entry, "cluster", &cluster, KJOIN_E_USAGE, NULL) && cluster)
        kjoin_yaml__get(y, cluster, key, &data, KJOIN_E_USAGE, NULL);
    return data && kjoin_yaml__str(data) ? data : NULL;
}

static bool same_tag(const yaml_char_t *a, const yaml_char_t *b)
{
    return (!a && !b) || (a && b && strcmp((const char *)a, (const char *)b) == 0);
}

/* Whether b's tree at y is a's at x, but for the node rewritten, which must
 * have become the plain string want. The loader bounds the recursion. */
static bool same_tree(yaml_document_t *a, yaml_node_t *x, yaml_document_t *b, yaml_node_t *y,
                      const yaml_node_t *rewritten, const char *want)
{
    if (!x || !y)
        return false;
    if (x == rewritten)
        return y->type == YAML_SCALAR_NODE && y->data.scalar.length == strlen(want) &&
               memcmp(y->data.scalar.value, want, y->data.scalar.length) == 0;
    if (x->type != y->type || (x->type != YAML_SCALAR_NODE && !same_tag(x->tag, y->tag)))
        return false;
    switch (x->type) {
    case YAML_SCALAR_NODE:
        return x->data.scalar.length == y->data.scalar.length &&
               memcmp(x->data.scalar.value, y->data.scalar.value, x->data.scalar.length) == 0 &&
               (x->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) == (y->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) &&
               same_tag(x->tag, y->tag);
    case YAML_SEQUENCE_NODE: {
        ptrdiff_t n = x->data.sequence.items.top - x->data.sequence.items.start;
        if (n != y->data.sequence.items.top - y->data.sequence.items.start)
            return false;
        for (ptrdiff_t i = 0; i < n; i++)
            if (!same_tree(a, yaml_document_get_node(a, x->data.sequence.items.start[i]), b,
                           yaml_document_get_node(b, y->data.sequence.items.start[i]), rewritten, want))
                return false;
        return true;
    }
    case YAML_MAPPING_NODE: {
        ptrdiff_t n = x->data.mapping.pairs.top - x->data.mapping.pairs.start;
        if (n != y->data.mapping.pairs.top - y->data.mapping.pairs.start)
            return false;
        for (ptrdiff_t i = 0; i < n; i++) {
            yaml_node_pair_t *p = &x->data.mapping.pairs.start[i], *q = &y->data.mapping.pairs.start[i];
            if (!same_tree(a, yaml_document_get_node(a, p->key), b, yaml_document_get_node(b, q->key), rewritten, want) ||
                !same_tree(a, yaml_document_get_node(a, p->value), b, yaml_document_get_node(b, q->value), rewritten,
                           want))
                return false;
        }
        return true;
    }
    case YAML_NO_NODE: break;
    }
    return false;
}

/* The bytes that replace the node: the new value as a plain scalar. A block
 * scalar ("|", ">-") runs to the end of its last line, and its range takes
 * the line break and the next line's indentation with it: those are kept. */
static char *splice(const char *text, size_t len, const yaml_node_t *node, const char *value, size_t *out_len)
{
    size_t start = node->start_mark.index, end = node->end_mark.index, keep = end;
    bool block = node->data.scalar.style == YAML_LITERAL_SCALAR_STYLE ||
                 node->data.scalar.style == YAML_FOLDED_SCALAR_STYLE;
    if (block) {
        size_t i = end;
        while (i > start && (text[i - 1] == ' ' || text[i - 1] == '\t'))
            i--;
        if (i > start && text[i - 1] == '\n')
            keep = i - 1;
    }
    size_t n = strlen(value), total = start + n + (len - keep);
    char *out = malloc(total + 1);
    if (!out)
        return NULL;
    memcpy(out, text, start);
    memcpy(out + start, value, n);
    memcpy(out + start + n, text + keep, len - keep);
    out[total] = '\0';
    *out_len = total;
    return out;
}

/* The current cluster's key, now the plain scalar value; checked as the
 * header says. */
static kjoin_code replace_value(const char *text, size_t len, const char *key, const char *value, char **out,
                                size_t *out_len, kjoin_err *err)
{
    kjoin_yaml old = {0}, now = {0};
    kjoin_err inner;
    char *rewritten = NULL;
    size_t new_len = 0;
    kjoin_code rc = kjoin_yaml__load(&old, text, len, KJOIN_E_USAGE, &inner);
    if (rc)
        return kjoin_err_set(err, rc, "malformed kubeconfig: %s", inner.msg);
    yaml_node_t *node = current_cluster_value(&old, key);
    if (!node)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "the kubeconfig's current cluster has no %s to rewrite%s", key,
                           strcmp(key, CA_KEY) ? "" : " (a certificate-authority path is not rewritten)");
    if (!rc && !(rewritten = splice(text, len, node, value, &new_len)))
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    /* The check: the rewritten bytes read back as the same document with
     * exactly the new value in that one place. */
    if (!rc && (kjoin_yaml__load(&now, rewritten, new_len, KJOIN_E_OTHER, &inner) ||
                !same_tree(&old.doc, kjoin_yaml__root(&old), &now.doc, kjoin_yaml__root(&now), node, value) ||
                current_cluster_value(&now, key) == NULL))
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "rewriting %s (line %zu) would not give a kubeconfig holding exactly "
                                               "the new value and everything else unchanged; nothing written",
                           key, (size_t)node->start_mark.line + 1);
    kjoin_yaml__release(&old);
    kjoin_yaml__release(&now);
    if (rc) {
        kjoin_free_wiped(rewritten, new_len);
        return rc;
    }
    *out = rewritten;
    *out_len = new_len;
    return KJOIN_OK;
}

kjoin_code kjoin_kubeconfig_replace_ca(const char *text, size_t len, const void *ca_pem, size_t ca_len, char **out,
                                       size_t *out_len, kjoin_err *err)
{
    char *b64 = kjoin_b64_encode(ca_pem, ca_len, false);
    if (!b64)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    kjoin_code rc = replace_value(text, len, CA_KEY, b64, out, out_len, err);
    free(b64);
    return rc;
}

kjoin_code kjoin_kubeconfig_replace_server(const char *text, size_t len, const char *server, char **out,
                                           size_t *out_len, kjoin_err *err)
{
    /* An https URL; in a plain scalar after "https://" only a space or a
     * control character could end it early (the check below sees the rest). */
    bool plain = true;
    for (const char *c = server; *c; c++)
        plain = plain && (unsigned char)*c > ' ' && *c != 0x7f;
    if (strncmp(server, "https://", 8) || !plain)
        return kjoin_err_set(err, KJOIN_E_USAGE, "\"%.100s\" is no server URL a kubeconfig can hold", server);
    return replace_value(text, len, "server", server, out, out_len, err);
}
