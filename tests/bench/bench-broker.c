/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * make bench: the broker's figures beside the limits it is built on, in one bench
 * boot on one gpio-sim chip, as "name value unit" lines (docs/performance.md).
 *
 *   limit.*   libgpiod in-process (set/get round trip, edge kernel timestamp -> read)
 *             and a plain D-Bus round trip to the bus daemon (GetId)
 *   broker.*  the same through libgpiobroker and the broker over the bus; burst
 *             delivery; CPU per 1000 events; RSS idle and with 1000 connected clients
 *   p2p.*     the same over private connections (Manager.OpenConnection)
 *   direct.*  the same on a direct request (the kernel line fds the broker handed
 *             over: libgpiobroker's ioctls and reads, no broker in the path)
 *   ratio.*   broker / limit
 *   target.*  the targets, each with PASS or MISS
 *
 * GB_TEST_BENCH_ITER (default 2000) round trips per figure, GB_TEST_BENCH_EDGES (default 300) edges.
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

#include "bench.h"
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

/* Linux 6.1 has 512 GPIO numbers in all (ARCH_NR_GPIOS): one chip takes them all. */
#define NUM_LINES   512
#define LINE_OUT    0
#define LINE_EDGE   1
#define BURST_FIRST 2
#define BURST_LINES 62
#define BURST_ROUNDS 20
#define HOLD_FIRST  64
#define CLIENTS     (getenv("GB_TEST_BENCH_CLIENTS") ? atoi(getenv("GB_TEST_BENCH_CLIENTS")) : 1000)

#define POLICY GB_TEST_POLICY_ALL("gbbench", "0-511") "direct = yes\n"

static struct gb_sim_chip *sim;
static const char *chip;
static int iters, edges;

static void out(const char *name, double v, const char *unit)
{
	printf("%-34s %12.2f %s\n", name, v, unit);
	fflush(stdout);
}

static void target(const char *name, double v, double limit, const char *what)
{
	printf("%-34s %12.2f %-28s %s\n", name, v, what, v <= limit ? "PASS" : "MISS");
	fflush(stdout);
}

struct pct { double p50, p99; };

static struct pct pct_us(long long *v, int n)
{
	struct pct p;

	gb_sort_samples(v, n);
	p.p50 = gb_percentile(v, n, 50) / 1e3;
	p.p99 = gb_percentile(v, n, 99) / 1e3;
	return p;
}

static void out_pct(const char *base, struct pct p)
{
	char name[96];

	snprintf(name, sizeof(name), "%s_p50", base);
	out(name, p.p50, "us");
	snprintf(name, sizeof(name), "%s_p99", base);
	out(name, p.p99, "us");
}

/* A burst's counts: sent, delivered, counted lost, and what is none of those. */
static void out_burst(const char *base, int sent, int delivered, uint64_t lost)
{
	char name[96];

	snprintf(name, sizeof(name), "%s.burst_sent", base);
	out(name, sent, "events");
	snprintf(name, sizeof(name), "%s.burst_delivered", base);
	out(name, delivered, "events");
	snprintf(name, sizeof(name), "%s.burst_lost_counted", base);
	out(name, lost, "events");
	snprintf(name, sizeof(name), "%s.burst_unaccounted", base);
	out(name, sent - delivered - (int)lost, "events");
}

/* --- limits ------------------------------------------------------------------- */

static void direct_setget(struct pct *set, struct pct *get)
{
	struct gpiod_chip *gc = gpiod_chip_open(gb_sim_chip_path(sim));
	struct gpiod_line_settings *ls = gpiod_line_settings_new();
	struct gpiod_line_config *lc = gpiod_line_config_new();
	unsigned int off = LINE_OUT;
	struct gpiod_line_request *lr;
	long long *t = calloc(iters, sizeof(*t));

	ck_assert_ptr_nonnull(gc);
	gpiod_line_settings_set_direction(ls, GPIOD_LINE_DIRECTION_OUTPUT);
	ck_assert_int_eq(gpiod_line_config_add_line_settings(lc, &off, 1, ls), 0);
	lr = gpiod_chip_request_lines(gc, NULL, lc);
	ck_assert_ptr_nonnull(lr);
	for (int i = 0; i < iters; i++) {
		long long t0 = gb_now_ns();

		ck_assert_int_eq(gpiod_line_request_set_value(lr, off, i & 1), 0);
		t[i] = gb_now_ns() - t0;
	}
	*set = pct_us(t, iters);
	for (int i = 0; i < iters; i++) {
		long long t0 = gb_now_ns();

		ck_assert_int_ge(gpiod_line_request_get_value(lr, off), 0);
		t[i] = gb_now_ns() - t0;
	}
	*get = pct_us(t, iters);
	gpiod_line_request_release(lr);
	gpiod_line_config_free(lc);
	gpiod_line_settings_free(ls);
	gpiod_chip_close(gc);
	free(t);
}

static void direct_edges(struct pct *lat)
{
	struct gpiod_chip *gc = gpiod_chip_open(gb_sim_chip_path(sim));
	struct gpiod_line_settings *ls = gpiod_line_settings_new();
	struct gpiod_line_config *lc = gpiod_line_config_new();
	struct gpiod_edge_event_buffer *buf = gpiod_edge_event_buffer_new(4);
	unsigned int off = LINE_EDGE;
	struct gpiod_line_request *lr;
	long long *t = calloc(edges, sizeof(*t));

	gpiod_line_settings_set_direction(ls, GPIOD_LINE_DIRECTION_INPUT);
	gpiod_line_settings_set_edge_detection(ls, GPIOD_LINE_EDGE_BOTH);
	ck_assert_int_eq(gpiod_line_config_add_line_settings(lc, &off, 1, ls), 0);
	lr = gpiod_chip_request_lines(gc, NULL, lc);
	ck_assert_ptr_nonnull(lr);
	for (int i = 0; i < edges; i++) {
		struct gpiod_edge_event *ev;

		ck_assert_int_eq(gb_sim_set_pull(sim, off, !(i & 1)), 0);
		ck_assert_int_eq(gb_wait_readable(gpiod_line_request_get_fd(lr), 5000), 1);
		ck_assert_int_ge(gpiod_line_request_read_edge_events(lr, buf, 4), 1);
		ev = gpiod_edge_event_buffer_get_event(buf, 0);
		t[i] = gb_now_ns() - (long long)gpiod_edge_event_get_timestamp_ns(ev);
	}
	*lat = pct_us(t, edges);
	gpiod_line_request_release(lr);
	gpiod_edge_event_buffer_free(buf);
	gpiod_line_config_free(lc);
	gpiod_line_settings_free(ls);
	gpiod_chip_close(gc);
	free(t);
}

static struct pct bus_rtt(sd_bus *bus, const char *dest, const char *path, const char *iface,
			  const char *member)
{
	long long *t = calloc(iters, sizeof(*t));
	struct pct p;

	for (int i = 0; i < iters; i++) {
		long long t0 = gb_now_ns();

		ck_assert_int_ge(sd_bus_call_method(bus, dest, path, iface, member, NULL, NULL, ""), 0);
		t[i] = gb_now_ns() - t0;
	}
	p = pct_us(t, iters);
	free(t);
	return p;
}

/* --- the broker ------------------------------------------------------------------ */

static char *spec(unsigned int off)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "%s:%u", chip, off);
	return buf;
}

