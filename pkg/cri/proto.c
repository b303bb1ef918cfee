/* The few pieces of protobuf's wire format the CRI's messages need: a
 * length-delimited or varint field written, and a message's fields read one
 * by one (a runtime's answer is untrusted: every length is checked against
 * what is left). */
#include <kjoin/private/cri.h>

#include <string.h>

/* A varint into out (at most 10 bytes); its length, 0 when cap is short. */
static size_t put_varint(unsigned char *out, size_t cap, uint64_t v)
{
    size_t n = 0;
    do {
        if (n == cap)
            return 0;
        out[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return n;
}

size_t kjoin_pb_put_bytes(unsigned char *out, size_t cap, unsigned field, const void *data, size_t len)
{
    size_t k = put_varint(out, cap, ((uint64_t)field << 3) | 2), l = k ? put_varint(out + k, cap - k, len) : 0;
    if (!k || !l || cap - k - l < len)
        return 0;
    if (len)
        memcpy(out + k + l, data, len);
    return k + l + len;
}

size_t kjoin_pb_put_varint(unsigned char *out, size_t cap, unsigned field, uint64_t value)
{
    size_t k = put_varint(out, cap, (uint64_t)field << 3), v = k ? put_varint(out + k, cap - k, value) : 0;
    return k && v ? k + v : 0;
}

static bool get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    *v = 0;
    for (unsigned shift = 0; shift < 64 && *p < end; shift += 7) {
        unsigned char b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return true;
    }
    return false;
}

int kjoin_pb_next(const unsigned char **p, const unsigned char *end, kjoin_pb_field *f)
{
    uint64_t key, len;
    if (*p >= end)
        return 0;
    memset(f, 0, sizeof(*f));
    if (!get_varint(p, end, &key) || (key >> 3) == 0 || (key >> 3) > 0x1fffffff)
        return -1;
    f->field = (unsigned)(key >> 3);
    f->wire = (int)(key & 7);
    switch (f->wire) {
    case 0:
        return get_varint(p, end, &f->varint) ? 1 : -1;
    case 1: /* 64-bit */
    case 5: /* 32-bit */
        len = f->wire == 1 ? 8 : 4;
        break;
    case 2:
        if (!get_varint(p, end, &len))
            return -1;
        break;
    default: /* groups (3, 4) are not in the CRI's messages */
        return -1;
    }
    if (len > (uint64_t)(end - *p))
        return -1;
    f->data = *p;
    f->len = (size_t)len;
    *p += len;
    return 1;
}
