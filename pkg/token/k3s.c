/* K3s join tokens (k3s-io/k3s pkg/clientaccess/token.go), parsed the same
 * way, except that the CA hash must be lower-case hex (K3s compares the
 * string as written, so anything else could never match). */
#include <string.h>

#include <openssl/crypto.h>

#include <kjoin/private/token.h>
#include <kjoin/private/util.h>

#define PREFIX "K10"

bool kjoin_token_is_k3s(const char *s)
{
    /* Only the K10 prefix says K3s: a mistyped bootstrap token (a character
     * too many, a trailing space, a BOM) must fail as one, not silently become
     * a K3s password. Bare passwords need the flavour said explicitly. */
    return strncmp(s, PREFIX, 3) == 0;
}

static kjoin_code parse_hash(const char *hex, size_t len, kjoin_k3s_token *t, kjoin_err *err)
{
    if (len == 0)
        return KJOIN_OK;
    if (len != 2 * KJOIN_K3S_HASH_LEN)
        return kjoin_err_set(err, KJOIN_E_USAGE, "invalid K3s token: the CA hash must be 64 hex digits, it has %zu",
                             len);
    for (size_t i = 0; i < len; i++)
        if (hex[i] >= 'A' && hex[i] <= 'F')
            return kjoin_err_set(err, KJOIN_E_USAGE, "invalid K3s token: the CA hash has upper-case hex digits; K3s "
                                                     "compares it as written, with the lower-case hash it computes");
    if (!kjoin_hex_decode(hex, KJOIN_K3S_HASH_LEN, t->hash))
        return kjoin_err_set(err, KJOIN_E_USAGE, "invalid K3s token: the CA hash is not hexadecimal");
    t->has_hash = true;
    return KJOIN_OK;
}

/* "<bootstrap token>" or "<user>:<password>" with a non-empty password. */
static kjoin_code parse_creds(const char *creds, kjoin_k3s_token *t, kjoin_err *err)
{
    if (kjoin_token_parse(creds, &t->bootstrap, NULL) == KJOIN_OK) {
        t->is_bootstrap = true;
        return KJOIN_OK;
    }
    const char *colon = strchr(creds, ':');
    if (!colon || !colon[1])
        return kjoin_err_set(err, KJOIN_E_USAGE,
                             "invalid K3s token format: expected K10<CA-HASH>::<USERNAME>:<PASSWORD>, "
                             "K10<CA-HASH>::<BOOTSTRAP-TOKEN> or <PASSWORD>");
    size_t user_len = (size_t)(colon - creds), pass_len = strlen(colon + 1);
    if (user_len >= KJOIN_K3S_FIELD_MAX || pass_len >= KJOIN_K3S_FIELD_MAX)
        return kjoin_err_set(err, KJOIN_E_USAGE, "invalid K3s token: user name or password longer than %d bytes",
                             KJOIN_K3S_FIELD_MAX - 1);
    memcpy(t->username, creds, user_len);
    memcpy(t->password, colon + 1, pass_len);
    return KJOIN_OK;
}

kjoin_code kjoin_k3s_token_parse(const char *s, kjoin_k3s_token *out, kjoin_err *err)
{
    if (!s || !*s)
        return kjoin_err_set(err, KJOIN_E_USAGE, "token must not be empty");
    kjoin_k3s_token t;
    memset(&t, 0, sizeof(t));
    kjoin_code rc;
    if (strncmp(s, PREFIX, 3) != 0) {
        /* A bootstrap token as it is, anything else a bare password (user ""). */
        kjoin_token bt;
        if (kjoin_token_parse(s, &bt, NULL) == KJOIN_OK) {
            t.is_bootstrap = true;
            t.bootstrap = bt;
            kjoin_token_clear(&bt);
            rc = KJOIN_OK;
        } else if (strlen(s) >= KJOIN_K3S_FIELD_MAX) {
            rc = kjoin_err_set(err, KJOIN_E_USAGE, "invalid K3s token: password longer than %d bytes",
                               KJOIN_K3S_FIELD_MAX - 1);
        } else {
            memcpy(t.password, s, strlen(s));
            rc = KJOIN_OK;
        }
    } else {
        const char *rest = s + 3, *sep = strstr(rest, "::");
        /* Without "::" K3s drops the prefix and reads the rest as credentials. */
        rc = sep ? parse_hash(rest, (size_t)(sep - rest), &t, err) : KJOIN_OK;
        if (!rc)
            rc = parse_creds(sep ? sep + 2 : rest, &t, err);
    }
    if (!rc)
        *out = t;
    kjoin_k3s_token_clear(&t);
    return rc;
}

void kjoin_k3s_token_clear(kjoin_k3s_token *t) { OPENSSL_cleanse(t, sizeof(*t)); }
