// SPDX-License-Identifier: MIT
/* Paths between files: a schedule names its model and box from its own folder. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

void ho_path_dir(const char *path, char *out, size_t n)
{
	const char *slash = strrchr(path, '/');

	/* "a/b.json" -> "a", "/b.json" -> "/", "b.json" -> "." */
	snprintf(out, n, "%.*s", slash ? (int)(slash - path + (slash == path)) : 1,
		 slash ? path : ".");
}

/*
 * target's path from folder dir, both made absolute ("../boxes/b.json"), so
 * that a schedule names its box wherever it is read from, as long as the two
 * move together.  The path as given when either cannot be resolved.
 */
void ho_path_relative(const char *target, const char *dir, char *out, size_t n)
{
	char t[PATH_MAX], d[PATH_MAX];
	size_t dl, common = 0;
	int len = 0;

	if (!realpath(target, t) || !realpath(dir, d)) {
		snprintf(out, n, "%s", target);
		return;
	}
	dl = strcmp(d, "/") ? strlen(d) : 0;
	/* the longest common leading folders: d[0, common) == t[0, common), t[common] == '/' */
	for (size_t i = 0; i <= dl; i++)
		if ((i == dl || d[i] == '/') && t[i] == '/' && !strncmp(t, d, i))
			common = i;
	for (size_t i = common; i < dl; i++)
		if (d[i] == '/')
			len += snprintf(out + len, n - (size_t)len, "../");
	snprintf(out + len, n - (size_t)len, "%s", t + common + 1);
}