/* One request for a figure: over the broker, or direct (flags), which must be granted. */
static struct gpiobroker_request *bench_request(struct gpiobroker *b, size_t n, const char *const *lines,
						const struct gpiobroker_line_settings *s,
						const char *label, unsigned int flags)
{
	struct gpiobroker_request *r = gpiobroker_request_array(b, n, lines, s, label, flags);

	ck_assert_msg(r != NULL, "%s", gpiobroker_last_error_message(b));
	ck_assert(gpiobroker_request_is_direct(r) == !!(flags & GPIOBROKER_REQUEST_DIRECT));
	return r;
}

static void broker_setget(struct gpiobroker *b, unsigned int flags, struct pct *set, struct pct *get)
{
	struct gpiobroker_line_settings s;
	const char *line = spec(LINE_OUT);
	struct gpiobroker_request *r;
	long long *t = calloc(iters, sizeof(*t));

	gpiobroker_line_settings_init(&s);
	s.direction = GPIOBROKER_DIRECTION_OUTPUT;
	r = bench_request(b, 1, &line, &s, "bench", flags);
	for (int i = 0; i < iters; i++) {
		long long t0 = gb_now_ns();

		ck_assert_int_eq(gpiobroker_set_value(r, 0, i & 1), 0);
		t[i] = gb_now_ns() - t0;
	}
	*set = pct_us(t, iters);
	for (int i = 0; i < iters; i++) {
		long long t0 = gb_now_ns();

		ck_assert_int_ge(gpiobroker_get_value(r, 0), 0);
		t[i] = gb_now_ns() - t0;
	}
	*get = pct_us(t, iters);
	ck_assert_int_eq(gpiobroker_free(r), 0);
	free(t);
}

