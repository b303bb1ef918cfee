#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uuid/uuid.h>

#include <kjoin/kubeapi.h>
#include <kjoin/pin.h>
#include <kjoin/util.h>

#include "cli.h"

#define MAX_OPTS 64

const char *cli_current_flag;
#define ID_HELP -1

static void print_help(const cli_verb *v)
{
    cli_out(stdout, "Usage: %s\n\n%s\n", v->usage, v->summary);
    if (v->n_opts)
        cli_out(stdout, "\nFlags:\n");
    for (size_t i = 0; i < v->n_opts; i++) {
        const cli_opt *o = &v->opts[i];
        char left[96];
        int n = o->short_name ? snprintf(left, sizeof(left), "  -%c, --%s", o->short_name, o->name)
                              : snprintf(left, sizeof(left), "      --%s", o->name);
        if (o->takes_arg)
            snprintf(left + n, sizeof(left) - (size_t)n, " %s", o->metavar ? o->metavar : "VALUE");
        if (strlen(left) > 48) /* too wide for the column: the help goes on the next line */
            cli_out(stdout, "%s\n%-48s %s\n", left, "", o->help);
        else
            cli_out(stdout, "%-48s %s\n", left, o->help);
    }
    cli_out(stdout, "%-48s %s\n", "  -h, --help", "show this help");
}

static const cli_opt *find_long(const cli_verb *v, const char *name, size_t len)
{
    for (size_t i = 0; i < v->n_opts; i++)
        if (strlen(v->opts[i].name) == len && strncmp(v->opts[i].name, name, len) == 0)
            return &v->opts[i];
    return NULL;
}

/* getopt_long takes any unambiguous prefix of a long option: --kubeconfig
 * would silently be --kubeconfig-out. Every long option must be spelled out;
 * an unknown one is named without its "=value", which may be a secret. */
static kjoin_code exact_long_options(const cli_verb *v, int argc, char **argv, kjoin_err *err)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0)
            break;
        if (a[0] == '-' && a[1] != '-' && a[1]) {
            /* short options: skip the value of the last one if it takes one */
            for (size_t j = 1; a[j]; j++) {
                const cli_opt *o = NULL;
                for (size_t k = 0; k < v->n_opts && !o; k++)
                    if (v->opts[k].short_name == a[j])
                        o = &v->opts[k];
                if (o && o->takes_arg) {
                    i += a[j + 1] ? 0 : 1;
                    break;
                }
            }
            continue;
        }
        if (strncmp(a, "--", 2) != 0)
            continue;
        size_t len = strcspn(a + 2, "=");
        const cli_opt *o = find_long(v, a + 2, len);
        if (!o && !(len == 4 && strncmp(a + 2, "help", 4) == 0)) {
            const char *names[64], *near;
            size_t n = 0;
            for (size_t k = 0; k < v->n_opts && n < 64; k++)
                names[n++] = v->opts[k].name;
            near = kjoin_did_you_mean(a + 2, len, names, n);
            return kjoin_err_set(err, KJOIN_E_USAGE, "unknown flag --%.*s%s%s%s; see --help", (int)(len > 64 ? 64 : len),
                                 a + 2, near ? " (did you mean --" : "", near ? near : "", near ? "?)" : "");
        }
        if (o && o->takes_arg && !a[2 + len])
            i++;
        if (o && !o->takes_arg && a[2 + len])
            return kjoin_err_set(err, KJOIN_E_USAGE, "flag --%s takes no value", o->name);
    }
    return KJOIN_OK;
}

