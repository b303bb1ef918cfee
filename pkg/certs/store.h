#ifndef KJOIN_CERTS_STORE_H
#define KJOIN_CERTS_STORE_H

#include <stddef.h>
#include <sys/types.h>

#include <kjoin/err.h>

typedef struct kjoin_store_file {
    const char *name;
    const char *data;
    size_t len;
    mode_t mode;
} kjoin_store_file;

/* Takes DIR/.kjoin-certs.lock, so that two runs never interleave.
 * Errors: KJOIN_E_OTHER (held by another run), KJOIN_E_OUTPUT. */
kjoin_code kjoin_store__lock(const char *dir, int *fd, kjoin_err *err);
void kjoin_store__unlock(int fd);
/* Reads DIR/name (through its symlink). Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_store__read(const char *dir, const char *name, char **out, size_t *len, kjoin_err *err);
/* Writes the complete set of files as a new generation and switches to it
 * atomically. Errors: KJOIN_E_OUTPUT. */
kjoin_code kjoin_store__commit(const char *dir, const kjoin_store_file *files, size_t n, kjoin_err *err);

#endif