struct edge_rec {
	long long *lat;
	int n, max;
	uint64_t lost;
};

static void on_edge(struct gpiobroker_request *req, const struct gpiobroker_event *ev, void *ud)
{
	struct edge_rec *rec = ud;
	long long now = gb_now_ns();

	if (gpiobroker_event_get_type(ev) != GPIOBROKER_EVENT_EDGE)
		return;
	rec->lost += gpiobroker_event_get_lost(ev);
	if (rec->n < rec->max)
		rec->lat[rec->n] = now - (long long)gpiobroker_event_get_timestamp_ns(ev);
	rec->n++;
}

/* Process @p b until rec->n reaches @p want, or nothing arrives for @p idle_ms. */
static void wait_events(struct gpiobroker *b, struct edge_rec *rec, int want, int idle_ms)
{
	while (rec->n < want) {
		int before = rec->n;

		ck_assert_int_ge(gpiobroker_process(b), 0);
		if (rec->n > before)
			continue;
		if (gpiobroker_wait(b, (uint64_t)idle_ms * 1000) == 0 &&
		    gpiobroker_process(b) == 0 && rec->n == before)
			return;
	}
}

static void broker_edges(struct gpiobroker *b, unsigned int flags, struct pct *lat)
{
	struct gpiobroker_line_settings s;
	const char *line = spec(LINE_EDGE);
	struct gpiobroker_request *r;
	struct edge_rec rec = { .lat = calloc(edges, sizeof(long long)), .max = edges };

	gpiobroker_line_settings_init(&s);
	s.direction = GPIOBROKER_DIRECTION_INPUT;
	s.edge = GPIOBROKER_EDGE_BOTH;
	r = bench_request(b, 1, &line, &s, "bench-edge", flags);
	ck_assert_int_eq(gpiobroker_to_irq(r, on_edge, &rec), 0);
	for (int i = 0; i < edges; i++) {
		ck_assert_int_eq(gb_sim_set_pull(sim, LINE_EDGE, !(i & 1)), 0);
		wait_events(b, &rec, i + 1, 5000);
		ck_assert_int_eq(rec.n, i + 1);
	}
	*lat = pct_us(rec.lat, edges);
	ck_assert_int_eq(gpiobroker_free(r), 0);
	free(rec.lat);
}

static void broker_burst(struct gpiobroker *b, unsigned int flags, int *sent, int *delivered,
			 uint64_t *lost)
{
	const char *lines[BURST_LINES];
	char names[BURST_LINES][64];
	struct gpiobroker_line_settings s[BURST_LINES];
	struct gpiobroker_request *r;
	struct edge_rec rec = { .lat = calloc(BURST_LINES * BURST_ROUNDS, sizeof(long long)),
				.max = BURST_LINES * BURST_ROUNDS };

	for (int i = 0; i < BURST_LINES; i++) {
		snprintf(names[i], sizeof(names[i]), "%s:%d", chip, BURST_FIRST + i);
		lines[i] = names[i];
		gpiobroker_line_settings_init(&s[i]);
		s[i].direction = GPIOBROKER_DIRECTION_INPUT;
		s[i].edge = GPIOBROKER_EDGE_BOTH;
	}
	r = bench_request(b, BURST_LINES, lines, s, "bench-burst", flags);
	ck_assert_int_eq(gpiobroker_to_irq(r, on_edge, &rec), 0);
	*sent = 0;
	/* An even number of rounds: each burst leaves the lines low for the next. */
	for (int round = 0; round < BURST_ROUNDS; round++) {
		/* Every line once per round: no two edges of one line coalesce. */
		for (int i = 0; i < BURST_LINES; i++)
			ck_assert_int_eq(gb_sim_set_pull(sim, BURST_FIRST + i, !(round & 1)), 0);
		*sent += BURST_LINES;
		wait_events(b, &rec, *sent, 2000);
	}
	*delivered = rec.n;
	*lost = gpiobroker_request_get_events_lost(r);
	ck_assert_int_eq(gpiobroker_free(r), 0);
	free(rec.lat);
}