int cli_parse(const cli_verb *v, int argc, char **argv, cli_handler handler, void *ctx,
              int *first_arg, kjoin_err *err)
{
    kjoin_code pre = exact_long_options(v, argc, argv, err);
    if (pre)
        return pre;
    struct option longs[MAX_OPTS + 2];
    char shorts[3 * MAX_OPTS + 4] = "h";
    size_t ns = strlen(shorts), n = v->n_opts;
    if (n > MAX_OPTS) /* a verb's table outgrew the parser: every flag past it would be refused */
        return kjoin_err_set(err, KJOIN_E_OTHER, "this command has %zu flags, more than the %d kjoin parses", n,
                             MAX_OPTS);
    for (size_t i = 0; i < n; i++) {
        const cli_opt *o = &v->opts[i];
        longs[i] = (struct option){o->name, o->takes_arg ? required_argument : no_argument, NULL,
                                   256 + (int)i};
        if (o->short_name) {
            shorts[ns++] = o->short_name;
            if (o->takes_arg)
                shorts[ns++] = ':';
        }
    }
    shorts[ns] = '\0';
    longs[n] = (struct option){"help", no_argument, NULL, 'h'};
    longs[n + 1] = (struct option){0};

    opterr = 0;
    optind = 1;
    kjoin_code first_rc = KJOIN_OK;
    unsigned problems = 0;
    for (;;) {
        int c = getopt_long(argc, argv, shorts, longs, NULL);
        if (c == -1)
            break;
        if (c == 'h') {
            print_help(v);
            return ID_HELP;
        }
        if (c == '?' || c == ':') {
            const char *bad = argv[optind - 1];
            if (optopt && optopt < 256)
                return kjoin_err_set(err, KJOIN_E_USAGE, "unknown or incomplete flag -%c; see --help", optopt);
            return kjoin_err_set(err, KJOIN_E_USAGE, "flag %.*s needs a value; see --help",
                                 (int)strcspn(bad, "="), bad);
        }
        const cli_opt *o = NULL;
        if (c >= 256)
            o = &v->opts[c - 256];
        for (size_t i = 0; !o && i < n; i++)
            if (v->opts[i].short_name == c)
                o = &v->opts[i];
        cli_current_flag = o->name;
        kjoin_err one;
        kjoin_code rc = handler(ctx, o->id, optarg, &one);
        /* Every flag is read: all their problems are said at once, as kubeadm validates its command line. */
        if (rc && !first_rc) {
            first_rc = rc, problems = 1;
            *err = one;
        } else if (rc && problems++ < 4) {
            size_t used = strlen(err->msg);
            snprintf(err->msg + used, sizeof(err->msg) - used, "; %s", one.msg);
        }
    }
    if (first_rc)
        return first_rc;
    int args = argc - optind;
    if (args < v->min_args || (v->max_args >= 0 && args > v->max_args))
        return kjoin_err_set(err, KJOIN_E_USAGE, "wrong number of arguments; usage: %s", v->usage);
    *first_arg = optind;
    return KJOIN_OK;
}

int cli_exit_code(kjoin_code code)
{
    switch (code) {
    case KJOIN_OK: return 0;
    case KJOIN_E_USAGE: return 2;
    case KJOIN_E_TIMEOUT: return 3;
    case KJOIN_E_TRUST: return 4;
    case KJOIN_E_OUTPUT: return 5;
    case KJOIN_E_API: return 6;
    case KJOIN_E_TAKEN_BACK: return 7;
    case KJOIN_E_TOKEN_REJECTED: return 8;
    case KJOIN_E_OTHER:
    case KJOIN_E_TRANSIENT: break;
    }
    return 1;
}

kjoin_code cli_parse_format(const char *arg, cli_format *out, kjoin_err *err)
{
    if (strcmp(arg, "json") == 0)
        *out = CLI_JSON;
    else if (strcmp(arg, "text") == 0)
        *out = CLI_TEXT;
    else
        return kjoin_err_set(err, KJOIN_E_USAGE, "unknown output format \"%s\" (use text or json)", arg);
    return KJOIN_OK;
}

