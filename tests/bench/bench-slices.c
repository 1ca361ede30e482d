/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * make bench, slices (bench-slices.h): what a program pays for using its lines
 * through a slice, the chip gpiod-broker-slices makes of them with the kernel's
 * gpio-aggregator, rather than on the real chip. The program is the same either
 * way, libgpiod's line requests, and no broker is in the path: the aggregator
 * forwards each call and each line's interrupt to the parent chip in the kernel.
 * So the slice is measured beside libgpiod on the parent chip, in turns, in the
 * same boot: set and get round trips on two outputs, and edges on two inputs from
 * the kernel's timestamp to the handler, toggled by bench-edges.c's toggler while
 * the receiver waits in poll().
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <gpiod.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-edges.h"
#include "bench-out.h"
#include "bench-slices.h"
#include "brokertest.h"
#include "gpiosim.h"
#include "timing.h"

#define SLICE "bench"
/* Where gpiod-broker-slices records and links what it made (slice-state.h). */
#define STATE_DIR "/run/gpiod-broker-slices"
#define LINK_DIR "/dev/gpio/slice"
#define AGGREGATOR "/sys/bus/platform/drivers/gpio-aggregator/new_device"
/* Round trips per kind, and edges per series, in one turn: the kinds take turns. */
#define TURN 20
#define EDGE_TURN 10
#define EDGE_TIMEOUT_MS 5000

enum { SLICE_SET, SLICE_GET, PARENT_SET, PARENT_GET, KINDS };
enum { ON_SLICE, ON_PARENT, SIDES };

struct side {
	struct gpiod_chip *gc;
	struct gpiod_line_request *out, *in;
	unsigned int out_off, in_off; /* offsets on its chip */
	unsigned int in_sim;          /* the input's line of the gpio-sim chip, to toggle */
};

struct slice_run {
	char dir[64];        /* the helper's policy directory and log */
	char helper[PATH_MAX];
	char chip[64], device[64];
	struct side sides[SIDES];
};

/* --- gpiod-broker-slices ------------------------------------------------------- */

/* Next to the broker under test, as test-slices.sh finds it. */
static void find_helper(struct slice_run *s)
{
	const char *env = getenv("GB_TEST_SLICES"), *broker = getenv("GB_TEST_BROKER");
	const char *slash;

	if (env) {
		snprintf(s->helper, sizeof(s->helper), "%s", env);
		return;
	}
	if (!broker)
		broker = gb_broker_bin();
	slash = strrchr(broker, '/');
	snprintf(s->helper, sizeof(s->helper), "%.*s/gpiod-broker-slices",
		 slash ? (int)(slash - broker) : 1, slash ? broker : ".");
	ck_assert_msg(access(s->helper, X_OK) == 0, "%s: %m (make builds it)", s->helper);
}

static void print_file(const char *path)
{
	char line[512];
	FILE *f = fopen(path, "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		printf("# %s%s", line, strchr(line, '\n') ? "" : "\n");
	fclose(f);
}

/* The helper as its unit runs it, as root: "COMMAND" with the bench's policy, its
 * log appended to DIR/helper.log and shown if it fails. */
static void run_helper(struct slice_run *s, const char *cmd)
{
	char policy[96], log[96];
	int status = 0, fd;
	pid_t pid;

	snprintf(policy, sizeof(policy), "--policy-dir=%s/policy.d", s->dir);
	snprintf(log, sizeof(log), "%s/helper.log", s->dir);
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	ck_assert_msg(fd >= 0, "%s: %m", log);
	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
			_exit(126);
		execl(s->helper, s->helper, policy, "--log-level=info", cmd, (char *)NULL);
		_exit(127);
	}
	close(fd);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return;
	printf("# gpiod-broker-slices %s:\n", cmd);
	print_file(log);
	print_file(STATE_DIR "/" SLICE ".error");
	ck_abort_msg("slices: gpiod-broker-slices %s: status %#x (its log above)", cmd, status);
}

