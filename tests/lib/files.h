/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file files.h
 * @brief Test helper: files in a test's temporary directory, for the unit tests of what
 * reads them (policy files, an image's tree, state files).
 *
 * The directory is the test's own, from mkdtemp(); what cannot be written fails the
 * test, so that a test never goes on to check a reader against a file that is not there.
 */
#ifndef GB_TEST_FILES_H
#define GB_TEST_FILES_H

#include <sys/types.h>

/**
 * Write @p text to @p dir/@p path, made or emptied, then give it @p mode (exactly: not
 * the umask's, as the readers check modes). The directories of @p path that are missing
 * are made (0755), as an image's tree has them.
 */
void gb_write_file_mode(const char *dir, const char *path, const char *text, mode_t mode);

/** gb_write_file_mode() with mode 0644, a file every reader accepts. */
static inline void gb_write_file(const char *dir, const char *path, const char *text)
{
	gb_write_file_mode(dir, path, text, 0644);
}

/** Remove @p dir and everything in it. */
void gb_remove_tree(const char *dir);

#endif
