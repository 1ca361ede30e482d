/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "notify-harness.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#include "brokertest.h"
#include "bus-util.h"
#include "org.gpiodbroker1.h"
#include "timing.h"

#define SOCK_PATH "/run/gb-test-notify.sock"
#define MAX_FDS 256
#define MAX_REMOVED 256

struct stored {
	char name[256];
	int fd;
};

struct gb_harness {
	int sock;
	int wake[2];
	pthread_t thread;
	pthread_mutex_t lock;
	pid_t main_pid;
	bool ready;
	struct stored fds[MAX_FDS];
	int n_fds;
	char *removed[MAX_REMOVED];
	int n_removed;
	char *log_path;
	int remove_delay_ms;         /* systemd is not always quick to let go */

	/* What the child needs, made before fork (no malloc between fork and exec). */
	int child_fds[MAX_FDS];
	int child_n;
	int child_log;
	char listen_pid[32];
};

/* systemd keeps one copy of an fd sent twice (same open file: kcmp). */
static bool same_file(int a, int b)
{
#ifdef SYS_kcmp
	pid_t me = getpid();

	return syscall(SYS_kcmp, me, me, 0 /* KCMP_FILE */, a, b) == 0;
#else
	return false;
#endif
}

static void handle(struct gb_harness *h, char *msg, const struct ucred *cred, int *fds, int n_fds)
{
	char name[256] = "stored";
	bool store = false, remove = false;

	pthread_mutex_lock(&h->lock);
	if (!cred || cred->pid != h->main_pid) {
		/* NotifyAccess=main: the rest is ignored (and its fds closed). */
		fprintf(stderr, "harness: message from pid %d ignored\n", cred ? (int)cred->pid : -1);
		goto out;
	}
	for (char *line = strtok(msg, "\n"); line; line = strtok(NULL, "\n")) {
		if (strcmp(line, "READY=1") == 0)
			h->ready = true;
		else if (strcmp(line, "FDSTORE=1") == 0)
			store = true;
		else if (strcmp(line, "FDSTOREREMOVE=1") == 0)
			remove = true;
		else if (strncmp(line, "FDNAME=", 7) == 0)
			snprintf(name, sizeof(name), "%s", line + 7);
	}
	if (remove) {
		if (h->remove_delay_ms)
			usleep((useconds_t)h->remove_delay_ms * 1000);
		for (int i = 0; i < h->n_fds;)
			if (strcmp(h->fds[i].name, name) == 0) {
				close(h->fds[i].fd);
				h->fds[i] = h->fds[--h->n_fds];
			} else {
				i++;
			}
		if (h->n_removed < MAX_REMOVED)
			h->removed[h->n_removed++] = strdup(name);
	}
	if (store) {
		for (int k = 0; k < n_fds; k++) {
			bool dup = false;

			for (int i = 0; i < h->n_fds && !dup; i++)
				dup = same_file(h->fds[i].fd, fds[k]);
			if (dup || h->n_fds == MAX_FDS) {
				close(fds[k]);
			} else {
				snprintf(h->fds[h->n_fds].name, sizeof(h->fds[0].name), "%s", name);
				h->fds[h->n_fds++].fd = fds[k];
			}
			fds[k] = -1;
		}
	}
out:
	for (int k = 0; k < n_fds; k++)
		if (fds[k] >= 0)
			close(fds[k]);
	pthread_mutex_unlock(&h->lock);
}

static void *receiver(void *userdata)
{
	struct gb_harness *h = userdata;

	for (;;) {
		struct pollfd p[2] = { { .fd = h->sock, .events = POLLIN }, { .fd = h->wake[0], .events = POLLIN } };
		char buf[4096];
		union {
			struct cmsghdr align;
			char space[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(sizeof(int) * 64)];
		} control;
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) - 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control,
				     .msg_controllen = sizeof(control) };
		struct ucred *cred = NULL;
		int fds[64], n_fds = 0;
		ssize_t len;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		len = recvmsg(h->sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (len < 0)
			continue;
		buf[len] = 0;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
				int n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

				memcpy(fds + n_fds, CMSG_DATA(c), n * sizeof(int));
				n_fds += n;
			} else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
				cred = (struct ucred *)CMSG_DATA(c);
			}
		}
		handle(h, buf, cred, fds, n_fds);
	}
	return NULL;
}

