/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file aggregator.h
 * @brief The kernel's gpio-aggregator through sysfs: a chip made of chosen lines.
 *
 * Writing "LABEL OFFSET ..." to the driver's new_device makes a platform device
 * gpio-aggregator.N whose gpiochip forwards to those lines; writing its name to
 * delete_device removes it, and every fd opened on its chip fails with ENODEV from
 * then on. Root only (the files are 0200).
 */
#ifndef GB_SLICE_AGGREGATOR_H
#define GB_SLICE_AGGREGATOR_H

#include <stdbool.h>
#include <stddef.h>

#define AGG_DRIVER_DIR "/sys/bus/platform/drivers/gpio-aggregator"
#define AGG_DEVICES_DIR "/sys/bus/platform/devices"

/** Whether this kernel has the aggregator (CONFIG_GPIO_AGGREGATOR). */
bool agg_available(void);
/**
 * Make a device for @p spec; its name ("gpio-aggregator.N") in @p dev and its
 * chip ("gpiochipM") in @p chip. A device made whose chip does not come (its probe
 * failed: a line is busy) is deleted again: -ENODEV.
 */
int agg_new(const char *spec, char *dev, size_t dev_size, char *chip, size_t chip_size);
/** Whether device @p dev exists and has chip @p chip. */
bool agg_has_chip(const char *dev, const char *chip);
/** Delete device @p dev; 0 if it is gone (also if it was not there). */
int agg_delete(const char *dev);

#endif
