#include <time.h>

#include <openssl/rand.h>

#include <kjoin/util.h>

int64_t kjoin_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

kjoin_code kjoin_random_bytes(void *buf, size_t len, kjoin_err *err)
{
    if (len > (size_t)INT32_MAX || RAND_bytes(buf, (int)len) != 1)
        return kjoin_err_ossl(err, KJOIN_E_OTHER, "random number generator failed");
    return KJOIN_OK;
}
