/* Replays a fuzz target's corpus as an ordinary test (built with ASan and
 * UBSan in `make test`): every file of the folder is fed to the target. */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kjoin/private/util.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    DIR *d = opendir(argv[1]);
    if (!d) {
        perror(argv[1]);
        return 1;
    }
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", argv[1], e->d_name);
        char *buf = NULL;
        size_t len = 0;
        kjoin_err err;
        if (kjoin_file_read(path, 8 * 1024 * 1024, &buf, &len, &err) != KJOIN_OK) {
            fprintf(stderr, "%s\n", err.msg);
            closedir(d);
            return 1;
        }
        LLVMFuzzerTestOneInput((const uint8_t *)buf, len);
        free(buf);
        n++;
    }
    closedir(d);
    if (n == 0) {
        fprintf(stderr, "%s: empty corpus\n", argv[1]);
        return 1;
    }
    printf("fuzz replay %s: %d inputs ok\n", argv[1], n);
    return 0;
}
