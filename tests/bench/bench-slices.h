/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * make bench's figures of a slice: a chip of chosen lines made by the kernel's
 * gpio-aggregator (gpiod-broker-slices), used by libgpiod as an unmodified program
 * uses it, beside libgpiod on the real chip in the same turns.
 */
#ifndef GB_BENCH_SLICES_H
#define GB_BENCH_SLICES_H

#include "gpiosim.h"

/*
 * Make a slice of lines @p out and @p in of @p sim with gpiod-broker-slices (a policy
 * of its own, sync, as root), then measure @p iters set and get round trips on the
 * slice's output and on output @p out + 1 of @p sim, and @p edges edges on the
 * slice's input and on input @p in + 1 of @p sim, libgpiod on both, in turns; print
 * the slice.* and ratio.slice_* figures, and remove the slice (stop). The four lines
 * must be free; the inputs must be lines whose interrupts the kernel has already
 * given (the edge paths'): an aggregator's line raises its parent's. A kernel without
 * the gpio-aggregator fails the test.
 */
void slice_bench(struct gb_sim_chip *sim, unsigned int out, unsigned int in, int iters,
		 int edges);

#endif
