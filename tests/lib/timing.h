/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file timing.h
 * @brief Test helper: clocks, timeouts scaled for valgrind, percentiles.
 *
 * Every wait in the tests is bounded by a deadline on CLOCK_MONOTONIC; a
 * timeout given in milliseconds is what the broker needs when it runs natively,
 * and gb_slow() stretches it when the broker runs under valgrind or callgrind.
 */
#ifndef GB_TEST_TIMING_H
#define GB_TEST_TIMING_H

/** CLOCK_MONOTONIC in milliseconds. */
long gb_now_ms(void);
/** CLOCK_MONOTONIC in nanoseconds. */
long long gb_now_ns(void);

/**
 * Multiplier for timeouts: 20 when the broker runs under valgrind
 * (GB_TEST_VALGRIND=1) or callgrind (GB_TEST_CALLGRIND=FILE), else
 * GB_TEST_TIMEOUT_FACTOR (1 to 100; the ARM lane's emulated guests set it), else 1.
 */
int gb_slow(void);

/** gb_now_ms() + @p timeout_ms * gb_slow(): the end of a bounded wait. */
long gb_deadline_ms(long timeout_ms);

/** Sort @p n samples in place, smallest first (for gb_percentile()). */
void gb_sort_samples(long long *v, int n);

/**
 * The @p pct th percentile of @p n sorted samples (nearest rank below: the
 * sample at index n * pct / 100, the last one at most). @p n must be > 0.
 */
long long gb_percentile(const long long *sorted, int n, int pct);

/** A series' p50, p90 and p99, in µs. */
struct gb_pct {
	double p50, p90, p99;
};

/** Sort @p n > 0 samples in ns (in place) and take their percentiles in µs. */
struct gb_pct gb_pct_us(long long *v, int n);

#endif