void cli_print_json(json_object *obj)
{
    puts(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    fflush(stdout);
    json_object_put(obj);
}

const char *cli_verb_name = "";

json_object *cli_error_json(const kjoin_err *err)
{
    json_object *e = json_object_new_object();
    /* A deadline is discovery's only for the verbs that discover. */
    bool discovers = strcmp(cli_verb_name, "join") == 0;
    const char *reason = err->code == KJOIN_E_TIMEOUT && !discovers ? "Timeout" : kjoin_code_reason(err->code);
    json_object_object_add(e, "code", json_object_new_int(cli_exit_code(err->code)));
    json_object_object_add(e, "reason", json_object_new_string(reason));
    json_object_object_add(e, "message", json_object_new_string(err->msg));
    return e;
}

/* Library fields every verb names the same way. */
static const cli_field common_names[] = {
    {"force", "--force"},
    {"ca_cert", "--ca-cert"},
    {"ca_key", "--ca-key"},
    {"discovery_file", "--discovery-file"},
    {"tls_bootstrap_token", "--tls-bootstrap-token"},
    {"pins", "--discovery-token-ca-cert-hash"},
    {"unsafe_skip_ca_verification", "--discovery-token-unsafe-skip-ca-verification"},
};

/* The section of docs/troubleshooting.md that explains a message, by what
 * the message says (the first that matches); NULL when none does. */
static const char *troubleshooting_section(const char *msg)
{
    static const struct {
        const char *says, *section;
    } sections[] = {
        /* first: their messages may hold a connection's own failure */
        {"the new etcd member never started", "the new etcd member never started"},
        {"the learner was not promoted", "the new etcd member does not catch up"},
        {"the etcd cluster was not available", "the new etcd member does not catch up"},
        {"rejects token id", "the API server rejects the token"},
        {"no signature for token id", "no signature for the token id"},
        {"is invalid for this cluster or has expired", "invalid or expired (empty signature)"},
        {"does not match the cluster-info kubeconfig", "bad signature"},
        {"matches a pinned hash", "no certificate matches a pinned hash"},
        {"the proxy refused", "a proxy in the way"},
        {"through the proxy", "a proxy in the way"},
        {"connection refused", "connection refused"},
        {"unreachable (no route", "unreachable"},
        {"does not resolve (DNS)", "the host name does not resolve"},
        {"timed out (no answer", "timed out"},
        {"TLS verification of", "TLS verification failed"},
        {"preflight check", "Preflight"},
        {"did not bootstrap by the deadline", "the kubelet did not bootstrap by the deadline"},
        {"within timeouts.kubeletHealthCheck", "the kubelet did not bootstrap by the deadline"},
        {"within timeouts.tlsBootstrap", "the kubelet did not bootstrap by the deadline"},
        {"the kubelet exited", "the kubelet exits"},
        {"the kubelet keeps exiting", "the kubelet exits"},
        {"kubeadm-certs was not found", "the certificate key expired"},
        {"the certificate key does not open", "the certificate key does not open the Secret"},
    };
    for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
        if (strstr(msg, sections[i].says))
            return sections[i].section;
    return NULL;
}

int cli_fail_with(cli_format format, const kjoin_err *in, json_object *extra)
{
    kjoin_err named = *in, *err = &named;
    cli_name_fields(named.msg, sizeof(named.msg), in->msg, common_names, sizeof(common_names) / sizeof(common_names[0]));
    kjoin_printable(named.msg, sizeof(named.msg), named.msg, false);
    const char *section = troubleshooting_section(err->msg);
    if (section) /* on the error's own line: a log keeps them together */
        fprintf(stderr, "kjoin: %s (cause and fix: %s/troubleshooting.md, \"%s\")\n", err->msg, KJOIN_DOC_DIR,
                section);
    else
        fprintf(stderr, "kjoin: %s\n", err->msg);
    if (format == CLI_JSON) {
        json_object *root = json_object_new_object(), *e = cli_error_json(err);
        if (section)
            json_object_object_add(e, "troubleshooting", json_object_new_string(section));
        if (extra) {
            json_object_object_foreach(extra, key, value) json_object_object_add(e, key, json_object_get(value));
        }
        json_object_object_add(root, "error", e);
        cli_print_json(root);
    }
    json_object_put(extra);
    return cli_exit_code(err->code);
}

int cli_fail(cli_format format, const kjoin_err *in) { return cli_fail_with(format, in, NULL); }

char *cli_rfc3339(int64_t t, char *buf, size_t cap)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm) || !strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(buf, cap, "?");
    return buf;
}

kjoin_code cli_flag_err(const char *flag, kjoin_code rc, kjoin_err *err)
{
    if (rc && err) {
        char inner[KJOIN_ERR_MSG_MAX];
        memcpy(inner, err->msg, sizeof(inner));
        kjoin_err_set(err, rc, "%s: %s", flag, inner);
    }
    return rc;
}

