/* The container runtime asked over its CRI: one gRPC call over HTTP/2 with
 * prior knowledge on its unix socket, through libcurl; what it says is in
 * the answer's grpc-status (a header, or a trailer). */
#include <kjoin/private/cri.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <json-c/json.h>

#include <kjoin/util.h>
#include <kjoin/private/util.h>

#define ANSWER_MAX (64 * 1024) /* a gRPC answer kjoin reads no body of */

void kjoin_cri_header_line(const char *line, size_t len, kjoin_cri_answer *out)
{
    static const char status[] = "grpc-status:", message[] = "grpc-message:";
    char value[512];
    size_t n;
    if (len >= sizeof(status) - 1 && !strncasecmp(line, status, sizeof(status) - 1))
        n = sizeof(status) - 1;
    else if (len >= sizeof(message) - 1 && !strncasecmp(line, message, sizeof(message) - 1))
        n = sizeof(message) - 1;
    else
        return;
    const char *v = line + n, *end = line + len;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
        end--;
    size_t vlen = (size_t)(end - v) < sizeof(value) - 1 ? (size_t)(end - v) : sizeof(value) - 1;
    memcpy(value, v, vlen);
    value[vlen] = '\0';
    if (n == sizeof(status) - 1) {
        /* a code of gRPC's: 0 to 16, and room for more, digits only */
        out->grpc_status = vlen && vlen <= 3 && strspn(value, "0123456789") == vlen ? (int)strtol(value, NULL, 10) : -1;
        return;
    }
    /* percent-encoded by gRPC: shown as it came, made printable */
    kjoin_printable(out->message, sizeof(out->message), value, false);
}

static size_t on_header(char *buf, size_t size, size_t n, void *ctx)
{
    kjoin_cri_header_line(buf, size * n, ctx);
    return size * n;
}

/* An answer's body, up to ANSWER_MAX. */
typedef struct body {
    unsigned char data[ANSWER_MAX];
    size_t len;
    bool over;
} body;

static size_t on_body(char *buf, size_t size, size_t n, void *ctx)
{
    body *b = ctx;
    size_t len = size * n;
    if (len > sizeof(b->data) - b->len) {
        b->over = true;
        return 0;
    }
    memcpy(b->data + b->len, buf, len);
    b->len += len;
    return len;
}

/* One gRPC call: msg (NULL: a request with no message at all) POSTed to
 * method over HTTP/2 with prior knowledge on the unix socket; the answer's
 * status into *said and its body into *b. */
static kjoin_code grpc_post(const char *socket_path, const char *method, const unsigned char *msg, size_t len,
                            int64_t timeout_ms, kjoin_cri_answer *said, body *b, kjoin_err *err)
{
    char url[300];
    unsigned char *framed = NULL;
    *said = (kjoin_cri_answer){.grpc_status = -1};
    b->len = 0, b->over = false;
    if (snprintf(url, sizeof(url), "http://localhost/%s", method) >= (int)sizeof(url))
        return kjoin_err_set(err, KJOIN_E_OTHER, "the CRI method's name is too long");
    if (msg && len > ANSWER_MAX)
        return kjoin_err_set(err, KJOIN_E_OTHER, "the CRI request is too long");
    if (msg && !(framed = malloc(len + 5)))
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    if (msg) { /* gRPC's frame: not compressed, the length big-endian */
        framed[0] = 0;
        for (int i = 0; i < 4; i++)
            framed[1 + i] = (unsigned char)(len >> (8 * (3 - i)));
        memcpy(framed + 5, msg, len);
    }
    CURL *curl = curl_easy_init();
    struct curl_slist *headers = NULL, *h;
    if (!curl) {
        free(framed);
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    if ((h = curl_slist_append(headers, "Content-Type: application/grpc")))
        headers = h;
    if (headers && (h = curl_slist_append(headers, "TE: trailers")))
        headers = h;
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, socket_path);
    curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http");
    curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)(timeout_ms > 0 ? timeout_ms : 1));
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, framed ? (const char *)framed : "");
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)(framed ? len + 5 : 0)); /* no message: the request ends with
                                                                                 * its headers */
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "kjoin");
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, said);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, b);
    CURLcode c = curl_easy_perform(curl);
    long http = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &http);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    free(framed);
    if (!headers)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    if (c != CURLE_OK || said->grpc_status < 0)
        return kjoin_err_set(err, KJOIN_E_TRANSIENT, "the container runtime at %s gave no gRPC answer to %s (%s, HTTP %ld)",
                             socket_path, method, b->over ? "an answer over 64 KiB"
                                              : c != CURLE_OK ? curl_easy_strerror(c) : "no grpc-status", http);
    return KJOIN_OK;
}

kjoin_code kjoin_cri_implements(const char *socket_path, const char *method, int64_t timeout_ms, bool *implemented,
                                kjoin_cri_answer *said, kjoin_err *err)
{
    body *b = malloc(sizeof(*b)); /* (64 KiB: not on the stack) */
    *implemented = false;
    if (!b)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    kjoin_code rc = grpc_post(socket_path, method, NULL, 0, timeout_ms, said, b, err);
    if (!rc)
        *implemented = said->grpc_status != 12; /* gRPC's Unimplemented */
    free(b);
    return rc;
}

