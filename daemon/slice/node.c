/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The slice's chip node (node.h). The ACL is written as the kernel reads it, the
 * system.posix_acl_access xattr: a version, then entries sorted by tag and id.
 * Building it here keeps libacl out of a root helper that needs four of its bytes.
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "node.h"

/* include/uapi/linux/posix_acl_xattr.h and posix_acl.h */
#define ACL_XATTR_VERSION 0x0002
#define ACL_USER_OBJ  0x01
#define ACL_USER      0x02
#define ACL_GROUP_OBJ 0x04
#define ACL_GROUP     0x08
#define ACL_MASK      0x10
#define ACL_OTHER     0x20
#define ACL_UNDEFINED_ID 0xffffffffu
#define ACL_RW 06

struct acl_entry {
	uint16_t tag;
	uint16_t perm;
	uint32_t id;
};

static int cmp_id(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorted, without duplicates (the kernel refuses both). */
static size_t sorted_ids(uint32_t *out, const unsigned int *ids, size_t n)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		out[i] = ids[i];
	qsort(out, n, sizeof(*out), cmp_id);
	for (size_t i = 0; i < n; i++)
		if (!m || out[m - 1] != out[i])
			out[m++] = out[i];
	return m;
}

static size_t put(struct acl_entry *e, size_t i, uint16_t tag, uint16_t perm, uint32_t id)
{
	/* little-endian on disk and in the xattr */
	e[i].tag = htole16(tag);
	e[i].perm = htole16(perm);
	e[i].id = htole32(id);
	return i + 1;
}

int node_grant(const char *chip, const uid_t *uids, size_t n_uids, const gid_t *gids,
	       size_t n_gids)
{
	size_t n = 0, nu, ng, size;
	uint32_t *u = NULL, *g = NULL;
	struct acl_entry *e = NULL;
	unsigned char *buf = NULL;
	char path[128];
	struct stat st;
	uint32_t version = htole32(ACL_XATTR_VERSION);
	int r = 0;

	if (strncmp(chip, "gpiochip", 8) != 0 || strchr(chip, '/'))
		return -EINVAL;
	snprintf(path, sizeof(path), "/dev/%s", chip);
	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISCHR(st.st_mode))
		return -ENOTTY;
	u = calloc(n_uids + 1, sizeof(*u));
	g = calloc(n_gids + 1, sizeof(*g));
	e = calloc(n_uids + n_gids + 4, sizeof(*e));
	if (!u || !g || !e) {
		r = -ENOMEM;
		goto out;
	}
	nu = sorted_ids(u, (const unsigned int *)uids, n_uids);
	ng = sorted_ids(g, (const unsigned int *)gids, n_gids);
	n = put(e, n, ACL_USER_OBJ, ACL_RW, ACL_UNDEFINED_ID);
	for (size_t i = 0; i < nu; i++)
		n = put(e, n, ACL_USER, ACL_RW, u[i]);
	n = put(e, n, ACL_GROUP_OBJ, 0, ACL_UNDEFINED_ID);
	for (size_t i = 0; i < ng; i++)
		n = put(e, n, ACL_GROUP, ACL_RW, g[i]);
	n = put(e, n, ACL_MASK, ACL_RW, ACL_UNDEFINED_ID);
	n = put(e, n, ACL_OTHER, 0, ACL_UNDEFINED_ID);
	size = sizeof(version) + n * sizeof(*e);
	buf = malloc(size);
	if (!buf) {
		r = -ENOMEM;
		goto out;
	}
	memcpy(buf, &version, sizeof(version));
	memcpy(buf + sizeof(version), e, n * sizeof(*e));
	/* Ownership and mode first, so that nobody but root has the node between the
	 * steps; the ACL then opens it to the slice's users (its mask becomes the
	 * mode's group bits). */
	if (lchown(path, 0, 0) < 0 || chmod(path, 0600) < 0 ||
	    lsetxattr(path, "system.posix_acl_access", buf, size, 0) < 0)
		r = -errno;
out:
	free(u);
	free(g);
	free(e);
	free(buf);
	return r;
}

static int mkdir_p(const char *dir)
{
	char tmp[256];

	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
		return -errno;
	/* Every user of a slice goes through it, whatever the umask. */
	if (chmod(tmp, 0755) < 0)
		return -errno;
	return 0;
}

int node_link(const char *name, const char *chip)
{
	char path[256], tmp[280], target[128];
	int r;

	r = mkdir_p(SLICE_LINK_DIR);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), SLICE_LINK_DIR "/%s", name);
	snprintf(tmp, sizeof(tmp), SLICE_LINK_DIR "/.%s.tmp", name);
	snprintf(target, sizeof(target), "../../%s", chip);
	(void)unlink(tmp);
	/* rename() replaces the old link in one step: a program opening the name
	 * meanwhile finds the old chip or the new one, never nothing. */
	if (symlink(target, tmp) < 0)
		return -errno;
	if (rename(tmp, path) < 0) {
		r = -errno;
		(void)unlink(tmp);
		return r;
	}
	return 0;
}

int node_unlink(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), SLICE_LINK_DIR "/%s", name);
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}
