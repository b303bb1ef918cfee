/* A directory kjoin manages, trusted as ssh trusts its files: opened once,
 * never through a symlink, its modes checked; every file read or written
 * relative to it; an undo removes only what still holds what was written. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kjoin/private/safedir.h>

#include "testutil.h"

static char *path_in(const char *dir, const char *name)
{
    char *p = NULL;
    assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
    return p;
}

static void sha256_hex(const char *text, char out[65])
{
    unsigned char sum[32];
    kjoin_err err;
    assert_int_equal(kjoin_sha256(text, strlen(text), sum, &err), KJOIN_OK);
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", sum[i]);
}

static void test_made_written_and_read_back(void **state)
{
    (void)state;
    char *top = tu_tmpdir(), *pki = path_in(top, "a/b/pki");
    kjoin_safedir d;
    kjoin_err err;
    assert_int_equal(kjoin_safedir_open(pki, KJOIN_SAFEDIR_CREATE, &d, &err), KJOIN_OK);
    struct stat st;
    assert_int_equal(stat(pki, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0700); /* made 0700, parents too */
    kjoin_write_result how;
    assert_int_equal(kjoin_safedir_write(&d, "key.pem", "secret\n", 7, 0600, false, &how, &err), KJOIN_OK);
    assert_int_equal(how, KJOIN_WRITE_CREATED);
    assert_int_equal(fstatat(d.fd, "key.pem", &st, AT_SYMLINK_NOFOLLOW), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    char *text = NULL;
    size_t len = 0;
    bool missing = true;
    assert_int_equal(kjoin_safedir_read(&d, "key.pem", 4096, true, &text, &len, &missing, &err), KJOIN_OK);
    assert_false(missing);
    assert_int_equal(len, 7);
    assert_string_equal(text, "secret\n");
    free(text);
    /* the same bytes again: unchanged; others without force: refused, the file kept */
    assert_int_equal(kjoin_safedir_write(&d, "key.pem", "secret\n", 7, 0600, false, &how, &err), KJOIN_OK);
    assert_int_equal(how, KJOIN_WRITE_UNCHANGED);
    assert_int_not_equal(kjoin_safedir_write(&d, "key.pem", "other\n", 6, 0600, false, &how, &err), KJOIN_OK);
    assert_int_equal(kjoin_safedir_read(&d, "key.pem", 4096, true, &text, &len, NULL, &err), KJOIN_OK);
    assert_string_equal(text, "secret\n");
    free(text);
    kjoin_safedir_close(&d);
    free(pki);
    tu_rmtree(top);
}

static void test_a_directory_through_a_symlink_is_refused(void **state)
{
    (void)state;
    char *top = tu_tmpdir(), *real = path_in(top, "real"), *link = path_in(top, "link");
    assert_int_equal(mkdir(real, 0700), 0);
    assert_int_equal(symlink(real, link), 0);
    kjoin_safedir d;
    kjoin_err err;
    assert_int_equal(kjoin_safedir_open(link, 0, &d, &err), KJOIN_E_USAGE);
    assert_int_equal(kjoin_safedir_open(link, KJOIN_SAFEDIR_CREATE, &d, &err), KJOIN_E_USAGE);
    free(real);
    free(link);
    tu_rmtree(top);
}

static void test_a_directory_others_may_write_is_refused(void **state)
{
    (void)state;
    char *top = tu_tmpdir(), *dir = path_in(top, "d"), *below = path_in(top, "d/below");
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(mkdir(below, 0700), 0);
    kjoin_safedir d;
    kjoin_err err;
    assert_int_equal(chmod(dir, 0775), 0);
    assert_int_equal(kjoin_safedir_open(dir, 0, &d, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, dir));
    /* and a directory below one others may write in */
    assert_int_equal(kjoin_safedir_open(below, 0, &d, &err), KJOIN_E_USAGE);
    /* sticky (as /tmp): only for one file by name, when asked */
    assert_int_equal(chmod(dir, 01777), 0);
    assert_int_equal(kjoin_safedir_open(dir, 0, &d, &err), KJOIN_E_USAGE);
    assert_int_equal(kjoin_safedir_open(dir, KJOIN_SAFEDIR_SHARED_OK, &d, &err), KJOIN_OK);
    kjoin_safedir_close(&d);
    assert_int_equal(chmod(dir, 0700), 0);
    assert_int_equal(kjoin_safedir_open(below, 0, &d, &err), KJOIN_OK);
    kjoin_safedir_close(&d);
    free(dir);
    free(below);
    tu_rmtree(top);
}

