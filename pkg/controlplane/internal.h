/* Private to pkg/controlplane. */
#ifndef KJOIN_CONTROLPLANE_INTERNAL_H
#define KJOIN_CONTROLPLANE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <kjoin/err.h>
#include <kjoin/util.h>

/* A file under the certificates directory: "ca.crt", or "etcd/ca.crt" in
 * its etcd/ directory. data NULL: nothing to write. */
typedef struct cp_file {
    const char *name;
    unsigned mode;
    const void *data;
    size_t len;
} cp_file;

/* Writes every file that has data under cert_dir (and its etcd/, both made
 * 0700 when missing and checked as ssh checks a directory it trusts), each
 * atomically with its mode, all or nothing: the files and directories this
 * call created are taken back when a later write fails. An existing file
 * with other content is refused unless force. written[i] (may be NULL):
 * each file's outcome. Errors: KJOIN_E_USAGE, KJOIN_E_OUTPUT. */
kjoin_code kjoin_cp__write_files(const char *cert_dir, const cp_file *files, size_t n, bool force,
                                 kjoin_write_result *written, kjoin_err *err);

#endif