/* The value of KEY= in the slice's state file, as the helper wrote it. */
static void state_value(const char *key, char *buf, size_t size)
{
	FILE *f = fopen(STATE_DIR "/" SLICE, "re");
	size_t n = strlen(key);
	char line[512];

	ck_assert_msg(f != NULL, "slices: " STATE_DIR "/" SLICE ": %m");
	buf[0] = '\0';
	while (!buf[0] && fgets(line, sizeof(line), f))
		if (strncmp(line, key, n) == 0 && line[n] == '=') {
			line[strcspn(line, "\n")] = '\0';
			snprintf(buf, size, "%s", line + n + 1);
		}
	fclose(f);
	ck_assert_msg(buf[0], "slices: no %s= in " STATE_DIR "/" SLICE, key);
}

/* A policy of the slice's two lines (their entry allows everything a chip's consumer
 * can set, as a slice needs), and the slice; then sync makes it. */
static void slice_make(struct slice_run *s, struct gb_sim_chip *sim, unsigned int out,
		       unsigned int in)
{
	const char *label = gb_sim_chip_label(sim);
	char path[128], link[128], target[128];
	ssize_t n;
	FILE *f;

	snprintf(s->dir, sizeof(s->dir), "/run/gb-bench-slices.XXXXXX");
	ck_assert_msg(mkdtemp(s->dir) != NULL, "mkdtemp: %m");
	snprintf(path, sizeof(path), "%s/policy.d", s->dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/policy.d/10-bench.conf", s->dir);
	f = fopen(path, "we");
	ck_assert_msg(f != NULL, "%s: %m", path);
	fprintf(f, GB_TEST_POLICY_ALL("%s", "%u, %u") "\n[slice " SLICE "]\nlines = %s:%u %s:%u\n"
		"users = gb-alice\n", label, out, in, label, out, label, in);
	ck_assert_int_eq(fchmod(fileno(f), 0644), 0);
	ck_assert_int_eq(fclose(f), 0);

	run_helper(s, "sync");
	state_value("chip", s->chip, sizeof(s->chip));
	state_value("device", s->device, sizeof(s->device));
	snprintf(link, sizeof(link), LINK_DIR "/" SLICE);
	n = readlink(link, target, sizeof(target) - 1);
	ck_assert_msg(n > 0, "slices: %s: %m", link);
	target[n] = '\0';
	ck_assert_msg(strcmp(strrchr(target, '/') ? strrchr(target, '/') + 1 : target,
			     s->chip) == 0,
		      "slices: %s -> %s, the state file says %s", link, target, s->chip);
	printf("# slices: %s (%s), lines %u and %u of %s (%s), made by %s\n", s->chip, s->device,
	       out, in, label, gb_sim_chip_name(sim), s->helper);
}

/* stop: the slice goes, and with it its state and link; the lines are the chip's. */
static void slice_remove(struct slice_run *s)
{
	char path[128];

	run_helper(s, "stop");
	ck_assert_msg(access(STATE_DIR "/" SLICE, F_OK) < 0 && errno == ENOENT,
		      "slices: " STATE_DIR "/" SLICE " is left after stop");
	ck_assert_msg(access(LINK_DIR "/" SLICE, F_OK) < 0 && errno == ENOENT,
		      "slices: " LINK_DIR "/" SLICE " is left after stop");
	snprintf(path, sizeof(path), "%s/policy.d/10-bench.conf", s->dir);
	ck_assert_int_eq(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/policy.d", s->dir);
	ck_assert_int_eq(rmdir(path), 0);
	snprintf(path, sizeof(path), "%s/helper.log", s->dir);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(rmdir(s->dir), 0);
}

/* --- the two sides -------------------------------------------------------------- */

/* Line @p off of @p gc: an output (low), or an input with both edges. */
static struct gpiod_line_request *request(struct gpiod_chip *gc, unsigned int off, bool output)
{
	struct gpiod_line_settings *ls = gpiod_line_settings_new();
	struct gpiod_line_config *lc = gpiod_line_config_new();
	struct gpiod_request_config *rc = gpiod_request_config_new();
	struct gpiod_line_request *lr = NULL;

	ck_assert(ls && lc && rc);
	gpiod_request_config_set_consumer(rc, "bench-slices");
	if (output) {
		gpiod_line_settings_set_direction(ls, GPIOD_LINE_DIRECTION_OUTPUT);
		gpiod_line_settings_set_output_value(ls, GPIOD_LINE_VALUE_INACTIVE);
	} else {
		gpiod_line_settings_set_direction(ls, GPIOD_LINE_DIRECTION_INPUT);
		gpiod_line_settings_set_edge_detection(ls, GPIOD_LINE_EDGE_BOTH);
	}
	if (gpiod_line_config_add_line_settings(lc, &off, 1, ls) == 0)
		lr = gpiod_chip_request_lines(gc, rc, lc);
	ck_assert_msg(lr != NULL, "slices: %s line %u: %m", gpiod_chip_get_path(gc), off);
	gpiod_request_config_free(rc);
	gpiod_line_config_free(lc);
	gpiod_line_settings_free(ls);
	return lr;
}

static void side_open(struct side *d, const char *path, unsigned int out, unsigned int in,
		      unsigned int in_sim)
{
	d->gc = gpiod_chip_open(path);
	ck_assert_msg(d->gc != NULL, "slices: %s: %m", path);
	d->out_off = out;
	d->in_off = in;
	d->in_sim = in_sim;
	d->out = request(d->gc, out, true);
	d->in = request(d->gc, in, false);
}

static void side_close(struct side *d)
{
	gpiod_line_request_release(d->out);
	gpiod_line_request_release(d->in);
	gpiod_chip_close(d->gc);
}

/* The slice is what the state file says: two lines, its first the parent's @p out. */
static void check_slice(struct slice_run *s, struct gb_sim_chip *sim, unsigned int out)
{
	struct side *d = &s->sides[ON_SLICE];
	struct gpiod_chip_info *info = gpiod_chip_get_info(d->gc);

	ck_assert_ptr_nonnull(info);
	ck_assert_msg(gpiod_chip_info_get_num_lines(info) == 2, "slices: %s has %zu lines, not 2",
		      s->chip, gpiod_chip_info_get_num_lines(info));
	gpiod_chip_info_free(info);
	for (int v = 1; v >= 0; v--) {
		ck_assert_int_eq(gpiod_line_request_set_value(d->out, d->out_off, v), 0);
		ck_assert_msg(gb_sim_get_value(sim, out) == v,
			      "slices: %s line 0 set to %d, %s line %u is not", s->chip, v,
			      gb_sim_chip_name(sim), out);
	}
}

/* --- round trips ------------------------------------------------------------------ */

static void round_trip(struct slice_run *s, int k, int i)
{
	struct side *d = &s->sides[k == SLICE_SET || k == SLICE_GET ? ON_SLICE : ON_PARENT];

	if (k == SLICE_SET || k == PARENT_SET)
		ck_assert_int_eq(gpiod_line_request_set_value(d->out, d->out_off, i & 1), 0);
	else
		ck_assert_int_ge(gpiod_line_request_get_value(d->out, d->out_off), 0);
}

/* @p iters of each kind, TURN at a time, each turn starting with the next kind. */
static void round_trips(struct slice_run *s, int iters, struct gb_pct *pct)
{
	static const char *const names[KINDS] = {
		"slice.gpiod_set_rtt", "slice.gpiod_get_rtt",
		"slice.parent_gpiod_set_rtt", "slice.parent_gpiod_get_rtt",
	};
	long long *t[KINDS];
	int n[KINDS] = { 0 };

	for (int k = 0; k < KINDS; k++) {
		t[k] = calloc(iters, sizeof(long long));
		ck_assert_ptr_nonnull(t[k]);
	}
	for (int round = 0; round * TURN < iters; round++)
		for (int j = 0; j < KINDS; j++) {
			int k = (j + round) % KINDS;

			for (int i = 0; i < TURN && n[k] < iters; i++) {
				long long t0 = gb_now_ns();

				round_trip(s, k, n[k]);
				t[k][n[k]++] = gb_now_ns() - t0;
			}
		}
	for (int k = 0; k < KINDS; k++) {
		pct[k] = gb_pct_us(t[k], iters);
		bench_out_pct(names[k], pct[k]);
		free(t[k]);
	}
}

/* --- edges ------------------------------------------------------------------------ */

/* One edge on the side's input, the receiver asleep in poll() on its request's fd as
 * libgpiod's programs wait, then read into a buffer made once: its latency from the
 * kernel's timestamp to the handler, in ns. */
static long long one_edge(const struct toggler *tog, const struct side *d, const char *name,
			  struct gpiod_edge_event_buffer *buf)
{
	struct pollfd p = { .fd = gpiod_line_request_get_fd(d->in), .events = POLLIN };
	struct gpiod_edge_event *ev;
	long long now;
	int r;

	edge_toggler_toggle(tog, d->in_sim);
	do
		r = poll(&p, 1, EDGE_TIMEOUT_MS);
	while (r < 0 && errno == EINTR);
	if (r == 0) {
		edge_toggler_check(tog);
		ck_abort_msg("%s: no edge %d ms after the toggle", name, EDGE_TIMEOUT_MS);
	}
	ck_assert_int_eq(r, 1);
	r = gpiod_line_request_read_edge_events(d->in, buf, 4);
	now = gb_now_ns();
	ck_assert_msg(r == 1, "%s: %d events read for one toggle (%m)", name, r);
	ev = gpiod_edge_event_buffer_get_event(buf, 0);
	ck_assert_uint_eq(gpiod_edge_event_get_line_offset(ev), d->in_off);
	return now - (long long)gpiod_edge_event_get_timestamp_ns(ev);
}

/* @p edges per side, EDGE_TURN at a time, each turn starting with the next side. */
static void edge_series(struct slice_run *s, struct gb_sim_chip *sim, unsigned int in,
			int edges, struct gb_pct *pct)
{
	static const char *const names[SIDES] = { "slice.gpiod_edge_latency",
						  "slice.parent_gpiod_edge_latency" };
	struct gpiod_edge_event_buffer *buf = gpiod_edge_event_buffer_new(4);
	struct toggler *tog;
	long long *t[SIDES];
	int n[SIDES] = { 0 };

	ck_assert_ptr_nonnull(buf);
	tog = edge_toggler_new(gb_sim_chip_name(sim), in + 2);
	for (int k = 0; k < SIDES; k++) {
		t[k] = calloc(edges, sizeof(long long));
		ck_assert_ptr_nonnull(t[k]);
	}
	for (int round = 0; round * EDGE_TURN < edges; round++)
		for (int j = 0; j < SIDES; j++) {
			int k = (j + round) % SIDES;

			for (int i = 0; i < EDGE_TURN && n[k] < edges; i++)
				t[k][n[k]++] = one_edge(tog, &s->sides[k], names[k], buf);
		}
	edge_toggler_free(tog);
	gpiod_edge_event_buffer_free(buf);
	for (int k = 0; k < SIDES; k++) {
		pct[k] = gb_pct_us(t[k], edges);
		bench_out_pct(names[k], pct[k]);
		free(t[k]);
	}
}

/* --- the figures ------------------------------------------------------------------ */

void slice_bench(struct gb_sim_chip *sim, unsigned int out, unsigned int in, int iters,
		 int edges)
{
	struct slice_run s = { 0 };
	struct gb_pct rtt[KINDS], edge[SIDES];
	char path[96];

	ck_assert_msg(access(AGGREGATOR, W_OK) == 0,
		      "slices: the bench kernel has no gpio-aggregator (CONFIG_GPIO_AGGREGATOR): "
		      AGGREGATOR ": %m");
	find_helper(&s);
	/* The toggler takes the inputs low; the edge paths may have left them high. */
	ck_assert_int_eq(gb_sim_set_pull(sim, in, false), 0);
	ck_assert_int_eq(gb_sim_set_pull(sim, in + 1, false), 0);
	slice_make(&s, sim, out, in);

	snprintf(path, sizeof(path), "/dev/%s", s.chip);
	side_open(&s.sides[ON_SLICE], path, 0, 1, in);
	side_open(&s.sides[ON_PARENT], gb_sim_chip_path(sim), out + 1, in + 1, in + 1);
	check_slice(&s, sim, out);

	round_trips(&s, iters, rtt);
	edge_series(&s, sim, in, edges, edge);
	for (int k = 0; k < SIDES; k++)
		side_close(&s.sides[k]);
	slice_remove(&s);

	bench_out("ratio.slice_set_p50_vs_gpiod", rtt[SLICE_SET].p50 / rtt[PARENT_SET].p50, "x");
	bench_out("ratio.slice_get_p50_vs_gpiod", rtt[SLICE_GET].p50 / rtt[PARENT_GET].p50, "x");
	bench_out("ratio.slice_edge_p50_vs_gpiod", edge[ON_SLICE].p50 / edge[ON_PARENT].p50, "x");
}
