// SPDX-License-Identifier: MIT
/* The one way a library function reports a problem: -errno and a message. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

int ho_err(struct ho_error *err, int code, const char *fmt, ...)
{
	if (err) {
		/* Through a copy: a caller may wrap the message it had (fmt's
		 * arguments include err->msg), and vsnprintf must not read the
		 * buffer it writes. */
		char msg[sizeof(err->msg)];
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		memcpy(err->msg, msg, sizeof(msg));
		err->code = code;
	}
	return code;
}