kjoin_code kjoin_cri_message(const unsigned char *data, size_t len, const unsigned char **msg, size_t *msg_len,
                             kjoin_err *err)
{
    if (len < 5 || data[0] != 0)
        return kjoin_err_set(err, KJOIN_E_OTHER, "the runtime's answer is no uncompressed gRPC message");
    size_t n = (size_t)data[1] << 24 | (size_t)data[2] << 16 | (size_t)data[3] << 8 | data[4];
    if (n != len - 5)
        return kjoin_err_set(err, KJOIN_E_OTHER, "the runtime's gRPC message says %zu bytes and has %zu", n, len - 5);
    *msg = data + 5;
    *msg_len = n;
    return KJOIN_OK;
}

/* One call that must succeed: its answer's message into *b (msg within it). */
static kjoin_code call(const char *socket_path, const char *method, const unsigned char *req, size_t len,
                       int64_t timeout_ms, body *b, const unsigned char **msg, size_t *msg_len, kjoin_err *err)
{
    kjoin_cri_answer said;
    kjoin_code rc = grpc_post(socket_path, method, req, len, timeout_ms, &said, b, err);
    if (!rc && said.grpc_status != 0)
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "the container runtime refused %s: gRPC status %d: %s", method,
                           said.grpc_status, said.message);
    if (!rc && !b->len) { /* an empty message is sent as a frame of length 0, or as none */
        *msg = b->data, *msg_len = 0;
        return KJOIN_OK;
    }
    return rc ? rc : kjoin_cri_message(b->data, b->len, msg, msg_len, err);
}

bool kjoin_cri_image_status_present(const unsigned char *msg, size_t len)
{
    const unsigned char *p = msg, *end = msg + len;
    kjoin_pb_field f;
    int r;
    while ((r = kjoin_pb_next(&p, end, &f)) == 1)
        if (f.field == 1 && f.wire == 2 && f.len) /* ImageStatusResponse.image: absent when the runtime has none */
            return true;
    return false;
}

kjoin_code kjoin_cri_image_present(const char *socket_path, const char *image, int64_t timeout_ms, bool *present,
                                   kjoin_err *err)
{
    unsigned char spec[600], req[620];
    const unsigned char *msg;
    size_t msg_len, n = kjoin_pb_put_bytes(spec, sizeof(spec), 1, image, strlen(image)); /* ImageSpec.image */
    size_t m = n ? kjoin_pb_put_bytes(req, sizeof(req), 1, spec, n) : 0;          /* ImageStatusRequest.image */
    *present = false;
    if (!m)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the image name is too long");
    body *b = malloc(sizeof(*b));
    if (!b)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    kjoin_code rc = call(socket_path, "runtime.v1.ImageService/ImageStatus", req, m, timeout_ms, b, &msg, &msg_len, err);
    if (!rc)
        *present = kjoin_cri_image_status_present(msg, msg_len);
    free(b);
    return rc;
}

bool kjoin_cri_config_sandbox_image(const char *json, size_t len, char *out, size_t cap)
{
    json_object *o = kjoin_json_whole(json, len), *pinned = o ? kjoin_json_at(o, "pinnedImages") : NULL;
    /* containerd 1.x: config.sandboxImage; 2.x: config.pinnedImages.sandbox */
    const char *image = o ? kjoin_json_str(o, "sandboxImage") : NULL;
    if (!image && pinned)
        image = kjoin_json_str(pinned, "sandbox");
    bool ok = image && *image && strlen(image) < cap && strlen(image) < 512 && kjoin_utf8_printable(image) &&
              !strpbrk(image, " \t\"'\\");
    *out = '\0';
    if (ok)
        snprintf(out, cap, "%s", image);
    json_object_put(o);
    return ok;
}

bool kjoin_cri_status_sandbox_image(const unsigned char *msg, size_t len, char *out, size_t cap)
{
    const unsigned char *p = msg, *end = msg + len;
    kjoin_pb_field f, e;
    int r;
    *out = '\0';
    while ((r = kjoin_pb_next(&p, end, &f)) == 1) {
        if (f.field != 2 || f.wire != 2) /* StatusResponse.info: map<string, string> */
            continue;
        const unsigned char *q = f.data, *qend = f.data + f.len, *key = NULL, *value = NULL;
        size_t key_len = 0, value_len = 0;
        while (kjoin_pb_next(&q, qend, &e) == 1)
            if (e.wire == 2 && e.field == 1)
                key = e.data, key_len = e.len;
            else if (e.wire == 2 && e.field == 2)
                value = e.data, value_len = e.len;
        if (key && key_len == 6 && !memcmp(key, "config", 6) && value)
            return kjoin_cri_config_sandbox_image((const char *)value, value_len, out, cap);
    }
    return false;
}

kjoin_code kjoin_cri_sandbox_image(const char *socket_path, int64_t timeout_ms, char *out, size_t cap, kjoin_err *err)
{
    unsigned char req[8];
    const unsigned char *msg;
    size_t msg_len, n = kjoin_pb_put_varint(req, sizeof(req), 1, 1); /* StatusRequest.verbose */
    *out = '\0';
    body *b = malloc(sizeof(*b));
    if (!b)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    kjoin_code rc = call(socket_path, "runtime.v1.RuntimeService/Status", req, n, timeout_ms, b, &msg, &msg_len, err);
    if (!rc && !kjoin_cri_status_sandbox_image(msg, msg_len, out, cap))
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "the container runtime's status names no sandbox image (its verbose "
                                               "information has no config.sandboxImage)");
    free(b);
    return rc;
}
