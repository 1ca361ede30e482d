/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * make bench's output: one figure per line, "name value unit", and each target as
 * "name value what PASS|FAIL", where what names the unit and the limit.
 */
#ifndef GB_BENCH_OUT_H
#define GB_BENCH_OUT_H

#include "timing.h"

/** "name value unit". */
void bench_out(const char *name, double v, const char *unit);
/** bench_out() with the name made by printf(@p fmt, ...). */
void bench_outf(double v, const char *unit, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/** BASE_p50, BASE_p90, BASE_p99 in µs. */
void bench_out_pct(const char *base, struct gb_pct p);
/** A target met when @p v <= @p limit. */
void bench_target(const char *name, double v, double limit, const char *what);
/** A target met when @p v >= @p limit. */
void bench_target_min(const char *name, double v, double limit, const char *what);

#endif