static void out_mem(const char *when, pid_t broker)
{
	static const char *const fields[] = { "RssAnon", "RssFile", "VmHWM" };
	char name[96];

	for (unsigned int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "broker.%s_%s", fields[i], when);
		out(name, gb_proc_status_kib(broker, fields[i]), "KiB");
	}
	snprintf(name, sizeof(name), "broker.Pss_%s", when);
	out(name, gb_proc_pss_kib(broker), "KiB");
}

/* A get round trip of the first client while all of them are connected: what a
 * call costs does not grow with the connections the broker has. */
static struct pct get_among_many(struct gpiobroker_request *r)
{
	int n = iters / 4 > 0 ? iters / 4 : 1;
	long long *t = calloc(n, sizeof(*t));
	struct pct p;

	for (int i = 0; i < n; i++) {
		long long t0 = gb_now_ns();

		ck_assert_int_ge(gpiobroker_get_value(r, 0), 0);
		t[i] = gb_now_ns() - t0;
	}
	p = pct_us(t, n);
	free(t);
	return p;
}

static void many_clients(pid_t broker, enum gpiobroker_transport transport, const char *tag,
			 long *rss_idle, long *rss_many, int *fds, int *holding, struct pct *get_many)
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

/* The direct request's figures and targets, against libgpiod in-process. */
static void print_direct(const struct pct *f_set, const struct pct *f_get, const struct pct *f_edge,
			 const struct pct *d_set, const struct pct *d_get, const struct pct *d_edge,
			 int sent, int delivered, uint64_t lost)
{
	out_pct("direct.set_rtt", *f_set);
	out_pct("direct.get_rtt", *f_get);
	out_pct("direct.edge_latency", *f_edge);
	out_burst("direct", sent, delivered, lost);
	out("ratio.direct_get_p50_vs_gpiod", f_get->p50 / d_get->p50, "x");
	target("target.direct_set_p50", f_set->p50 / d_set->p50, 1.5, "x gpiod set (<= 1.5)");
	target("target.direct_edge_p50", f_edge->p50 / d_edge->p50, 1.3, "x gpiod edge (<= 1.3)");
	target("target.direct_burst_unaccounted", sent - delivered - (int)lost, 0, "events (= 0)");
}

/* --- over private connections -------------------------------------------------- */

/* The broker's figures once more, over private connections: one hop instead of
 * two, against the same bus round trip. */
struct p2p_figures {
	struct pct set, get, edge;
	int sent, delivered;
	uint64_t lost;
};

/* Right after the bus's own, on the same quiet broker. */
static void bench_p2p_calls(struct p2p_figures *f)
{
	struct gpiobroker *b = gb_client_open_transport(UID_ALICE, GPIOBROKER_TRANSPORT_P2P);

	broker_setget(b, 0, &f->set, &f->get);
	broker_edges(b, 0, &f->edge);
	broker_burst(b, 0, &f->sent, &f->delivered, &f->lost);
	gpiobroker_close(b);
}

