/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file gpiosim.h
 * @brief Test helper: gpio-sim chips made through configfs.
 *
 * Each test makes the chips it needs and removes them at the end, so test cases do
 * not see each other's lines. The kernel's gpio-sim driver gives real GPIO lines:
 * a test drives inputs with gb_sim_set_pull() and reads outputs with gb_sim_get_value().
 */
#ifndef GB_TEST_GPIOSIM_H
#define GB_TEST_GPIOSIM_H

#include <stdbool.h>
#include <stddef.h>

struct gb_sim_chip;

/**
 * Create and enable a chip with one bank.
 * @param name  configfs directory name; also the chip's label.
 * @param num_lines  number of lines.
 * @param names  NULL or an array of num_lines line names (NULL entries: unnamed).
 * @return the chip, or NULL with errno set (a message is printed).
 */
struct gb_sim_chip *gb_sim_chip_new(const char *name, unsigned int num_lines,
				    const char *const *names);

/** Hog a line before the chip goes live, as a kernel driver would (consumer @p hog). */
struct gb_sim_chip *gb_sim_chip_new_hogged(const char *name, unsigned int num_lines,
					   const char *const *names,
					   unsigned int hog_offset, const char *hog);

/** Unplug (live = 0) and delete the chip; NULL is ignored. */
void gb_sim_chip_free(struct gb_sim_chip *chip);

/** Unplug the chip but keep the object, so the test can observe removal. */
int gb_sim_chip_unplug(struct gb_sim_chip *chip);

/** "/dev/gpiochipN". */
const char *gb_sim_chip_path(const struct gb_sim_chip *chip);
/** "gpiochipN". */
const char *gb_sim_chip_name(const struct gb_sim_chip *chip);
/** The label given at creation. */
const char *gb_sim_chip_label(const struct gb_sim_chip *chip);

/** Drive a simulated input: pull-up (true) or pull-down (false). 0 or -errno. */
int gb_sim_set_pull(struct gb_sim_chip *chip, unsigned int offset, bool up);

/** The level of a line as the simulator sees it (an output's driven value): 0, 1 or -errno. */
int gb_sim_get_value(struct gb_sim_chip *chip, unsigned int offset);

/**
 * The kernel's view of a line through the chip's character device (libgpiod),
 * independent of the broker: is it requested? If @p output is not NULL, *output
 * says whether its direction is output; if @p consumer is not NULL, the consumer
 * name ("" for none) is copied there (@p size bytes at most). Aborts the test if
 * the chip cannot be read.
 */
bool gb_sim_line_used(const struct gb_sim_chip *chip, unsigned int offset, bool *output, char *consumer,
		      size_t size);

#endif
