/* A CA the user provides as two files: its certificate (with its chain) and
 * its key. The key file gets the store's rule: owned by this user or root,
 * writable by no one else. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/x509v3.h>

#include <kjoin/private/util.h>

#include "internal.h"
#include "store.h"

#define MAX_CA_FILE (4 * 1024 * 1024)

kjoin_code kjoin_certs__read_ca(const char *crt, const char *key, STACK_OF(X509) **certs, EVP_PKEY **pkey,
                                bool *key_shared, kjoin_err *err)
{
    struct stat st;
    char *pem = NULL;
    size_t len = 0;
    *certs = NULL;
    *pkey = NULL;
    *key_shared = false;
    kjoin_code rc = kjoin_file_read(crt, MAX_CA_FILE, &pem, &len, err);
    if (rc)
        return rc;
    *certs = kjoin_certs__parse_certs(pem, len);
    free(pem);
    if (!*certs || X509_check_ca(sk_X509_value(*certs, 0)) < 1)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s holds no CA certificate", crt);
    /* One open: the checks and the read are of the same file. */
    int fd = open(key, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return kjoin_err_set(err, KJOIN_E_USAGE, "cannot open %s: %s", key, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "the CA key %s is not a regular file", key);
    else if (st.st_uid != geteuid() && st.st_uid != 0)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "the CA key %s is owned by uid %u, not by this user or root", key,
                           (unsigned)st.st_uid);
    else if (st.st_mode & 022)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "the CA key %s is writable by group or others (mode %04o): chmod "
                                               "go-w it", key, (unsigned)(st.st_mode & 07777));
    else
        rc = kjoin_store__read_fd(fd, key, &pem, &len, err);
    close(fd);
    if (rc)
        return rc;
    *key_shared = (st.st_mode & 077) != 0;
    *pkey = kjoin_certs__parse_key(pem, len);
    kjoin_free_wiped(pem, len);
    if (!*pkey || X509_check_private_key(sk_X509_value(*certs, 0), *pkey) != 1)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s is not the key of the CA in %s (an encrypted key must be "
                                                 "decrypted first)", key, crt);
    return KJOIN_OK;
}
