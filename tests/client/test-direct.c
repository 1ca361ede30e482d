/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Direct requests on the bench: the policy gate ("direct = yes", PermissionDenied
 * naming it and the entry's file:line), values and edges through the kernel line
 * fds via libgpiobroker, reconfigure through the broker keeping what the fd drove,
 * the safe state after SIGKILL of the owner, the reload the broker cannot enforce
 * (RevokePending), and Watch of such a line (Busy). Real gpio-sim lines, real bus,
 * real uids; the restart case is in tests/client/test-restart.c.
 */
#include <check.h>
#include <poll.h>
#include <sys/stat.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "broker-calls.h"
#include "brokertest.h"
#include "bus-util.h"
#include "client-util.h"
#include "gpiobroker.h"
#include "gpiosim.h"
#include "org.gpiodbroker1.h"
#include "testmain.h"
#include "timing.h"
#include "users.h"

/* Everything the kernel fd can set, which "direct = yes" needs. */
#define ALL_SETTINGS \
	"users = *\n" \
	"directions = input, output\n" \
	"direction-may-change = yes\n" \
	"edges = rising, falling, both\n" \
	"bias = as-is, disabled, pull-up, pull-down\n" \
	"drive = push-pull, open-drain, open-source\n"
#define LINES_BUT_DIRECT \
	"[line out]\nchip = gbdir\noffset = 0\n" ALL_SETTINGS "safe-state = output-low\n%s" \
	"[line in]\nchip = gbdir\noffset = 1\n" ALL_SETTINGS "watch-users = *\n%s" \
	"[line slow]\nchip = gbdir\noffset = 2\n" ALL_SETTINGS \
	"[line spare]\nchip = gbdir\noffset = 3\n" ALL_SETTINGS "watch-users = *\n%s"

static const char *const names[4] = { "o", "i", "s", "p" };
static struct gb_sim_chip *sim;
static pid_t broker;
static char policy[4096];

static void write_policy(bool direct)
{
	const char *d = direct ? "direct = yes\n" : "";

	snprintf(policy, sizeof(policy), LINES_BUT_DIRECT, d, d, d);
}

static void setup(void)
{
	struct gb_broker_opts opts = { 0 };

	sim = gb_sim_chip_new("gbdir", 4, names);
	ck_assert_ptr_nonnull(sim);
	for (unsigned int i = 0; i < 4; i++)
		ck_assert_int_eq(gb_sim_set_pull(sim, i, false), 0);
	write_policy(true);
	opts.policy = policy;
	broker = gb_broker_spawn(&opts);
}

static void teardown(void)
{
	ck_assert_int_eq(gb_broker_stop(broker), 0);
	gb_sim_chip_free(sim);
}

static void pace(void)
{
	/* UML ticks at 100 Hz: closer edges would coalesce into one. */
	usleep(20000);
}

struct rec {
	int n, edges, pending;
	enum gpiobroker_event_type type[64];
	enum gpiobroker_edge edge[64];
	unsigned int index[64];
	uint64_t seq[64], lost[64], ts[64], gseq[64];
	char detail[600];
};

static void on_irq(struct gpiobroker_request *req, const struct gpiobroker_event *ev, void *userdata)
{
	struct rec *r = userdata;

	ck_assert_int_lt(r->n, 64);
	r->type[r->n] = gpiobroker_event_get_type(ev);
	r->edge[r->n] = gpiobroker_event_get_edge(ev);
	r->index[r->n] = gpiobroker_event_get_index(ev);
	r->seq[r->n] = gpiobroker_event_get_seqno(ev);
	r->lost[r->n] = gpiobroker_event_get_lost(ev);
	r->ts[r->n] = gpiobroker_event_get_timestamp_ns(ev);
	r->gseq[r->n] = gpiobroker_event_get_global_seqno(ev);
	if (r->type[r->n] == GPIOBROKER_EVENT_EDGE)
		r->edges++;
	if (r->type[r->n] == GPIOBROKER_EVENT_REVOKE_PENDING) {
		r->pending++;
		snprintf(r->detail, sizeof(r->detail), "%s", gpiobroker_event_get_detail(ev));
	}
	r->n++;
}

/* GetLineFds must fail with @p want, its message containing @p needle. */
static void expect_fds_error(sd_bus *bus, const char *path, const char *want, const char *needle)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;

	ck_assert_int_lt(sd_bus_call_method(bus, GB_BUS_NAME, path, GB_IFACE_REQUEST, "GetLineFds",
					    &err, NULL, ""), 0);
	gb_assert_error(&err, want, needle);
}