cli_format cli_format_from_argv(int argc, char **argv)
{
    cli_format f = CLI_TEXT;
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *a = argv[i], *v = NULL;
        if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && i + 1 < argc)
            v = argv[++i];
        else if (strncmp(a, "--output=", 9) == 0)
            v = a + 9;
        else if (strncmp(a, "-o", 2) == 0)
            v = a + 2;
        if (v)
            f = strcmp(v, "json") == 0 ? CLI_JSON : strcmp(v, "text") == 0 ? CLI_TEXT : f;
    }
    return f;
}

int cli_group(int argc, char **argv, const char *group, const char *summary, const char *const *names,
              const cli_verb *const *verbs, size_t n)
{
    bool help = argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
                              strcmp(argv[1], "help") == 0);
    for (size_t i = 0; !help && argc >= 2 && i < n; i++)
        if (strcmp(argv[1], names[i]) == 0)
            return (int)i;
    FILE *f = help ? stdout : stderr;
    if (!help && argc >= 2)
        cli_out(f, "kjoin: unknown %s command \"%.40s\"\n\n", group, argv[1]);
    else if (!help)
        cli_out(f, "kjoin: %s needs a command\n\n", group);
    fprintf(f, "Usage: %s COMMAND [flags]\n\n%s\n\nCommands:\n", group, summary);
    for (size_t i = 0; i < n; i++) {
        /* The summary's first sentence, on one line. */
        char line[200];
        size_t k = 0;
        for (const char *p = verbs[i]->summary; *p && k + 1 < sizeof(line); p++) {
            line[k++] = *p == '\n' ? ' ' : *p;
            if (*p == '.' && (p[1] == ' ' || p[1] == '\n' || !p[1]))
                break;
        }
        line[k] = '\0';
        fprintf(f, "  %-18s %s\n", names[i], line);
    }
    fprintf(f, "\nRun '%s COMMAND --help' for a command's flags.\n", group);
    return help ? -1 : -3;
}

void cli_scrub_secret(char *arg)
{
    if (!arg)
        return;
    char *secret = strstr(arg, "::");
    if (secret)
        secret += 2;
    else if ((secret = strchr(arg, '.')))
        secret += 1;
    else
        secret = arg;
    memset(secret, '*', strlen(secret));
}

const char *cli_run_id(char buf[CLI_RUN_ID_LEN])
{
    uuid_t uu;
    uuid_generate_random(uu);
    uuid_unparse_lower(uu, buf);
    return buf;
}

void cli_out(FILE *f, const char *fmt, ...)
{
    char raw[8192], shown[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);
    fputs(kjoin_printable(shown, sizeof(shown), raw, true), f);
}

kjoin_code cli_parse_long(const char *flag, const char *arg, long min, long max, long *out,
                          kjoin_err *err)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno || end == arg || *end || v < min || v > max)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s takes a whole number from %ld to %ld, not \"%s\"",
                             flag, min, max, arg);
    *out = v;
    return KJOIN_OK;
}

json_object *cli_cert_json(const kjoin_cert_info *c, bool detail)
{
    json_object *o = json_object_new_object(), *pins = json_object_new_array();
    json_object_object_add(o, "subject", json_object_new_string(c->subject));
    if (detail) {
        json_object_object_add(o, "issuer", json_object_new_string(c->issuer));
        json_object_object_add(o, "notBefore", json_object_new_string(c->not_before));
    }
    json_object_object_add(o, "notAfter", json_object_new_string(c->not_after));
    if (detail) {
        json_object_object_add(o, "role", json_object_new_string(kjoin_cert_role_name(c->role)));
        json_object_object_add(o, "selfSigned", json_object_new_boolean(c->self_signed));
    }
    json_object_array_add(pins, json_object_new_string(c->spki_pin));
    if (*c->root_pin)
        json_object_array_add(pins, json_object_new_string(c->root_pin));
    json_object_object_add(o, "pins", pins);
    return o;
}

