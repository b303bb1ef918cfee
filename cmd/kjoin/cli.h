/* What the verbs share: option tables that drive both parsing and --help,
 * the exit-code table, and output in text or JSON. */
#ifndef KJOIN_CMD_CLI_H
#define KJOIN_CMD_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include <kjoin/err.h>

typedef struct cli_opt {
    int id;              /* passed to the handler */
    const char *name;    /* long name, without "--" */
    char short_name;     /* 0 for none */
    bool takes_arg;
    const char *metavar; /* shown in --help */
    const char *help;
} cli_opt;

typedef struct cli_verb {
    const char *usage;   /* "kjoin join [ENDPOINT...] [flags]" */
    const char *summary;
    const cli_opt *opts;
    size_t n_opts;
    int min_args, max_args; /* positional arguments; max -1 for any */
} cli_verb;

/* The long name of the option being handed to a handler (for options that
 * share one id). */
extern const char *cli_current_flag;

/* Receives one option; returns KJOIN_OK or a code with err set. */
typedef kjoin_code (*cli_handler)(void *ctx, int id, const char *arg, kjoin_err *err);

/* Parses argv (argv[0] is the verb) with the verb's table. On success
 * *first_arg is the index of the first positional argument. Returns
 * KJOIN_OK, KJOIN_E_USAGE with err set, or -1 when --help was printed. */
int cli_parse(const cli_verb *verb, int argc, char **argv, cli_handler handler, void *ctx,
              int *first_arg, kjoin_err *err);

/* The exit code for an error code (docs/exit-codes.md). */
int cli_exit_code(kjoin_code code);

/* Output format chosen with -o. */
typedef enum cli_format { CLI_TEXT, CLI_JSON } cli_format;
kjoin_code cli_parse_format(const char *arg, cli_format *out, kjoin_err *err);

/* Prints "kjoin: <msg>" on stderr and, for JSON, {"error": {...}} on stdout.
 * Returns the exit code. */
int cli_fail(cli_format format, const kjoin_err *err);
/* As cli_fail, with extra's fields (taken; may be NULL) added to -o json's
 * error object. */
int cli_fail_with(cli_format format, const kjoin_err *err, json_object *extra);

/* Prints obj as one line of JSON on stdout and drops the reference. */
void cli_print_json(json_object *obj);

struct kjoin_cert_info;
/* A certificate as JSON: subject, notAfter and pins; with detail also
 * issuer, notBefore, role and selfSigned. New reference. */
json_object *cli_cert_json(const struct kjoin_cert_info *c, bool detail);

/* What a library field (named `field` in its messages) is called here: a
 * flag, or a configuration path. */
typedef struct cli_field {
    const char *field, *name;
} cli_field;

/* Copies in to out (cap bytes; in and out may be the same) with every
 * `field` replaced by its name from map; an unknown `x` becomes x. */
void cli_name_fields(char *out, size_t cap, const char *in, const cli_field *map, size_t n);

/* A kjoin_log_fn for the verbs: prints line on stderr when level is at most
 * the verbosity ctx points at (a long; -1 for -q, which keeps warnings). */
void cli_log_line(void *ctx, int level, const char *line);

/* Prefixes "<flag>: " to err's message when rc is an error; returns rc. */
kjoin_code cli_flag_err(const char *flag, kjoin_code rc, kjoin_err *err);
/* t (Unix seconds) as RFC 3339 in UTC, "2030-01-01T00:00:00Z"; "?" when out of range. */
char *cli_rfc3339(int64_t t, char *buf, size_t cap);

/* The format -o/--output asks for, wherever it stands in argv, so that even a
 * usage error that comes before the flag is reported as JSON. */
cli_format cli_format_from_argv(int argc, char **argv);

/* The {"code", "reason", "message"} object of an error. New reference. */
json_object *cli_error_json(const kjoin_err *err);
/* The verb running ("join", "token", ...), for the reasons that depend on it. */
extern const char *cli_verb_name;

/* A group of verbs ("kjoin token create"): argv[0] is the group, argv[1] the
 * verb. Returns the verb's index, or -(exit code + 1) when it printed the
 * group's help (exit 0) or an error (exit 2). */
