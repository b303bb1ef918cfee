#ifndef KJOIN_CMD_VERBS_H
#define KJOIN_CMD_VERBS_H

/* Each verb gets argv with argv[0] set to its own name and returns the exit code. */
int cmd_join(int argc, char **argv);
int cmd_token(int argc, char **argv);
int cmd_ca_hash(int argc, char **argv);
int cmd_cluster_info(int argc, char **argv);
int cmd_certs(int argc, char **argv);

#endif
