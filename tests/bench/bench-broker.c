/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * make bench: the broker's figures beside the limits it is built on, in one bench
 * boot on one gpio-sim chip, as "name value unit" lines (docs/performance.md).
 *
 *   limit.*   libgpiod in-process (set/get round trip; edge: kernel timestamp -> handler)
 *             and a plain D-Bus round trip to the bus daemon (GetId)
 *   broker.*  the same through libgpiobroker and the broker over the bus; burst
 *             delivery; RSS idle and with 1000 connected clients
 *   p2p.*     the same over private connections (Manager.OpenConnection)
 *   ssh.*     set, get and edges from "another host" (gpiobroker_open_host() over the
 *             bench's loopback sshd), beside the local bus in the same turns
 *             (bench-remote.c)
 *   direct.*  the same on a direct request (the kernel line fds the broker handed
 *             over: libgpiobroker's ioctls and reads, no broker in the path)
 *   rate.*    edges per second each path sustains, everything counted (bench-edges.c)
 *   cpu.*     CPU time per 1000 edges: the client's, the broker's, the bus daemon's
 *   slice.*   set, get and edges through a slice (a gpio-aggregator chip that
 *             gpiod-broker-slices makes of two lines) with libgpiod, beside libgpiod on
 *             the chip itself in the same turns (bench-slices.c)
 *   ratio.*   broker / limit; slice / libgpiod on the chip
 *   target.*  the targets, each with PASS or FAIL
 *
 * Round trips and edges are measured in turns, every path a few at a time, so that
 * what the machine does meanwhile falls on each alike and the ratios hold still.
 * GB_TEST_BENCH_ITER (default 2000) round trips per figure, GB_TEST_BENCH_EDGES
 * (default 300) edges per latency series, GB_TEST_BENCH_RATE_MS (default 1000) per
 * step of the rate ladder, GB_TEST_BENCH_CPU_EDGES (default 4000) edges for the CPU
 * figures; GB_TEST_BENCH_PLOT=FILE writes the latency samples for
 * tests/bench/bench-edges.gp (make bench draws them). GB_TEST_BENCH_ONLY=slices
 * runs the slice.* figures alone, without the broker.
 * Under valgrind (GB_BENCH_CALLGRIND=1 runs the broker under callgrind) the figures
 * are the instruction profile's, not times.
 */
#include <check.h>
#include <errno.h>
#include <gpiod.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench-edges.h"
#include "bench-out.h"
#include "bench-remote.h"
#include "bench-slices.h"
#include "bench.h"
#include "broker-calls.h"
#include "brokertest.h"
#include "bus-util.h"
#include "client-util.h"
#include "gpiobroker.h"
#include "gpiosim.h"
#include "org.gpiodbroker1.h"
#include "procstat.h"
#include "testmain.h"
#include "timing.h"
#include "users.h"

/* Linux 6.1 has 512 GPIO numbers in all (ARCH_NR_GPIOS), shared by every chip: the
 * bench's takes all but a slice's (bench-slices.c), whose chip needs numbers too. */
#define SLICE_LINES 2
#define NUM_LINES   (512 - SLICE_LINES)
/* One output line per set/get path, from 0. */
#define OUT_FIRST   0
/* The SSH figures' two outputs (bench-remote.c); their inputs are the edge paths'
 * first two lines: a UML guest has interrupts for no more lines than those. */
#define SSH_FIRST   8
/* The edge paths' lines, from here (bench-edges.h); the connected clients hold lines
 * from HOLD_FIRST once the edge requests are gone. */
#define EDGE_FIRST  64
#define SIM_LINES   (EDGE_FIRST + EDGE_LINES)
#define HOLD_FIRST  64
/* The slice's figures (bench-slices.c): two outputs, one in the slice and one beside
 * it on the chip, and two inputs, edge lines the SSH figures leave alone, whose
 * interrupts the kernel has given already (an aggregator's line raises its parent's).
 * The slice is gone before the connected clients hold lines from HOLD_FIRST. */
#define SLICE_OUT   16
#define SLICE_IN    (EDGE_FIRST + 2)
#define CLIENTS     env_int("GB_TEST_BENCH_CLIENTS", 1000)
/* Round trips per path in one turn, the paths taking turns. */
#define TURN        20

#define POLICY GB_TEST_POLICY_ALL("gbbench", "0-509") "direct = yes\n"
_Static_assert(NUM_LINES == 510, "POLICY's offsets are the chip's lines");

static struct gb_sim_chip *sim;
static const char *chip;
static int iters;

static int env_int(const char *name, int def)
{
	const char *v = getenv(name);

	return v && atoi(v) > 0 ? atoi(v) : def;
}

static char *spec(unsigned int off)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "%s:%u", chip, off);
	return buf;
}

