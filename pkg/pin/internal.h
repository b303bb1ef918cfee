#ifndef KJOIN_PIN_INTERNAL_H
#define KJOIN_PIN_INTERNAL_H

#include <stdlib.h>

#include <openssl/x509.h>

#include <kjoin/private/pin.h>

#define KJOIN_SHA256_LEN 32

typedef enum kjoin_pin_kind { KJOIN_PIN_SPKI, KJOIN_PIN_ROOT_DER } kjoin_pin_kind;

typedef struct kjoin_pin {
    kjoin_pin_kind kind;
    unsigned char hash[KJOIN_SHA256_LEN];
} kjoin_pin;

struct kjoin_pinset {
    kjoin_pin *pins;
    size_t count;
};

typedef struct kjoin_cert {
    X509 *x509;
    unsigned char spki_hash[KJOIN_SHA256_LEN];
    unsigned char der_hash[KJOIN_SHA256_LEN];
    kjoin_cert_info info;
} kjoin_cert;

struct kjoin_bundle {
    kjoin_cert *certs;
    size_t count;
    size_t skipped; /* PEM blocks that were not plain CERTIFICATE blocks: never trusted */
};

/* Writes "<kind>:<lower-case hex>" into out. */
void kjoin_pin__format(kjoin_pin_kind kind, const unsigned char hash[KJOIN_SHA256_LEN],
                       char out[KJOIN_PIN_STR_MAX]);

#endif
