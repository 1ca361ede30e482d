/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Host unit test: the broker's loop (shared/loop.h), on real pipes and a real sd-event. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"
#include "testmain.h"

struct pipe {
	int r, w;
};

static struct pipe make_pipe(void)
{
	int fds[2];

	ck_assert_int_eq(pipe(fds), 0);
	return (struct pipe){ fds[0], fds[1] };
}

static void poke(struct pipe *p)
{
	ck_assert_int_eq(write(p->w, "x", 1), 1);
}

static void drain(int fd)
{
	char c;

	ck_assert_int_eq(read(fd, &c, 1), 1);
}

static void close_pipe(struct pipe *p)
{
	close(p->r);
	close(p->w);
}

struct fixture {
	sd_event *e;
	Loop *l;
	LoopIo io[2];
	struct pipe p[2];
	int calls[2];
	bool remove_other, want_turn, flag_for_check;
	bool still_dispatching;
	int order[4], n_order;
};

static void fixture_init(struct fixture *f)
{
	*f = (struct fixture){ 0 };
	ck_assert_int_ge(sd_event_new(&f->e), 0);
	ck_assert_int_eq(loop_new(f->e, &f->l), 0);
	f->p[0] = make_pipe();
	f->p[1] = make_pipe();
}

static void fixture_done(struct fixture *f)
{
	loop_io_remove(&f->io[0]);
	loop_io_remove(&f->io[1]);
	loop_free(f->l);
	sd_event_unref(f->e);
	close_pipe(&f->p[0]);
	close_pipe(&f->p[1]);
}

static int on_exit_defer(sd_event_source *s, void *userdata)
{
	return sd_event_exit(sd_event_source_get_event(s), 1);
}

static int on_exit_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	return sd_event_exit(sd_event_source_get_event(s), 2);
}

static void on_fast(LoopIo *io, uint32_t revents, void *userdata)
{
	struct fixture *f = userdata;
	int k = io == &f->io[0] ? 0 : 1;

	ck_assert(revents & EPOLLIN);
	drain(io->fd);
	f->calls[k]++;
	if (f->n_order < 4)
		f->order[f->n_order++] = k;
	if (f->remove_other)
		loop_io_remove(&f->io[!k]);
	if (f->want_turn || f->flag_for_check) {
		/* A deferred source made while sd-event sleeps armed: it runs only if the
		 * loop lets sd-event take a turn. */
		ck_assert_int_ge(sd_event_add_defer(f->e, NULL, on_exit_defer, NULL), 0);
		if (f->want_turn)
			loop_want_turn(f->l);
	}
}

static void on_fast_removes_itself(LoopIo *io, uint32_t revents, void *userdata)
{
	struct fixture *f = userdata;

	drain(io->fd);
	loop_io_remove(io);
	f->still_dispatching = loop_io_dispatching(f->l, io);
	ck_assert_int_eq(sd_event_exit(f->e, 3), 0);
}

/* As the broker's bus prepare hook would, on seeing what a callback queued. */
static uint64_t prepare_flag(void *userdata)
{
	struct fixture *f = userdata;

	if (f->flag_for_check && f->calls[0])
		loop_want_turn(f->l);
	return UINT64_MAX;
}

/* A fast fd and sd-event's own sources in one loop; sd_event_exit() from a fast
 * callback ends it without any further wake-up. */
static int on_timer_pokes(sd_event_source *s, uint64_t usec, void *userdata)
{
	poke(userdata);
	return 0;
}

static void on_fast_exits(LoopIo *io, uint32_t revents, void *userdata)
{
	struct fixture *f = userdata;

	drain(io->fd);
	f->calls[0]++;
	ck_assert_int_eq(sd_event_exit(f->e, 7), 0);
}

START_TEST(test_fast_io_beside_sd_event)
{
	struct fixture f;

	fixture_init(&f);
	ck_assert_int_eq(loop_io_add(f.l, &f.io[0], f.p[0].r, EPOLLIN, on_fast_exits, &f), 0);
	ck_assert_int_ge(sd_event_add_time_relative(f.e, NULL, CLOCK_MONOTONIC, 10000, 0,
						     on_timer_pokes, &f.p[0]),
			 0);
	ck_assert_int_eq(loop_run(f.l), 7);
	ck_assert_int_eq(f.calls[0], 1);
	fixture_done(&f);
}
END_TEST

/* Two fds ready in one batch: the first one's callback removes the second, which is
 * then not called, not even for the batch at hand. */
START_TEST(test_removed_in_the_batch_is_not_called)
{
	struct fixture f;

	fixture_init(&f);
	f.remove_other = true;
	for (int k = 0; k < 2; k++) {
		ck_assert_int_eq(loop_io_add(f.l, &f.io[k], f.p[k].r, EPOLLIN, on_fast, &f), 0);
		poke(&f.p[k]);
	}
	ck_assert_int_ge(sd_event_add_time_relative(f.e, NULL, CLOCK_MONOTONIC, 100000, 0,
						     on_exit_timer, NULL),
			 0);
	ck_assert_int_eq(loop_run(f.l), 2);
	ck_assert_int_eq(f.calls[0] + f.calls[1], 1);
	ck_assert(!loop_io_active(&f.io[f.order[0] ? 0 : 1]));
	fixture_done(&f);
}
END_TEST

