/* The record format's JSON side, private to the modules that keep a record
 * (node, controlplane): json-c's types stay out of the public headers. */
#ifndef KJOIN_PKG_RECORD_H
#define KJOIN_PKG_RECORD_H

#include <json-c/json.h>

#include <kjoin/private/record.h>

/* text as a record of kind: one JSON object, the whole of text, at most max
 * bytes, no NUL; NULL when it is not (release what it returns with
 * json_object_put). */
json_object *kjoin_record_open(const char *text, size_t len, size_t max, const char *kind);
/* record's key as a string; NULL when absent or not a string. */
const char *kjoin_record_str(json_object *record, const char *key);

/* Whether a recorded path is one this record may name (beyond being a clean
 * absolute path, which every path must be). */
typedef bool (*kjoin_record_path_ok)(const char *path, const void *ctx);
/* record's "files" (each a path and its SHA-256) and "createdDirs" (records
 * kjoin wrote before the one format call the control plane's "dirs"): what
 * names the record in messages. Errors: KJOIN_E_USAGE (a path not clean or
 * not ok, a digest not 64 hex digits, more than a record holds). */
kjoin_code kjoin_record_written_parse(json_object *record, const char *what, kjoin_record_path_ok file_ok,
                                      kjoin_record_path_ok dir_ok, const void *ctx, kjoin_written *out, kjoin_err *err);
/* Adds w to record as "files" and "createdDirs". */
void kjoin_record_written_emit(json_object *record, const kjoin_written *w);

#endif
