/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Watches: read-only subscribers of a line. Every watcher and the holder see the
 * same kernel events; the initial level comes first; watching is its own
 * permission with a per-line limit; a line nobody holds can be watched and still
 * requested; a subscriber that stops reading loses only its own events, with the
 * exact count, and the broker's memory stays bounded.
 */
#include <check.h>
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
#include "org.gpiodbroker1.h"
#include "procstat.h"
#include "testmain.h"
#include "timing.h"
#include "users.h"

static const char *const names[5] = { "led", "button", "door", "spare", NULL };
static struct gb_sim_chip *sim;
static pid_t broker;

#define POLICY \
	"[line led]\nchip = gbw\noffset = 0\nusers = gb-alice\ndirections = output\n" \
	"[line button]\nchip = gbw\noffset = 1\nusers = gb-alice\ndirections = input\n" \
	"edges = none, both\nwatch-groups = gb-gpio\nwatch-users = gb-bob\nmax-watchers = 4\n" \
	"[line door]\nchip = gbw\noffset = 2\nusers = gb-alice\ndirections = input\n" \
	"edges = none, both\nwatch-users = gb-bob, gb-carol\nmax-watchers = 2\n"

static void start(const char *const *args)
{
	sim = gb_sim_chip_new("gbw", 4, names);
	ck_assert_ptr_nonnull(sim);
	for (int i = 1; i < 4; i++)
		ck_assert_int_eq(gb_sim_set_pull(sim, i, false), 0);
	broker = gb_broker_spawn(&(struct gb_broker_opts){ .policy = POLICY, .args = args });
}

static void setup(void)
{
	start(NULL);
}

/* Small numbers so that a stalled subscriber hits both limits within a few dozen
 * edges: window 4, queue 8. */
static void setup_small(void)
{
	start(GB_ARGS("--event-window=4", "--event-queue=8"));
}

static void teardown(void)
{
	ck_assert_int_eq(gb_broker_stop(broker), 0);
	gb_sim_chip_free(sim);
}

struct wev {
	char kind; /* 'r', 'f', 'i' (InitialState) */
	int value;
	uint32_t index, offset;
	uint64_t ts, gseq, lseq, seq;
};

/* What one connection receives from the broker. */
struct rec {
	sd_bus *bus;
	char path[128];  /* the request or watch the signals must come from */
	struct wev ev[512];
	int n;           /* all events, initial states included */
	int edges;       /* Event signals */
	int accounted;   /* edges + lost: each edge the broker saw, delivered or counted */
	uint64_t lost;
	int lost_signals;
	bool ack;        /* acknowledge each event, as the client library does */
};

static int on_signal(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
	struct rec *r = userdata;
	struct wev *ev = &r->ev[r->n < 512 ? r->n : 511];
	const char *edge;

	if (!r->path[0] || strcmp(sd_bus_message_get_path(m), r->path) != 0)
		return 0;
	if (sd_bus_message_is_signal(m, NULL, "Event")) {
		ck_assert_int_ge(sd_bus_message_read(m, "uustttt", &ev->index, &ev->offset, &edge,
						     &ev->ts, &ev->gseq, &ev->lseq, &ev->seq), 0);
		ev->kind = edge[0];
		r->n++;
		r->edges++;
		r->accounted++;
		if (r->ack)
			ck_assert_int_ge(sd_bus_call_method_async(r->bus, NULL, GB_BUS_NAME, r->path,
								  sd_bus_message_get_interface(m),
								  "Ack", NULL, NULL, "t", ev->seq), 0);
	} else if (sd_bus_message_is_signal(m, NULL, "InitialState")) {
		ck_assert_int_ge(sd_bus_message_read(m, "uubtt", &ev->index, &ev->offset, &ev->value,
						     &ev->ts, &ev->seq), 0);
		ev->kind = 'i';
		r->n++;
	} else if (sd_bus_message_is_signal(m, NULL, "EventsLost")) {
		uint64_t n, total;

		ck_assert_int_ge(sd_bus_message_read(m, "tt", &n, &total), 0);
		r->lost += n;
		r->accounted += (int)n;
		r->lost_signals++;
		ck_assert_uint_eq(total, r->lost);
	}
	return 0;
}

static void listen_on(struct rec *r, sd_bus *bus, bool ack)
{
	memset(r, 0, sizeof(*r));
	r->bus = bus;
	r->ack = ack;
	ck_assert_int_ge(sd_bus_add_match(bus, NULL, "type='signal',sender='" GB_BUS_NAME "'",
					  on_signal, r), 0);
}

