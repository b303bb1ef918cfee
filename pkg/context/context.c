/* The join's one context: what is left of its deadline, and the options
 * every API client of the join is made with. */
#include <kjoin/private/context.h>

int64_t kjoin_join_context_left_ms(const kjoin_join_context *cx)
{
    int64_t left = cx->deadline_ms ? cx->deadline_ms - kjoin_now_ms() : 60000;
    return left > 0 ? left : 1;
}

kjoin_kubeapi_options kjoin_join_context_api_options(const kjoin_join_context *cx, int64_t bound_ms, int64_t call_ms)
{
    int64_t left = kjoin_join_context_left_ms(cx);
    kjoin_kubeapi_options o = KJOIN_KUBEAPI_OPTIONS_INIT;
    o.timeout_ms = bound_ms > 0 && bound_ms < left ? bound_ms : left;
    o.call_timeout_ms = call_ms < 0 ? 0 : call_ms ? call_ms : cx->timeouts.api_call_ms;
    o.audit_id = cx->audit_id;
    o.log = cx->log;
    o.log_ctx = cx->log_ctx;
    return o;
}