/* --- round trips, every path in turns ------------------------------------------ */

enum call {
	CALL_GPIOD_SET,
	CALL_GPIOD_GET,
	CALL_GETID,
	CALL_PING,
	CALL_BUS_SET,
	CALL_BUS_GET,
	CALL_DIRECT_SET,
	CALL_DIRECT_GET,
	CALL_P2P_SET,
	CALL_P2P_GET,
	CALLS
};

static const char *const call_names[CALLS] = {
	"limit.gpiod_set_rtt", "limit.gpiod_get_rtt", "limit.dbus_getid_rtt", "broker.ping_rtt",
	"broker.set_rtt",      "broker.get_rtt",      "direct.set_rtt",       "direct.get_rtt",
	"p2p.set_rtt",         "p2p.get_rtt",
};

struct calls {
	sd_bus *root;
	struct gpiod_chip *gc;
	struct gpiod_line_request *lr;
	struct gpiobroker_request *lib[3]; /* bus, direct, private connection: as the calls */
	struct gb_pct pct[CALLS];
};

static struct gpiobroker_request *out_request(struct gpiobroker *b, unsigned int off,
					      unsigned int flags)
{
	struct gpiobroker_line_settings s;
	const char *line = spec(off);
	struct gpiobroker_request *r;

	gpiobroker_line_settings_init(&s);
	s.direction = GPIOBROKER_DIRECTION_OUTPUT;
	r = gpiobroker_request_array(b, 1, &line, &s, "bench", flags);
	ck_assert_msg(r != NULL, "%s", gpiobroker_last_error_message(b));
	ck_assert(gpiobroker_request_is_direct(r) == !!(flags & GPIOBROKER_REQUEST_DIRECT));
	return r;
}

static void calls_open(struct calls *c, sd_bus *root, struct gpiobroker *bus,
		       struct gpiobroker *direct, struct gpiobroker *p2p)
{
	struct gpiod_line_settings *ls = gpiod_line_settings_new();
	struct gpiod_line_config *lc = gpiod_line_config_new();
	unsigned int off = OUT_FIRST;

	c->root = root;
	c->gc = gpiod_chip_open(gb_sim_chip_path(sim));
	ck_assert_ptr_nonnull(c->gc);
	gpiod_line_settings_set_direction(ls, GPIOD_LINE_DIRECTION_OUTPUT);
	ck_assert_int_eq(gpiod_line_config_add_line_settings(lc, &off, 1, ls), 0);
	c->lr = gpiod_chip_request_lines(c->gc, NULL, lc);
	ck_assert_ptr_nonnull(c->lr);
	gpiod_line_config_free(lc);
	gpiod_line_settings_free(ls);
	c->lib[0] = out_request(bus, OUT_FIRST + 1, 0);
	c->lib[1] = out_request(direct, OUT_FIRST + 2, GPIOBROKER_REQUEST_DIRECT);
	c->lib[2] = out_request(p2p, OUT_FIRST + 3, 0);
}

static void calls_close(struct calls *c)
{
	gpiod_line_request_release(c->lr);
	gpiod_chip_close(c->gc);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(gpiobroker_free(c->lib[i]), 0);
}

