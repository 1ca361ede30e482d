/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Host unit test: the hash map behind client and request lookups, against a model. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "hashmap.h"
#include "testmain.h"

#define N 5000

START_TEST(test_against_model)
{
	static char keys[N][16];
	static int present[N];
	Hashmap *h = hashmap_new();
	unsigned int seed = 1;
	size_t count = 0, state = 0, seen = 0;

	ck_assert_ptr_nonnull(h);
	for (int i = 0; i < N; i++)
		snprintf(keys[i], sizeof(keys[i]), ":1.%d", i);
	/* Random puts and removes (with tombstones and growth), checked at each step. */
	for (int step = 0; step < 50000; step++) {
		int k = rand_r(&seed) % N;

		if (rand_r(&seed) % 3) {
			int r = hashmap_put(h, keys[k], &present[k]);

			ck_assert_int_eq(r, present[k] ? -EEXIST : 0);
			if (!present[k])
				count++;
			present[k] = 1;
		} else {
			void *v = hashmap_remove(h, keys[k]);

			ck_assert_ptr_eq(v, present[k] ? &present[k] : NULL);
			if (present[k])
				count--;
			present[k] = 0;
		}
		ck_assert_uint_eq(hashmap_size(h), count);
		ck_assert_ptr_eq(hashmap_get(h, keys[k]), present[k] ? &present[k] : NULL);
	}
	for (int i = 0; i < N; i++)
		ck_assert_ptr_eq(hashmap_get(h, keys[i]), present[i] ? &present[i] : NULL);
	while (hashmap_iterate(h, &state, NULL))
		seen++;
	ck_assert_uint_eq(seen, count);
	hashmap_free(h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hashmap");
	TCase *tc = tcase_create("hashmap");

	tcase_add_test(tc, test_against_model);
	suite_add_tcase(s, tc);
	return gb_run_suite(s);
}
