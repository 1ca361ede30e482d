/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "timing.h"

#include <stdlib.h>
#include <time.h>

long gb_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

long long gb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int gb_slow(void)
{
	const char *f = getenv("GB_TEST_TIMEOUT_FACTOR");
	char *end;
	long n;

	if (getenv("GB_TEST_VALGRIND") || getenv("GB_TEST_CALLGRIND"))
		return 20;
	/* A bench under emulation (the ARM lane's qemu guests) is slower throughout. */
	if (f && *f) {
		n = strtol(f, &end, 10);
		if (*end == '\0' && n >= 1 && n <= 100)
			return (int)n;
	}
	return 1;
}

long gb_deadline_ms(long timeout_ms)
{
	return gb_now_ms() + timeout_ms * gb_slow();
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

void gb_sort_samples(long long *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_ll);
}

long long gb_percentile(const long long *sorted, int n, int pct)
{
	int i = (int)((long long)n * pct / 100);

	return sorted[i < n ? i : n - 1];
}

struct gb_pct gb_pct_us(long long *v, int n)
{
	struct gb_pct p;

	gb_sort_samples(v, n);
	p.p50 = gb_percentile(v, n, 50) / 1e3;
	p.p90 = gb_percentile(v, n, 90) / 1e3;
	p.p99 = gb_percentile(v, n, 99) / 1e3;
	return p;
}
