/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host unit test of resolving paths inside an image's root (shared/sysroot.c), on a
 * real tree of files, directories, fifos and symlinks: every case through the
 * fallback walk, whatever this kernel has, with the result the case names, and the
 * same result (the same file, or the same errno) as the kernel's openat2()
 * RESOLVE_IN_ROOT where the kernel has it. The walk is what runs on a kernel before
 * 5.6, or under a seccomp filter that refuses openat2().
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "macro.h"
#include "sysroot.h"
#include "testmain.h"

/* The tree: BASE/outside is this machine, BASE/root the image. */
static char base[PATH_MAX];
static int rootfd = -1;

struct walk_case {
	const char *path;
	int flags;
	/* the file's text; "@root": the root directory itself; "@link": a symlink
	 * (O_PATH|O_NOFOLLOW); "@fifo"; NULL: the error in err */
	const char *want;
	int err;
};

static const struct walk_case cases[] = {
	{ "usr/share/base/passwd", O_RDONLY, "image passwd", 0 },
	/* relative and absolute symlinks that stay in the image */
	{ "etc/passwd", O_RDONLY, "image passwd", 0 },
	{ "etc/group", O_RDONLY, "image group", 0 },
	{ "/etc/passwd", O_RDONLY, "image passwd", 0 },
	{ "etc/../etc/./passwd", O_RDONLY, "image passwd", 0 },
	{ "etc//passwd", O_RDONLY, "image passwd", 0 },
	{ "etc/base-dir/group", O_RDONLY, "image group", 0 },
	{ "etc/base-dir-slash/group", O_RDONLY, "image group", 0 },
	/* ".." after a symlinked directory is the target's parent */
	{ "etc/base-dir/../base/passwd", O_RDONLY, "image passwd", 0 },
	{ "etc/chain", O_RDONLY, "image passwd", 0 },
	/* ".." at the top and absolute targets stay at the root */
	{ "../../../etc/passwd", O_RDONLY, "image passwd", 0 },
	{ "etc/escape-dots", O_RDONLY, "clamped", 0 },
	{ "etc/escape-dots-dir/secret", O_RDONLY, "clamped", 0 },
	{ "etc/escape-abs", O_RDONLY, NULL, ENOENT },
	{ "etc/escape-abs-dir/secret", O_RDONLY, NULL, ENOENT },
	{ "etc/to-host-zero", O_RDONLY, NULL, ENOENT },
	{ "/", O_RDONLY | O_DIRECTORY, "@root", 0 },
	{ "..", O_RDONLY | O_DIRECTORY, "@root", 0 },
	{ "etc/..", O_RDONLY | O_DIRECTORY, "@root", 0 },
	{ "etc/escape-root", O_RDONLY | O_DIRECTORY, "@root", 0 },
	/* the last component not followed */
	{ "etc/passwd", O_RDONLY | O_NOFOLLOW, NULL, ELOOP },
	{ "etc/passwd", O_PATH | O_NOFOLLOW, "@link", 0 },
	{ "etc/fifo", O_PATH, "@fifo", 0 },
	{ "etc/fifo-link", O_PATH, "@fifo", 0 },
	{ "etc/fifo-link", O_RDONLY | O_NONBLOCK, "@fifo", 0 },
	/* errors */
	{ "", O_RDONLY, NULL, ENOENT },
	{ "etc/nothing", O_RDONLY, NULL, ENOENT },
	{ "etc/dangling", O_RDONLY, NULL, ENOENT },
	{ "etc/passwd/", O_RDONLY, NULL, ENOTDIR },
	{ "etc/passwd/x", O_RDONLY, NULL, ENOTDIR },
	{ "usr/share/base/passwd/..", O_RDONLY, NULL, ENOTDIR },
	{ "etc/loop1", O_RDONLY, NULL, ELOOP },
	{ "etc/l40", O_RDONLY, "image passwd", 0 },
	{ "etc/links41", O_RDONLY, NULL, ELOOP },
	{ "etc/passwd", O_RDONLY | O_DIRECTORY, NULL, ENOTDIR },
	{ "deep/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/file", O_RDONLY, "deep", 0 },
	{ "deep/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/../../../../../../../../../../"
	  "../../../../../../../../../../../../../etc/group", O_RDONLY, "image group", 0 },
};