/* GetAccess's "direct" for @p line, as @p bus's caller. */
static bool access_direct(sd_bus *bus, const char *line)
{
	sd_bus_message *reply = NULL;
	const char *key;
	int direct = -1;

	ck_assert_int_ge(sd_bus_call_method(bus, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "GetAccess",
					    NULL, &reply, "s", line), 0);
	ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "{sv}"), 0);
	while (sd_bus_message_enter_container(reply, 'e', "sv") > 0) {
		ck_assert_int_ge(sd_bus_message_read(reply, "s", &key), 0);
		if (strcmp(key, "direct") == 0)
			ck_assert_int_ge(sd_bus_message_read(reply, "v", "b", &direct), 0);
		else
			ck_assert_int_ge(sd_bus_message_skip(reply, "v"), 0);
		ck_assert_int_ge(sd_bus_message_exit_container(reply), 0);
	}
	sd_bus_message_unref(reply);
	ck_assert_msg(direct >= 0, "GetAccess(%s) has no 'direct'", line);
	return direct;
}

/* Without "direct = yes" the broker says which rule is missing, and where. */
START_TEST(test_policy_gate)
{
	struct gpiobroker *b = gb_client_open_as(UID_ALICE);
	struct gpiobroker_line_settings s = gb_output_settings(0);
	const char *line = "slow";
	struct gpiobroker_request *req;
	sd_bus *other = gb_connect(UID_BOB);
	sd_bus_error err = SD_BUS_ERROR_NULL;

	/* GetAccess says so before a request is refused. */
	ck_assert(!access_direct(other, "slow"));
	ck_assert(access_direct(other, "out"));
	req = gpiobroker_request_array(b, 1, &line, &s, "fast", GPIOBROKER_REQUEST_DIRECT);
	ck_assert_ptr_null(req);
	ck_assert_int_eq(errno, EACCES);
	ck_assert_str_eq(gpiobroker_last_error_name(b), GB_ERROR_PERMISSION);
	ck_assert_msg(strstr(gpiobroker_last_error_message(b),
			     "direct line fds are not allowed by [line slow] (" GB_TEST_POLICY_DIR
			     "/50-test.conf:"),
		      "%s", gpiobroker_last_error_message(b));
	ck_assert_msg(strstr(gpiobroker_last_error_message(b), "it needs direct = yes"), "%s",
		      gpiobroker_last_error_message(b));
	ck_assert(!gb_sim_line_used(sim, 2, NULL, NULL, 0));

	/* Asked to, the library falls back to the bus. */
	req = gpiobroker_request_array(b, 1, &line, &s, "fast", GPIOBROKER_REQUEST_DIRECT_OR_BUS);
	ck_assert_msg(req != NULL, "%s", gpiobroker_last_error_message(b));
	ck_assert(!gpiobroker_request_is_direct(req));
	ck_assert_int_eq(gpiobroker_set_value(req, 0, 1), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 2), 1);
	/* Not direct: no fds for it. */
	expect_fds_error(gpiobroker_get_bus(b), gpiobroker_request_get_path(req), GB_ERROR_INVALID_ARGS, "is not direct");
	ck_assert_int_eq(gpiobroker_free(req), 0);

	/* Granted: the fds go to the owner's connection only. */
	line = "out";
	req = gpiobroker_request_array(b, 1, &line, &s, "fast", GPIOBROKER_REQUEST_DIRECT);
	ck_assert_msg(req != NULL, "%s", gpiobroker_last_error_message(b));
	ck_assert(gpiobroker_request_is_direct(req));
	ck_assert(gb_get_prop_bool(other, gpiobroker_request_get_path(req), GB_IFACE_REQUEST, "Direct"));
	expect_fds_error(other, gpiobroker_request_get_path(req), GB_ERROR_PERMISSION, "belongs to another connection");
	ck_assert_int_eq(gpiobroker_free(req), 0);

	/* Direct is managed only, whoever asks. */
	ck_assert_ptr_null(gpiobroker_request_array(b, 1, &line, &s, "fast",
						    GPIOBROKER_REQUEST_DIRECT |
						    GPIOBROKER_REQUEST_PERSISTENT));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_lt(sd_bus_call_method(other, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER,
					    "Request", &err, NULL, "sa(sa{sv})a{sv}", "fast", 1, "out",
					    0, 2, "persistent", "b", 1, "direct", "b", 1), 0);
	gb_assert_error_at(__FILE__, __LINE__, &err, GB_ERROR_INVALID_ARGS,
			   "cannot be both persistent and direct");
	sd_bus_error_free(&err);
	sd_bus_unref(other);
	gpiobroker_close(b);
}
END_TEST

