/* Join reports: what a failed join leaves in the cluster, so the cluster's
 * side sees why a node did not join. A report is a CertificateSigningRequest
 * for a signer no one runs (KJOIN_REPORT_SIGNER; a bootstrap token may create
 * CSRs, so a report needs no new permission), labelled KJOIN_REPORT_LABEL,
 * its request a throwaway key's; the cluster's CSR cleaner removes it after
 * 24 hours pending. */
#ifndef KJOIN_REPORT_H
#define KJOIN_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include <kjoin/err.h>
#include <kjoin/kubeapi.h>

#define KJOIN_REPORT_SIGNER "kjoin.io/join-report"
#define KJOIN_REPORT_LABEL "kjoin.io/join-report"

/* One report. Every text is the cluster's, read back: printable, capped. */
typedef struct kjoin_join_report {
    char name[96];          /* the CSR's: "kjoin-report-" and the join ID */
    char join_id[64];       /* the failed run's join ID (its Audit-ID) */
    char node[254];         /* the node's name */
    char phase[48];         /* where it failed: a kubeadm phase's name, "discovery", "tls-bootstrap", "join", or
                             * for a denial, "approver" */
    int exit_code;          /* kjoin join's exit code */
    char reason[1024];      /* the error, secrets masked */
    char kubelet[400];      /* the kubelet's last error line, when the wait read one; "" otherwise */
    char version[32];       /* kjoin's version that filed it */
    char token_id[8];       /* the bootstrap token that filed it, as the API server authenticated it (the CSR's
                             * username; never a secret); "" for another filer. The other fields are the
                             * filer's word */
    int64_t created;        /* Unix seconds (the CSR's creationTimestamp); 0 when filing */
} kjoin_join_report;

typedef struct kjoin_join_reports {
    size_t n;
    kjoin_join_report *items; /* newest first; release with kjoin_join_reports_release() */
    char resource_version[64]; /* the list's, to watch from */
} kjoin_join_reports;

/* The reports in a CertificateSigningRequestList (JSON, the API's answer:
 * untrusted), those of node alone when node is not NULL: the join reports,
 * and each CSR kjoin approver denied (phase "approver", exit code 8, the
 * node the CSR asked to be, the denial's message). Any other CSR is
 * skipped. Errors: KJOIN_E_API (not a list). */
kjoin_code kjoin_join_reports_decode(const char *json, size_t len, const char *node, kjoin_join_reports *out,
                                     kjoin_err *err);
/* The cluster's reports through api (list on certificatesigningrequests,
 * all of them, a page at a time: a denial carries no label).
 * Errors: those of the API client, KJOIN_E_API (refused, not a list, pages
 * that do not end). */
kjoin_code kjoin_join_reports_list(kjoin_kubeapi *api, const char *node, kjoin_join_reports *out, kjoin_err *err);
void kjoin_join_reports_release(kjoin_join_reports *r);

#endif
