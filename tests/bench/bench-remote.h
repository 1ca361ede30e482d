/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * make bench's figures over SSH (gpiobroker_open_host(), the bench's loopback sshd):
 * set, get and edge latency beside the same on the local bus, in turns.
 */
#ifndef GB_BENCH_REMOTE_H
#define GB_BENCH_REMOTE_H

#include "gpiosim.h"

/*
 * Start the bench's sshd (tests/bench/sshd.sh), then measure @p iters round trips
 * of set and get on outputs @p out and @p out + 1 and @p edges edges on inputs
 * @p in and @p in + 1 of @p sim, over SSH as gb-alice and on the local bus as
 * gb-alice, and print ssh.* and ratio.ssh_* figures. Stops the sshd.
 */
void remote_bench(struct gb_sim_chip *sim, unsigned int out, unsigned int in, int iters,
		  int edges);

#endif