static int watch(struct rec *r, const char *line, sd_bus_error *err)
{
	sd_bus_message *reply = NULL;
	const char *path;
	int ret;

	ret = sd_bus_call_method(r->bus, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "Watch", err, &reply,
				 "sa{sv}", line, 0);
	if (ret < 0)
		return ret;
	ck_assert_int_ge(sd_bus_message_read(reply, "o", &path), 0);
	snprintf(r->path, sizeof(r->path), "%s", path);
	sd_bus_message_unref(reply);
	return 0;
}

static void hold(struct rec *r, const char *line)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char *path = NULL;

	ck_assert_msg(gb_request(r->bus, "holder", line, "input", -1, "both", false, &path, &err) >= 0,
		      "%s", err.message);
	snprintf(r->path, sizeof(r->path), "%s", path);
	free(path);
}

static void wait_n(struct rec *r, int n)
{
	ck_assert_msg(gb_bus_wait_count(r->bus, &r->n, n, 5000), "%s: %d of %d events", r->path,
		      r->n, n);
}

static void assert_initial(const struct rec *r, int at, int level)
{
	ck_assert_int_eq(r->ev[at].kind, 'i');
	ck_assert_int_eq(r->ev[at].value, level);
}

/* Toggle a line and wait until @p r has seen the edge: closer toggles would
 * coalesce at UML's 100 Hz tick. */
static void toggle(struct rec *r, unsigned int off, bool level)
{
	int want = r->n + 1;

	ck_assert_int_eq(gb_sim_set_pull(sim, off, level), 0);
	wait_n(r, want);
}

/* In a child: carol watches the button. */
static sd_bus *carol_watches_button(void *userdata)
{
	sd_bus *bus = gb_connect(UID_CAROL);
	sd_bus_error err = SD_BUS_ERROR_NULL;

	if (sd_bus_call_method(bus, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "Watch", &err, NULL, "sa{sv}",
			       "button", 0) < 0)
		return NULL;
	return bus;
}

START_TEST(test_three_watchers_one_holder)
{
	sd_bus *alice = gb_connect(UID_ALICE), *bob = gb_connect(UID_BOB),
	       *carol = gb_connect(UID_CAROL), *alice2 = gb_connect(UID_ALICE);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	struct rec h, w[3];
	const int edges = 12;
	int killed_at = edges / 2;
	char child_name[64];
	pid_t child;

	listen_on(&h, alice, false);
	listen_on(&w[0], bob, false);
	listen_on(&w[1], carol, false);
	listen_on(&w[2], alice2, false);
	hold(&h, "button");
	for (int i = 0; i < 3; i++)
		ck_assert_msg(watch(&w[i], "button", &err) >= 0, "%s", err.message);

	/* A fourth watcher in another process, killed halfway. */
	child = gb_fork_client(carol_watches_button, NULL, child_name, sizeof(child_name));

	/* Everybody starts from the level: low. */
	wait_n(&h, 1);
	assert_initial(&h, 0, 0);
	for (int i = 0; i < 3; i++) {
		wait_n(&w[i], 1);
		assert_initial(&w[i], 0, 0);
	}

	for (int k = 0; k < edges; k++) {
		if (k == killed_at) {
			ck_assert_int_eq(kill(child, SIGKILL), 0);
			ck_assert_int_eq(waitpid(child, NULL, 0), child);
		}
		toggle(&h, 1, k % 2 == 0);
		for (int i = 0; i < 3; i++)
			wait_n(&w[i], k + 2);
	}

	/* Same kernel events, same order, nothing lost, for everybody. */
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(w[i].n, edges + 1);
		ck_assert_uint_eq(w[i].lost, 0);
		for (int k = 1; k <= edges; k++) {
			ck_assert_int_eq(w[i].ev[k].kind, k % 2 ? 'r' : 'f');
			ck_assert_int_eq(w[i].ev[k].kind, h.ev[k].kind);
			ck_assert_uint_eq(w[i].ev[k].ts, h.ev[k].ts);
			ck_assert_uint_eq(w[i].ev[k].gseq, h.ev[k].gseq);
			ck_assert_uint_eq(w[i].ev[k].lseq, h.ev[k].lseq);
			ck_assert_uint_eq(w[i].ev[k].seq, (uint64_t)k);
			ck_assert_uint_eq(w[i].ev[k].offset, 1);
		}
	}
	ck_assert_uint_eq(h.lost, 0);
	for (int k = 1; k <= edges; k++)
		ck_assert_uint_eq(h.ev[k].seq, (uint64_t)k);

	gb_close(alice);
	gb_close(bob);
	gb_close(carol);
	gb_close(alice2);
}
END_TEST