static void test_files_are_never_followed_or_loosely_kept(void **state)
{
    (void)state;
    char *top = tu_tmpdir();
    tu_write(top, "target", "not ours\n");
    char *target = path_in(top, "target"), *link = path_in(top, "link");
    assert_int_equal(symlink(target, link), 0);
    kjoin_safedir d;
    kjoin_err err;
    assert_int_equal(chmod(top, 0700), 0);
    assert_int_equal(kjoin_safedir_open(top, 0, &d, &err), KJOIN_OK);
    char *text = NULL;
    size_t len;
    bool missing = true;
    /* a symlink is not read through, nor written through */
    assert_int_equal(kjoin_safedir_read(&d, "link", 4096, false, &text, &len, &missing, &err), KJOIN_E_USAGE);
    assert_false(missing);
    assert_null(text);
    assert_int_not_equal(kjoin_safedir_write(&d, "link", "x\n", 2, 0600, true, NULL, &err), KJOIN_OK);
    char *kept = tu_read(target, NULL);
    assert_string_equal(kept, "not ours\n");
    free(kept);
    /* a secret others may read is refused; the same file as no secret is read */
    assert_int_equal(chmod(target, 0644), 0);
    assert_int_equal(kjoin_safedir_read(&d, "target", 4096, true, &text, &len, NULL, &err), KJOIN_E_USAGE);
    assert_int_equal(kjoin_safedir_read(&d, "target", 4096, false, &text, &len, NULL, &err), KJOIN_OK);
    free(text);
    /* over the cap: refused */
    assert_int_equal(kjoin_safedir_read(&d, "target", 4, false, &text, &len, NULL, &err), KJOIN_E_USAGE);
    /* a file that is not there is told apart */
    assert_int_equal(kjoin_safedir_read(&d, "none", 4096, false, &text, &len, &missing, &err), KJOIN_E_USAGE);
    assert_true(missing);
    kjoin_safedir_close(&d);
    free(target);
    free(link);
    tu_rmtree(top);
}

static void test_an_undo_removes_only_what_was_written(void **state)
{
    (void)state;
    char *top = tu_tmpdir();
    assert_int_equal(chmod(top, 0700), 0);
    tu_write(top, "kubelet.conf", "written\n");
    char *file = path_in(top, "kubelet.conf"), *sub = path_in(top, "sub"), want[65], other[65], why[256];
    sha256_hex("written\n", want);
    sha256_hex("changed since\n", other);
    /* changed since it was written: left, with why */
    assert_int_equal(kjoin_safedir_undo_file(file, other, false, why, sizeof(why)), KJOIN_UNDO_LEFT);
    assert_true(why[0] != '\0');
    /* a dry run removes nothing */
    assert_int_equal(kjoin_safedir_undo_file(file, want, true, why, sizeof(why)), KJOIN_UNDO_REMOVED);
    assert_int_equal(access(file, F_OK), 0);
    assert_int_equal(kjoin_safedir_undo_file(file, want, false, why, sizeof(why)), KJOIN_UNDO_REMOVED);
    assert_int_equal(access(file, F_OK), -1);
    assert_int_equal(kjoin_safedir_undo_file(file, want, false, why, sizeof(why)), KJOIN_UNDO_GONE);
    /* a directory goes only when empty */
    assert_int_equal(mkdir(sub, 0700), 0);
    tu_write(sub, "theirs", "x");
    assert_int_equal(kjoin_safedir_undo_dir(sub, false, "not empty", why, sizeof(why)), KJOIN_UNDO_LEFT);
    assert_string_equal(why, "not empty");
    char *theirs = path_in(sub, "theirs");
    assert_int_equal(unlink(theirs), 0);
    assert_int_equal(kjoin_safedir_undo_dir(sub, false, "not empty", why, sizeof(why)), KJOIN_UNDO_REMOVED);
    assert_int_equal(access(sub, F_OK), -1);
    free(theirs);
    free(file);
    free(sub);
    tu_rmtree(top);
}

static void test_a_link_is_switched_and_read_back(void **state)
{
    (void)state;
    char *top = tu_tmpdir();
    assert_int_equal(chmod(top, 0700), 0);
    kjoin_safedir d;
    kjoin_err err;
    assert_int_equal(kjoin_safedir_open(top, 0, &d, &err), KJOIN_OK);
    assert_int_equal(kjoin_safedir_write(&d, "one.pem", "1", 1, 0600, false, NULL, &err), KJOIN_OK);
    assert_int_equal(kjoin_safedir_write(&d, "two.pem", "2", 1, 0600, false, NULL, &err), KJOIN_OK);
    char target[256];
    assert_int_equal(kjoin_safedir_link(&d, "current.pem", "one.pem", &err), KJOIN_OK);
    assert_int_equal(kjoin_safedir_readlink(&d, "current.pem", target, sizeof(target), &err), KJOIN_OK);
    assert_string_equal(target, "one.pem");
    assert_int_equal(kjoin_safedir_link(&d, "current.pem", "two.pem", &err), KJOIN_OK);
    assert_int_equal(kjoin_safedir_readlink(&d, "current.pem", target, sizeof(target), &err), KJOIN_OK);
    assert_string_equal(target, "two.pem");
    /* a link out of the directory is no link of ours */
    assert_int_equal(symlinkat("/etc/passwd", d.fd, "out.pem"), 0);
    assert_int_equal(kjoin_safedir_readlink(&d, "out.pem", target, sizeof(target), &err), KJOIN_E_USAGE);
    kjoin_safedir_close(&d);
    tu_rmtree(top);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_made_written_and_read_back),
        cmocka_unit_test(test_a_directory_through_a_symlink_is_refused),
        cmocka_unit_test(test_a_directory_others_may_write_is_refused),
        cmocka_unit_test(test_files_are_never_followed_or_loosely_kept),
        cmocka_unit_test(test_an_undo_removes_only_what_was_written),
        cmocka_unit_test(test_a_link_is_switched_and_read_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
