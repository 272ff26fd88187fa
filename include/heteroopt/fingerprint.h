/* SPDX-License-Identifier: MIT */
/* FNV-1a 64 of bytes and of files: what a schedule records of its model and box. */
#ifndef HETEROOPT_FINGERPRINT_H
#define HETEROOPT_FINGERPRINT_H

#include <stddef.h>
#include <stdint.h>

#include "heteroopt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* FNV-1a 64 of a file's bytes (0 and an error if unreadable). */
int ho_fingerprint_file(const char *path, uint64_t *out, struct ho_error *err);
uint64_t ho_fingerprint_bytes(uint64_t h, const void *data, size_t len);

#ifdef __cplusplus
}
#endif

#endif
