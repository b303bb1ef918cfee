/* Reading kubeadm's patches directory: file names to targets and types, as
 * kubeadm's util/patches parses them; each file's YAML documents as JSON. */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kjoin/private/patch.h>
#include <kjoin/private/safedir.h>
#include <kjoin/private/util.h>

#include "../yamldoc/yamldoc.h"

/* kubeadm's known targets: a control plane's static Pods, the kubelet's
 * configuration, then kubeadm init's add-ons (index > 4). */
static const char *const targets[] = {"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler",
                                      "kubeletconfiguration", "corednsdeployment", "kubeproxydaemonset"};

__attribute__((format(printf, 2, 3))) static void note(kjoin_patchset *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (s->n_notes < KJOIN_PATCH_MAX_NOTES)
        vsnprintf(s->notes[s->n_notes++], sizeof(s->notes[0]), fmt, ap);
    va_end(ap);
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n > t && !strcmp(s + n - t, tail);
}

/* kubeadm's ^(TARGET)([^.+\n]*)?(\+)?(json|merge|strategic)?, on a name that
 * ends in .yaml or .json: the target's index and the type. */
static kjoin_code parse_name(const char *name, size_t *target, kjoin_patch_type *type, kjoin_err *err)
{
    size_t t = 0, len = 0;
    for (; t < sizeof(targets) / sizeof(targets[0]); t++)
        if (!strncmp(name, targets[t], len = strlen(targets[t])))
            break;
    if (t == sizeof(targets) / sizeof(targets[0]))
        return kjoin_err_set(err, KJOIN_E_USAGE, "the patch file %s names no known target: its name starts with "
                             "kubeletconfiguration (or a control-plane target: etcd, kube-apiserver, "
                             "kube-controller-manager, kube-scheduler, corednsdeployment, kubeproxydaemonset)", name);
    const char *rest = name + len + strcspn(name + len, ".+\n");
    *target = t;
    *type = KJOIN_PATCH_STRATEGIC;
    if (*rest != '+')
        return KJOIN_OK;
    static const struct {
        const char *word;
        kjoin_patch_type type;
    } types[] = {{"json", KJOIN_PATCH_JSON}, {"merge", KJOIN_PATCH_MERGE}, {"strategic", KJOIN_PATCH_STRATEGIC}};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (!strncmp(rest + 1, types[i].word, strlen(types[i].word))) {
            *type = types[i].type;
            return KJOIN_OK;
        }
    return kjoin_err_set(err, KJOIN_E_USAGE, "the patch file %s has an unknown or missing patch type after '+': "
                         "json, merge or strategic", name);
}

typedef struct patch_file {
    kjoin_patchset *set;
    const char *name, *target;
    kjoin_patch_type type;
} patch_file;

/* One document of a patch file: one patch of its type; an empty one skipped. */
static kjoin_code add_document(kjoin_yaml *y, yaml_node_t *root, void *ctx, kjoin_err *err)
{
    patch_file *f = ctx;
    json_object *doc = NULL;
    kjoin_code rc = kjoin_yaml__to_json(y, root, KJOIN_E_USAGE, &doc, err);
    if (rc || !doc)
        return rc;
    bool list = f->type == KJOIN_PATCH_JSON;
    if (!json_object_is_type(doc, list ? json_type_array : json_type_object))
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "a %s patch is a YAML %s", list ? "json" : "merge or strategic",
                           list ? "list of operations" : "mapping");
    else if (f->set->n == KJOIN_PATCH_MAX)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "more than %d patches", KJOIN_PATCH_MAX);
    if (rc) {
        json_object_put(doc);
        return rc;
    }
    kjoin_patch *p = &f->set->items[f->set->n++];
    p->type = f->type;
    p->patch = doc;
    snprintf(p->target, sizeof(p->target), "%s", f->target);
    snprintf(p->file, sizeof(p->file), "%s", f->name);
    return KJOIN_OK;
}

/* The file's documents, each one patch of the type. */
static kjoin_code add_documents(kjoin_patchset *s, const char *name, const char *target, kjoin_patch_type type,
                                const char *text, size_t len, kjoin_err *err)
{
    patch_file f = {.set = s, .name = name, .target = target, .type = type};
    kjoin_err in;
    kjoin_code rc = kjoin_yaml__each_document(text, len, KJOIN_E_USAGE, add_document, &f, NULL, &in);
    return rc ? kjoin_err_set(err, rc, "the patch file %s: %s", name, in.msg) : KJOIN_OK;
}