/* Values by ioctl, edges from the fd, with the calls of the bus path. */
START_TEST(test_values_and_edges)
{
	struct gpiobroker *b = gb_client_open_as(UID_ALICE);
	struct gpiobroker_line_settings s[2] = { gb_output_settings(0), gb_input_edge_settings() };
	const char *lines[2] = { "out", "in" };
	struct gpiobroker_request *req;
	struct rec r = { 0 };
	int v[2];

	req = gpiobroker_request_array(b, 2, lines, s, "fast", GPIOBROKER_REQUEST_DIRECT);
	ck_assert_msg(req != NULL, "%s", gpiobroker_last_error_message(b));
	ck_assert(gpiobroker_request_is_direct(req));
	ck_assert_int_eq(gpiobroker_to_irq_flags(req, on_irq, &r, GPIOBROKER_IRQ_INITIAL_STATE), 0);
	/* The levels, read from the fds by the library (the broker sends none). */
	ck_assert_int_eq(r.n, 2);
	ck_assert_int_eq(r.type[0], GPIOBROKER_EVENT_INITIAL_STATE);

	ck_assert_int_eq(gpiobroker_set_value(req, 0, 1), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);
	ck_assert_int_eq(gpiobroker_get_values(req, 2, NULL, v), 0);
	ck_assert_int_eq(v[0], 1);
	ck_assert_int_eq(v[1], 0);
	/* An input refuses a value, as on the bus path. */
	ck_assert_int_eq(gpiobroker_set_value(req, 1, 1), -EPERM);
	ck_assert_int_eq(gpiobroker_get_value(req, 5), -EINVAL);
	/* The broker reads through its own copy of the same kernel request. */
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, true), 0);
	ck_assert(gb_client_wait_count(&b, 1, &r.edges, 1, 5000));
	pace();
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, false), 0);
	ck_assert(gb_client_wait_count(&b, 1, &r.edges, 2, 5000));
	ck_assert_int_eq(r.type[2], GPIOBROKER_EVENT_EDGE);
	ck_assert_int_eq(r.edge[2], GPIOBROKER_EDGE_RISING);
	ck_assert_int_eq(r.index[2], 1);
	ck_assert_int_eq(r.seq[2], 1);
	ck_assert_int_eq(r.edge[3], GPIOBROKER_EDGE_FALLING);
	ck_assert_int_eq(r.seq[3], 2);
	ck_assert_int_eq(r.lost[2] + r.lost[3], 0);
	ck_assert_uint_gt(r.ts[3], r.ts[2]);
	ck_assert_int_eq(gpiobroker_get_value(req, 1), 0);

	/* Reconfigure goes through the broker, which passes the level the fd drove,
	 * not the one it recorded: line 0 stays high while line 1 becomes an output. */
	ck_assert_int_eq(gpiobroker_direction_output(req, 1, 1), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);
	ck_assert_int_eq(gb_sim_get_value(sim, 1), 1);
	ck_assert_int_eq(gpiobroker_set_value(req, 1, 0), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 1), 0);

	/* Released: the library closes its copies first, so the lines are free when
	 * the call returns, and the out line is in its safe state. */
	ck_assert_int_eq(gpiobroker_free(req), 0);
	ck_assert(!gb_sim_line_used(sim, 0, NULL, NULL, 0));
	ck_assert(!gb_sim_line_used(sim, 1, NULL, NULL, 0));
	gpiobroker_close(b);
}
END_TEST

