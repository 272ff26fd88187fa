/* SPDX-License-Identifier: MIT */
/*
 * The version of the HeteroOpt libraries, the one source of it: the
 * Makefile reads it for heteroopt.pc, `heteroopt --version` prints it.
 * HO_VERSION is comparable: #if HO_VERSION >= HO_VERSION_OF(0, 2, 0).
 */
#ifndef HETEROOPT_VERSION_H
#define HETEROOPT_VERSION_H

#define HO_VERSION_MAJOR 0
#define HO_VERSION_MINOR 2
#define HO_VERSION_PATCH 0
#define HO_VERSION_STRING "0.2.0"

#define HO_VERSION_OF(major, minor, patch) ((major)*10000 + (minor)*100 + (patch))
#define HO_VERSION HO_VERSION_OF(HO_VERSION_MAJOR, HO_VERSION_MINOR, HO_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the library linked, which may differ from the header's. */
const char *ho_version(void);

#ifdef __cplusplus
}
#endif
#endif