START_TEST(test_permission_and_limit)
{
	sd_bus *bob = gb_connect(UID_BOB), *carol = gb_connect(UID_CAROL),
	       *alice = gb_connect(UID_ALICE), *root = gb_connect(0);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	struct rec b1, b2, c1, a1, r1;
	char *s;

	listen_on(&b1, bob, false);
	listen_on(&c1, carol, false);
	listen_on(&a1, alice, false);
	listen_on(&r1, root, false);

	/* Requesting is not watching: alice may request door but not watch it ... */
	ck_assert_int_lt(watch(&a1, "door", &err), 0);
	gb_assert_error(&err, GB_ERROR_PERMISSION, "watch-users or watch-groups of [line door]");
	/* ... no entry gives the led watchers, and nobody covers offset 3. */
	ck_assert_int_lt(watch(&b1, "led", &err), 0);
	gb_assert_error(&err, GB_ERROR_PERMISSION, "watch-users");
	ck_assert_int_lt(watch(&b1, "gbw:3", &err), 0);
	gb_assert_error(&err, GB_ERROR_PERMISSION, "no policy entry covers");
	ck_assert_int_lt(sd_bus_call_method(bob, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "Watch", &err, NULL,
					    "sa{sv}", "door", 1, "bogus", "b", 1), 0);
	gb_assert_error(&err, GB_ERROR_INVALID_ARGS, NULL);

	/* max-watchers = 2: bob and carol, then no more. */
	ck_assert_msg(watch(&b1, "door", &err) >= 0, "%s", err.message);
	ck_assert_msg(watch(&c1, "door", &err) >= 0, "%s", err.message);
	memcpy(&b2, &b1, sizeof(b2));
	ck_assert_int_lt(watch(&b2, "door", &err), 0);
	gb_assert_error(&err, GB_ERROR_BUSY, "max-watchers");
	ck_assert_int_lt(watch(&r1, "door", &err), 0); /* root too: it is a limit, not a permission */
	sd_bus_error_free(&err);

	/* Only its owner may close a watch; closing frees a place. */
	ck_assert_int_lt(sd_bus_call_method(carol, GB_BUS_NAME, b1.path, GB_IFACE_WATCH, "Close", &err, NULL, ""), 0);
	gb_assert_error(&err, GB_ERROR_PERMISSION, NULL);
	ck_assert_int_ge(sd_bus_call_method(bob, GB_BUS_NAME, b1.path, GB_IFACE_WATCH, "Close", &err, NULL, ""), 0);
	ck_assert_msg(watch(&r1, "door", &err) >= 0, "%s", err.message);
	s = gb_line_prop_str(root, gb_sim_chip_name(sim), 2, "Consumer");
	ck_assert_str_eq(s, "gpiod-broker-watch");
	free(s);

	gb_close(bob);
	gb_close(carol);
	gb_close(alice);
	gb_close(root);
}
END_TEST

START_TEST(test_initial_state_both_levels)
{
	for (int level = 0; level <= 1; level++) {
		sd_bus *bob = gb_connect(UID_BOB), *alice = gb_connect(UID_ALICE);
		sd_bus_error err = SD_BUS_ERROR_NULL;
		struct rec w, h, w2;

		ck_assert_int_eq(gb_sim_set_pull(sim, 1, level), 0);
		ck_assert_int_eq(gb_sim_get_value(sim, 1), level);
		/* A watch of a line nobody holds ... */
		listen_on(&w, bob, false);
		ck_assert_msg(watch(&w, "button", &err) >= 0, "%s", err.message);
		wait_n(&w, 1);
		assert_initial(&w, 0, level);
		ck_assert_uint_eq(w.ev[0].seq, 0);
		/* ... a request with edge detection: its initial state comes first ... */
		listen_on(&h, alice, false);
		hold(&h, "button");
		wait_n(&h, 1);
		assert_initial(&h, 0, level);
		ck_assert_uint_eq(h.ev[0].index, 0);
		ck_assert_uint_eq(h.ev[0].offset, 1);
		/* ... and the watcher hears the level again from the new holder. */
		wait_n(&w, 2);
		assert_initial(&w, 1, level);
		/* A watch of a held line. */
		listen_on(&w2, bob, false);
		ck_assert_msg(watch(&w2, "button", &err) >= 0, "%s", err.message);
		wait_n(&w2, 1);
		assert_initial(&w2, 0, level);
		/* Then edges, and the level they lead to. */
		toggle(&h, 1, !level);
		ck_assert_int_eq(h.ev[1].kind, level ? 'f' : 'r');
		wait_n(&w, 3);
		wait_n(&w2, 2);
		ck_assert_int_eq(w.ev[2].kind, h.ev[1].kind);
		ck_assert_int_eq(w2.ev[1].kind, h.ev[1].kind);
		gb_close(alice);
		gb_close(bob);
		alice = gb_connect(0);
		ck_assert(gb_wait_line_used(alice, gb_sim_chip_name(sim), 1, false, 5000));
		gb_close(alice);
	}
}
END_TEST