START_TEST(test_removed_by_its_own_callback)
{
	struct fixture f;

	fixture_init(&f);
	ck_assert_int_eq(loop_io_add(f.l, &f.io[0], f.p[0].r, EPOLLIN, on_fast_removes_itself, &f),
			 0);
	poke(&f.p[0]);
	poke(&f.p[0]); /* still readable after: it must not be called again */
	ck_assert_int_eq(loop_run(f.l), 3);
	ck_assert(!f.still_dispatching);
	ck_assert(!loop_io_active(&f.io[0]));
	fixture_done(&f);
}
END_TEST

/* What a fast callback gives sd-event runs at once when it says so (or the prepare
 * hook does), and only when the next wake-up comes if nobody does: the rule in
 * loop.h, and why it is there. */
static int run_with_defer(bool want_turn, bool flag_for_check)
{
	struct fixture f;
	int r;

	fixture_init(&f);
	f.want_turn = want_turn;
	f.flag_for_check = flag_for_check;
	loop_set_prepare(f.l, prepare_flag, &f);
	ck_assert_int_eq(loop_io_add(f.l, &f.io[0], f.p[0].r, EPOLLIN, on_fast, &f), 0);
	poke(&f.p[0]);
	ck_assert_int_ge(sd_event_add_time_relative(f.e, NULL, CLOCK_MONOTONIC, 300000, 0,
						     on_exit_timer, NULL),
			 0);
	r = loop_run(f.l);
	fixture_done(&f);
	return r;
}

START_TEST(test_turn_when_asked)
{
	ck_assert_int_eq(run_with_defer(true, false), 1);
	ck_assert_int_eq(run_with_defer(false, true), 1);
	ck_assert_int_eq(run_with_defer(false, false), 2);
}
END_TEST

/* sd-event's turn comes first in a batch: its io callback removes the fast fd ready
 * in the same batch, which is then not called. */
static int on_event_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct fixture *f = userdata;

	drain(fd);
	if (f->n_order < 4)
		f->order[f->n_order++] = 9;
	loop_io_remove(&f->io[1]);
	return sd_event_exit(f->e, 5);
}

START_TEST(test_sd_event_first_in_a_batch)
{
	struct fixture f;

	fixture_init(&f);
	ck_assert_int_ge(sd_event_add_io(f.e, NULL, f.p[0].r, EPOLLIN, on_event_io, &f), 0);
	ck_assert_int_eq(loop_io_add(f.l, &f.io[1], f.p[1].r, EPOLLIN, on_fast, &f), 0);
	poke(&f.p[0]);
	poke(&f.p[1]);
	ck_assert_int_eq(loop_run(f.l), 5);
	ck_assert_int_eq(f.n_order, 1);
	ck_assert_int_eq(f.order[0], 9);
	ck_assert_int_eq(f.calls[1], 0);
	fixture_done(&f);
}
END_TEST

/* EPOLLOUT on demand, and no system call for the same events twice. */
static void on_writable(LoopIo *io, uint32_t revents, void *userdata)
{
	struct fixture *f = userdata;

	ck_assert(revents & EPOLLOUT);
	f->calls[0]++;
	ck_assert_int_eq(loop_io_set_events(io, EPOLLIN), 0);
	ck_assert_int_eq(loop_io_set_events(io, EPOLLIN), 0);
	ck_assert_int_eq(sd_event_exit(f->e, 4), 0);
}

START_TEST(test_set_events)
{
	struct fixture f;

	fixture_init(&f);
	ck_assert_int_eq(loop_io_add(f.l, &f.io[0], f.p[0].w, EPOLLIN, on_writable, &f), 0);
	ck_assert_int_eq(loop_io_set_events(&f.io[0], EPOLLOUT), 0);
	ck_assert_int_eq(loop_run(f.l), 4);
	ck_assert_int_eq(f.calls[0], 1);
	ck_assert_int_eq(f.io[0].events, EPOLLIN);
	loop_io_remove(&f.io[0]);
	ck_assert_int_eq(loop_io_set_events(&f.io[0], EPOLLOUT), -ENOTCONN);
	fixture_done(&f);
}
END_TEST

/* The prepare hook's deadline wakes the loop with no fd ready. */
static uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint64_t prepare_deadline(void *userdata)
{
	struct fixture *f = userdata;

	if (++f->calls[1] == 4)
		sd_event_exit(f->e, 6);
	return now_usec() + 5000;
}

START_TEST(test_prepare_deadline)
{
	struct fixture f;
	uint64_t t0;

	fixture_init(&f);
	loop_set_prepare(f.l, prepare_deadline, &f);
	t0 = now_usec();
	ck_assert_int_eq(loop_run(f.l), 6);
	ck_assert_int_eq(f.calls[1], 4);
	/* Three sleeps until the deadline: it slept, and the deadline woke it. */
	ck_assert_uint_ge(now_usec() - t0, 15000);
	fixture_done(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("loop");
	TCase *tc = tcase_create("loop");

	tcase_add_test(tc, test_fast_io_beside_sd_event);
	tcase_add_test(tc, test_removed_in_the_batch_is_not_called);
	tcase_add_test(tc, test_removed_by_its_own_callback);
	tcase_add_test(tc, test_turn_when_asked);
	tcase_add_test(tc, test_sd_event_first_in_a_batch);
	tcase_add_test(tc, test_set_events);
	tcase_add_test(tc, test_prepare_deadline);
	suite_add_tcase(s, tc);
	return gb_run_suite(s);
}
