// SPDX-License-Identifier: MIT
/*
 * Output paths, asked before the work: a typo in -o used to be found after
 * a whole run or search, and the work thrown away.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* 0 if dir is a folder that takes new files, else -errno. */
static int folder_takes_files(const char *dir)
{
	struct stat st;

	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return access(dir, W_OK | X_OK) ? -errno : 0;
}

int cli_can_write(const char *path, const char *what)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	struct stat st;
	int ret;

	if (snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) + 1 : 1,
		     slash ? path : ".") >= (int)sizeof(dir))
		ret = -ENAMETOOLONG;
	else if (!stat(path, &st) && S_ISDIR(st.st_mode))
		ret = -EISDIR;
	else
		ret = folder_takes_files(dir);
	if (ret)
		cli_error("%s: cannot write %s: %s", what, path, strerror(-ret));
	return ret;
}

int cli_make_folder(const char *dir, const char *what)
{
	int ret;

	if (mkdir(dir, 0777) && errno != EEXIST) {
		ret = -errno;
		cli_error("%s: cannot create %s: %s", what, dir, strerror(-ret));
	} else if ((ret = folder_takes_files(dir))) {
		cli_error("%s: cannot write into %s: %s", what, dir, strerror(-ret));
	}
	return ret;
}
