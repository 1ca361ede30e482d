/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "gpiosim.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gpiod.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CONFIGFS "/sys/kernel/config/gpio-sim"

struct gb_sim_chip {
	char *name;
	unsigned int num_lines;
	char dir[256];       /* configfs device directory */
	char chip_name[64];  /* gpiochipN */
	char dev_name[64];   /* gpio-sim.N */
	char path[80];       /* /dev/gpiochipN */
	bool live;
};

static int write_attr(const char *dir, const char *attr, const char *value)
{
	char p[512];
	int fd, r = 0;

	snprintf(p, sizeof(p), "%s/%s", dir, attr);
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, value, strlen(value)) < 0)
		r = -errno;
	close(fd);
	return r;
}

static int read_attr(const char *dir, const char *attr, char *buf, size_t size)
{
	char p[512];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, attr);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static void remove_dirs(struct gb_sim_chip *c)
{
	char bank[300], p[600];
	struct dirent *de;
	DIR *d;

	/* Every line directory there is: a stale chip may have had other lines. */
	snprintf(bank, sizeof(bank), "%s/bank0", c->dir);
	d = opendir(bank);
	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, "line", 4) != 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s/hog", bank, de->d_name);
		rmdir(p);
		snprintf(p, sizeof(p), "%s/%s", bank, de->d_name);
		rmdir(p);
	}
	if (d)
		closedir(d);
	rmdir(bank);
	rmdir(c->dir);
}

struct gb_sim_chip *gb_sim_chip_new_hogged(const char *name, unsigned int num_lines,
					   const char *const *names,
					   unsigned int hog_offset, const char *hog)
{
	struct gb_sim_chip *c;
	char bank[300], p[512], num[16];
	int r;

	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->name = strdup(name);
	c->num_lines = num_lines;
	snprintf(c->dir, sizeof(c->dir), CONFIGFS "/%s", name);
	snprintf(bank, sizeof(bank), "%s/bank0", c->dir);

	/* A chip left by a test that failed before its cleanup: take it down first. */
	if (access(c->dir, F_OK) == 0) {
		write_attr(c->dir, "live", "0");
		remove_dirs(c);
	}
	if (mkdir(c->dir, 0755) < 0 || mkdir(bank, 0755) < 0) {
		r = -errno;
		fprintf(stderr, "gpiosim: mkdir %s: %s\n", bank, strerror(-r));
		goto fail;
	}
	snprintf(num, sizeof(num), "%u", num_lines);
	if ((r = write_attr(bank, "num_lines", num)) < 0 ||
	    (r = write_attr(bank, "label", name)) < 0)
		goto fail;
	for (unsigned int i = 0; i < num_lines; i++) {
		bool named = names && names[i], hogged = hog && i == hog_offset;

		if (!named && !hogged)
			continue;
		snprintf(p, sizeof(p), "%s/line%u", bank, i);
		if (mkdir(p, 0755) < 0) {
			r = -errno;
			goto fail;
		}
		if (named && (r = write_attr(p, "name", names[i])) < 0)
			goto fail;
		if (hogged) {
			snprintf(p, sizeof(p), "%s/line%u/hog", bank, i);
			if (mkdir(p, 0755) < 0) {
				r = -errno;
				goto fail;
			}
			if ((r = write_attr(p, "name", hog)) < 0 ||
			    (r = write_attr(p, "direction", "output-high")) < 0)
				goto fail;
		}
	}
	if ((r = write_attr(c->dir, "live", "1")) < 0) {
		fprintf(stderr, "gpiosim: enabling %s: %s\n", name, strerror(-r));
		goto fail;
	}
	c->live = true;
	if ((r = read_attr(bank, "chip_name", c->chip_name, sizeof(c->chip_name))) < 0 ||
	    (r = read_attr(c->dir, "dev_name", c->dev_name, sizeof(c->dev_name))) < 0)
		goto fail;
	snprintf(c->path, sizeof(c->path), "/dev/%s", c->chip_name);

	/* devtmpfs creates the node asynchronously; wait for it (bounded). */
	for (int i = 0; i < 500 && access(c->path, F_OK) < 0; i++)
		usleep(2000);
	if (access(c->path, F_OK) < 0) {
		r = -ENOENT;
		fprintf(stderr, "gpiosim: %s did not appear\n", c->path);
		goto fail;
	}
	return c;
fail:
	gb_sim_chip_free(c);
	errno = -r;
	return NULL;
}

struct gb_sim_chip *gb_sim_chip_new(const char *name, unsigned int num_lines,
				    const char *const *names)
{
	return gb_sim_chip_new_hogged(name, num_lines, names, 0, NULL);
}

int gb_sim_chip_unplug(struct gb_sim_chip *c)
{
	int r = 0;

	if (c->live) {
		r = write_attr(c->dir, "live", "0");
		c->live = false;
	}
	return r;
}

void gb_sim_chip_free(struct gb_sim_chip *c)
{
	if (!c)
		return;
	gb_sim_chip_unplug(c);
	remove_dirs(c);
	free(c->name);
	free(c);
}

const char *gb_sim_chip_path(const struct gb_sim_chip *c) { return c->path; }
const char *gb_sim_chip_name(const struct gb_sim_chip *c) { return c->chip_name; }
const char *gb_sim_chip_label(const struct gb_sim_chip *c) { return c->name; }

static void line_dir(const struct gb_sim_chip *c, unsigned int offset, char *buf, size_t size)
{
	snprintf(buf, size, "/sys/devices/platform/%s/%s/sim_gpio%u",
		 c->dev_name, c->chip_name, offset);
}

int gb_sim_set_pull(struct gb_sim_chip *c, unsigned int offset, bool up)
{
	char d[256];

	line_dir(c, offset, d, sizeof(d));
	return write_attr(d, "pull", up ? "pull-up" : "pull-down");
}

int gb_sim_get_value(struct gb_sim_chip *c, unsigned int offset)
{
	char d[256], v[8];
	int r;

	line_dir(c, offset, d, sizeof(d));
	r = read_attr(d, "value", v, sizeof(v));
	if (r < 0)
		return r;
	return v[0] == '1';
}

bool gb_sim_line_used(const struct gb_sim_chip *chip, unsigned int offset, bool *output, char *consumer,
		      size_t size)
{
	struct gpiod_chip *c = gpiod_chip_open(chip->path);
	struct gpiod_line_info *li;
	bool used;

	ck_assert_msg(c != NULL, "cannot open %s: %m", chip->path);
	li = gpiod_chip_get_line_info(c, offset);
	ck_assert_msg(li != NULL, "no line %u on %s: %m", offset, chip->path);
	used = gpiod_line_info_is_used(li);
	if (output)
		*output = gpiod_line_info_get_direction(li) == GPIOD_LINE_DIRECTION_OUTPUT;
	if (consumer)
		snprintf(consumer, size, "%s", gpiod_line_info_get_consumer(li) ? gpiod_line_info_get_consumer(li) : "");
	gpiod_line_info_free(li);
	gpiod_chip_close(c);
	return used;
}
