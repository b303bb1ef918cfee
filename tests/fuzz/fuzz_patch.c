/* A patches file, as kubeadm's directory holds it: the input is written to
 * a file whose name the first byte chooses (the three patch types), read as
 * kjoin reads the directory, and applied to a kubelet configuration, then to
 * the result again; the document must stay a mapping or the error say why. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

#include <kjoin/private/patch.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char dir[64];
    static const char *const names[] = {"kubeletconfiguration.yaml", "kubeletconfiguration+merge.yaml",
                                        "kubeletconfiguration+json.json", "kubeletconfiguration+strategic.yaml"};
    if (size < 1)
        return 0;
    if (!dir[0]) {
        snprintf(dir, sizeof(dir), "%s/kjoin-fuzz-patch.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (!mkdtemp(dir))
            abort();
    }
    char path[128];
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        unlink(path);
    }
    snprintf(path, sizeof(path), "%s/%s", dir, names[data[0] % 4]);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, data + 1, size - 1) != (ssize_t)(size - 1))
        abort();
    close(fd);
    kjoin_patchset set;
    if (kjoin_patches_read(dir, &set, NULL) == KJOIN_OK) {
        json_object *doc = json_tokener_parse("{\"apiVersion\":\"kubelet.config.k8s.io/v1beta1\","
                                              "\"kind\":\"KubeletConfiguration\",\"maxPods\":110,"
                                              "\"clusterDNS\":[\"10.96.0.10\"],\"evictionHard\":{\"memory.available\":\"100Mi\"}}");
        for (int round = 0; round < 2; round++)
            if (kjoin_patches_apply(&set, "kubeletconfiguration", &doc, NULL, NULL) == KJOIN_OK && !json_object_is_type(doc, json_type_object))
                abort();
        json_object_put(doc);
        kjoin_patchset_release(&set);
    }
    return 0;
}
