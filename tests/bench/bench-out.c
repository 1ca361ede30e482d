/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "bench-out.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

void bench_out(const char *name, double v, const char *unit)
{
	printf("%-40s %12.2f %s\n", name, v, unit);
	fflush(stdout);
}

void bench_outf(double v, const char *unit, const char *fmt, ...)
{
	char name[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	bench_out(name, v, unit);
}

void bench_out_pct(const char *base, struct gb_pct p)
{
	bench_outf(p.p50, "us", "%s_p50", base);
	bench_outf(p.p90, "us", "%s_p90", base);
	bench_outf(p.p99, "us", "%s_p99", base);
}

static void target_line(const char *name, double v, const char *what, bool met)
{
	printf("%-40s %12.2f %-32s %s\n", name, v, what, met ? "PASS" : "FAIL");
	fflush(stdout);
}

void bench_target(const char *name, double v, double limit, const char *what)
{
	target_line(name, v, what, v <= limit);
}

void bench_target_min(const char *name, double v, double limit, const char *what)
{
	target_line(name, v, what, v >= limit);
}
