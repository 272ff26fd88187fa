/* SPDX-License-Identifier: MIT */
/* Errors: a -errno returned, and one line naming the problem in a caller's struct ho_error. */
#ifndef HETEROOPT_ERROR_H
#define HETEROOPT_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/* One line naming the problem, plus the -errno that was returned. */
struct ho_error {
	int code;
	char msg[512];
};
/* Fill err (may be NULL) and return code, a -errno: `return ho_err(err, -EINVAL, ...)`. */
int ho_err(struct ho_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif

#endif