static void call_one(struct calls *c, enum call k, int i)
{
	switch (k) {
	case CALL_GPIOD_SET:
		ck_assert_int_eq(gpiod_line_request_set_value(c->lr, OUT_FIRST, i & 1), 0);
		break;
	case CALL_GPIOD_GET:
		ck_assert_int_ge(gpiod_line_request_get_value(c->lr, OUT_FIRST), 0);
		break;
	case CALL_GETID:
		ck_assert_int_ge(sd_bus_call_method(c->root, "org.freedesktop.DBus",
						    "/org/freedesktop/DBus", "org.freedesktop.DBus",
						    "GetId", NULL, NULL, ""), 0);
		break;
	case CALL_PING:
		ck_assert_int_ge(gb_ping(c->root, NULL), 0);
		break;
	default: {
		/* Set and get on the bus, direct and private-connection paths, in turn. */
		struct gpiobroker_request *r;

		ck_assert_int_lt(k, CALLS);
		r = c->lib[(k - CALL_BUS_SET) / 2];
		if ((k - CALL_BUS_SET) % 2 == 0)
			ck_assert_int_eq(gpiobroker_set_value(r, 0, i & 1), 0);
		else
			ck_assert_int_ge(gpiobroker_get_value(r, 0), 0);
		break;
	}
	}
}

/* iters round trips of each kind, TURN at a time, each turn starting with the next
 * kind: the GetId baseline and libgpiod's ioctls beside the broker's calls. */
static void calls_measure(struct calls *c)
{
	long long *t[CALLS];
	int n[CALLS] = { 0 };

	for (int k = 0; k < CALLS; k++) {
		t[k] = calloc(iters, sizeof(long long));
		ck_assert_ptr_nonnull(t[k]);
	}
	for (int round = 0; round * TURN < iters; round++)
		for (int j = 0; j < CALLS; j++) {
			enum call k = (enum call)((j + round) % CALLS);

			for (int i = 0; i < TURN && n[k] < iters; i++) {
				long long t0 = gb_now_ns();

				call_one(c, k, n[k]);
				t[k][n[k]++] = gb_now_ns() - t0;
			}
		}
	for (int k = 0; k < CALLS; k++) {
		c->pct[k] = gb_pct_us(t[k], iters);
		bench_out_pct(call_names[k], c->pct[k]);
		free(t[k]);
	}
}

/* --- memory and many clients ------------------------------------------------------ */

static void out_mem(const char *when, pid_t broker)
{
	static const char *const fields[] = { "RssAnon", "RssFile", "VmHWM" };
	char name[96];

	for (unsigned int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "broker.%s_%s", fields[i], when);
		bench_out(name, gb_proc_status_kib(broker, fields[i]), "KiB");
	}
	snprintf(name, sizeof(name), "broker.Pss_%s", when);
	bench_out(name, gb_proc_pss_kib(broker), "KiB");
}

/* A get round trip of the first client while all of them are connected: what a
 * call costs does not grow with the connections the broker has. */
static struct gb_pct get_among_many(struct gpiobroker_request *r)
{
	int n = iters / 4 > 0 ? iters / 4 : 1;
	long long *t = calloc(n, sizeof(*t));
	struct gb_pct p;

	for (int i = 0; i < n; i++) {
		long long t0 = gb_now_ns();

		ck_assert_int_ge(gpiobroker_get_value(r, 0), 0);
		t[i] = gb_now_ns() - t0;
	}
	p = gb_pct_us(t, n);
	free(t);
	return p;
}

static void many_clients(pid_t broker, enum gpiobroker_transport transport, const char *tag,
			 long *rss_idle, long *rss_many, int *fds, int *holding,
			 struct gb_pct *get_many)
{
	static const uid_t uids[] = { UID_ALICE, UID_BOB, UID_CAROL, 0 };
	struct gpiobroker **c = calloc(CLIENTS, sizeof(*c));
	struct gpiobroker_request *first = NULL;
	char when[64];
	int held = 0;

