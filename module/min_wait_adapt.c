// SPDX-License-Identifier: GPL-2.0
/*
 * The adaptive minimum wait (EPOLL_MIN_WAIT_ADAPTIVE): the value set is a
 * ceiling M, and each blocking call waits w in [0, M] chosen from what
 * the instance's past calls that slept showed. As KVM's halt polling and
 * lib/dim do, it measures and steps rather than models:
 *
 * - At w = 0 a call that sleeps measures the gap from its entry to its
 *   first event (a running average, 1/8 weight). Waiting can batch when
 *   CLIMB_EVENTS events arrive within M on average: then w climbs to the
 *   time those take, CLIMB_EVENTS gaps. An average gap over M drops it
 *   back to 0: the instance idles longer than it may wait. While the
 *   average is over twice the climbing line, only one blocking call in
 *   SAMPLE_SPARSE measures, then one in twice as many each time the gap
 *   is far again, up to SAMPLE_MAX (in half as many after a near gap);
 *   its gap counts for up to SAMPLE_ROUNDS of them, so that a near gap
 *   among far ones, as arrivals at random have, does not alone make it
 *   climb; epoll makes the others plain calls (@plain_calls), which
 *   never enter the module: where no wait would batch they cost what a
 *   plain epoll_wait() does and a pass through epoll's gate. A count of
 *   calls, not a time: when the load grows, the calls come faster.
 * - A wait that ends with at most one event ready did not batch: w falls
 *   to 0 at once, and stays there for `tired` calls (a sparse measure
 *   counts for the calls it stands for), a count that doubles with each
 *   fall (up to TIRED_MAX) and halves with each wait that batched, so
 *   that a load at the edge does not oscillate.
 * - A wait that batched adapts its length and the batch that ends it
 *   (cur_events, as EPOLL_CTL_MIN_EVENTS would). One shorter than M that
 *   ran to its end with n events doubles w and ends the next ones at n;
 *   one that reached its target at time t moves w to 2t (halving it at
 *   most) and, every probe_every such calls, tries a target one higher.
 *   At M, a wait that ran out, or LATE_STREAK in a row whose batch took
 *   over 4M/5 to come, show a steady stream: the next waits end by time
 *   alone, and every try_every of them one tries ending at the largest
 *   batch they got. A closed loop of N clients so learns to end at N
 *   rather than wait out M, from the ceiling too, while a steady stream
 *   is timed by M.
 * - A stream over N items has them all ready early, as a closed loop of
 *   N has, but its sender has more for them: WAKE_PROBES probes of N + 1
 *   in a row that ran out having seen ready wakes (epoll's count of
 *   wakeups of items already ready) at over twice the average rate of
 *   the early batches show a stream, at M or below: the next waits take
 *   M and end by time. While its waits see them an earlier end is tried
 *   less often, and one that comes early is probed at once.
 *
 * Calls that return at once are not seen, and no event is: the cost is a
 * few additions per call that slept. Several waiters of one instance
 * update the state without a lock: a lost update only delays a step, and
 * a call that started before the value last changed reports nothing.
 */
#include <linux/fs.h>
#include <linux/uaccess.h>
#include <linux/eventpoll.h>
#include <linux/build_bug.h>
#include <linux/math64.h>
#include <linux/minmax.h>

#include "numab_minwait.h"

#define CLIMB_EVENTS	4
#define TIRED_MIN	8
#define TIRED_MAX	1024
#define PROBE_MIN	4
#define PROBE_MAX	256
#define TRY_MIN		4
#define TRY_MAX		64
#define LATE_STREAK	3
#define SAMPLE_SPARSE	8
#define SAMPLE_MAX	256
#define SAMPLE_ROUNDS	4
#define WAKE_PROBES	2
#define RATE_SHIFT	4
#define RATE_UNKNOWN	U8_MAX