/* A program that waits on nothing but its request: the kernel line fd itself, polled
 * and read as libgpiod would, through the library's own handler and counting. */
START_TEST(test_request_fd)
{
	struct gpiobroker *b = gb_client_open_as(UID_ALICE);
	struct gpiobroker_line_settings in = gb_input_edge_settings();
	struct gpiobroker_request *req, *bus_req;
	struct rec r = { 0 };
	struct stat st;
	int fd;

	req = gpiobroker_request_array(b, 1, (const char *const[]){ "in" }, &in, "own-fd",
				       GPIOBROKER_REQUEST_DIRECT);
	ck_assert_msg(req != NULL, "%s", gpiobroker_last_error_message(b));
	ck_assert_int_eq(gpiobroker_to_irq(req, on_irq, &r), 0);
	fd = gpiobroker_request_get_fd(req);
	ck_assert_int_ge(fd, 0);
	/* Not the handle's epoll fd: the kernel's line request, a char device's anon
	 * inode, which nothing but this request's edges make readable. */
	ck_assert_int_ne(fd, gpiobroker_get_fd(b));
	ck_assert_int_eq(fstat(fd, &st), 0);
	/* Nothing yet: processing reads nothing and does not block. */
	ck_assert_int_eq(gpiobroker_request_process(req), 0);
	for (int k = 0; k < 2; k++) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		ck_assert_int_eq(gb_sim_set_pull(sim, 1, k == 0), 0);
		ck_assert_int_eq(poll(&p, 1, 5000 * gb_slow()), 1);
		ck_assert_int_eq(gpiobroker_request_process(req), 1);
		ck_assert_int_eq(r.edges, k + 1);
		ck_assert_int_eq(r.edge[k], k == 0 ? GPIOBROKER_EDGE_RISING : GPIOBROKER_EDGE_FALLING);
		ck_assert_int_eq(r.seq[k], (uint64_t)k + 1);
		ck_assert_int_eq(r.lost[k], 0);
		pace();
	}
	/* A request whose events come over the connection: the connection's fd. */
	bus_req = gpiobroker_request_input(b, "spare", "by-bus", GPIOBROKER_EDGE_BOTH);
	ck_assert_msg(bus_req != NULL, "%s", gpiobroker_last_error_message(b));
	ck_assert_int_eq(gpiobroker_request_get_fd(bus_req), gpiobroker_get_fd(b));
	ck_assert_int_eq(gpiobroker_request_get_fd(NULL), -EINVAL);
	ck_assert_int_eq(gpiobroker_free(bus_req), 0);
	ck_assert_int_eq(gpiobroker_free(req), 0);
	gpiobroker_close(b);
}
END_TEST

/* A burst: every edge the kernel saw is delivered, or counted by its seqno gaps
 * (the simulator may merge pulls within one UML tick: the kernel's count is what
 * must be accounted for). */