	*rss_idle = gb_proc_rss_kib(broker);
	snprintf(when, sizeof(when), "before_%sclients", tag);
	out_mem(when, broker);
	for (int i = 0; i < CLIENTS; i++) {
		unsigned int off = HOLD_FIRST + i;

		c[i] = gb_client_open_transport(uids[i % 4], transport);
		if (off < NUM_LINES) {
			struct gpiobroker_line_settings s;

			gpiobroker_line_settings_init(&s);
			s.direction = GPIOBROKER_DIRECTION_INPUT;
			/* The handle stays open: the request is held by the connection. */
			struct gpiobroker_request *r = gpiobroker_request(c[i], spec(off), "many", &s);

			ck_assert_ptr_nonnull(r);
			if (!first)
				first = r;
			held++;
		} else {
			/* No line left for it: it looks one up, so the broker knows it. */
			ck_assert_int_eq(gpiobroker_find_line(c[i], spec(i % NUM_LINES), NULL, NULL,
							      NULL), 0);
		}
	}
	*rss_many = gb_proc_rss_kib(broker);
	snprintf(when, sizeof(when), "1000_%sclients", tag);
	out_mem(when, broker);
	*fds = gb_proc_fd_count(broker);
	*holding = held;
	ck_assert_ptr_nonnull(first);
	*get_many = get_among_many(first);
	for (int i = 0; i < CLIENTS; i++)
		gpiobroker_close(c[i]);
	free(c);
}

