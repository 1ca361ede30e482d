/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The example programs in client/examples, run as a user against the real broker:
 * blink drives an output the simulator sees; watch-irq prints the edges the
 * simulator makes.
 */
#include <check.h>
#include <pwd.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "broker-calls.h"
#include "brokertest.h"
#include "bus-util.h"
#include "gpiosim.h"
#include "testmain.h"
#include "timing.h"
#include "users.h"

#ifndef GB_CLIENT_BUILDDIR
#error "GB_CLIENT_BUILDDIR must be defined by the build"
#endif

static const char *const names[4] = { "led", "button", NULL, NULL };
static struct gb_sim_chip *sim;
static pid_t broker;

static void setup(void)
{
	sim = gb_sim_chip_new("gbex", 4, names);
	ck_assert_ptr_nonnull(sim);
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, false), 0);
	broker = gb_broker_spawn(NULL);
}

static void teardown(void)
{
	ck_assert_int_eq(gb_broker_stop(broker), 0);
	gb_sim_chip_free(sim);
}

/* Run an example as gb-alice with its stdout on a pipe. */
static FILE *spawn(pid_t *pid, const char *prog, const char *a1, const char *a2, const char *a3)
{
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	*pid = fork();
	ck_assert_int_ge(*pid, 0);
	if (*pid == 0) {
		gb_become(UID_ALICE);
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execl(prog, prog, a1, a2, a3, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	return fdopen(p[0], "r");
}

static int reap(pid_t pid)
{
	int status;

	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

START_TEST(test_blink)
{
	char line[256];
	pid_t pid;
	FILE *out = spawn(&pid, GB_CLIENT_BUILDDIR "/examples/blink", "led", "4", "300");
	int n = 0;

	/* Each line is printed after the broker set the level and before the next
	 * toggle 300 ms later: the simulator must show it. */
	while (fgets(line, sizeof(line), out)) {
		char want[16];

		snprintf(want, sizeof(want), "led=%d\n", n % 2 == 0);
		ck_assert_str_eq(line, want);
		ck_assert_int_eq(gb_sim_get_value(sim, 0), n % 2 == 0);
		n++;
	}
	fclose(out);
	ck_assert_int_eq(reap(pid), 0);
	ck_assert_int_eq(n, 4);
	{
		sd_bus *bus = gb_connect(0);

		ck_assert(gb_wait_line_used(bus, gb_sim_chip_name(sim), 0, false, 2000));
		sd_bus_flush_close_unref(bus);
	}
}
END_TEST

START_TEST(test_watch_irq)
{
	char line[256];
	pid_t pid;
	FILE *out = spawn(&pid, GB_CLIENT_BUILDDIR "/examples/watch-irq", "button", "3", NULL);

	/* "watching" comes once the request and the handler are in place. */
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), out));
	ck_assert_ptr_nonnull(strstr(line, "watching button as /org/gpiodbroker1/request/"));
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(gb_sim_set_pull(sim, 1, i % 2 == 0), 0);
		usleep(20000); /* UML's 100 Hz tick: closer edges coalesce */
	}
	for (int i = 0; i < 3; i++) {
		char want[128];

		snprintf(want, sizeof(want), "event: offset 1 %s seqno %d line-seqno %d\n",
			 i % 2 == 0 ? "rising" : "falling", i + 1, i + 1);
		ck_assert_ptr_nonnull(fgets(line, sizeof(line), out));
		ck_assert_str_eq(line, want);
	}
	ck_assert_ptr_null(fgets(line, sizeof(line), out));
	fclose(out);
	ck_assert_int_eq(reap(pid), 0);
}
END_TEST

START_TEST(test_busy_example_says_who)
{
	sd_bus *bus = gb_connect(UID_BOB);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	pid_t pid;
	FILE *out;

	ck_assert_int_ge(gb_request(bus, "bobs-led", "led", "output", 0, NULL, false, NULL, &err), 0);
	out = spawn(&pid, GB_CLIENT_BUILDDIR "/examples/blink", "led", "1", "1");
	fclose(out);
	ck_assert_int_eq(reap(pid), 1);
	sd_bus_flush_close_unref(bus);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("examples");
	TCase *tc = gb_tcase_new(s, "examples", setup, teardown, 60 * gb_slow());

	tcase_add_test(tc, test_blink);
	tcase_add_test(tc, test_watch_irq);
	tcase_add_test(tc, test_busy_example_says_who);
	return s;
}

int main(int argc, char **argv)
{
	gb_bench_enter(argc, argv);
	return gb_run_suite(suite());
}
