/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Host unit test: framing what a private connection's peer sends (shared/wire.h). */
#include <check.h>
#include <string.h>

#include "testmain.h"
#include "wire.h"

/* Feed @p data to @p w in pieces of @p step bytes, collecting what it says, one
 * letter each: B(egin) H(eader) M(essage) X (bad) T(oo big); *@p taken is how
 * many bytes it took before it stopped at X or T. */
static void feed(struct gb_wire *w, const void *data, size_t n, size_t step, char *out,
		 size_t *taken)
{
	const char *p = data, *reason;
	size_t off = 0, k = 0;

	while (off < n) {
		size_t chunk = n - off < step ? n - off : step, used;
		enum gb_wire_result r = gb_wire_feed(w, p + off, chunk, &used, &reason);

		ck_assert_uint_le(used, chunk);
		off += used;
		if (r == GB_WIRE_MORE) {
			ck_assert_uint_eq(used, chunk);
			continue;
		}
		out[k++] = "?BHMXT"[r];
		if (r == GB_WIRE_BAD) {
			ck_assert_ptr_nonnull(reason);
			break;
		}
		if (r == GB_WIRE_TOO_BIG)
			break;
	}
	/* A message that ends with its header (no fields, no body) says so at once. */
	if (k && out[k - 1] == 'H' && w->left == 0) {
		size_t used;

		ck_assert_int_eq(gb_wire_feed(w, "", 0, &used, &reason), GB_WIRE_MESSAGE);
		out[k++] = 'M';
	}
	out[k] = '\0';
	if (taken)
		*taken = off;
}

/* A fixed header: @p order 'l' or 'B', with these lengths and serial. */
static void header(uint8_t *h, char order, uint8_t type, uint32_t body, uint32_t serial,
		   uint32_t fields)
{
	uint32_t v[3] = { body, serial, fields };

	h[0] = order;
	h[1] = type;
	h[2] = 0;
	h[3] = 1;
	for (int i = 0; i < 3; i++)
		for (int b = 0; b < 4; b++)
			h[4 + 4 * i + b] = order == 'l' ? (v[i] >> (8 * b)) & 0xff :
							  (v[i] >> (8 * (3 - b))) & 0xff;
}

START_TEST(test_auth_up_to_begin)
{
	static const char a[] = "\0AUTH ANONYMOUS 6c\r\nNEGOTIATE_UNIX_FD\r\nBEGIN\r\n";
	char out[16];

	/* Whole, and one byte at a time: the same. */
	for (size_t step = 1; step <= sizeof(a); step += sizeof(a) - 2) {
		struct gb_wire w = { 0 };
		size_t taken;

		feed(&w, a, sizeof(a) - 1, step, out, &taken);
		ck_assert_str_eq(out, "B");
		ck_assert_uint_eq(taken, sizeof(a) - 1);
		ck_assert(gb_wire_at_boundary(&w));
	}
}
END_TEST

START_TEST(test_auth_lines_not_begin)
{
	/* Only a line that is exactly BEGIN ends it, as sd-bus reads it. */
	static const char a[] = "\0BEGINX\r\n BEGIN\r\nBEGIN \r\nBEG\rIN\r\nBEGIN\r\r\n";
	struct gb_wire w = { 0 };
	char out[16];

	feed(&w, a, sizeof(a) - 1, 3, out, NULL);
	ck_assert_str_eq(out, "");
	ck_assert(!gb_wire_at_boundary(&w));
	feed(&w, "BEGIN\r\n", 7, 7, out, NULL);
	ck_assert_str_eq(out, "B");
}
END_TEST

START_TEST(test_auth_bad)
{
	struct gb_wire w = { 0 };
	static char big[GB_WIRE_MAX_AUTH + 8];
	char out[16];

	feed(&w, "AUTH EXTERNAL\r\n", 15, 15, out, NULL);
	ck_assert_str_eq(out, "X");
	/* Longer than sd-bus reads: not an authentication. */
	memset(big, 'A', sizeof(big));
	big[0] = '\0';
	w = (struct gb_wire){ 0 };
	feed(&w, big, sizeof(big), 4096, out, NULL);
	ck_assert_str_eq(out, "X");
}
END_TEST