static void mk(const char *rel, mode_t mode)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	ck_assert_msg(mkdir(p, mode) == 0 || errno == EEXIST, "mkdir %s: %m", p);
}

static void put(const char *rel, const char *text)
{
	char p[PATH_MAX * 2];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	f = fopen(p, "we");
	ck_assert_msg(f != NULL, "%s: %m", p);
	fputs(text, f);
	fclose(f);
}

static void ln(const char *target, const char *rel)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	ck_assert_msg(symlink(target, p) == 0, "symlink %s: %m", p);
}

static void make_tree(void)
{
	char t[PATH_MAX * 2], name[64], deep[PATH_MAX] = "root/deep";

	ck_assert_ptr_nonnull(mkdtemp(strcpy(base, "/tmp/gb-sysroot-XXXXXX")));
	mk("outside", 0755);
	put("outside/secret", "this machine");
	mk("root", 0755);
	mk("root/etc", 0755);
	mk("root/usr", 0755);
	mk("root/usr/share", 0755);
	mk("root/usr/share/base", 0755);
	mk("root/outside", 0755);
	put("root/usr/share/base/passwd", "image passwd");
	put("root/usr/share/base/group", "image group");
	put("root/outside/secret", "clamped");
	ln("../usr/share/base/passwd", "root/etc/passwd");
	ln("/usr/share/base/group", "root/etc/group");
	ln("/usr/share/base", "root/etc/base-dir");
	ln("/usr/share/base/", "root/etc/base-dir-slash");
	ln("passwd", "root/etc/chain");
	ln("../../../../../../../../outside/secret", "root/etc/escape-dots");
	ln("../../../../../../../../outside", "root/etc/escape-dots-dir");
	snprintf(t, sizeof(t), "%s/outside/secret", base);
	ln(t, "root/etc/escape-abs");
	snprintf(t, sizeof(t), "%s/outside", base);
	ln(t, "root/etc/escape-abs-dir");
	ln("/dev/zero", "root/etc/to-host-zero");
	ln("/..", "root/etc/escape-root");
	ln("nothing", "root/etc/dangling");
	ln("loop2", "root/etc/loop1");
	ln("loop1", "root/etc/loop2");
	snprintf(t, sizeof(t), "%s/root/etc/fifo", base);
	ck_assert_int_eq(mkfifo(t, 0644), 0);
	ln("/etc/fifo", "root/etc/fifo-link");
	/* l40 -> l39 -> ... -> l1 -> the file: 40 symlinks, the most allowed */
	ln("/usr/share/base/passwd", "root/etc/l1");
	for (int i = 2; i <= 40; i++) {
		snprintf(t, sizeof(t), "l%d", i - 1);
		snprintf(name, sizeof(name), "root/etc/l%d", i);
		ln(t, name);
	}
	ln("l40", "root/etc/links41");
	mk(deep, 0755);
	for (int i = 0; i < 20; i++) {
		strcat(deep, "/a");
		mk(deep, 0755);
	}
	strcat(deep, "/file");
	put(deep, "deep");
	snprintf(t, sizeof(t), "%s/root", base);
	rootfd = open(t, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(rootfd, 0);
}

/* What a case's result is, as the case says it. */
static void check_result(const struct walk_case *c, int fd, const char *how)
{
	struct stat st, root;
	char buf[64];
	ssize_t n;

	if (!c->want) {
		ck_assert_msg(fd == -c->err, "%s '%s': got %d (%s), want -%s", how, c->path, fd,
			      fd < 0 ? strerror(-fd) : "an fd", strerror(c->err));
		return;
	}
	ck_assert_msg(fd >= 0, "%s '%s': %s", how, c->path, strerror(-fd));
	ck_assert_int_eq(fstat(fd, &st), 0);
	if (strcmp(c->want, "@root") == 0) {
		ck_assert_int_eq(fstat(rootfd, &root), 0);
		ck_assert_msg(st.st_dev == root.st_dev && st.st_ino == root.st_ino,
			      "%s '%s': not the root", how, c->path);
	} else if (strcmp(c->want, "@link") == 0) {
		ck_assert_msg(S_ISLNK(st.st_mode), "%s '%s': not the symlink", how, c->path);
	} else if (strcmp(c->want, "@fifo") == 0) {
		ck_assert_msg(S_ISFIFO(st.st_mode), "%s '%s': not the fifo", how, c->path);
	} else {
		n = pread(fd, buf, sizeof(buf) - 1, 0);
		ck_assert_int_ge(n, 0);
		buf[n] = '\0';
		ck_assert_msg(strcmp(buf, c->want) == 0, "%s '%s': read '%s', want '%s'", how,
			      c->path, buf, c->want);
	}
}

START_TEST(test_walk)
{
	const struct walk_case *c = &cases[_i];
	int fd = gb_sysroot_open_walk(rootfd, c->path, c->flags | O_CLOEXEC);

	check_result(c, fd, "walk");
	if (fd >= 0)
		close(fd);
}
END_TEST

/* The kernel's resolution, for the walk to agree with: the same file or errno. */
START_TEST(test_same_as_kernel)
{
	const struct walk_case *c = &cases[_i];
	int walk = gb_sysroot_open_walk(rootfd, c->path, c->flags | O_CLOEXEC);
	int kernel = gb_sysroot_open(rootfd, c->path, c->flags | O_CLOEXEC);
	struct stat a, b;

	check_result(c, kernel, "gb_sysroot_open");
	ck_assert_msg((walk < 0) == (kernel < 0), "'%s': walk %d, kernel %d", c->path, walk,
		      kernel);
	if (walk < 0) {
		ck_assert_int_eq(walk, kernel);
	} else {
		ck_assert_int_eq(fstat(walk, &a), 0);
		ck_assert_int_eq(fstat(kernel, &b), 0);
		ck_assert(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
		close(walk);
		close(kernel);
	}
}
END_TEST

/* This machine's own path, given as a path in the image, is the image's. */
START_TEST(test_host_path)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/outside/secret", base);
	ck_assert_int_eq(gb_sysroot_open_walk(rootfd, p, O_RDONLY | O_CLOEXEC), -ENOENT);
	ck_assert_int_eq(gb_sysroot_open(rootfd, p, O_RDONLY | O_CLOEXEC), -ENOENT);
}
END_TEST

static unsigned int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned int n = 0;

	ck_assert_ptr_nonnull(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Every case, found or not, leaves no fd open but the one it returns. */
START_TEST(test_no_fd_leak)
{
	unsigned int before = count_fds();

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		int fd = gb_sysroot_open_walk(rootfd, cases[i].path, cases[i].flags | O_CLOEXEC);

		if (fd >= 0)
			close(fd);
	}
	ck_assert_uint_eq(count_fds(), before);
}
END_TEST

static void remove_tree(void)
{
	char cmd[PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	ck_assert_int_eq(system(cmd), 0);
}

int main(void)
{
	Suite *s = suite_create("sysroot");
	TCase *tc = gb_tcase_new(s, "sysroot", NULL, NULL, 30);

#ifdef SYS_openat2
	if (syscall(SYS_openat2, AT_FDCWD, ".", NULL, 0) < 0 && errno == ENOSYS)
#endif
		printf("# no openat2() here: gb_sysroot_open() is the walk, compared with itself\n");
	/* Made once, in the runner, for every test's child. */
	tcase_add_unchecked_fixture(tc, make_tree, remove_tree);
	tcase_add_loop_test(tc, test_walk, 0, ELEMENTSOF(cases));
	tcase_add_loop_test(tc, test_same_as_kernel, 0, ELEMENTSOF(cases));
	tcase_add_test(tc, test_host_path);
	tcase_add_test(tc, test_no_fd_leak);
	return gb_run_suite(s);
}
