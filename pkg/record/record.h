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

/* ---- the one record file of a join ------------------------------------- */

/* kjoin-join.json in the kubeconfig directory (0600): a join's one record,
 * kind KjoinJoinRecord, the node's part at its top level (kubelet-start
 * writes it), the control plane's in its member "controlPlane" (each
 * control-plane step adds to it before it writes). Records kjoin wrote before
 * kept the control plane's part in a file of its own,
 * KJOIN_CP_LEGACY_RECORD_NAME: still read, and taken into this one. */
#define KJOIN_RECORD_CONTROL_PLANE "controlPlane"

/* The record file in kubernetes_dir, read through its checked directory,
 * into *out (NULL when there is none; release it with json_object_put).
 * Errors: KJOIN_E_USAGE (not kjoin's: not one JSON object of kind
 * KjoinJoinRecord within the cap, or the directory refused). */
kjoin_code kjoin_record_file_load(const char *kubernetes_dir, json_object **out, kjoin_err *err);
/* Writes record as the file (atomically, 0600, the directory made when
 * missing); a record that holds neither the node's part nor the control
 * plane's is removed instead (*removed: it was there and is gone). */
kjoin_code kjoin_record_file_store(const char *kubernetes_dir, json_object *record, bool *removed, kjoin_err *err);
/* A record file holding neither part yet (kind KjoinJoinRecord); release it with json_object_put. */
json_object *kjoin_record_file_new(void);
/* Whether record holds the node's part (kubelet-start wrote it). */
bool kjoin_record_file_has_node(json_object *record);

#endif
