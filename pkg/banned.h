/* Calls the style guide bans, made compile errors (as git's banned.h):
 * unbounded copies and formats, and conversions that hide a bad number.
 * Use snprintf, memcpy with a checked length, strtol/strtoull with a range
 * check, strcspn/strsep. The Makefile includes this before every file of
 * pkg/ and cmd/; the libc headers come first, so that their declarations
 * are not the uses refused. */
#ifndef KJOIN_BANNED_H
#define KJOIN_BANNED_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC poison sprintf vsprintf strcpy strcat strncpy strncat atoi atol atoll strtok gets

#endif