/* Lives in struct epoll_min_wait's @priv. */
struct min_wait_adapt {
	u32 gap8;		/* average gap to the first event, us << 3 */
	u32 took_us;		/* how long the last early batch took */
	u16 gen;		/* counts the values set */
	u16 probe;		/* waits since the target last grew or was tried */
	u16 probe_every;	/* of the tries of a target one higher */
	u16 try_every;		/* of the tries of a target at the ceiling */
	u16 stream_max;		/* largest batch at the ceiling since a try */
	u16 tired;		/* calls before w may climb again */
	u16 backoff;		/* tired after the next fall */
	u8 late;		/* early batches in a row that came after 4M/5 */
	u16 sample_every;	/* blocking calls at w = 0 per measured one */
	u8 early_rate;		/* early batches' ready wakes per M << 4 */
	u8 wake_probes;		/* probes in a row to which more came */
	bool probing;		/* the target was raised by a probe */
	bool ceiling_probe;	/* a target tried at the ceiling */
};

static struct min_wait_adapt *adapt_state(struct epoll_min_wait *mw)
{
	BUILD_BUG_ON(sizeof(struct min_wait_adapt) > EPOLL_MW_PRIV_SIZE);
	/* @sample_every, @probe_every and @try_every double in a u16. */
	BUILD_BUG_ON(2 * SAMPLE_MAX > U16_MAX);
	BUILD_BUG_ON(2 * PROBE_MAX > U16_MAX || 2 * TRY_MAX > U16_MAX);
	return (struct min_wait_adapt *)mw->priv;
}

/* A new value: start from no wait, as if the instance had just been made. */
void min_wait_adapt_reset(struct epoll_min_wait *mw)
{
	struct min_wait_adapt *a = adapt_state(mw);
	u16 gen = a->gen + 1;

	memset(a, 0, sizeof(*a));
	a->gen = gen;
	/* No evidence yet: as if the gaps were M long. */
	a->gap8 = min_t(u64, (u64)mw->usecs << 3, U32_MAX);
	a->backoff = TIRED_MIN;
	a->probe_every = PROBE_MIN;
	a->try_every = TRY_MIN;
	a->sample_every = 1;
	a->early_rate = RATE_UNKNOWN;
	mw->cur_usecs = 0;
	mw->cur_events = 0;
	mw->plain_calls = 0;
}

/* The wait of a call that is about to sleep, and the value it is for. */
u32 min_wait_adapt_begin(struct epoll_min_wait *mw, u16 *gen)
{
	*gen = READ_ONCE(adapt_state(mw)->gen);
	return min(READ_ONCE(mw->cur_usecs), READ_ONCE(mw->usecs));
}

/* Whether the value that @gen was read for is still the instance's. */
bool min_wait_adapt_current(struct epoll_min_wait *mw, u16 gen)
{
	return READ_ONCE(adapt_state(mw)->gen) == gen;
}

static void adapt_set_wait(struct epoll_min_wait *mw, u64 usecs)
{
	WRITE_ONCE(mw->cur_usecs, clamp_t(u64, usecs, 1, READ_ONCE(mw->usecs)));
}

/* What was learnt of a stream holds for the wait it was learnt at. */
static void adapt_forget_stream(struct min_wait_adapt *a)
{
	WRITE_ONCE(a->ceiling_probe, false);
	WRITE_ONCE(a->stream_max, 0);
	WRITE_ONCE(a->early_rate, RATE_UNKNOWN);
	WRITE_ONCE(a->wake_probes, 0);
}

/* Back to no wait, measuring the next sleeping calls from the first. */
static void adapt_drop(struct epoll_min_wait *mw, struct min_wait_adapt *a)
{
	/* Before the wait: no plain calls left over from a racing measure. */
	WRITE_ONCE(a->sample_every, 1);
	WRITE_ONCE(mw->plain_calls, 0);
	WRITE_ONCE(mw->cur_usecs, 0);
	WRITE_ONCE(mw->cur_events, 0);
	adapt_forget_stream(a);
}

static void adapt_fall(struct epoll_min_wait *mw, struct min_wait_adapt *a)
{
	u16 backoff = READ_ONCE(a->backoff);

	adapt_drop(mw, a);
	WRITE_ONCE(a->tired, backoff);
	WRITE_ONCE(a->backoff, min(backoff * 2, TIRED_MAX));
}