int cli_group(int argc, char **argv, const char *group, const char *summary, const char *const *names,
              const cli_verb *const *verbs, size_t n);

/* Overwrites the secret part of an argument in place ("id.secret" keeps the
 * id, "K10<hash>::secret" keeps up to "::"; anything else is all secret), so
 * ps shows no secret once parsing is done. */
void cli_scrub_secret(char *arg);

#define CLI_RUN_ID_LEN 37
/* A new random run ID (UUID), sent as Audit-ID and shown in logs. Returns buf. */
const char *cli_run_id(char buf[CLI_RUN_ID_LEN]);

struct kjoin_kubeapi;
/* An API client for a verb: the credentials kjoin_kubeapi_config_find picks,
 * logged at -v 1, one deadline of timeout_ms (0: 1 minute), and this run's
 * ID as Audit-ID. */
kjoin_code cli_kubeapi(const char *kubeconfig, const char *context, bool in_cluster, int64_t timeout_ms,
                       const long *verbosity, struct kjoin_kubeapi **out, kjoin_err *err);

/* cli_kubeapi with each request bounded by call_timeout_ms (its retries
 * included): a long-running verb, whose timeout_ms is its lifetime. */
kjoin_code cli_kubeapi_calls(const char *kubeconfig, const char *context, bool in_cluster, int64_t timeout_ms,
                             int64_t call_timeout_ms, const long *verbosity, struct kjoin_kubeapi **out,
                             kjoin_err *err);
/* Prints to f through kjoin_printable (newlines kept): every line of text a
 * verb shows goes through here, so nothing from a server or a file reaches
 * the terminal raw. Secrets a verb is asked to print (token create) do not. */
void cli_out(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* seconds as Go's duration.ShortHumanDuration ("45s", "3m", "5h", "2d",
 * "3y"; "0s" just below 0, "<invalid>" further), kubectl's and kubeadm's
 * columns. */
void cli_short_duration(long long seconds, char *buf, size_t cap);

/* Parses a whole decimal number in [min, max]. Errors: KJOIN_E_USAGE. */
kjoin_code cli_parse_long(const char *flag, const char *arg, long min, long max, long *out,
                          kjoin_err *err);

/* The flags of a verb that reads the cluster with admin credentials, in its
 * table as CLI_ADMIN_OPTS (its own flags before them; ids below
 * CLI_OPT_ADMIN) and taken by cli_admin_opt. */
typedef struct cli_admin_args {
    const char *kubeconfig, *context;
    int64_t timeout_ms;
    cli_format format;
    long verbosity;
} cli_admin_args;

enum { CLI_OPT_ADMIN = 1000, CLI_OPT_KUBECONFIG = CLI_OPT_ADMIN, CLI_OPT_CONTEXT, CLI_OPT_TIMEOUT,
       CLI_OPT_OUTPUT, CLI_OPT_VERBOSE, CLI_OPT_QUIET };

#define CLI_ADMIN_OPTS(timeout_help)                                                                       \
    {CLI_OPT_KUBECONFIG, "kubeconfig", 0, true, "FILE",                                                      \
     "admin credentials (default: $KUBECONFIG, else " KJOIN_KUBEAPI_DEFAULT_KUBECONFIG ")"},                 \
        {CLI_OPT_CONTEXT, "context", 0, true, "NAME", "the kubeconfig context to use (default: current)"},   \
        CLI_COMMON_OPTS(timeout_help)
/* The last four alone: a verb with credentials of its own (the node's). */
#define CLI_COMMON_OPTS(timeout_help)                                                                      \
    {CLI_OPT_TIMEOUT, "timeout", 0, true, "DURATION", timeout_help},                                         \
        {CLI_OPT_OUTPUT, "output", 'o', true, "FORMAT", "text (default) or json"},                           \
        {CLI_OPT_VERBOSE, "v", 'v', true, "LEVEL", "log verbosity: 4 each request, 6 response headers"},    \
        {CLI_OPT_QUIET, "quiet", 'q', false, NULL, "print errors only"}

/* Takes one of CLI_ADMIN_OPTS' (or CLI_COMMON_OPTS') flags (id at or above CLI_OPT_ADMIN). */
kjoin_code cli_admin_opt(cli_admin_args *a, int id, const char *arg, kjoin_err *err);

#endif