/* A Reconfigure that turns edge detection on starts the line from its level, as a new
 * request with edges would; lines that had edges already are not sent it again. */
START_TEST(test_reconfigure_edges_on_sends_initial_state)
{
	for (int level = 0; level <= 1; level++) {
		sd_bus *alice = gb_connect(UID_ALICE);
		sd_bus_error err = SD_BUS_ERROR_NULL;
		char *path = NULL;
		struct rec h;

		ck_assert_int_eq(gb_sim_set_pull(sim, 1, level), 0);
		listen_on(&h, alice, false);
		ck_assert_msg(gb_request(alice, "holder", "button", "input", -1, "none", false, &path,
					 &err) >= 0, "%s", err.message);
		snprintf(h.path, sizeof(h.path), "%s", path);
		ck_assert_msg(sd_bus_call_method(alice, GB_BUS_NAME, path, GB_IFACE_REQUEST,
						 "Reconfigure", &err, NULL, "a(ua{sv})", 1, 0, 1,
						 "edge", "s", "both") >= 0, "%s", err.message);
		wait_n(&h, 1);
		assert_initial(&h, 0, level);
		ck_assert_uint_eq(h.ev[0].index, 0);
		ck_assert_uint_eq(h.ev[0].offset, 1);
		/* Edges follow it; a second reconfigure that keeps edges on sends nothing. */
		toggle(&h, 1, !level);
		ck_assert_int_eq(h.ev[1].kind, level ? 'f' : 'r');
		ck_assert_msg(sd_bus_call_method(alice, GB_BUS_NAME, path, GB_IFACE_REQUEST,
						 "Reconfigure", &err, NULL, "a(ua{sv})", 1, 0, 1,
						 "edge", "s", "both") >= 0, "%s", err.message);
		toggle(&h, 1, level);
		ck_assert_int_ne(h.ev[2].kind, 'i');
		free(path);
		gb_close(alice);
		alice = gb_connect(0);
		ck_assert(gb_wait_line_used(alice, gb_sim_chip_name(sim), 1, false, 5000));
		gb_close(alice);
	}
}
END_TEST

START_TEST(test_unheld_line_then_request)
{
	sd_bus *bob = gb_connect(UID_BOB), *alice = gb_connect(UID_ALICE), *root = gb_connect(0);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	struct rec w, h;
	const char *name, *wname;
	char line2_path[128];
	uint32_t uid;

	snprintf(line2_path, sizeof(line2_path), GB_ROOT_PATH "/chip/%s/line2", gb_sim_chip_name(sim));

	listen_on(&w, bob, false);
	ck_assert_msg(watch(&w, "door", &err) >= 0, "%s", err.message);
	wait_n(&w, 1);
	assert_initial(&w, 0, 0);
	/* The broker holds it for its watcher, under its own consumer name. */
	ck_assert(gb_wait_line_used(root, gb_sim_chip_name(sim), 2, true, 5000));
	ck_assert_int_ge(sd_bus_get_property(root, GB_BUS_NAME, line2_path, GB_IFACE_LINE,
					     "Watchers", &err, &reply, "a(su)"), 0);
	ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "(su)"), 0);
	ck_assert_int_gt(sd_bus_message_read(reply, "(su)", &name, &uid), 0);
	gb_get_unique_name(bob, &wname);
	ck_assert_str_eq(name, wname);
	ck_assert_uint_eq(uid, UID_BOB);
	ck_assert_int_eq(sd_bus_message_read(reply, "(su)", &name, &uid), 0);
	reply = sd_bus_message_unref(reply);
	toggle(&w, 2, true);
	ck_assert_int_eq(w.ev[1].kind, 'r');

	/* A real request takes it over; the watcher follows the holder. */
	listen_on(&h, alice, false);
	hold(&h, "door");
	wait_n(&h, 1);
	assert_initial(&h, 0, 1);
	wait_n(&w, 3);
	assert_initial(&w, 2, 1);
	toggle(&h, 2, false);
	wait_n(&w, 4);
	ck_assert_int_eq(w.ev[3].kind, 'f');
	ck_assert_uint_eq(w.ev[3].gseq, h.ev[1].gseq);
	ck_assert_uint_eq(w.ev[3].ts, h.ev[1].ts);

	/* The holder leaves: the broker takes the line back for its watcher. */
	ck_assert_int_ge(gb_release(alice, h.path, &err), 0);
	wait_n(&w, 5);
	assert_initial(&w, 4, 0);
	toggle(&w, 2, true);
	ck_assert_int_eq(w.ev[5].kind, 'r');

	/* The watcher leaves the bus: the broker lets go of the line. */
	gb_close(bob);
	ck_assert(gb_wait_line_used(root, gb_sim_chip_name(sim), 2, false, 5000));
	gb_close(alice);
	gb_close(root);
}
END_TEST

