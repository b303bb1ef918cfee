/* kubeadm JoinConfiguration files (--config): the discovery settings. */
#ifndef KJOIN_CONFIG_H
#define KJOIN_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kjoin/discovery.h>
#include <kjoin/err.h>
#include <kjoin/join.h>
#include <kjoin/pin.h>
#include <kjoin/token.h>
#include <kjoin/phases.h>

#define KJOIN_CONFIG_MAX_NOTES 32

/* A JoinConfiguration as a worker join's specification. spec borrows from
 * the other fields, which hold token secrets: release with
 * kjoin_join_config_release(). The caller adds what a file does not hold
 * (outputs, log, environment). */
typedef struct kjoin_join_config {
    kjoin_phases_spec spec;
    char api_version[64];
    const char *endpoint_list[1];
    char *endpoint;            /* discovery.bootstrapToken.apiServerEndpoint */
    char *token;               /* discovery.bootstrapToken.token (secret) */
    char *tls_bootstrap_token; /* discovery.tlsBootstrapToken (secret) */
    kjoin_pinset *pins;        /* discovery.bootstrapToken.caCertHashes; never NULL after parsing */
    char *file;                /* discovery.file.kubeConfigPath */
    char *node_name;           /* nodeRegistration.name */
    char *ca_cert_path;        /* caCertPath */
    /* The node's registration and the phases, for a worker join: */
    char *cri_socket;          /* nodeRegistration.criSocket */
    kjoin_pull_policy pull_policy; /* nodeRegistration.imagePullPolicy */
    bool pull_parallel;            /* nodeRegistration.imagePullSerial: false */
    char *patches_dir;         /* patches.directory */
    char *ignore_preflight;    /* nodeRegistration.ignorePreflightErrors, comma-separated */
    char *skip_phases;         /* skipPhases, comma-separated */
    char **taints;             /* nodeRegistration.taints as "key=value:Effect" */
    size_t n_taints;
    char **extra_args;         /* nodeRegistration.kubeletExtraArgs as "name=value" */
    size_t n_extra_args;
    /* controlPlane: a control-plane join. */
    char *advertise_address;   /* controlPlane.localAPIEndpoint.advertiseAddress */
    bool has_certificate_key;  /* controlPlane.certificateKey given: */
    kjoin_certificate_key certificate_key; /* a secret, wiped on release */
    /* What the caller should log, one line each: other documents of the
     * stream, and fields that mean nothing for kjoin (criSocket, patches, ...). */
    size_t n_notes;
    char notes[KJOIN_CONFIG_MAX_NOTES][160];
} kjoin_join_config;

/* Parses a stream of YAML documents ("---"), of which exactly one must be a
 * kubeadm.k8s.io/v1beta3 or v1beta4 JoinConfiguration. Every field is
 * honoured (discovery, timeouts.discovery, nodeRegistration's name,
 * criSocket, taints, kubeletExtraArgs and ignorePreflightErrors, caCertPath,
 * skipPhases, dryRun, controlPlane's localAPIEndpoint and certificateKey), noted as not
 * applying, or refused by name (unknown fields), with its line and column; values are checked. *out is written
 * only on success. Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_join_config_parse(const char *yaml, size_t len, kjoin_join_config *out, kjoin_err *err);
void kjoin_join_config_release(kjoin_join_config *c);

/* A kubeadm ResetConfiguration (kjoin reset --config), kubeadm.k8s.io/v1beta4. */
typedef struct kjoin_reset_config {
    char *cri_socket;          /* criSocket */
    char *skip_phases;         /* skipPhases, comma-separated */
    bool dry_run;              /* dryRun */
    bool cleanup_tmp_dir;      /* cleanupTmpDir */
    size_t n_notes;            /* fields that mean nothing to kjoin (force, certificatesDir, ...), other documents */
    char notes[KJOIN_CONFIG_MAX_NOTES][160];
} kjoin_reset_config;

/* Parses a stream of YAML documents, of which exactly one must be a
 * ResetConfiguration; unknown fields are refused by name with their line.
 * Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_reset_config_parse(const char *yaml, size_t len, kjoin_reset_config *out, kjoin_err *err);
void kjoin_reset_config_release(kjoin_reset_config *c);

#endif
