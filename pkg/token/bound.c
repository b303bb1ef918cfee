/* Node-bound tokens: the groups that carry a token's binding to one node. */
#include <stdio.h>
#include <string.h>

#include <kjoin/private/token.h>
#include <kjoin/private/util.h>

#define PREFIX_LEN (sizeof(KJOIN_TOKEN_NODE_GROUP_PREFIX) - 1)

kjoin_code kjoin_token_node_group(const char *node, char *out, size_t cap, kjoin_err *err)
{
    kjoin_err in;
    size_t n = strlen(node);
    if (n > KJOIN_TOKEN_BOUND_NAME_MAX)
        return kjoin_err_set(err, KJOIN_E_USAGE,
                             "a token can be bound to a node name of at most %d characters (a group's limit); "
                             "\"%.40s...\" has %zu",
                             KJOIN_TOKEN_BOUND_NAME_MAX, node, n);
    if (kjoin_dns_subdomain_check(node, &in))
        return kjoin_err_set(err, KJOIN_E_USAGE, "\"%.253s\" is not a valid node name: %s", node, in.msg);
    if (PREFIX_LEN + n + 1 > cap)
        return kjoin_err_set(err, KJOIN_E_OTHER, "no room for the group of node %s", node);
    memcpy(out, KJOIN_TOKEN_NODE_GROUP_PREFIX, PREFIX_LEN);
    for (size_t i = 0; i <= n; i++) /* the NUL too */
        out[PREFIX_LEN + i] = node[i] == '.' ? ':' : node[i];
    return KJOIN_OK;
}

static bool is(const char *group, size_t len, const char *name)
{
    return len == strlen(name) && memcmp(group, name, len) == 0;
}

void kjoin_token_binding_add(kjoin_token_binding *b, const char *group, size_t len)
{
    if (is(group, len, KJOIN_TOKEN_BOUND_GROUP)) {
        b->bound = true;
        return;
    }
    if (is(group, len, KJOIN_TOKEN_SINGLE_USE_GROUP)) {
        b->single_use = true;
        return;
    }
    if (len <= PREFIX_LEN || memcmp(group, KJOIN_TOKEN_NODE_GROUP_PREFIX, PREFIX_LEN) != 0)
        return;
    char name[sizeof(b->node)];
    size_t n = len - PREFIX_LEN;
    bool fits = n < sizeof(name);
    for (size_t i = 0; fits && i < n; i++) {
        char c = group[PREFIX_LEN + i];
        name[i] = c == ':' ? '.' : c;
        fits = c != '.' && c != '\0'; /* '.' never appears in an encoded name */
    }
    if (fits)
        name[n] = '\0';
    /* A second node group makes the binding ambiguous: it binds nothing. */
    if (b->node_groups++ == 0 && fits && kjoin_dns_subdomain_valid(name))
        snprintf(b->node, sizeof(b->node), "%s", name);
    else
        b->node[0] = '\0';
}

void kjoin_token_binding_of(const char *groups, kjoin_token_binding *out)
{
    memset(out, 0, sizeof(*out));
    for (const char *p = groups; *p;) {
        size_t n = strcspn(p, ",");
        kjoin_token_binding_add(out, p, n);
        p += n + (p[n] == ',');
    }
}

bool kjoin_token_binding_valid(const kjoin_token_binding *b)
{
    return b->bound && b->node_groups == 1 && *b->node;
}