static int on_revoked(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
	const char *why;

	if (sd_bus_message_read(m, "s", &why) >= 0 && strstr(why, "policy reload"))
		(*(int *)userdata)++;
	return 0;
}

START_TEST(test_reload_revokes_watch)
{
	sd_bus *bob = gb_connect(UID_BOB), *root = gb_connect(0);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	struct rec w;
	int revoked = 0, may = -1;

	listen_on(&w, bob, false);
	ck_assert_msg(watch(&w, "door", &err) >= 0, "%s", err.message);
	ck_assert_int_ge(sd_bus_match_signal(bob, NULL, GB_BUS_NAME, w.path, GB_IFACE_WATCH, "Revoked",
					     on_revoked, &revoked), 0);
	/* GetAccess tells the watch permission apart. */
	ck_assert_int_ge(sd_bus_call_method(bob, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "GetAccess", &err,
					    &reply, "s", "door"), 0);
	ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "{sv}"), 0);
	while (sd_bus_message_enter_container(reply, 'e', "sv") > 0) {
		const char *key;

		ck_assert_int_ge(sd_bus_message_read(reply, "s", &key), 0);
		if (strcmp(key, "may-watch") == 0)
			ck_assert_int_ge(sd_bus_message_read(reply, "v", "b", &may), 0);
		else
			ck_assert_int_ge(sd_bus_message_skip(reply, "v"), 0);
		ck_assert_int_ge(sd_bus_message_exit_container(reply), 0);
	}
	reply = sd_bus_message_unref(reply);
	ck_assert_int_eq(may, 1);

	/* The integrator takes bob's watch permission away. */
	gb_policy_write("[line door]\nchip = gbw\noffset = 2\nusers = gb-alice\ndirections = input\n"
			"watch-users = gb-carol\n");
	ck_assert_int_ge(sd_bus_call_method(root, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "ReloadPolicy", &err,
					    NULL, ""), 0);
	ck_assert(gb_bus_wait_count(bob, &revoked, 1, 5000));
	ck_assert_int_lt(sd_bus_call_method(bob, GB_BUS_NAME, w.path, GB_IFACE_WATCH, "Close", &err, NULL, ""), 0);
	sd_bus_error_free(&err);
	ck_assert(gb_wait_line_used(root, gb_sim_chip_name(sim), 2, false, 5000));
	gb_close(bob);
	gb_close(root);
}
END_TEST

/* Process a stalled connection until every edge is delivered or counted lost. */
static void drain(struct rec *r, int edges)
{
	r->ack = true;
	/* Nothing has been acknowledged yet: start the window moving. */
	if (r->n) {
		uint64_t last = r->ev[r->n - 1].seq;

		ck_assert_int_ge(sd_bus_call_method_async(r->bus, NULL, GB_BUS_NAME, r->path,
							  strstr(r->path, "/watch/") ? GB_IFACE_WATCH : GB_IFACE_REQUEST,
							  "Ack", NULL, NULL, "t", last), 0);
	}
	ck_assert_msg(gb_bus_wait_count(r->bus, &r->accounted, edges, 10000),
		      "%s: %d of %d accounted for", r->path, r->accounted, edges);
}

