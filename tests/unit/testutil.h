/* Shared by the cmocka unit tests; run from the repository root. */
#ifndef KJOIN_TESTUTIL_H
#define KJOIN_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <json-c/json.h>

/* The whole file, NUL-terminated; fails the test when unreadable. */
char *tu_read(const char *path, size_t *len);
/* A parsed JSON file; fails the test when unreadable. Drop with json_object_put. */
json_object *tu_json(const char *path);
/* obj[key] as a string, or NULL. */
const char *tu_str(json_object *obj, const char *key);
/* Fresh empty directory under /tmp; newly-allocated path. */
char *tu_tmpdir(void);
/* Writes text to dir/name; fails the test when it cannot. */
void tu_write(const char *dir, const char *name, const char *text);
/* Everything below dir as one newly-allocated string: each path with its
 * type, mode, owner, symlink target and (a file) SHA-256 of its content,
 * sorted. Two equal states: nothing was written, made, removed or changed. */
char *tu_tree_state(const char *dir);
/* Asserts that dir's tree is still what tu_tree_state said (before, which
 * is freed). */
void tu_tree_unchanged(const char *dir, char *before);
/* Removes dir and everything in it (a tu_tmpdir), and frees the string. */
void tu_rmtree(char *dir);

#define TU_LEN(a) (sizeof(a) / sizeof((a)[0]))

#endif
