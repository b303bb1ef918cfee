/* Plumbing, as libgit2's include/git2/sys/: for the library's modules, its tests and
 * fuzzers; not installed, not exported (it carries json-c's types). */
#ifndef KJOIN_SYS_PATCH_H
#define KJOIN_SYS_PATCH_H

/* kubeadm's patches directory (--patches, patches.directory), for the one
 * target a worker has: the kubelet's configuration. Files are named
 * TARGET[SUFFIX][+TYPE].(yaml|json), TYPE strategic (the default), merge
 * (RFC 7386) or json (RFC 6902); they apply in the order of their paths,
 * each file's YAML documents in turn, as kubeadm applies them. */

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include <kjoin/err.h>

typedef enum kjoin_patch_type { KJOIN_PATCH_STRATEGIC, KJOIN_PATCH_MERGE, KJOIN_PATCH_JSON } kjoin_patch_type;

typedef struct kjoin_patch {
    kjoin_patch_type type;
    json_object *patch;      /* one document of the file, as JSON */
    char file[256];          /* the file's name, for messages */
} kjoin_patch;

#define KJOIN_PATCH_MAX 64
#define KJOIN_PATCH_MAX_NOTES 8

typedef struct kjoin_patchset {
    size_t n;
    kjoin_patch items[KJOIN_PATCH_MAX];        /* the kubeletconfiguration patches, in order */
    size_t n_notes;
    char notes[KJOIN_PATCH_MAX_NOTES][320];    /* files ignored, targets that are not a worker's */
} kjoin_patchset;

/* Reads every patch under dir (subdirectories too; a symbolic link is
 * refused; dir, the directories above it and everything read must pass
 * kjoin_safedir_check: root reads them to configure the kubelet). A file whose name is not .yaml or .json, or that is empty, is
 * noted and ignored, as kubeadm does; a control-plane target (etcd,
 * kube-apiserver, ...) is noted once as not applying to a worker. Errors:
 * KJOIN_E_USAGE: dir unreadable, not a directory or unsafe, an unknown target, a
 * "+" without a known type, a file that is not YAML or holds no object or
 * list, more than KJOIN_PATCH_MAX patches. */
kjoin_code kjoin_patches_read(const char *dir, kjoin_patchset *out, kjoin_err *err);

/* Applies the patches in order to *doc (replaced by the result). Errors:
 * KJOIN_E_USAGE: a patch that does not apply (a JSON patch's path missing
 * or its test failing, a strategic directive kjoin does not know), named by
 * its file. */
kjoin_code kjoin_patches_apply(const kjoin_patchset *set, json_object **doc, kjoin_err *err);

void kjoin_patchset_release(kjoin_patchset *set);

#endif