static int not_dots(const struct dirent *e) { return strcmp(e->d_name, ".") && strcmp(e->d_name, ".."); }

static kjoin_code walk(kjoin_patchset *s, const kjoin_safedir *d, int depth, kjoin_err *err);

/* One name in d: a subdirectory walked, a patch file read, anything else
 * ignored with a note. Root reads these to configure the kubelet, so each
 * passes ssh's ownership and mode rule, as the directory does. */
static kjoin_code visit(kjoin_patchset *s, const kjoin_safedir *d, const char *name, int depth, kjoin_err *err)
{
    kjoin_safedir sub = {.fd = -1};
    struct stat st;
    if (snprintf(sub.path, sizeof(sub.path), "%s/%s", d->path, name) >= (int)sizeof(sub.path))
        return kjoin_err_set(err, KJOIN_E_USAGE, "a path under the patches directory is too long");
    if (fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return kjoin_err_set(err, KJOIN_E_USAGE, "cannot read %s: %s", sub.path, strerror(errno));
    if (S_ISLNK(st.st_mode))
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s is a symbolic link: put the patch itself there", sub.path);
    if (S_ISDIR(st.st_mode)) {
        kjoin_code rc;
        if ((sub.fd = openat(d->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 || fstat(sub.fd, &st))
            rc = kjoin_err_set(err, KJOIN_E_USAGE, "cannot open %s: %s", sub.path, strerror(errno));
        else if (!(rc = kjoin_safedir_check("the patches directory", sub.path, &st, false, err)))
            rc = walk(s, &sub, depth + 1, err);
        if (sub.fd >= 0)
            close(sub.fd);
        return rc;
    }
    if (!S_ISREG(st.st_mode) || !(ends_with(name, ".yaml") || ends_with(name, ".json"))) {
        note(s, "[patches] Ignoring file %s: %s", name,
             S_ISREG(st.st_mode) ? "the file extension must be one of [json yaml]" : "not a regular file");
        return KJOIN_OK;
    }
    size_t target = 0, len = 0;
    kjoin_patch_type type = KJOIN_PATCH_STRATEGIC;
    char *text = NULL;
    kjoin_code rc = parse_name(name, &target, &type, err);
    if (rc || (rc = kjoin_safedir_read(d, name, KJOIN_YAML_MAX_BYTES, false, &text, &len, NULL, err)))
        return rc;
    if (!len)
        note(s, "[patches] Ignoring empty file: %s", name);
    else if (target > 4) /* coredns, kube-proxy: kubeadm init's, applied by no join */
        note(s, "[patches] %s is kubeadm init's (the cluster's add-ons), not a join's: ignored", name);
    else
        rc = add_documents(s, name, targets[target], type, text, len, err);
    free(text);
    return rc;
}

static kjoin_code walk(kjoin_patchset *s, const kjoin_safedir *d, int depth, kjoin_err *err)
{
    struct dirent **names;
    if (depth > 16)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the patches directory nests deeper than 16 levels at %s", d->path);
    /* By name, as Go's filepath.Walk visits them (no locale is set: alphasort is strcmp). */
    int n = scandirat(d->fd, ".", &names, not_dots, alphasort);
    if (n < 0)
        return kjoin_err_set(err, KJOIN_E_USAGE, "cannot list the patches directory %s: %s", d->path, strerror(errno));
    kjoin_code rc = KJOIN_OK;
    for (int i = 0; !rc && i < n; i++)
        rc = visit(s, d, names[i]->d_name, depth, err);
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

kjoin_code kjoin_patches_read(const char *dir, kjoin_patchset *out, kjoin_err *err)
{
    kjoin_patchset *s = calloc(1, sizeof(*s));
    kjoin_safedir d;
    kjoin_err in;
    if (!s)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    kjoin_code rc = kjoin_safedir_open(dir, 0, &d, &in);
    if (rc)
        kjoin_err_set(err, KJOIN_E_USAGE, "the patches directory %s: %s", dir, in.msg);
    else
        rc = walk(s, &d, 0, err);
    kjoin_safedir_close(&d);
    if (rc)
        kjoin_patchset_release(s);
    else
        *out = *s;
    free(s);
    return rc;
}

void kjoin_patchset_release(kjoin_patchset *set)
{
    for (size_t i = 0; set && i < set->n; i++)
        json_object_put(set->items[i].patch);
    if (set)
        set->n = 0;
}
