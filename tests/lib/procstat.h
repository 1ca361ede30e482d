/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file procstat.h
 * @brief What /proc says about a process (the broker under test): memory, fds, CPU.
 */
#ifndef GB_TEST_PROCSTAT_H
#define GB_TEST_PROCSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/** VmRSS in KiB, or -1. */
long gb_proc_rss_kib(pid_t pid);
/** A "Name: N kB" field of /proc/PID/status (RssAnon, RssFile...) in KiB, or -1. */
long gb_proc_status_kib(pid_t pid, const char *field);
/** Pss from /proc/PID/smaps_rollup in KiB (shared pages split among their users), or -1. */
long gb_proc_pss_kib(pid_t pid);
/** Number of open file descriptors (entries of /proc/PID/fd), or -1. */
int gb_proc_fd_count(pid_t pid);
/**
 * utime + stime in nanoseconds: the process's CPU clock (clock_getcpuclockid()), else
 * /proc/PID/stat's clock ticks; -1 if neither can be read.
 */
long long gb_proc_cpu_ns(pid_t pid);
/** /proc/PID/comm into @p comm (its newline cut); false if it cannot be read. */
bool gb_proc_comm(pid_t pid, char *comm, size_t size);
/** Raise this process's soft open-file limit to the hard one; returns the new soft limit. */
long gb_raise_fd_limit(void);

#endif