/* Far from a wait that batches: a gap over M/2, twice the climbing line. */
static bool adapt_far(u32 m, u64 gap_us)
{
	return (u64)CLIMB_EVENTS * gap_us > 2 * (u64)m;
}

/* The gap from a call's entry to its first event. */
static void adapt_gap(struct epoll_min_wait *mw, struct min_wait_adapt *a,
		      u64 gap_us)
{
	bool at_zero = !READ_ONCE(mw->cur_usecs);
	u16 stands_for = at_zero ? max_t(u16, READ_ONCE(a->sample_every), 1) : 1;
	u32 m = READ_ONCE(mw->usecs);
	u32 gap8 = READ_ONCE(a->gap8);
	u16 tired = READ_ONCE(a->tired);
	u16 every;
	u8 i;

	/*
	 * A sparse measure stands for the calls it skipped too, as
	 * SAMPLE_ROUNDS of them at most: one near gap among far ones, as
	 * arrivals at random have, moves the average 41% of the way at most.
	 */
	for (i = 0; i < min_t(u16, stands_for, SAMPLE_ROUNDS); i++)
		gap8 = min_t(u64, gap8 - (gap8 >> 3) +
			     min_t(u64, gap_us, U32_MAX >> 3), U32_MAX);
	WRITE_ONCE(a->gap8, gap8);

	if (!at_zero) {
		/* The instance idles longer than it may wait. */
		if (gap8 >> 3 > m)
			adapt_drop(mw, a);
		return;
	}
	/*
	 * Far on average: measure half as often after a far gap, down to
	 * one call in SAMPLE_MAX, and twice as often after a near one.
	 */
	every = 1;
	if (adapt_far(m, gap8 >> 3))
		every = adapt_far(m, gap_us) ?
			clamp_t(u16, 2 * stands_for, SAMPLE_SPARSE, SAMPLE_MAX) :
			max_t(u16, stands_for / 2, 1);
	WRITE_ONCE(a->sample_every, every);
	/* Far from a wait that batches, the next calls are plain ones. */
	WRITE_ONCE(mw->plain_calls, every - 1);
	if (tired) {
		WRITE_ONCE(a->tired, tired > stands_for ? tired - stands_for : 0);
		return;
	}
	if ((u64)CLIMB_EVENTS * (gap8 >> 3) <= m) {
		WRITE_ONCE(mw->cur_events, 0);
		WRITE_ONCE(a->probe, 0);
		WRITE_ONCE(a->probe_every, PROBE_MIN);
		WRITE_ONCE(a->probing, false);
		WRITE_ONCE(a->try_every, TRY_MIN);
		WRITE_ONCE(a->late, 0);
		adapt_forget_stream(a);
		adapt_set_wait(mw, (u64)CLIMB_EVENTS * (gap8 >> 3));
	}
}

/* Ready wakes per M in a wait of @len_us, << RATE_SHIFT; saturates. */
static u32 adapt_wake_rate(u32 wakes, u64 len_us, u32 m)
{
	u64 n = (u64)wakes * m;

	/* The shift would wrap, and the rate saturates for any real @len_us. */
	if (n > U64_MAX >> RATE_SHIFT)
		return RATE_UNKNOWN - 1;
	n = div64_u64(n << RATE_SHIFT, max(len_us, 1ULL));
	return min_t(u64, n, RATE_UNKNOWN - 1);
}

/*
 * More came for the items a wait of @len_us held, per unit of time, than
 * twice what comes for those of the batches that come early (a running
 * average): a stream's sender has more to send, a closed loop's clients
 * wait for their replies. Clients that write a request in parts wake
 * their items in every batch alike, and other wakeups at a steady rate at
 * the same rate.
 */
static bool adapt_more_came(struct min_wait_adapt *a,
			    const struct min_wait_sample *s, u64 len_us,
			    u32 m)
{
	u8 early = READ_ONCE(a->early_rate);

	if (early == RATE_UNKNOWN || !s->ready_wakes)
		return false;
	return adapt_wake_rate(s->ready_wakes, len_us, m) > 2 * (u32)early;
}

