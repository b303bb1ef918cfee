#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>

#include <kjoin/private/err.h>
#include <kjoin/private/util.h>

static void vset(kjoin_err *err, kjoin_code code, const char *fmt, va_list ap)
{
    err->code = code;
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    kjoin_mask_keys(err->msg);
}

kjoin_code kjoin_err_set(kjoin_err *err, kjoin_code code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vset(err, code, fmt, ap);
        va_end(ap);
    }
    return code;
}

kjoin_code kjoin_err_ossl(kjoin_err *err, kjoin_code code, const char *fmt, ...)
{
    unsigned long e = ERR_peek_last_error();
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vset(err, code, fmt, ap);
        va_end(ap);
        const char *reason = e ? ERR_reason_error_string(e) : NULL;
        if (reason) {
            size_t used = strlen(err->msg);
            snprintf(err->msg + used, sizeof(err->msg) - used, ": %s", reason);
        }
        kjoin_mask_keys(err->msg);
    }
    ERR_clear_error();
    return code;
}

const char *kjoin_code_reason(kjoin_code code)
{
    switch (code) {
    case KJOIN_OK: return "OK";
    case KJOIN_E_USAGE: return "InvalidInput";
    case KJOIN_E_TIMEOUT: return "DiscoveryTimeout";
    case KJOIN_E_TRUST: return "TrustVerificationFailed";
    case KJOIN_E_OUTPUT: return "OutputNotWritten";
    case KJOIN_E_API: return "APIRequestRefused";
    case KJOIN_E_TAKEN_BACK: return "TakenBack";
    case KJOIN_E_TOKEN_REJECTED: return "TokenRejected";
    case KJOIN_E_TRANSIENT: return "Transient";
    case KJOIN_E_OTHER: break;
    }
    return "Failed";
}

kjoin_code kjoin_version_check(const unsigned *version, unsigned want, const char *what, const char *init,
                               kjoin_err *err)
{
    if (version && *version == want)
        return KJOIN_OK;
    if (!version)
        return kjoin_err_set(err, KJOIN_E_USAGE, "no %s was given", what);
    return kjoin_err_set(err, KJOIN_E_USAGE, "the %s is of version %u, this library's is %u: begin it with %s", what,
                         *version, want, init);
}