void cli_name_fields(char *out, size_t cap, const char *in, const cli_field *map, size_t n)
{
    char buf[2 * KJOIN_ERR_MSG_MAX];
    size_t o = 0;
    for (const char *p = in; *p && o + 1 < sizeof(buf);) {
        const char *end = *p == '`' ? strchr(p + 1, '`') : NULL;
        if (!end) {
            buf[o++] = *p++;
            continue;
        }
        size_t len = (size_t)(end - p - 1);
        const char *name = NULL;
        for (size_t i = 0; i < n && !name; i++)
            if (strlen(map[i].field) == len && strncmp(map[i].field, p + 1, len) == 0)
                name = map[i].name;
        o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%.*s", name ? (int)strlen(name) : (int)len,
                              name ? name : p + 1);
        o = o < sizeof(buf) ? o : sizeof(buf) - 1;
        p = end + 1;
    }
    buf[o] = '\0';
    snprintf(out, cap, "%s", buf);
}

void cli_log_line(void *ctx, int level, const char *line)
{
    if (level <= *(const long *)ctx)
        cli_out(stderr, "%s\n", line);
}

kjoin_code cli_kubeapi(const char *kubeconfig, const char *context, bool in_cluster, int64_t timeout_ms,
                       const long *verbosity, kjoin_kubeapi **out, kjoin_err *err)
{
    return cli_kubeapi_calls(kubeconfig, context, in_cluster, timeout_ms, 0, verbosity, out, err);
}

kjoin_code cli_kubeapi_calls(const char *kubeconfig, const char *context, bool in_cluster, int64_t timeout_ms,
                             int64_t call_timeout_ms, const long *verbosity, kjoin_kubeapi **out, kjoin_err *err)
{
    kjoin_kubeapi_config cfg;
    char run_id[CLI_RUN_ID_LEN];
    kjoin_code rc = kjoin_kubeapi_config_find(kubeconfig, context, in_cluster, &cfg, err);
    if (rc)
        return rc;
    kjoin_logf(cli_log_line, (void *)verbosity, 1, "[api] Using %s, context \"%s\", server %s",
               *cfg.path ? cfg.path : "the pod's service account", cfg.context, cfg.server);
    kjoin_kubeapi_options o = {.version = KJOIN_KUBEAPI_OPTIONS_VERSION, .timeout_ms = timeout_ms ? timeout_ms : 60000,
                               .call_timeout_ms = call_timeout_ms,
                               .audit_id = cli_run_id(run_id),
                               .log = cli_log_line,
                               .log_ctx = (void *)verbosity};
    rc = kjoin_kubeapi_new(&cfg, &o, out, err);
    kjoin_kubeapi_config_release(&cfg);
    return rc;
}

void cli_short_duration(long long seconds, char *buf, size_t cap)
{
    if (seconds < -1)
        snprintf(buf, cap, "<invalid>");
    else if (seconds < 0)
        snprintf(buf, cap, "0s");
    else if (seconds < 60 * 2)
        snprintf(buf, cap, "%llds", seconds);
    else if (seconds < 3600 * 2)
        snprintf(buf, cap, "%lldm", seconds / 60);
    else if (seconds < 3600 * 48)
        snprintf(buf, cap, "%lldh", seconds / 3600);
    else if (seconds < 3600LL * 24 * 365 * 2)
        snprintf(buf, cap, "%lldd", seconds / 86400);
    else
        snprintf(buf, cap, "%lldy", seconds / (86400LL * 365));
}

kjoin_code cli_admin_opt(cli_admin_args *a, int id, const char *arg, kjoin_err *err)
{
    switch (id) {
    case CLI_OPT_KUBECONFIG: a->kubeconfig = arg; break;
    case CLI_OPT_CONTEXT: a->context = arg; break;
    case CLI_OPT_TIMEOUT: return cli_flag_err("--timeout", kjoin_duration_parse(arg, &a->timeout_ms, err), err);
    case CLI_OPT_OUTPUT: return cli_parse_format(arg, &a->format, err);
    case CLI_OPT_VERBOSE: return cli_parse_long("-v", arg, 0, 10, &a->verbosity, err);
    case CLI_OPT_QUIET: a->verbosity = -1; break;
    }
    return KJOIN_OK;
}