/*
 * At the ceiling, a batch that takes most of M to come is a stream, best
 * timed by M: the event that ends a wait wakes the waiter in its sender's
 * time, often preempting it, for the timer's batch or one less. One that
 * comes well before M, and then nothing more, is a closed loop (its M
 * waits get no more than the batch) that waiting out M only slows. The
 * line, 4/5 of M, passes redis-benchmark's closed loop of 8 clients on
 * one CPU (0.71 M on average) and keeps paced streams of 5 to 8 events
 * per M (0.84 M and later); a closed loop's batch that is late now and
 * then, LATE_STREAK times in a row at most, keeps its target.
 */
static bool adapt_stream(struct min_wait_adapt *a,
			 const struct min_wait_sample *s, u32 m, u32 target,
			 u64 took_us, bool ceiling_probe)
{
	u64 took_before;
	u8 late;

	if (s->wait_us < m)
		return false;
	if (s->early) {
		if (5 * took_us <= 4 * (u64)m) {
			WRITE_ONCE(a->late, 0);
			return false;
		}
		late = READ_ONCE(a->late) + 1;
		WRITE_ONCE(a->late, late < LATE_STREAK ? late : 0);
		return ceiling_probe || late >= LATE_STREAK;
	}
	if (!READ_ONCE(a->probing) || target < 2)
		return true;
	/*
	 * A target one higher than the last ran out: a stream, if one more
	 * event at the pace the last batch came would not fit in M; else the
	 * load gives no more, as a closed loop does.
	 */
	took_before = READ_ONCE(a->took_us);
	return 5 * took_before > 4 * (u64)m ||
	       target * took_before > (target - 1) * (u64)m;
}

/*
 * A probe of a target one higher ran out: whether more came for the items
 * it held in WAKE_PROBES such probes in a row (one could be a stray
 * wakeup).
 */
static bool adapt_probe_more(struct min_wait_adapt *a,
			     const struct min_wait_sample *s, u64 took_us,
			     u32 m)
{
	u8 n = 0;

	if (adapt_more_came(a, s, took_us, m))
		n = READ_ONCE(a->wake_probes) + 1;
	WRITE_ONCE(a->wake_probes, n < WAKE_PROBES ? n : 0);
	return n >= WAKE_PROBES;
}

