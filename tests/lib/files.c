/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "files.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void gb_write_file_mode(const char *dir, const char *path, const char *text, mode_t mode)
{
	char full[PATH_MAX];
	FILE *f;

	ck_assert_int_lt(snprintf(full, sizeof(full), "%s/%s", dir, path), (int)sizeof(full));
	for (char *slash = strchr(full + strlen(dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		ck_assert_msg(mkdir(full, 0755) == 0 || errno == EEXIST, "mkdir %s: %s", full,
			      strerror(errno));
		*slash = '/';
	}
	f = fopen(full, "w");
	ck_assert_msg(f != NULL, "%s: %s", full, strerror(errno));
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(full, mode), 0);
}

void gb_remove_tree(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