struct gb_harness *gb_harness_new(void)
{
	struct gb_harness *h = calloc(1, sizeof(*h));
	struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = SOCK_PATH };
	int one = 1;

	ck_assert_ptr_nonnull(h);
	h->child_log = -1;
	pthread_mutex_init(&h->lock, NULL);
	unlink(SOCK_PATH);
	h->sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(h->sock, 0);
	ck_assert_int_eq(setsockopt(h->sock, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)), 0);
	ck_assert_int_eq(bind(h->sock, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(pipe2(h->wake, O_CLOEXEC), 0);
	ck_assert_int_eq(pthread_create(&h->thread, NULL, receiver, h), 0);
	return h;
}

void gb_harness_free(struct gb_harness *h)
{
	if (!h)
		return;
	ck_assert_int_eq(write(h->wake[1], "x", 1), 1);
	pthread_join(h->thread, NULL);
	close(h->wake[0]);
	close(h->wake[1]);
	close(h->sock);
	unlink(SOCK_PATH);
	gb_harness_flush(h);
	for (int i = 0; i < h->n_removed; i++)
		free(h->removed[i]);
	free(h->log_path);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

void gb_harness_set_remove_delay(struct gb_harness *h, int ms)
{
	pthread_mutex_lock(&h->lock);
	h->remove_delay_ms = ms;
	pthread_mutex_unlock(&h->lock);
}

void gb_harness_set_log(struct gb_harness *h, const char *path)
{
	free(h->log_path);
	h->log_path = path ? strdup(path) : NULL;
}

bool gb_harness_log_has(struct gb_harness *h, const char *needle)
{
	FILE *f = h->log_path ? fopen(h->log_path, "re") : NULL;
	char *text = NULL;
	size_t len = 0;
	bool found;

	if (!f)
		return false;
	found = getdelim(&text, &len, 0, f) >= 0 && strstr(text, needle);
	free(text);
	fclose(f);
	return found;
}

/* Between fork and exec: only async-signal-safe calls. */
static void child_setup(void *userdata)
{
	struct gb_harness *h = userdata;
	int tmp[MAX_FDS];
	pid_t pid = getpid();
	char digits[16];
	int n = 0, k = (int)strlen("LISTEN_PID=");

	if (h->child_log >= 0)
		dup2(h->child_log, STDERR_FILENO);
	/* Out of the way first, so that moving them to 3.. overwrites none of them. */
	for (int i = 0; i < h->child_n; i++)
		tmp[i] = fcntl(h->child_fds[i], F_DUPFD_CLOEXEC, 3 + MAX_FDS + 16);
	for (int i = 0; i < h->child_n; i++)
		dup2(tmp[i], 3 + i); /* dup2 leaves the copy without O_CLOEXEC */
	/* LISTEN_PID: this process, which valgrind too keeps (it execs in place). */
	do
		digits[n++] = '0' + pid % 10;
	while ((pid /= 10) && n < 15);
	while (n)
		h->listen_pid[k++] = digits[--n];
	h->listen_pid[k] = 0;
}

pid_t gb_harness_start(struct gb_harness *h, const struct gb_broker_opts *opts, bool with_socket)
{
	struct gb_broker_opts o = opts ? *opts : (struct gb_broker_opts){ 0 };
	char **envp;
	char *names = NULL, *listen_fds = NULL;
	size_t n_env = 0, len = 0;
	long deadline;
	pid_t pid;
	int e = 0;

	ck_assert_msg(!o.child_setup && !o.userdata && !o.envp, "the harness sets up the broker's child itself");
	for (char **p = environ; *p; p++)
		n_env++;
	envp = calloc(n_env + 6, sizeof(char *));
	ck_assert_ptr_nonnull(envp);
	for (char **p = environ; *p; p++)
		if (strncmp(*p, "NOTIFY_SOCKET=", 14) && strncmp(*p, "LISTEN_", 7))
			envp[e++] = *p;

	pthread_mutex_lock(&h->lock);
	h->ready = false;
	h->child_n = 0;
	if (with_socket) {
		envp[e++] = (char *)"NOTIFY_SOCKET=" SOCK_PATH;
		for (int i = 0; i < h->n_fds; i++) {
			h->child_fds[h->child_n++] = h->fds[i].fd;
			len += strlen(h->fds[i].name) + 1;
		}
	}
	if (h->child_n) {
		names = calloc(1, len + 32);
		ck_assert_ptr_nonnull(names);
		strcpy(names, "LISTEN_FDNAMES=");
		for (int i = 0; i < h->child_n; i++) {
			if (i)
				strcat(names, ":");
			strcat(names, h->fds[i].name);
		}
		ck_assert_int_ge(asprintf(&listen_fds, "LISTEN_FDS=%d", h->child_n), 0);
		strcpy(h->listen_pid, "LISTEN_PID=");
		envp[e++] = listen_fds;
		envp[e++] = names;
		envp[e++] = h->listen_pid;
	}
	h->child_log = h->log_path ? open(h->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
	/* The pid is known only after fork; messages before it is set are not lost,
	 * they wait in the socket until the lock is free. */
	o.child_setup = child_setup;
	o.userdata = h;
	o.envp = envp;
	pid = gb_broker_spawn(&o);
	h->main_pid = pid;
	pthread_mutex_unlock(&h->lock);
	if (h->child_log >= 0)
		close(h->child_log);
	h->child_log = -1;
	free(envp);
	free(names);
	free(listen_fds);

	if (!with_socket)
		return pid;
	deadline = gb_deadline_ms(10000);
	for (;;) {
		bool ready;

		pthread_mutex_lock(&h->lock);
		ready = h->ready;
		pthread_mutex_unlock(&h->lock);
		if (ready)
			break;
		ck_assert_msg(gb_now_ms() < deadline, "broker did not send READY=1");
		usleep(5000);
	}
	return pid;
}

int gb_harness_n_fds(struct gb_harness *h)
{
	int n;

	pthread_mutex_lock(&h->lock);
	n = h->n_fds;
	pthread_mutex_unlock(&h->lock);
	return n;
}

bool gb_harness_wait_n_fds(struct gb_harness *h, int n, int timeout_ms)
{
	long deadline = gb_deadline_ms(timeout_ms);

	while (gb_harness_n_fds(h) != n) {
		if (gb_now_ms() > deadline)
			return false;
		usleep(5000);
	}
	return true;
}

bool gb_harness_has_fd(struct gb_harness *h, const char *name)
{
	bool found = false;

	pthread_mutex_lock(&h->lock);
	for (int i = 0; i < h->n_fds; i++)
		found |= strcmp(h->fds[i].name, name) == 0;
	pthread_mutex_unlock(&h->lock);
	return found;
}

bool gb_harness_wait_removed(struct gb_harness *h, const char *name, int timeout_ms)
{
	long deadline = gb_deadline_ms(timeout_ms);

	for (;;) {
		bool found = false;

		pthread_mutex_lock(&h->lock);
		for (int i = 0; i < h->n_removed; i++)
			found |= h->removed[i] && strcmp(h->removed[i], name) == 0;
		pthread_mutex_unlock(&h->lock);
		if (found)
			return true;
		if (gb_now_ms() > deadline)
			return false;
		usleep(5000);
	}
}

void gb_harness_flush(struct gb_harness *h)
{
	pthread_mutex_lock(&h->lock);
	for (int i = 0; i < h->n_fds; i++)
		close(h->fds[i].fd);
	h->n_fds = 0;
	pthread_mutex_unlock(&h->lock);
}

bool gb_harness_drop(struct gb_harness *h, const char *name)
{
	bool found = false;

	pthread_mutex_lock(&h->lock);
	for (int i = 0; i < h->n_fds && !found; i++)
		if (strcmp(h->fds[i].name, name) == 0) {
			close(h->fds[i].fd);
			h->fds[i] = h->fds[--h->n_fds];
			found = true;
		}
	pthread_mutex_unlock(&h->lock);
	return found;
}

void gb_broker_kill(pid_t pid)
{
	sd_bus *bus = gb_connect(0);

	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	unlink("/run/gb-test-broker.pid");
	/* The next broker must be able to take the name. */
	ck_assert_msg(gb_wait_name(bus, GB_BUS_NAME, false, 10000), "the killed broker's name did not go away");
	sd_bus_flush_close_unref(bus);
}

int gb_broker_wait_died(pid_t pid)
{
	sd_bus *bus = gb_connect(0);
	int status = gb_broker_wait_exit(pid, 10000 * gb_slow());

	ck_assert_msg(status >= 0, "the broker did not die");
	unlink("/run/gb-test-broker.pid");
	ck_assert_msg(gb_wait_name(bus, GB_BUS_NAME, false, 10000), "the dead broker's name did not go away");
	sd_bus_flush_close_unref(bus);
	return status;
}