/* A wait that ended with a batch of two or more. */
static void adapt_batched(struct epoll_min_wait *mw, struct min_wait_adapt *a,
			  const struct min_wait_sample *s)
{
	u64 took_us = max_t(s64, ktime_us_delta(s->end, s->wait_start), 0);
	bool ceiling_probe = READ_ONCE(a->ceiling_probe);
	u16 probe_every = READ_ONCE(a->probe_every);
	u16 try_every = READ_ONCE(a->try_every);
	u32 target = READ_ONCE(mw->cur_events);
	u32 m = READ_ONCE(mw->usecs);
	u16 probe = READ_ONCE(a->probe);
	u8 early_rate;
	u32 rate;

	WRITE_ONCE(a->backoff, max_t(u16, READ_ONCE(a->backoff) / 2, TIRED_MIN));
	WRITE_ONCE(a->ceiling_probe, false);
	/* A stream over as many items as its batch: time it by M. */
	if (!s->early && READ_ONCE(a->probing) &&
	    adapt_probe_more(a, s, took_us, m)) {
		WRITE_ONCE(mw->cur_events, 0);
		WRITE_ONCE(a->probing, false);
		WRITE_ONCE(a->probe, 0);
		adapt_set_wait(mw, m);
		return;
	}
	if (adapt_stream(a, s, m, target, took_us, ceiling_probe)) {
		u16 stream_max = min_t(u32, s->events, U16_MAX);

		/*
		 * The next waits end by time alone; every try_every of them,
		 * one ends at the largest batch they got, in case the load is
		 * a closed loop whose batch comes sooner: a stream's largest
		 * batch seldom does.
		 */
		WRITE_ONCE(mw->cur_events, 0);
		WRITE_ONCE(a->probing, false);
		WRITE_ONCE(a->wake_probes, 0);
		if (ceiling_probe) {
			WRITE_ONCE(a->try_every, min(try_every * 2, TRY_MAX));
			WRITE_ONCE(a->probe, 0);
			WRITE_ONCE(a->stream_max, stream_max);
			return;
		}
		stream_max = max(stream_max, READ_ONCE(a->stream_max));
		/* More comes for the items held: try less often. */
		if (adapt_more_came(a, s, took_us, m)) {
			try_every = min(try_every * 2, TRY_MAX);
			WRITE_ONCE(a->try_every, try_every);
		}
		if (++probe < try_every) {
			WRITE_ONCE(a->probe, probe);
			WRITE_ONCE(a->stream_max, stream_max);
			return;
		}
		WRITE_ONCE(a->probe, 0);
		WRITE_ONCE(a->stream_max, 0);
		WRITE_ONCE(mw->cur_events, stream_max);
		WRITE_ONCE(a->ceiling_probe, true);
		return;
	}
	if (ceiling_probe && s->early) {
		WRITE_ONCE(a->try_every, max(try_every / 2, TRY_MIN));
		/* Try one higher at once: a stream shows itself again. */
		probe = probe_every - 1;
	}
	if (!s->early) {
		/* Ran out: end the next at what this one got, or wait longer. */
		WRITE_ONCE(mw->cur_events, s->events);
		WRITE_ONCE(a->probe, 0);
		if (!READ_ONCE(a->probing)) {
			adapt_set_wait(mw, (u64)s->wait_us * 2);
			return;
		}
		WRITE_ONCE(a->probing, false);
		/* More came: probe again after the next early batch. */
		if (READ_ONCE(a->wake_probes)) {
			WRITE_ONCE(a->probe, probe_every - 1);
			return;
		}
		/* A failed probe: the load gives no more, probe less often. */
		WRITE_ONCE(a->probe_every, min(probe_every * 2, PROBE_MAX));
		return;
	}
	WRITE_ONCE(a->took_us, min_t(u64, took_us, U32_MAX));
	early_rate = READ_ONCE(a->early_rate);
	rate = adapt_wake_rate(s->ready_wakes, took_us, m);
	/* A running average, 1/4 weight, rounded. */
	WRITE_ONCE(a->early_rate, early_rate == RATE_UNKNOWN ? rate :
		   (3 * early_rate + rate + 2) / 4);
	/* Shrink towards twice what the batch took, by half at most. */
	adapt_set_wait(mw, max_t(u64, 2 * took_us, s->wait_us / 2));
	if (!target)
		return;
	if (READ_ONCE(a->probing)) {
		probe_every = max(probe_every / 2, PROBE_MIN);
		WRITE_ONCE(a->probe_every, probe_every);
		WRITE_ONCE(a->probing, false);
		WRITE_ONCE(a->wake_probes, 0);
	}
	if (++probe < probe_every) {
		WRITE_ONCE(a->probe, probe);
		return;
	}
	WRITE_ONCE(a->probe, 0);
	if (target < INT_MAX) {
		WRITE_ONCE(mw->cur_events, target + 1);
		WRITE_ONCE(a->probing, true);
	}
}

/* What a call that slept in the minimum wait saw. */
void min_wait_adapt_end(struct epoll_min_wait *mw,
			const struct min_wait_sample *s)
{
	struct min_wait_adapt *a = adapt_state(mw);

	/* Nothing delivered, or a call made for a value since replaced. */
	if (s->events <= 0 || s->gen != READ_ONCE(a->gen))
		return;
	/* A probe one higher that ran out held its events a whole wait. */
	if (s->wait_us && !s->idle && !s->early && READ_ONCE(a->probing))
		this_cpu_inc(min_wait_probes_out);
	if (!s->wait_us || s->idle) {
		adapt_gap(mw, a, ktime_us_delta(s->first, s->start));
		return;
	}
	/* w > 0 from here: the wait had events to batch. */
	if (s->events <= 1) {
		adapt_fall(mw, a);
		return;
	}
	adapt_batched(mw, a, s);
	/* Timed from the first event, the call saw its gap too. */
	if (s->after_first)
		adapt_gap(mw, a, ktime_us_delta(s->first, s->start));
}
