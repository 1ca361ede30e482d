/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The peer's end of a private connection, for fuzz-p2p and fuzz-p2p-seeds. */
#ifndef GB_FUZZ_P2P_WIRE_H
#define GB_FUZZ_P2P_WIRE_H

#include <string.h>
#include <sys/socket.h>

/*
 * Read what is there on @p fd, without waiting, into @p buf; each fd passed with it
 * goes to @p take_fd, which owns it then. As recvmsg(): bytes read, 0 at the end,
 * or -1 with errno (EAGAIN: nothing more for now).
 */
static inline ssize_t p2p_wire_recv(int fd, void *buf, size_t size,
				    void (*take_fd)(int fd, void *userdata), void *userdata)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * 64)];
	} control;
	struct iovec iov = { buf, size };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = control.buf, .msg_controllen = sizeof(control) };
	ssize_t k = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	for (struct cmsghdr *c = k > 0 ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c)) {
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < n; i++) {
			int passed;

			memcpy(&passed, CMSG_DATA(c) + i * sizeof(int), sizeof(passed));
			take_fd(passed, userdata);
		}
	}
	return k;
}

#endif