START_TEST(test_messages_framed)
{
	uint8_t m[37 + 16 + 24];
	struct gb_wire w;
	char out[16];

	/* One with 13 bytes of fields (padded to 16) and a 5-byte body, then one of
	 * a bare header, then one big-endian with 8 bytes of fields: in pieces of
	 * every size, the same. */
	memset(m, 0, sizeof(m));
	header(m, 'l', 1, 5, 7, 13);
	header(m + 37, 'l', 2, 0, 8, 0);
	header(m + 53, 'B', 4, 0, 9, 8);
	for (size_t step = 1; step <= sizeof(m); step++) {
		gb_wire_init_messages(&w);
		feed(&w, m, 37, step, out, NULL);
		ck_assert_str_eq(out, "HM");
		ck_assert_uint_eq(w.size, 37);
		ck_assert_uint_eq(w.serial, 7);
		feed(&w, m + 37, 16, step, out, NULL);
		ck_assert_str_eq(out, "HM");
		ck_assert_uint_eq(w.serial, 8);
		feed(&w, m + 53, 24, step, out, NULL);
		ck_assert_str_eq(out, "HM");
		ck_assert_uint_eq(w.size, 24);
		ck_assert_uint_eq(w.serial, 9);
		ck_assert(gb_wire_at_boundary(&w));
	}
}
END_TEST

START_TEST(test_message_too_big)
{
	uint8_t h[16];
	struct gb_wire w;
	char out[16];

	/* Exactly the most: framed. One byte more: too big, from its header alone. */
	header(h, 'l', 1, GB_WIRE_MAX_MESSAGE - 16 - 8, 1, 8);
	gb_wire_init_messages(&w);
	feed(&w, h, 16, 16, out, NULL);
	ck_assert_str_eq(out, "H");
	ck_assert_uint_eq(w.size, GB_WIRE_MAX_MESSAGE);
	header(h, 'l', 1, GB_WIRE_MAX_MESSAGE - 16 - 8 + 1, 1, 8);
	gb_wire_init_messages(&w);
	feed(&w, h, 16, 16, out, NULL);
	ck_assert_str_eq(out, "T");
	ck_assert_uint_eq(w.size, GB_WIRE_MAX_MESSAGE + 1);
	/* Lengths that overflow 32 bits are no smaller. */
	header(h, 'B', 1, 0xffffffffu, 1, 0xfffffff9u);
	gb_wire_init_messages(&w);
	feed(&w, h, 16, 5, out, NULL);
	ck_assert_str_eq(out, "T");
}
END_TEST

START_TEST(test_message_bad)
{
	static const struct {
		char order;
		uint8_t type, version;
		uint32_t serial;
	} bad[] = { { 'x', 1, 1, 1 }, { 'l', 0, 1, 1 }, { 'l', 5, 1, 1 }, { 'l', 1, 2, 1 },
		    { 'B', 1, 1, 0 } };
	uint8_t h[16];
	char out[16];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct gb_wire w;

		header(h, bad[i].order, bad[i].type, 0, bad[i].serial, 0);
		h[3] = bad[i].version;
		gb_wire_init_messages(&w);
		feed(&w, h, 16, 16, out, NULL);
		ck_assert_msg(strcmp(out, "X") == 0, "case %zu: %s", i, out);
	}
}
END_TEST

START_TEST(test_begin_then_messages)
{
	uint8_t buf[64];
	static const char a[] = "\0AUTH ANONYMOUS\r\nDATA 6c\r\nBEGIN\r\n";
	struct gb_wire w = { 0 };
	char out[16];

	memcpy(buf, a, sizeof(a) - 1);
	header(buf + sizeof(a) - 1, 'l', 1, 0, 3, 0);
	feed(&w, buf, sizeof(a) - 1 + 16, 4, out, NULL);
	ck_assert_str_eq(out, "BHM");
	ck_assert_uint_eq(w.serial, 3);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("wire");
	TCase *tc = gb_tcase_new(s, "wire", NULL, NULL, 30);

	tcase_add_test(tc, test_auth_up_to_begin);
	tcase_add_test(tc, test_auth_lines_not_begin);
	tcase_add_test(tc, test_auth_bad);
	tcase_add_test(tc, test_messages_framed);
	tcase_add_test(tc, test_message_too_big);
	tcase_add_test(tc, test_message_bad);
	tcase_add_test(tc, test_begin_then_messages);
	return gb_run_suite(s);
}
