/* Plumbing, as libgit2's include/git2/sys/: for the library's modules, its tests and
 * fuzzers; not installed, not exported (it carries json-c's types). */
#ifndef KJOIN_SYS_PATCH_H
#define KJOIN_SYS_PATCH_H

/* kubeadm's patches directory (--patches, patches.directory), for every
 * target kubeadm patches on a joining node: the kubelet's configuration,
 * and a control-plane node's static Pods (etcd, kube-apiserver,
 * kube-controller-manager, kube-scheduler). Files are named
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
    char target[32];         /* "kubeletconfiguration", "kube-apiserver", ... */
    json_object *patch;      /* one document of the file, as JSON */
    char file[256];          /* the file's name, for messages */
} kjoin_patch;

#define KJOIN_PATCH_MAX 64
#define KJOIN_PATCH_MAX_NOTES 8

typedef struct kjoin_patchset {
    size_t n;
    kjoin_patch items[KJOIN_PATCH_MAX];        /* every target's patches, in order */
    size_t n_notes;
    char notes[KJOIN_PATCH_MAX_NOTES][320];    /* files ignored, targets that are not a worker's */
} kjoin_patchset;

/* Reads every patch under dir (subdirectories too; a symbolic link is
 * refused; dir, the directories above it and everything read must pass
 * kjoin_safedir_check: root reads them to configure the kubelet). A file whose name is not .yaml or .json, or that is empty, is
 * noted and ignored, as kubeadm does. Errors:
 * KJOIN_E_USAGE: dir unreadable, not a directory or unsafe, an unknown target, a
 * "+" without a known type, a file that is not YAML or holds no object or
 * list, more than KJOIN_PATCH_MAX patches. */
kjoin_code kjoin_patches_read(const char *dir, kjoin_patchset *out, kjoin_err *err);

/* Applies target's patches in order to *doc (replaced by the result). A
 * strategic patch merges the Pod lists kubeadm's schema keys (containers,
 * initContainers and volumes by name, env by name, volumeMounts by
 * mountPath, ports by containerPort) item by item, "$patch: delete" in an
 * item removing it; any other list is replaced, as a merge patch replaces
 * it. *applied (may be NULL) counts the patches applied. Errors:
 * KJOIN_E_USAGE: a patch that does not apply (a JSON patch's path missing
 * or its test failing, a strategic directive kjoin does not know), named by
 * its file. */
kjoin_code kjoin_patches_apply(const kjoin_patchset *set, const char *target, json_object **doc, size_t *applied,
                               kjoin_err *err);
/* Whether set holds a patch for a control-plane target. */
bool kjoin_patches_control_plane(const kjoin_patchset *set);

void kjoin_patchset_release(kjoin_patchset *set);

#endif
