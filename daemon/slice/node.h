/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file node.h
 * @brief A slice's chip node: who may open it, and its name under /dev/gpio/slice/.
 */
#ifndef GB_SLICE_NODE_H
#define GB_SLICE_NODE_H

#include <stddef.h>
#include <sys/types.h>

#define SLICE_LINK_DIR "/dev/gpio/slice"

/**
 * /dev/@p chip: owned by root:root, mode 0600, and a POSIX ACL that lets each of
 * @p uids and @p gids read and write it, nobody else.
 */
int node_grant(const char *chip, const uid_t *uids, size_t n_uids, const gid_t *gids,
	       size_t n_gids);
/** SLICE_LINK_DIR/@p name -> ../../@p chip, replacing what was there. */
int node_link(const char *name, const char *chip);
/** Remove SLICE_LINK_DIR/@p name; 0 if it was not there. */
int node_unlink(const char *name);

#endif
