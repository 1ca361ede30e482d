/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "procstat.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static long field_kib(const char *file, pid_t pid, const char *field)
{
	char p[64], line[256];
	size_t len = strlen(field);
	long kib = -1;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/%s", (int)pid, file);
	f = fopen(p, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, len) == 0 && line[len] == ':' &&
		    sscanf(line + len + 1, "%ld", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

long gb_proc_status_kib(pid_t pid, const char *field)
{
	return field_kib("status", pid, field);
}

long gb_proc_rss_kib(pid_t pid)
{
	return field_kib("status", pid, "VmRSS");
}

long gb_proc_pss_kib(pid_t pid)
{
	return field_kib("smaps_rollup", pid, "Pss");
}

int gb_proc_fd_count(pid_t pid)
{
	char p[64];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(p, sizeof(p), "/proc/%d/fd", (int)pid);
	d = opendir(p);
	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

long long gb_proc_cpu_ns(pid_t pid)
{
	char p[64], buf[1024], *s;
	unsigned long long ut, st;
	struct timespec ts;
	clockid_t clock;
	FILE *f;
	size_t n;

	/* The process's CPU clock is utime + stime to the nanosecond; /proc/PID/stat
	 * gives the same in clock ticks (10 ms), too coarse for a few thousand edges. */
	if (clock_getcpuclockid(pid, &clock) == 0 && clock_gettime(clock, &ts) == 0)
		return ts.tv_sec * 1000000000LL + ts.tv_nsec;
	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	f = fopen(p, "re");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* The command name may hold spaces and parentheses: fields follow the last ')'. */
	s = strrchr(buf, ')');
	if (!s || sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (long long)(ut + st) * (1000000000LL / sysconf(_SC_CLK_TCK));
}

long gb_raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -1;
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	getrlimit(RLIMIT_NOFILE, &rl);
	return (long)rl.rlim_cur;
}

bool gb_proc_comm(pid_t pid, char *comm, size_t size)
{
	char p[64];
	FILE *f;
	bool ok;

	snprintf(p, sizeof(p), "/proc/%d/comm", (int)pid);
	f = fopen(p, "re");
	if (!f)
		return false;
	ok = fgets(comm, (int)size, f) != NULL;
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	return ok;
}
