/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file bench.h
 * @brief Test helper: make a test program run inside the bench.
 *
 * A bench test calls gb_bench_enter() first thing in main(). Run by hand or by
 * "make check" on the host, the program re-executes itself through tests/bench/run,
 * which boots the bench (UML, or the host if it has gpio-sim) and runs it there. A
 * bench that cannot start is a failure with its reason, never a skipped test.
 */
#ifndef GB_TEST_BENCH_H
#define GB_TEST_BENCH_H

void gb_bench_enter(int argc, char **argv);

/**
 * As gb_bench_enter(), and with GB_TEST_VALGRIND set (make distcheck in
 * tools/run-tests, where the broker runs under valgrind too) the program itself
 * runs in the bench under valgrind: memory errors of the library it tests fail the
 * test (exit 97). For the programs that test libgpiobroker's own memory handling.
 */
void gb_bench_enter_memcheck(int argc, char **argv);

/** Wait until @p fd is readable, at most @p timeout_ms; 1 ready, 0 timed out, -errno. */
int gb_wait_readable(int fd, int timeout_ms);

#endif
