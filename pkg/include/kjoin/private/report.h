/* The report module's own plumbing: filing a report. Not installed, not
 * exported. The public part is kjoin/report.h. */
#ifndef KJOIN_PRIVATE_REPORT_H
#define KJOIN_PRIVATE_REPORT_H

#include <json-c/json.h>

#include <kjoin/report.h>

/* The CSR object of report r (its texts masked and capped), with a request
 * of a throwaway key. New reference, or NULL (out of memory, OpenSSL). */
json_object *kjoin_join_report_object(const kjoin_join_report *r);
/* Files r through api: one per join ID (an existing report of the same
 * name is left as it is, and is success). Errors: those of the API client,
 * KJOIN_E_API (refused), KJOIN_E_USAGE (no join ID). */
kjoin_code kjoin_join_report_file(kjoin_kubeapi *api, const kjoin_join_report *r, kjoin_err *err);

#endif
