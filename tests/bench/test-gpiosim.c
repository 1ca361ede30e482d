/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * First bench test: the kernel side works as the broker will use it. A gpio-sim chip
 * with named lines, opened with libgpiod v2: an output read back through the
 * simulator, an input driven by simulated pulls, and its edge events in order.
 */
#include <check.h>
#include <gpiod.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "gpiosim.h"
#include "testmain.h"

static const char *const names[8] = { "led", "button", NULL, "reset" };

static struct gpiod_line_request *request_one(struct gpiod_chip *chip, unsigned int offset,
					      struct gpiod_line_settings *s)
{
	struct gpiod_line_config *lc = gpiod_line_config_new();
	struct gpiod_request_config *rc = gpiod_request_config_new();
	struct gpiod_line_request *req;

	ck_assert_ptr_nonnull(lc);
	ck_assert_ptr_nonnull(rc);
	gpiod_request_config_set_consumer(rc, "bench-test");
	ck_assert_int_eq(gpiod_line_config_add_line_settings(lc, &offset, 1, s), 0);
	req = gpiod_chip_request_lines(chip, rc, lc);
	gpiod_line_config_free(lc);
	gpiod_request_config_free(rc);
	return req;
}

START_TEST(test_named_lines)
{
	struct gb_sim_chip *sim = gb_sim_chip_new("gb-named", 8, names);
	struct gpiod_chip *chip;
	struct gpiod_chip_info *ci;
	struct gpiod_line_info *li;

	ck_assert_ptr_nonnull(sim);
	chip = gpiod_chip_open(gb_sim_chip_path(sim));
	ck_assert_ptr_nonnull(chip);
	ci = gpiod_chip_get_info(chip);
	ck_assert_str_eq(gpiod_chip_info_get_label(ci), "gb-named");
	ck_assert_uint_eq(gpiod_chip_info_get_num_lines(ci), 8);
	ck_assert_int_eq(gpiod_chip_get_line_offset_from_name(chip, "reset"), 3);
	li = gpiod_chip_get_line_info(chip, 1);
	ck_assert_str_eq(gpiod_line_info_get_name(li), "button");
	ck_assert(!gpiod_line_info_is_used(li));
	gpiod_line_info_free(li);
	gpiod_chip_info_free(ci);
	gpiod_chip_close(chip);
	gb_sim_chip_free(sim);
}
END_TEST

START_TEST(test_output_reads_back)
{
	struct gb_sim_chip *sim = gb_sim_chip_new("gb-out", 8, names);
	struct gpiod_line_settings *s = gpiod_line_settings_new();
	struct gpiod_line_request *req;
	struct gpiod_chip *chip;
	struct gpiod_line_info *li;

	ck_assert_ptr_nonnull(sim);
	chip = gpiod_chip_open(gb_sim_chip_path(sim));
	ck_assert_ptr_nonnull(chip);
	gpiod_line_settings_set_direction(s, GPIOD_LINE_DIRECTION_OUTPUT);
	gpiod_line_settings_set_output_value(s, GPIOD_LINE_VALUE_ACTIVE);
	req = request_one(chip, 0, s);
	ck_assert_ptr_nonnull(req);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);
	ck_assert_int_eq(gpiod_line_request_set_value(req, 0, GPIOD_LINE_VALUE_INACTIVE), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 0);

	/* The kernel shows the consumer to everyone else. */
	li = gpiod_chip_get_line_info(chip, 0);
	ck_assert(gpiod_line_info_is_used(li));
	ck_assert_str_eq(gpiod_line_info_get_consumer(li), "bench-test");
	gpiod_line_info_free(li);

	gpiod_line_request_release(req);
	gpiod_line_settings_free(s);
	gpiod_chip_close(chip);
	gb_sim_chip_free(sim);
}
END_TEST

static void expect_edge(struct gpiod_line_request *req, struct gpiod_edge_event_buffer *buf,
			enum gpiod_edge_event_type type, unsigned long seqno)
{
	struct gpiod_edge_event *ev;

	/* Wait for the event, never sleep-and-hope: UML surfaces it at the next tick. */
	ck_assert_int_eq(gb_wait_readable(gpiod_line_request_get_fd(req), 5000), 1);
	ck_assert_int_eq(gpiod_line_request_read_edge_events(req, buf, 1), 1);
	ev = gpiod_edge_event_buffer_get_event(buf, 0);
	ck_assert_int_eq(gpiod_edge_event_get_event_type(ev), type);
	ck_assert_uint_eq(gpiod_edge_event_get_line_offset(ev), 1);
	ck_assert_uint_eq(gpiod_edge_event_get_global_seqno(ev), seqno);
	ck_assert_uint_eq(gpiod_edge_event_get_line_seqno(ev), seqno);
	ck_assert_uint_gt(gpiod_edge_event_get_timestamp_ns(ev), 0);
}

START_TEST(test_input_edges)
{
	struct gb_sim_chip *sim = gb_sim_chip_new("gb-in", 8, names);
	struct gpiod_line_settings *s = gpiod_line_settings_new();
	struct gpiod_edge_event_buffer *buf = gpiod_edge_event_buffer_new(4);
	struct gpiod_line_request *req;
	struct gpiod_chip *chip;

	ck_assert_ptr_nonnull(sim);
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, false), 0);
	chip = gpiod_chip_open(gb_sim_chip_path(sim));
	ck_assert_ptr_nonnull(chip);
	gpiod_line_settings_set_direction(s, GPIOD_LINE_DIRECTION_INPUT);
	gpiod_line_settings_set_edge_detection(s, GPIOD_LINE_EDGE_BOTH);
	req = request_one(chip, 1, s);
	ck_assert_ptr_nonnull(req);
	ck_assert_int_eq(gpiod_line_request_get_value(req, 1), GPIOD_LINE_VALUE_INACTIVE);

	ck_assert_int_eq(gb_sim_set_pull(sim, 1, true), 0);
	expect_edge(req, buf, GPIOD_EDGE_EVENT_RISING_EDGE, 1);
	ck_assert_int_eq(gpiod_line_request_get_value(req, 1), GPIOD_LINE_VALUE_ACTIVE);
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, false), 0);
	expect_edge(req, buf, GPIOD_EDGE_EVENT_FALLING_EDGE, 2);
	ck_assert_int_eq(gpiod_line_request_get_value(req, 1), GPIOD_LINE_VALUE_INACTIVE);

	/* Nothing else is pending. */
	ck_assert_int_eq(gb_wait_readable(gpiod_line_request_get_fd(req), 50), 0);

	gpiod_line_request_release(req);
	gpiod_edge_event_buffer_free(buf);
	gpiod_line_settings_free(s);
	gpiod_chip_close(chip);
	gb_sim_chip_free(sim);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("gpiosim");
	TCase *tc;

	gb_bench_enter(argc, argv);
	tc = gb_tcase_new(s, "kernel", NULL, NULL, 30);
	tcase_add_test(tc, test_named_lines);
	tcase_add_test(tc, test_output_reads_back);
	tcase_add_test(tc, test_input_edges);
	return gb_run_suite(s);
}
