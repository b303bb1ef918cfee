#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kjoin/util.h>

#include "testutil.h"

char *tu_read(const char *path, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    kjoin_err err;
    if (kjoin_file_read(path, 64 * 1024 * 1024, &buf, &n, &err) != KJOIN_OK)
        fail_msg("cannot read %s: %s", path, err.msg);
    if (len)
        *len = n;
    return buf;
}

json_object *tu_json(const char *path)
{
    char *text = tu_read(path, NULL);
    json_object *obj = json_tokener_parse(text);
    free(text);
    if (!obj)
        fail_msg("%s is not JSON", path);
    return obj;
}

const char *tu_str(json_object *obj, const char *key)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

char *tu_tmpdir(void)
{
    /* Under $TMPDIR, which the runner (tests/check.sh) makes and removes. */
    const char *top = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof(tmpl), "%s/kjoin-unit-XXXXXX", top && *top ? top : "/tmp");
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    return strdup(d);
}

void tu_write(const char *dir, const char *name, const char *text)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

void tu_rmtree(char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
}