static void bench_p2p(pid_t broker, sd_bus *root, struct pct bus, const struct p2p_figures *f)
{
	struct pct set = f->set, get = f->get, edge = f->edge;
	int sent = f->sent, delivered = f->delivered, fds, holding;
	uint64_t lost = f->lost;
	long rss_before, rss_many;
	struct pct get_many;

	/* The bus clients are gone by the time a round trip comes back: the broker has
	 * seen them leave (in order, on its bus connection) and freed what they had. */
	ck_assert_int_ge(sd_bus_call_method(root, GB_BUS_NAME, GB_ROOT_PATH, "org.freedesktop.DBus.Peer",
					    "Ping", NULL, NULL, ""), 0);
	many_clients(broker, GPIOBROKER_TRANSPORT_P2P, "p2p_", &rss_before, &rss_many, &fds, &holding,
		     &get_many);

	out_pct("p2p.set_rtt", set);
	out_pct("p2p.get_rtt", get);
	out_pct("p2p.edge_latency", edge);
	out_burst("p2p", sent, delivered, lost);
	out("p2p.rss_before_clients", rss_before, "KiB");
	out("p2p.rss_1000_clients", rss_many, "KiB");
	out("p2p.rss_1000_clients_delta", rss_many - rss_before, "KiB");
	out("p2p.clients_holding_a_line", holding, "clients");
	out("p2p.fds_1000_clients", fds, "fds");
	out_pct("p2p.get_rtt_1000_clients", get_many);
	out("ratio.p2p_get_p50_1000_clients_vs_one", get_many.p50 / get.p50, "x");
	out("ratio.p2p_set_p50_vs_bus_rtt", set.p50 / bus.p50, "x");
	out("ratio.p2p_get_p50_vs_bus_rtt", get.p50 / bus.p50, "x");
	out("ratio.p2p_edge_p50_vs_bus_rtt", edge.p50 / bus.p50, "x");
	target("target.p2p_set_p50", set.p50 / bus.p50, 1.3, "x bus rtt (<= 1.3)");
	target("target.p2p_get_p50", get.p50 / bus.p50, 1.3, "x bus rtt (<= 1.3)");
	target("target.p2p_edge_p50", edge.p50 / bus.p50, 1.3, "x bus rtt (<= 1.3)");
	target("target.p2p_burst_unaccounted", sent - delivered - (int)lost, 0, "events (= 0)");
	target("target.p2p_rss_1000_clients_delta", rss_many - rss_before, 4096, "KiB (<= 4096)");
}

