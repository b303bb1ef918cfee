#ifndef KJOIN_CMD_VERBS_H
#define KJOIN_CMD_VERBS_H

/* Each verb gets argv with argv[0] set to its own name and returns the exit code. */
int cmd_join(int argc, char **argv);
int cmd_token(int argc, char **argv);
int cmd_ca_hash(int argc, char **argv);
int cmd_cluster_info(int argc, char **argv);
int cmd_certs(int argc, char **argv);
int cmd_tls_bootstrap(int argc, char **argv);
int cmd_refresh(int argc, char **argv);
int cmd_reset(int argc, char **argv);
int cmd_approver(int argc, char **argv);
int cmd_reports(int argc, char **argv);
int cmd_images(int argc, char **argv);
int cmd_sync(int argc, char **argv);

struct kjoin_bootstrap_spec;
/* Runs a TLS bootstrap and prints its result; returns the exit code (10 for
 * a renewal). Shared by tls-bootstrap and join --tls-bootstrap. */
int cli_run_bootstrap(struct kjoin_bootstrap_spec *spec, int format, long verbosity, const char *run_id);
struct kjoin_bootstrap_result;
struct json_object;
/* The result of a TLS bootstrap as JSON. New reference. */
struct json_object *cli_bootstrap_json(const struct kjoin_bootstrap_spec *spec, const struct kjoin_bootstrap_result *r);
struct kjoin_err;
/* Puts the flags' names in a bootstrap error's message. */
void cli_bootstrap_fail_names(struct kjoin_err *err);

#endif
