// SPDX-License-Identifier: MIT
/* The version of the library linked (include/heteroopt/version.h). */
#include "heteroopt/version.h"

const char *ho_version(void)
{
	return HO_VERSION_STRING;
}
