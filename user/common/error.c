// SPDX-License-Identifier: MIT
/* The one way a library function reports a problem: -errno and a message. */
#include <stdarg.h>
#include <stdio.h>

#include "common.h"

int ho_err(struct ho_error *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
		err->code = code;
	}
	return code;
}
