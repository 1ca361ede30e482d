/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * make bench over SSH: what a program on another host pays (gpiobroker_open_host(),
 * ssh to the bench's own loopback sshd and systemd-stdio-bridge, then the bus
 * daemon and the broker) beside a local program on the bus, measured in turns in
 * the same boot so that the ratios hold still. On loopback the figures are the
 * two extra processes and copies of the bridge, not a network's latency: a real link
 * adds its round trip to every call and edge.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench-out.h"
#include "bench-remote.h"
#include "client-util.h"
#include "gpiobroker.h"
#include "timing.h"
#include "users.h"

#define HOST "gb-alice@localhost"
#define TURN 20

enum { SSH_SET, SSH_GET, BUS_SET, BUS_GET, KINDS };

struct edge_rx {
	long long latency_ns;
	bool got;
};

static void on_edge(struct gpiobroker_request *req, const struct gpiobroker_event *ev,
		    void *userdata)
{
	struct edge_rx *rx = userdata;

	if (gpiobroker_event_get_type(ev) != GPIOBROKER_EVENT_EDGE)
		return;
	rx->latency_ns = gb_now_ns() - (long long)gpiobroker_event_get_timestamp_ns(ev);
	rx->got = true;
}

static void sshd(const char *call)
{
	const char *top = getenv("GB_TOP");
	char cmd[1024];

	ck_assert_msg(top != NULL, "GB_TOP: the bench sets it");
	snprintf(cmd, sizeof(cmd), "sh -c '. \"%s/tests/bench/sshd.sh\" && %s'", top, call);
	ck_assert_msg(system(cmd) == 0, "%s failed", call);
}

static struct gpiobroker_request *line(struct gpiobroker *b, struct gb_sim_chip *sim,
				       unsigned int off, bool output)
{
	char spec[64];
	const char *s = spec;
	struct gpiobroker_line_settings ls;
	struct gpiobroker_request *r;

	snprintf(spec, sizeof(spec), "%s:%u", gb_sim_chip_name(sim), off);
	gpiobroker_line_settings_init(&ls);
	ls.direction = output ? GPIOBROKER_DIRECTION_OUTPUT : GPIOBROKER_DIRECTION_INPUT;
	ls.edge = output ? GPIOBROKER_EDGE_NONE : GPIOBROKER_EDGE_BOTH;
	r = gpiobroker_request_array(b, 1, &s, &ls, "bench-remote", 0);
	ck_assert_msg(r != NULL, "%s", gpiobroker_last_error_message(b));
	return r;
}

/* One edge on @p off, waited for on @p b: its latency from the kernel's timestamp to
 * the handler, in ns. */
static long long one_edge(struct gb_sim_chip *sim, unsigned int off, bool up,
			  struct gpiobroker *b, struct edge_rx *rx)
{
	long long deadline = gb_now_ns() + 10000000000LL;

	rx->got = false;
	ck_assert_int_eq(gb_sim_set_pull(sim, off, up), 0);
	while (!rx->got) {
		ck_assert_msg(gb_now_ns() < deadline, "no edge within 10 s");
		ck_assert_int_ge(gpiobroker_wait(b, 1000000), 0);
		ck_assert_int_ge(gpiobroker_process(b), 0);
	}
	return rx->latency_ns;
}

void remote_bench(struct gb_sim_chip *sim, unsigned int first, unsigned int in, int iters,
		  int edges)
{
	static const char *const names[KINDS] = { "ssh.set_rtt", "ssh.get_rtt",
						  "ssh.bus_set_rtt", "ssh.bus_get_rtt" };
	struct gpiobroker *hs, *hl;
	struct gpiobroker_request *out[2], *inp[2];
	struct edge_rx rx[2] = { { 0 } };
	long long *t[KINDS], *e[2];
	struct gb_pct pct[KINDS], ep[2];
	int n[KINDS] = { 0 };

	sshd("sshd_start");
	hs = gpiobroker_open_host(HOST);
	ck_assert_msg(hs != NULL, "open_host: %m");
	hl = gb_client_open_transport(UID_ALICE, GPIOBROKER_TRANSPORT_BUS);
	out[0] = line(hs, sim, first, true);
	out[1] = line(hl, sim, first + 1, true);
	inp[0] = line(hs, sim, in, false);
	inp[1] = line(hl, sim, in + 1, false);
	ck_assert_int_eq(gpiobroker_to_irq(inp[0], on_edge, &rx[0]), 0);
	ck_assert_int_eq(gpiobroker_to_irq(inp[1], on_edge, &rx[1]), 0);

	for (int k = 0; k < KINDS; k++) {
		t[k] = calloc(iters, sizeof(long long));
		ck_assert_ptr_nonnull(t[k]);
	}
	for (int round = 0; round * TURN < iters; round++)
		for (int j = 0; j < KINDS; j++) {
			int k = (j + round) % KINDS;
			struct gpiobroker_request *r = out[k / 2];

			for (int i = 0; i < TURN && n[k] < iters; i++) {
				long long t0 = gb_now_ns();

				if (k % 2 == 0)
					ck_assert_int_eq(gpiobroker_set_value(r, 0, n[k] & 1), 0);
				else
					ck_assert_int_ge(gpiobroker_get_value(r, 0), 0);
				t[k][n[k]++] = gb_now_ns() - t0;
			}
		}
	for (int k = 0; k < KINDS; k++) {
		pct[k] = gb_pct_us(t[k], iters);
		bench_out_pct(names[k], pct[k]);
		free(t[k]);
	}

	/* Edges one at a time, the two paths taking turns, each waited for before the
	 * next: no two edges of a line within the bench's 10 ms tick. */
	e[0] = calloc(edges, sizeof(long long));
	e[1] = calloc(edges, sizeof(long long));
	ck_assert(e[0] && e[1]);
	for (int i = 0; i < edges; i++)
		for (int p = 0; p < 2; p++)
			e[p][i] = one_edge(sim, in + p, !(i & 1), p ? hl : hs, &rx[p]);
	ep[0] = gb_pct_us(e[0], edges);
	ep[1] = gb_pct_us(e[1], edges);
	bench_out_pct("ssh.edge_latency", ep[0]);
	bench_out_pct("ssh.bus_edge_latency", ep[1]);
	free(e[0]);
	free(e[1]);

	bench_out("ratio.ssh_set_p50_vs_bus", pct[SSH_SET].p50 / pct[BUS_SET].p50, "x");
	bench_out("ratio.ssh_get_p50_vs_bus", pct[SSH_GET].p50 / pct[BUS_GET].p50, "x");
	bench_out("ratio.ssh_edge_p50_vs_bus", ep[0].p50 / ep[1].p50, "x");

	for (int p = 0; p < 2; p++) {
		ck_assert_int_eq(gpiobroker_free(out[p]), 0);
		ck_assert_int_eq(gpiobroker_free(inp[p]), 0);
	}
	gpiobroker_close(hs);
	gpiobroker_close(hl);
	sshd("sshd_stop");
}
