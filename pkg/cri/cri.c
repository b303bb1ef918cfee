/* The container runtime asked over its CRI: one gRPC call over HTTP/2 with
 * prior knowledge on its unix socket, through libcurl; what it says is in
 * the answer's grpc-status (a header, or a trailer). */
#include <kjoin/private/cri.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include <kjoin/util.h>

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

static size_t on_body(char *buf, size_t size, size_t n, void *ctx)
{
    size_t *seen = ctx;
    (void)buf;
    *seen += size * n;
    return *seen > ANSWER_MAX ? 0 : size * n;
}

kjoin_code kjoin_cri_implements(const char *socket_path, const char *method, int64_t timeout_ms, bool *implemented,
                                kjoin_cri_answer *said, kjoin_err *err)
{
    char url[300];
    size_t seen = 0;
    *said = (kjoin_cri_answer){.grpc_status = -1};
    *implemented = false;
    if (snprintf(url, sizeof(url), "http://localhost/%s", method) >= (int)sizeof(url))
        return kjoin_err_set(err, KJOIN_E_OTHER, "the CRI method's name is too long");
    CURL *curl = curl_easy_init();
    struct curl_slist *headers = NULL, *h;
    if (!curl)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
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
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "");
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, 0L); /* no message: the request ends with its headers */
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "kjoin");
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, said);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &seen);
    CURLcode c = curl_easy_perform(curl);
    long http = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &http);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    if (!headers)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    if (c != CURLE_OK || said->grpc_status < 0)
        return kjoin_err_set(err, KJOIN_E_TRANSIENT, "the container runtime at %s gave no gRPC answer to %s (%s, HTTP %ld)",
                             socket_path, method, c != CURLE_OK ? curl_easy_strerror(c) : "no grpc-status", http);
    *implemented = said->grpc_status != 12; /* gRPC's Unimplemented */
    return KJOIN_OK;
}