START_TEST(test_bench)
{
#define P50(k) (c.pct[(k)].p50)
	struct gb_pct b_get_many, p_get_many;
	struct gpiobroker *hb, *hp, *hd;
	struct edge_bench *eb;
	struct calls c = { 0 };
	sd_bus *root;
	long rss_idle, rss_many, rss_start, anon_start, pss_start, p_rss_before, p_rss_many;
	int fds, holding, fds_idle, p_fds, p_holding, edges;
	double e_gpiod, e_direct, e_p2p, e_bus, e_relay, bus_rtt;
	const char *only = getenv("GB_TEST_BENCH_ONLY");
	pid_t broker;

	iters = env_int("GB_TEST_BENCH_ITER", 2000);
	edges = env_int("GB_TEST_BENCH_EDGES", 300);
	printf("# gpiod-broker bench: %d round trips, %d edges per figure; fd limit %ld\n",
	       iters, edges, gb_raise_fd_limit());
	if (only) {
		ck_assert_msg(strcmp(only, "slices") == 0,
			      "GB_TEST_BENCH_ONLY=%s: the part that runs alone is 'slices'", only);
		slice_bench(sim, SLICE_OUT, SLICE_IN, iters, edges);
		return;
	}

	root = gb_connect_bus(0);
	broker = gb_broker_spawn(&(struct gb_broker_opts){ .policy = POLICY,
						      .args = GB_ARGS("--log-level=warning") });
	fds_idle = gb_proc_fd_count(broker);
	/* Idle: started, chip enumerated, policy loaded, nobody has called yet. */
	rss_start = gb_proc_rss_kib(broker);
	anon_start = gb_proc_status_kib(broker, "RssAnon");
	pss_start = gb_proc_pss_kib(broker);
	out_mem("idle", broker);

	/* One handle per path, as separate programs would have: the direct request on
	 * the library's default transport. */
	hb = gb_client_open_transport(UID_ALICE, GPIOBROKER_TRANSPORT_BUS);
	hp = gb_client_open_transport(UID_ALICE, GPIOBROKER_TRANSPORT_P2P);
	hd = gb_client_open_transport(UID_ALICE, GPIOBROKER_TRANSPORT_P2P);
	calls_open(&c, root, hb, hd, hp);
	calls_measure(&c);
	calls_close(&c);

	eb = edge_bench_new(sim, EDGE_FIRST, hd, hp, hb,
			    (struct edge_peers){ .broker = broker, .bus = gb_bus_daemon_pid(root),
						 .root = root });
	edge_bench_latency(eb, edges, getenv("GB_TEST_BENCH_PLOT"));
	e_gpiod = edge_bench_p50(eb, EDGE_GPIOD, WAIT_POLL);
	e_direct = edge_bench_p50(eb, EDGE_DIRECT, WAIT_LIB);
	e_p2p = edge_bench_p50(eb, EDGE_P2P, WAIT_LIB);
	e_bus = edge_bench_p50(eb, EDGE_BUS, WAIT_LIB);
	e_relay = edge_bench_p50(eb, EDGE_RELAY, WAIT_POLL);
	bus_rtt = P50(CALL_GETID);
	/* The relay is the floor of any process between the line and the program: what
	 * a private connection's edge costs beyond it is the broker's and sd-bus's own. */
	bench_out("ratio.relay_edge_p50_vs_gpiod", e_relay / e_gpiod, "x");
	bench_out("ratio.p2p_edge_p50_vs_relay", e_p2p / e_relay, "x");
	for (unsigned int p = EDGE_DIRECT; p < EDGE_PATHS; p++)
		for (int w = WAIT_LIB; w <= WAIT_REQ; w++)
			if (w != WAIT_REQ || p == EDGE_DIRECT)
				bench_outf(edge_bench_p50(eb, p, w) / e_gpiod, "x",
					   "ratio.%s_edge%s_p50_vs_gpiod",
					   p == EDGE_DIRECT ? "direct" : p == EDGE_P2P ? "p2p" : "broker",
					   w == WAIT_POLL ? "_poll" : w == WAIT_REQ ? "_request_fd" : "");
	edge_bench_rate(eb, env_int("GB_TEST_BENCH_RATE_MS", 1000),
			env_int("GB_TEST_BENCH_CPU_EDGES", 4000));
	edge_bench_free(eb);
	gpiobroker_close(hd);
	gpiobroker_close(hp);
	gpiobroker_close(hb);

	remote_bench(sim, SSH_FIRST, EDGE_FIRST, iters, edges);
	slice_bench(sim, SLICE_OUT, SLICE_IN, iters, edges);

	many_clients(broker, GPIOBROKER_TRANSPORT_BUS, "", &rss_idle, &rss_many, &fds, &holding,
		     &b_get_many);
	/* The bus clients are gone by the time a round trip comes back: the broker has
	 * seen them leave (in order, on its bus connection) and freed what they had. */
	ck_assert_int_ge(gb_ping(root, NULL), 0);
	many_clients(broker, GPIOBROKER_TRANSPORT_P2P, "p2p_", &p_rss_before, &p_rss_many, &p_fds,
		     &p_holding, &p_get_many);

	bench_out("broker.rss_idle", rss_start, "KiB");
	bench_out("broker.rss_before_clients", rss_idle, "KiB");
	bench_out("broker.rss_1000_clients", rss_many, "KiB");
	bench_out("broker.rss_1000_clients_delta", rss_many - rss_idle, "KiB");
	bench_out("broker.clients_holding_a_line", holding, "clients");
	bench_out("broker.fds_idle", fds_idle, "fds");
	bench_out("broker.fds_1000_clients", fds, "fds");
	bench_out_pct("broker.get_rtt_1000_clients", b_get_many);
	bench_out("p2p.rss_before_clients", p_rss_before, "KiB");
	bench_out("p2p.rss_1000_clients", p_rss_many, "KiB");
	bench_out("p2p.rss_1000_clients_delta", p_rss_many - p_rss_before, "KiB");
	bench_out("p2p.clients_holding_a_line", p_holding, "clients");
	bench_out("p2p.fds_1000_clients", p_fds, "fds");
	bench_out_pct("p2p.get_rtt_1000_clients", p_get_many);

	bench_out("ratio.get_p50_1000_clients_vs_one", b_get_many.p50 / P50(CALL_BUS_GET), "x");
	bench_out("ratio.p2p_get_p50_1000_clients_vs_one", p_get_many.p50 / P50(CALL_P2P_GET), "x");
	bench_out("ratio.set_p50_broker_vs_gpiod", P50(CALL_BUS_SET) / P50(CALL_GPIOD_SET), "x");
	bench_out("ratio.get_p50_broker_vs_gpiod", P50(CALL_BUS_GET) / P50(CALL_GPIOD_GET), "x");
	bench_out("ratio.direct_get_p50_vs_gpiod", P50(CALL_DIRECT_GET) / P50(CALL_GPIOD_GET), "x");
	bench_out("ratio.set_p50_vs_bus_rtt", P50(CALL_BUS_SET) / bus_rtt, "x");
	bench_out("ratio.get_p50_vs_bus_rtt", P50(CALL_BUS_GET) / bus_rtt, "x");
	bench_out("ratio.edge_p50_vs_bus_rtt", e_bus / bus_rtt, "x");
	/* A call to the broker is two bus hops, GetId one: Ping (no work) shows the
	 * second hop, set/get against it the broker's own work. */
	bench_out("ratio.set_p50_vs_broker_ping", P50(CALL_BUS_SET) / P50(CALL_PING), "x");
	bench_out("ratio.get_p50_vs_broker_ping", P50(CALL_BUS_GET) / P50(CALL_PING), "x");
	bench_out("ratio.edge_added_p50_vs_bus_rtt", (e_bus - e_gpiod) / bus_rtt, "x");
	bench_out("ratio.p2p_set_p50_vs_bus_rtt", P50(CALL_P2P_SET) / bus_rtt, "x");
	bench_out("ratio.p2p_get_p50_vs_bus_rtt", P50(CALL_P2P_GET) / bus_rtt, "x");
	bench_out("ratio.p2p_edge_p50_vs_bus_rtt", e_p2p / bus_rtt, "x");

	bench_target("target.set_p50", P50(CALL_BUS_SET) / bus_rtt, 2.5, "x bus rtt (<= 2.5)");
	bench_target("target.get_p50", P50(CALL_BUS_GET) / bus_rtt, 2.5, "x bus rtt (<= 2.5)");
	bench_target("target.edge_p50", e_bus / bus_rtt, 1.5, "x bus rtt (<= 1.5)");
	bench_target("target.edge_added_p50", (e_bus - e_gpiod) / bus_rtt, 1.5,
		     "x bus rtt, minus gpiod (<= 1.5)");
	bench_target("target.direct_set_p50", P50(CALL_DIRECT_SET) / P50(CALL_GPIOD_SET), 1.5,
		     "x gpiod set (<= 1.5)");
	bench_target("target.direct_edge_p50", e_direct / e_gpiod, 1.2, "x gpiod edge (<= 1.2)");
	bench_target("target.p2p_edge_p50_vs_gpiod", e_p2p / e_gpiod, 1.5, "x gpiod edge (<= 1.5)");
	bench_target("target.p2p_set_p50", P50(CALL_P2P_SET) / bus_rtt, 1.3, "x bus rtt (<= 1.3)");
	bench_target("target.p2p_get_p50", P50(CALL_P2P_GET) / bus_rtt, 1.3, "x bus rtt (<= 1.3)");
	bench_target("target.p2p_edge_p50", e_p2p / bus_rtt, 1.3, "x bus rtt (<= 1.3)");
	/* VmRSS counts the shared libraries' resident pages (libc, libsystemd and what
	 * it links: shared with every process using them); private is the broker's own. */
	bench_target("target.rss_idle_vmrss", rss_start, 2048, "KiB (<= 2048)");
	bench_target("target.rss_idle_private", anon_start, 2048, "KiB RssAnon (<= 2048)");
	bench_target("target.rss_idle_pss", pss_start, 2048, "KiB Pss (<= 2048)");
	bench_target("target.rss_1000_clients_delta", rss_many - rss_idle, 4096, "KiB (<= 4096)");
	bench_target("target.p2p_rss_1000_clients_delta", p_rss_many - p_rss_before, 4096,
		     "KiB (<= 4096)");

	sd_bus_flush_close_unref(root);
	ck_assert_int_eq(gb_broker_stop(broker), 0);
#undef P50
}
END_TEST

static void setup(void)
{
	sim = gb_sim_chip_new("gbbench", NUM_LINES, NULL);
	ck_assert_ptr_nonnull(sim);
	chip = gb_sim_chip_name(sim);
	/* The edge paths' lines start low: the toggler takes them so. */
	for (unsigned int i = 0; i < SIM_LINES; i++)
		ck_assert_int_eq(gb_sim_set_pull(sim, i, false), 0);
}

static void teardown(void)
{
	gb_sim_chip_free(sim);
}

int main(int argc, char **argv)
{
	Suite *s = suite_create("bench");
	TCase *tc;

	gb_bench_enter(argc, argv);
	tc = gb_tcase_new(s, "bench", setup, teardown, 1800);
	tcase_add_test(tc, test_bench);
	return gb_run_suite(s);
}
