/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * make bench, edges: each path receives edges the way a program does, asleep in its
 * wait while another process (the toggler) drives the gpio-sim line.
 *
 * A path is libgpiod in-process, or libgpiobroker on a direct request, over a
 * private connection, or over the bus; for latency also a bare relay process, the
 * floor of any hop. Their samples are taken in turns, so that
 * what the machine does meanwhile falls on each alike: latency from the kernel's
 * event timestamp to the handler (every path holding one line), the sustained rate
 * and the CPU time (each path in turn holding EDGE_LINES lines).
 */
#ifndef GB_BENCH_EDGES_H
#define GB_BENCH_EDGES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "gpiobroker.h"

struct gb_sim_chip;

/* The rate ladder's request: up to EDGE_LINES - 1 lines toggled from the first, and
 * the marker line last. 64 is the kernel's most lines in one request. */
#define EDGE_LINES 64

enum edge_path {
	EDGE_GPIOD,  /* libgpiod: poll() on the request fd, read into a preallocated buffer */
	EDGE_DIRECT, /* libgpiobroker, direct request (GPIOBROKER_REQUEST_DIRECT) */
	EDGE_P2P,    /* libgpiobroker, private connection */
	EDGE_BUS,    /* libgpiobroker, through the bus daemon */
	EDGE_PATHS,
	/* Latency only: the floor of any process between the line and the program (a
	 * relay that reads the event as libgpiod does and writes it to a socket the
	 * program polls and reads once): what the cheapest broker hop can cost. */
	EDGE_RELAY = EDGE_PATHS,
	EDGE_ALL_PATHS
};

enum edge_wait {
	WAIT_LIB,  /* gpiobroker_wait() then gpiobroker_process(), as gpiobroker.h documents */
	WAIT_POLL, /* the program's own poll() on gpiobroker_get_fd(), then gpiobroker_process() */
	WAIT_REQ,  /* poll() on gpiobroker_request_get_fd(), then gpiobroker_request_process() */
};

/* The processes whose CPU time an edge costs, and a root connection to the bus to
 * wait for the broker with. */
struct edge_peers {
	pid_t broker, bus;
	struct sd_bus *root;
};

struct edge_bench;

/**
 * Start the toggler on lines [0, @p first + EDGE_LINES) of @p sim, all of them low;
 * the paths request lines from @p first. @p direct, @p p2p and @p bus are open
 * handles (the direct one on the library's default transport).
 */
struct edge_bench *edge_bench_new(struct gb_sim_chip *sim, unsigned int first,
				  struct gpiobroker *direct, struct gpiobroker *p2p,
				  struct gpiobroker *bus, struct edge_peers peers);
/** Release the requests, stop the toggler. NULL is ignored. */
void edge_bench_free(struct edge_bench *e);

/**
 * Latency, kernel timestamp to handler: @p n edges per series, in turns of a few
 * edges each. Prints the figures and, if @p plot_file is not NULL, writes every
 * series' samples there for tests/bench/bench-edges.gp.
 */
void edge_bench_latency(struct edge_bench *e, int n, const char *plot_file);

/**
 * The rate ladder (every path at each rate in turn) and CPU time per 1000 edges
 * (a longer step at one rate). Prints the figures and targets.
 */
void edge_bench_rate(struct edge_bench *e, int step_ms, int cpu_edges);

/** p50 of a latency series (after edge_bench_latency()), in µs. */
double edge_bench_p50(const struct edge_bench *e, enum edge_path p, enum edge_wait w);

/*
 * The toggler on its own, for another part's edge series (bench-slices.c): a process
 * that drives lines [0, @p n) of gpio-sim chip @p chip ("gpiochipN") through the
 * simulator's pull, each line low when it starts. Aborts the test if it cannot.
 */
struct toggler;
struct toggler *edge_toggler_new(const char *chip, unsigned int n);
/** Toggle @p line 2 ms from now: the receiver is asleep in its wait by then. */
void edge_toggler_toggle(const struct toggler *t, unsigned int line);
/** After a wait that timed out: aborts the test if the toggler has exited. */
void edge_toggler_check(const struct toggler *t);
/** Stop the toggler. NULL is ignored. */
void edge_toggler_free(struct toggler *t);

#endif
