/* A join's one record file: read back as untrusted, written atomically, the
 * node's part and the control plane's kept side by side. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kjoin/private/safedir.h>

#include "record.h"

kjoin_code kjoin_record_file_load(const char *kubernetes_dir, json_object **out, kjoin_err *err)
{
    kjoin_safedir d;
    char *text = NULL;
    size_t len = 0;
    bool missing = false;
    *out = NULL;
    kjoin_code rc = kjoin_safedir_open(kubernetes_dir, 0, &d, err);
    if (rc)
        return access(kubernetes_dir, F_OK) != 0 && errno == ENOENT ? KJOIN_OK : rc;
    rc = kjoin_safedir_read(&d, KJOIN_RECORD_FILE_NAME, KJOIN_RECORD_FILE_MAX, true, &text, &len, &missing, err);
    kjoin_safedir_close(&d);
    if (rc)
        return missing ? KJOIN_OK : rc;
    if (!(*out = kjoin_record_open(text, len, KJOIN_RECORD_FILE_MAX, "KjoinJoinRecord")))
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s/%s is not a kjoin join record (kind KjoinJoinRecord, one JSON "
                           "object of at most %d bytes)", kubernetes_dir, KJOIN_RECORD_FILE_NAME, KJOIN_RECORD_FILE_MAX);
    kjoin_free_wiped(text, len);
    return rc;
}

json_object *kjoin_record_file_new(void)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "kind", json_object_new_string("KjoinJoinRecord"));
    return o;
}

bool kjoin_record_file_has_node(json_object *record)
{
    return record && json_object_object_get_ex(record, "nodeName", NULL);
}

kjoin_code kjoin_record_file_store(const char *kubernetes_dir, json_object *record, bool *removed, kjoin_err *err)
{
    kjoin_safedir d;
    *removed = false;
    bool empty = !kjoin_record_file_has_node(record) &&
                 !json_object_object_get_ex(record, KJOIN_RECORD_CONTROL_PLANE, NULL);
    kjoin_code rc = kjoin_safedir_open(kubernetes_dir, empty ? 0 : KJOIN_SAFEDIR_CREATE, &d, err);
    if (rc)
        return empty && access(kubernetes_dir, F_OK) != 0 && errno == ENOENT ? KJOIN_OK : rc;
    if (empty) {
        struct stat st;
        bool there = fstatat(d.fd, KJOIN_RECORD_FILE_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0;
        rc = kjoin_safedir_unlink(&d, KJOIN_RECORD_FILE_NAME, err);
        *removed = there && !rc;
    } else {
        const char *text = json_object_to_json_string_ext(record, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
        rc = strlen(text) > KJOIN_RECORD_FILE_MAX
                 ? kjoin_err_set(err, KJOIN_E_USAGE, "the join record would be larger than %d bytes: not written",
                                 KJOIN_RECORD_FILE_MAX)
                 : kjoin_safedir_write(&d, KJOIN_RECORD_FILE_NAME, text, strlen(text), 0600, true, NULL, err);
    }
    kjoin_safedir_close(&d);
    return rc;
}