START_TEST(test_burst)
{
	struct gpiobroker *b = gb_client_open_as(UID_ALICE);
	struct gpiobroker_line_settings s = gb_input_edge_settings();
	const char *line = "in";
	struct gpiobroker_request *req;
	struct rec r = { 0 };
	uint64_t lost = 0;

	req = gpiobroker_request_array(b, 1, &line, &s, "fast", GPIOBROKER_REQUEST_DIRECT);
	ck_assert_msg(req != NULL, "%s", gpiobroker_last_error_message(b));
	ck_assert_int_eq(gpiobroker_to_irq(req, on_irq, &r), 0);
	for (int i = 0; i < 20; i++) {
		ck_assert_int_eq(gb_sim_set_pull(sim, 1, i % 2 == 0), 0);
		pace();
	}
	ck_assert(gb_client_wait_count(&b, 1, &r.n, 1, 5000));
	/* The last edge is falling: wait for it, then count. */
	while (r.edge[r.n - 1] != GPIOBROKER_EDGE_FALLING &&
	       gb_client_wait_count(&b, 1, &r.n, r.n + 1, 5000))
		;
	ck_assert_int_eq(r.edge[r.n - 1], GPIOBROKER_EDGE_FALLING);
	for (int i = 0; i < r.n; i++) {
		lost += r.lost[i];
		ck_assert_uint_eq(r.seq[i], i + 1);
	}
	ck_assert_uint_eq((uint64_t)r.n + lost, r.gseq[r.n - 1]);
	ck_assert_int_le(r.n, 20);
	ck_assert_uint_eq(gpiobroker_request_get_events_lost(req), lost);
	ck_assert_int_eq(gpiobroker_free(req), 0);
	gpiobroker_close(b);
}
END_TEST

static sd_bus *killed_body(void *userdata)
{
	struct gpiobroker *b = gb_client_open_as(UID_ALICE);
	struct gpiobroker_line_settings s = gb_output_settings(0);
	const char *line = "out";
	struct gpiobroker_request *req = gpiobroker_request_array(b, 1, &line, &s, "fast",
								  GPIOBROKER_REQUEST_DIRECT);

	if (!req || gpiobroker_set_value(req, 0, 1) < 0)
		return NULL;
	return gpiobroker_get_bus(b);
}

/* The owner is killed: the broker puts the line in its safe state through its own
 * copy of the fd, and the line goes back to the kernel. */
START_TEST(test_sigkill_safe_state)
{
	sd_bus *root = gb_connect(0);
	char name[256];
	pid_t pid = gb_fork_client(killed_body, NULL, name, sizeof(name));
	bool output = false;

	ck_assert(gb_sim_line_used(sim, 0, &output, NULL, 0));
	ck_assert(output);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	gb_wait_client_gone(root, name);
	ck_assert(gb_wait_line_used(root, gb_sim_chip_name(sim), 0, false, 5000));
	ck_assert(!gb_sim_line_used(sim, 0, NULL, NULL, 0));
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 0);
	sd_bus_unref(root);
}
END_TEST

/* A reload that no longer allows it cannot take the fds back: it is reported, the
 * request stays until its owner lets go. */
START_TEST(test_reload_report)
{
	struct gpiobroker *b = gb_client_open_as(UID_ALICE);
	struct gpiobroker_line_settings s = gb_output_settings(1);
	const char *line = "out";
	struct gpiobroker_request *req;
	sd_bus *root = gb_connect(0);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	struct rec r = { 0 };
	char *pending;

	req = gpiobroker_request_array(b, 1, &line, &s, "fast", GPIOBROKER_REQUEST_DIRECT);
	ck_assert_msg(req != NULL, "%s", gpiobroker_last_error_message(b));
	ck_assert_int_eq(gpiobroker_to_irq(req, on_irq, &r), 0);
	write_policy(false);
	gb_policy_write(policy);
	ck_assert_int_ge(sd_bus_call_method(root, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER,
					    "ReloadPolicy", &err, NULL, ""), 0);
	ck_assert(gb_client_wait_count(&b, 1, &r.pending, 1, 5000));
	ck_assert_msg(strstr(r.detail, "cannot be taken back") && strstr(r.detail, "direct = yes"),
		      "%s", r.detail);
	pending = gb_get_prop_str(root, gpiobroker_request_get_path(req), GB_IFACE_REQUEST,
				  "RevokePending");
	ck_assert_str_eq(pending, r.detail);
	free(pending);
	/* Still held, still driven; no new fds for it. */
	ck_assert(gb_sim_line_used(sim, 0, NULL, NULL, 0));
	ck_assert_int_eq(gpiobroker_set_value(req, 0, 0), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 0);
	expect_fds_error(gpiobroker_get_bus(b), gpiobroker_request_get_path(req), GB_ERROR_PERMISSION, "cannot be taken back");
	/* A policy that no longer covers the line at all: reported again, with the new
	 * reason; the owner may still let go of it. */
	gb_policy_write("[line other]\nchip = gbdir\noffset = 2\n" ALL_SETTINGS);
	ck_assert_int_ge(sd_bus_call_method(root, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER,
					    "ReloadPolicy", &err, NULL, ""), 0);
	ck_assert(gb_client_wait_count(&b, 1, &r.pending, 2, 5000));
	ck_assert_msg(strstr(r.detail, "no policy entry covers"), "%s", r.detail);
	ck_assert_int_eq(gpiobroker_get_value(req, 0), 0); /* the fd still works */
	ck_assert_int_eq(gpiobroker_free(req), 0);
	ck_assert(!gb_sim_line_used(sim, 0, NULL, NULL, 0));
	/* New direct requests are refused now. */
	write_policy(false);
	gb_policy_write(policy);
	ck_assert_int_ge(sd_bus_call_method(root, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER,
					    "ReloadPolicy", &err, NULL, ""), 0);
	ck_assert_ptr_null(gpiobroker_request_array(b, 1, &line, &s, "fast", GPIOBROKER_REQUEST_DIRECT));
	ck_assert_int_eq(errno, EACCES);
	sd_bus_error_free(&err);
	sd_bus_unref(root);
	gpiobroker_close(b);
}
END_TEST

