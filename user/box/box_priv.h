/* SPDX-License-Identifier: MIT */
/* The box library's internals shared by its files. Not installed. */
#ifndef HO_BOX_PRIV_H
#define HO_BOX_PRIV_H

#include <jansson.h>

#include "common.h"
#include "heteroopt/box.h"

/*
 * Refuse any key of obj not in keys (NULL-ended), naming it by its JSON path
 * (where.key): a misspelt key would otherwise keep a default without a word.
 */
int ho_json_known_keys(json_t *obj, const char *where, const char *const *keys,
		       struct ho_error *err);

#endif
