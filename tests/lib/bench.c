/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bench.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef GB_BENCH_RUN
#error "GB_BENCH_RUN (path of tests/bench/run) must be defined by the build"
#endif

static void enter(int argc, char **argv, bool memcheck)
{
	static char *const vg[] = { "valgrind", "-q", "--error-exitcode=97", NULL };
	char self[PATH_MAX];
	char **args;
	int n = 0;

	if (getenv("GB_BENCH"))
		return;
	if (!realpath(argv[0], self)) {
		fprintf(stderr, "bench: cannot resolve %s\n", argv[0]);
		exit(99);
	}
	args = calloc(argc + 8, sizeof(char *));
	if (!args)
		exit(99);
	args[n++] = (char *)GB_BENCH_RUN;
	args[n++] = (char *)"--";
	for (int i = 0; memcheck && vg[i]; i++)
		args[n++] = vg[i];
	args[n++] = self;
	for (int i = 1; i < argc; i++)
		args[n++] = argv[i];
	execv(GB_BENCH_RUN, args);
	fprintf(stderr, "bench: cannot run %s: %m\n", GB_BENCH_RUN);
	exit(99);
}

void gb_bench_enter(int argc, char **argv)
{
	enter(argc, argv, false);
}

void gb_bench_enter_memcheck(int argc, char **argv)
{
	enter(argc, argv, getenv("GB_TEST_VALGRIND") != NULL);
}

int gb_wait_readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r;

	do
		r = poll(&p, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}