START_TEST(test_slow_subscribers_lose_only_their_own)
{
	sd_bus *alice = gb_connect(UID_ALICE), *bob = gb_connect(UID_BOB),
	       *carol = gb_connect(UID_CAROL), *root = gb_connect(0);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	struct rec slow_owner, fast, slow_watcher;
	const int edges = 60, window = 4, queue = 8;
	long rss_before, rss_after;

	listen_on(&slow_owner, alice, false);
	listen_on(&fast, bob, true);
	listen_on(&slow_watcher, carol, false);
	hold(&slow_owner, "button");
	ck_assert_msg(watch(&fast, "button", &err) >= 0, "%s", err.message);
	ck_assert_msg(watch(&slow_watcher, "button", &err) >= 0, "%s", err.message);
	wait_n(&fast, 1);

	/* alice and carol never read nor acknowledge; bob does. */
	toggle(&fast, 1, true);
	toggle(&fast, 1, false);
	rss_before = gb_proc_rss_kib(broker);
	for (int k = 2; k < edges; k++)
		toggle(&fast, 1, k % 2 == 0);
	rss_after = gb_proc_rss_kib(broker);

	/* The one who keeps up lost nothing. */
	ck_assert_int_eq(fast.edges, edges);
	ck_assert_uint_eq(fast.lost, 0);
	for (int k = 1; k <= edges; k++)
		ck_assert_uint_eq(fast.ev[k].seq, (uint64_t)k);
	/* The broker keeps at most queue events per subscriber (56 bytes each): its
	 * memory does not follow what the stalled ones do not read. The slack is for
	 * the allocator and valgrind, which grow RSS by a few hundred kB on their own. */
	ck_assert_msg(rss_after - rss_before < 2048, "broker RSS grew from %ld to %ld kB",
		      rss_before, rss_after);
	ck_assert_uint_eq(gb_get_prop_u64(root, slow_watcher.path, GB_IFACE_WATCH, "EventsLost"),
			  (uint64_t)(edges - window - queue));

	/* The stalled ones catch up: the window and the queue arrive, then the exact
	 * count of what did not fit. */
	drain(&slow_watcher, edges);
	drain(&slow_owner, edges);
	ck_assert_int_eq(slow_watcher.edges, window + queue);
	ck_assert_uint_eq(slow_watcher.lost, (uint64_t)(edges - window - queue));
	ck_assert_int_eq(slow_owner.edges, window + queue);
	ck_assert_uint_eq(slow_owner.lost, (uint64_t)(edges - window - queue));
	ck_assert_int_eq(slow_owner.edges + (int)slow_owner.lost, edges);
	/* In order, with the gap where the events were dropped. */
	assert_initial(&slow_owner, 0, 0);
	for (int k = 1; k <= window + queue; k++)
		ck_assert_uint_eq(slow_owner.ev[k].seq, (uint64_t)k);
	ck_assert_uint_eq(gb_get_prop_u64(root, slow_owner.path, GB_IFACE_REQUEST, "EventsLost"),
			  (uint64_t)(edges - window - queue));

	/* Once caught up, nothing more is lost. */
	toggle(&fast, 1, true);
	ck_assert(gb_bus_wait_count(alice, &slow_owner.accounted, edges + 1, 5000));
	ck_assert(gb_bus_wait_count(carol, &slow_watcher.accounted, edges + 1, 5000));
	/* Dropped events take no seqno: the loss was told once, by EventsLost. */
	ck_assert_uint_eq(slow_owner.ev[slow_owner.n - 1].seq, (uint64_t)(window + queue + 1));
	ck_assert_uint_eq(slow_watcher.lost, (uint64_t)(edges - window - queue));

	gb_close(alice);
	gb_close(bob);
	gb_close(carol);
	gb_close(root);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("watch");
	TCase *tc, *small;

	gb_bench_enter(argc, argv);
	tc = gb_tcase_new(s, "watch", setup, teardown, 60 * gb_slow());
	tcase_add_test(tc, test_three_watchers_one_holder);
	tcase_add_test(tc, test_permission_and_limit);
	tcase_add_test(tc, test_initial_state_both_levels);
	tcase_add_test(tc, test_reconfigure_edges_on_sends_initial_state);
	tcase_add_test(tc, test_unheld_line_then_request);
	tcase_add_test(tc, test_reload_revokes_watch);
	small = gb_tcase_new(s, "flow", setup_small, teardown, 90 * gb_slow());
	tcase_add_test(small, test_slow_subscribers_lose_only_their_own);
	return gb_run_suite(s);
}