static void on_watch(struct gpiobroker_watch *w, const struct gpiobroker_event *ev, void *userdata)
{
	(*(int *)userdata)++;
}

/* A line held direct has no watchers, and a watched line is not given direct. */
START_TEST(test_watch_busy)
{
	struct gpiobroker *a = gb_client_open_as(UID_ALICE), *c = gb_client_open_as(UID_CAROL);
	struct gpiobroker_line_settings s = gb_input_edge_settings();
	const char *line = "in";
	struct gpiobroker_request *req;
	struct gpiobroker_watch *w;
	int seen = 0;

	req = gpiobroker_request_array(a, 1, &line, &s, "fast", GPIOBROKER_REQUEST_DIRECT);
	ck_assert_msg(req != NULL, "%s", gpiobroker_last_error_message(a));
	ck_assert_ptr_null(gpiobroker_watch(c, "in", on_watch, &seen));
	ck_assert_int_eq(errno, EBUSY);
	ck_assert_str_eq(gpiobroker_last_error_name(c), GB_ERROR_BUSY);
	ck_assert_msg(strstr(gpiobroker_last_error_message(c), "held by a direct request") &&
		      strstr(gpiobroker_last_error_message(c), "it has no watchers"),
		      "%s", gpiobroker_last_error_message(c));
	ck_assert_int_eq(gpiobroker_free(req), 0);

	w = gpiobroker_watch(c, "spare", on_watch, &seen);
	ck_assert_msg(w != NULL, "%s", gpiobroker_last_error_message(c));
	line = "spare";
	ck_assert_ptr_null(gpiobroker_request_array(a, 1, &line, &s, "fast", GPIOBROKER_REQUEST_DIRECT));
	ck_assert_int_eq(errno, EBUSY);
	ck_assert_msg(strstr(gpiobroker_last_error_message(a), "has 1 watcher(s)"), "%s",
		      gpiobroker_last_error_message(a));
	ck_assert_int_eq(gpiobroker_watch_close(w), 0);
	gpiobroker_close(c);
	gpiobroker_close(a);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("client-direct");
	TCase *tc;

	gb_bench_enter(argc, argv);
	tc = gb_tcase_new(s, "direct", setup, teardown, 60 * gb_slow());
	tcase_add_test(tc, test_policy_gate);
	tcase_add_test(tc, test_values_and_edges);
	tcase_add_test(tc, test_request_fd);
	tcase_add_test(tc, test_burst);
	tcase_add_test(tc, test_sigkill_safe_state);
	tcase_add_test(tc, test_reload_report);
	tcase_add_test(tc, test_watch_busy);
	return gb_run_suite(s);
}