START_TEST(test_bench)
{
	struct pct d_set, d_get, d_edge, bus, ping, b_set, b_get, b_edge, f_set, f_get, f_edge;
	struct pct b_get_many;
	int f_sent, f_delivered;
	uint64_t f_lost;
	struct p2p_figures p2p;
	struct gpiobroker *b;
	sd_bus *root;
	long long cpu0, cpu1;
	long rss_idle, rss_many, rss_start, anon_start, pss_start;
	int sent, delivered, fds, holding, fds_idle;
	uint64_t lost;
	pid_t broker;

	iters = getenv("GB_TEST_BENCH_ITER") ? atoi(getenv("GB_TEST_BENCH_ITER")) : 2000;
	edges = getenv("GB_TEST_BENCH_EDGES") ? atoi(getenv("GB_TEST_BENCH_EDGES")) : 300;
	printf("# gpiod-broker bench: %d round trips, %d edges per figure; fd limit %ld\n",
	       iters, edges, gb_raise_fd_limit());

	direct_setget(&d_set, &d_get);
	direct_edges(&d_edge);
	root = gb_connect(0);
	bus = bus_rtt(root, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
		      "GetId");

	broker = gb_broker_spawn(&(struct gb_broker_opts){ .policy = POLICY,
						      .args = GB_ARGS("--log-level=warning") });
	fds_idle = gb_proc_fd_count(broker);
	/* Idle: started, chip enumerated, policy loaded, nobody has called yet. */
	rss_start = gb_proc_rss_kib(broker);
	anon_start = gb_proc_status_kib(broker, "RssAnon");
	pss_start = gb_proc_pss_kib(broker);
	out_mem("idle", broker);
	ping = bus_rtt(root, GB_BUS_NAME, GB_ROOT_PATH, "org.freedesktop.DBus.Peer", "Ping");
	b = gb_client_open_transport(UID_ALICE, GPIOBROKER_TRANSPORT_BUS);
	broker_setget(b, 0, &b_set, &b_get);
	cpu0 = gb_proc_cpu_ns(broker);
	broker_edges(b, 0, &b_edge);
	broker_burst(b, 0, &sent, &delivered, &lost);
	cpu1 = gb_proc_cpu_ns(broker);
	broker_setget(b, GPIOBROKER_REQUEST_DIRECT, &f_set, &f_get);
	broker_edges(b, GPIOBROKER_REQUEST_DIRECT, &f_edge);
	broker_burst(b, GPIOBROKER_REQUEST_DIRECT, &f_sent, &f_delivered, &f_lost);
	gpiobroker_close(b);
	bench_p2p_calls(&p2p);
	many_clients(broker, GPIOBROKER_TRANSPORT_BUS, "", &rss_idle, &rss_many, &fds, &holding,
		     &b_get_many);

	out_pct("limit.gpiod_set_rtt", d_set);
	out_pct("limit.gpiod_get_rtt", d_get);
	out_pct("limit.gpiod_edge_latency", d_edge);
	out_pct("limit.dbus_getid_rtt", bus);
	out_pct("broker.ping_rtt", ping);
	out_pct("broker.set_rtt", b_set);
	out_pct("broker.get_rtt", b_get);
	out_pct("broker.edge_latency", b_edge);
	out_burst("broker", sent, delivered, lost);
	out("broker.cpu_per_1000_events", (cpu1 - cpu0) / 1e6 / ((edges + sent) / 1000.0), "ms");
	out("broker.rss_idle", rss_start, "KiB");
	out("broker.rss_before_clients", rss_idle, "KiB");
	out("broker.rss_1000_clients", rss_many, "KiB");
	out("broker.rss_1000_clients_delta", rss_many - rss_idle, "KiB");
	out("broker.clients_holding_a_line", holding, "clients");
	out("broker.fds_idle", fds_idle, "fds");
	out("broker.fds_1000_clients", fds, "fds");
	out_pct("broker.get_rtt_1000_clients", b_get_many);
	out("ratio.get_p50_1000_clients_vs_one", b_get_many.p50 / b_get.p50, "x");
	out("ratio.set_p50_broker_vs_gpiod", b_set.p50 / d_set.p50, "x");
	out("ratio.get_p50_broker_vs_gpiod", b_get.p50 / d_get.p50, "x");
	out("ratio.set_p50_vs_bus_rtt", b_set.p50 / bus.p50, "x");
	out("ratio.get_p50_vs_bus_rtt", b_get.p50 / bus.p50, "x");
	out("ratio.edge_p50_vs_bus_rtt", b_edge.p50 / bus.p50, "x");
	/* A call to the broker is two bus hops, GetId one: Ping (no work) shows the
	 * second hop, set/get against it the broker's own work. */
	out("ratio.set_p50_vs_broker_ping", b_set.p50 / ping.p50, "x");
	out("ratio.get_p50_vs_broker_ping", b_get.p50 / ping.p50, "x");
	out("ratio.edge_added_p50_vs_bus_rtt", (b_edge.p50 - d_edge.p50) / bus.p50, "x");
	target("target.set_p50", b_set.p50 / bus.p50, 2.5, "x bus rtt (<= 2.5)");
	target("target.get_p50", b_get.p50 / bus.p50, 2.5, "x bus rtt (<= 2.5)");
	target("target.edge_p50", b_edge.p50 / bus.p50, 1.5, "x bus rtt (<= 1.5)");
	target("target.edge_added_p50", (b_edge.p50 - d_edge.p50) / bus.p50, 1.5,
	       "x bus rtt, minus gpiod (<= 1.5)");
	target("target.burst_unaccounted", sent - delivered - (int)lost, 0, "events (= 0)");
	print_direct(&f_set, &f_get, &f_edge, &d_set, &d_get, &d_edge, f_sent, f_delivered, f_lost);
	/* VmRSS counts the shared libraries' resident pages (libc, libsystemd and what
	 * it links: shared with every process using them); private is the broker's own. */
	target("target.rss_idle_vmrss", rss_start, 2048, "KiB (<= 2048)");
	target("target.rss_idle_private", anon_start, 2048, "KiB RssAnon (<= 2048)");
	target("target.rss_idle_pss", pss_start, 2048, "KiB Pss (<= 2048)");
	target("target.rss_1000_clients_delta", rss_many - rss_idle, 4096, "KiB (<= 4096)");
	bench_p2p(broker, root, bus, &p2p);

	sd_bus_flush_close_unref(root);
	ck_assert_int_eq(gb_broker_stop(broker), 0);
}
END_TEST

static void setup(void)
{
	sim = gb_sim_chip_new("gbbench", NUM_LINES, NULL);
	ck_assert_ptr_nonnull(sim);
	chip = gb_sim_chip_name(sim);
	for (unsigned int i = 0; i < HOLD_FIRST; i++)
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
