/* The kube-system/kubeadm-certs Secret a control-plane join downloads (the
 * API server's answer: untrusted), opened with the key its seed was sealed
 * with: JSON, base64, AES-GCM, then each PEM checked. */
#include <stdint.h>

#include "fuzz.h"

#include <kjoin/private/controlplane.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kjoin_certificate_key key;
    kjoin_shared_certs certs;
    memset(key.bytes, 0x01, sizeof(key.bytes));
    if (kjoin_kubeadm_certs_open((const char *)data, size, &key, NULL, 0, &certs, NULL) == KJOIN_OK)
        kjoin_shared_certs_release(&certs);
    return 0;
}
