/* The certs module's own plumbing, for the library's modules, its tests and
 * fuzzers: not installed, not exported. The public part is kjoin/certs.h. */
#ifndef KJOIN_PRIVATE_CERTS_H
#define KJOIN_PRIVATE_CERTS_H

#include <kjoin/certs.h>

/* Checks a store's names: a directory, or a namespace and a prefix that
 * make valid Secret names. Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_certs_store_check(const kjoin_certs_store *st, kjoin_err *err);

/* Parses "ecdsa-p256", "ecdsa-p384", "rsa2048", "rsa3072", "rsa4096" or "ed25519". */
const char *kjoin_key_type_name(kjoin_key_type t);

/* Derives the minimum when unset, then checks the RFC's rules: CA window,
 * CA duration - window, node duration - window and client duration - window
 * all not less than the minimum (the CA rules are skipped for a CA the user
 * provides), each window shorter than its duration. The message names the
 * rule and by how much it fails. Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_certs_validate(kjoin_certs_settings *s, bool user_ca, kjoin_err *err);

/* A cron schedule that runs at least every period seconds (at minute and
 * hour where the interval allows), and the interval it really gives.
 * Errors: KJOIN_E_USAGE (under a minute). */
kjoin_code kjoin_certs_schedule(int64_t period, int minute, int hour, char out[KJOIN_CERTS_CRON_MAX],
                                int64_t *interval, kjoin_err *err);

#endif
