/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The gpio-aggregator's sysfs interface (aggregator.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "aggregator.h"
#include "macro.h"

#define AGG_PREFIX "gpio-aggregator."
#define MAX_DEVICES 256

static bool is_device_name(const char *s)
{
	size_t n = strlen(AGG_PREFIX);

	if (strncmp(s, AGG_PREFIX, n) != 0 || !s[n])
		return false;
	return strspn(s + n, "0123456789") == strlen(s + n);
}

bool agg_available(void)
{
	return access(AGG_DRIVER_DIR "/new_device", F_OK) == 0;
}

static int write_file(const char *path, const char *text)
{
	size_t len = strlen(text);
	ssize_t n;
	int fd, r = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0)
		r = -errno;
	else if ((size_t)n != len)
		r = -EIO;
	close(fd);
	return r;
}

/* The aggregator devices present, as a bit per number below MAX_DEVICES. */
static int list_devices(unsigned char *seen)
{
	DIR *d = opendir(AGG_DEVICES_DIR);
	struct dirent *de;

	memset(seen, 0, MAX_DEVICES / 8);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		unsigned long n;

		if (!is_device_name(de->d_name))
			continue;
		n = strtoul(de->d_name + strlen(AGG_PREFIX), NULL, 10);
		if (n < MAX_DEVICES)
			seen[n / 8] |= (unsigned char)(1u << (n % 8));
	}
	closedir(d);
	return 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The gpiochip under the device, once its probe has made it (and devtmpfs its node). */
static int find_chip(const char *dev, char *chip, size_t size)
{
	char path[256];

	/* The probe runs as the device is added, but a deferred probe runs later: wait
	 * a little rather than take a device without a chip for a failure. */
	for (int tries = 0; tries < 100; tries++) {
		DIR *d;
		struct dirent *de;

		snprintf(path, sizeof(path), AGG_DEVICES_DIR "/%s", dev);
		d = opendir(path);
		if (!d)
			return -ENODEV;
		while ((de = readdir(d)))
			if (strncmp(de->d_name, "gpiochip", 8) == 0 && de->d_name[8])
				break;
		if (de) {
			snprintf(chip, size, "%s", de->d_name);
			closedir(d);
			snprintf(path, sizeof(path), "/dev/%s", chip);
			if (access(path, F_OK) == 0)
				return 0;
		} else {
			closedir(d);
		}
		sleep_ms(10);
	}
	return -ENODEV;
}

int agg_new(const char *spec, char *dev, size_t dev_size, char *chip, size_t chip_size)
{
	unsigned char before[MAX_DEVICES / 8], after[MAX_DEVICES / 8];
	int r, found = -1;

	r = list_devices(before);
	if (r < 0)
		return r;
	r = write_file(AGG_DRIVER_DIR "/new_device", spec);
	if (r < 0)
		return r;
	/* new_device does not say which device it made: the one that was not there. We
	 * are the only writer (one oneshot service), so there is one. */
	r = list_devices(after);
	if (r < 0)
		return r;
	for (int i = 0; i < MAX_DEVICES && found < 0; i++)
		if ((after[i / 8] & ~before[i / 8]) & (1u << (i % 8)))
			found = i;
	if (found < 0)
		return -ENOENT;
	snprintf(dev, dev_size, AGG_PREFIX "%d", found);
	r = find_chip(dev, chip, chip_size);
	if (r < 0) {
		(void)agg_delete(dev);
		return r;
	}
	return 0;
}

bool agg_has_chip(const char *dev, const char *chip)
{
	char path[256];
	struct stat st;

	if (!is_device_name(dev) || strncmp(chip, "gpiochip", 8) != 0 || strchr(chip, '/'))
		return false;
	snprintf(path, sizeof(path), AGG_DEVICES_DIR "/%s/%s", dev, chip);
	return stat(path, &st) == 0;
}

int agg_delete(const char *dev)
{
	char path[256];
	int r;

	if (!is_device_name(dev))
		return -EINVAL;
	snprintf(path, sizeof(path), AGG_DEVICES_DIR "/%s", dev);
	if (access(path, F_OK) < 0)
		return 0;
	r = write_file(AGG_DRIVER_DIR "/delete_device", dev);
	if (r < 0 && access(path, F_OK) < 0)
		return 0;
	return r;
}
