// SPDX-License-Identifier: MIT
/*
 * ho_pool_queue: see include/heteroopt/pool.h.  Three paths behind one
 * const ops table each: io_uring (uring_cmd to /dev/ump), ioctl (SUBMIT
 * and WAIT) and the user-space pool's copy thread.  Every path keeps a
 * slot per chain in flight: its tag, and what the copy needs until it ends.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <liburing.h>
#include <ump/libump-uring.h>

#include "pool_priv.h"

struct ho_pool_slot {
	uint64_t tag;
	uint64_t chain;		    /* ioctl: the module's chain id */
	struct ump_copy_desc *desc; /* ump: kept until the chain ends */
	struct ho_pool_copy *copy;  /* copy thread: the chain itself */
	unsigned int n;
	int status;
};

struct ho_pool_queue_ops {
	const char *path;
	int (*open)(struct ho_pool_queue *q);
	/* start slot's chain c[0..slot.n), keeping in the slot what it reads until it ends */
	int (*submit)(struct ho_pool_queue *q, uint32_t slot, const struct ho_pool_copy *c);
	int (*flush)(struct ho_pool_queue *q);
	/* one finished slot, waiting for it if wait; -EAGAIN: none yet */
	int (*reap_one)(struct ho_pool_queue *q, bool wait, uint32_t *slot);
	void (*close)(struct ho_pool_queue *q);
};

struct ho_pool_queue {
	struct ho_pool *p;
	const struct ho_pool_queue_ops *ops;
	unsigned int depth, in_flight;
	struct ho_pool_slot *slot;
	uint32_t *free_slots; /* a stack of n_free unused slot ids */
	unsigned int n_free;
	/* Slot ids in submission order, as a ring of depth entries: the ioctl
	 * path waits for the oldest; the copy thread takes them in turn. */
	uint32_t *order;
	unsigned int head, tail, started;
	/* io_uring */
	struct io_uring ring;
	unsigned int unflushed; /* SQEs prepared, not yet submitted */
	/* the copy thread: order[head..started) copied, [started..tail) to copy */
	pthread_t thread;
	bool thread_up, quit;
	pthread_mutex_t lock;
	pthread_cond_t work, done;
};

/* The chain as ump.ko's descriptors, kept in the slot: the module reads them at issue. */
static int slot_descs(struct ho_pool_slot *s, const struct ho_pool_copy *c)
{
	s->desc = malloc(s->n * sizeof(*s->desc));
	if (!s->desc)
		return -ENOMEM;
	for (unsigned int i = 0; i < s->n; i++)
		s->desc[i] = (struct ump_copy_desc){c[i].src->handle, c[i].dst->handle,
						    c[i].src_off, c[i].dst_off, c[i].len};
	return 0;
}

/* ---- io_uring ----------------------------------------------------------- */

static int uring_open(struct ho_pool_queue *q)
{
	/* Twice the depth in completions: the ring never overflows. */
	struct io_uring_params prm = {.flags = IORING_SETUP_CQSIZE, .cq_entries = 2 * q->depth};
	return io_uring_queue_init_params(q->depth, &q->ring, &prm);
}

static int uring_submit(struct ho_pool_queue *q, uint32_t id, const struct ho_pool_copy *c)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);
	int ret;

	if (!sqe)
		return -EBUSY; /* cannot happen: in flight never passes the ring's size */
	ret = slot_descs(&q->slot[id], c);
	if (ret)
		return ret; /* the SQE goes back unused: nothing was written to it */
	ump_prep_submit(sqe, q->p->ump.fd, q->slot[id].desc, q->slot[id].n, id);
	q->unflushed++;
	return 0;
}

static int uring_flush(struct ho_pool_queue *q)
{
	int ret;

	if (!q->unflushed)
		return 0;
	ret = io_uring_submit(&q->ring);
	if (ret < 0)
		return ret;
	q->unflushed -= (unsigned int)ret < q->unflushed ? (unsigned int)ret : q->unflushed;
	return 0;
}

static int uring_reap_one(struct ho_pool_queue *q, bool wait, uint32_t *id)
{
	struct io_uring_cqe *cqe;
	int ret;

	for (int pass = 0;; pass++) {
		if (!io_uring_peek_cqe(&q->ring, &cqe)) {
			*id = (uint32_t)cqe->user_data;
			q->slot[*id].status = cqe->res;
			io_uring_cqe_seen(&q->ring, cqe);
			return 0;
		}
		if (!wait && (pass || !q->unflushed))
			return -EAGAIN;
		/* Starts what is prepared; with wait, sleeps for a completion. */
		ret = io_uring_submit_and_wait(&q->ring, wait ? 1 : 0);
		if (ret >= 0)
			q->unflushed = 0;
		else if (ret != -EINTR)
			return ret;
	}
}

static void uring_close(struct ho_pool_queue *q)
{
	io_uring_queue_exit(&q->ring);
}

static const struct ho_pool_queue_ops uring_queue_ops = {
    .path = "io_uring",
    .open = uring_open,
    .submit = uring_submit,
    .flush = uring_flush,
    .reap_one = uring_reap_one,
    .close = uring_close,
};

/* ---- ioctl -------------------------------------------------------------- */

static int ioctl_open(struct ho_pool_queue *q)
{
	(void)q;
	return 0;
}

static int ioctl_submit(struct ho_pool_queue *q, uint32_t id, const struct ho_pool_copy *c)
{
	struct ho_pool_slot *s = &q->slot[id];
	int ret = slot_descs(s, c);

	if (!ret)
		ret = ump_submit(&q->p->ump, s->desc, s->n, id, &s->chain);
	if (!ret)
		q->order[q->tail++ % q->depth] = id;
	return ret;
}

static int ioctl_flush(struct ho_pool_queue *q)
{
	(void)q;
	return 0;
}

/* The oldest chain: the module runs a file's chains to one node in turn. */
static int ioctl_reap_one(struct ho_pool_queue *q, bool wait, uint32_t *id)
{
	struct ump_wait w;
	int ret;

	*id = q->order[q->head % q->depth];
	ret = ump_wait(&q->p->ump, q->slot[*id].chain, wait ? UMP_TIMEOUT_INFINITE : 0, &w);
	if (ret)
		return ret == -ETIME ? -EAGAIN : ret;
	q->slot[*id].status = w.status;
	q->head++;
	return 0;
}

static void ioctl_close(struct ho_pool_queue *q)
{
	(void)q;
}

static const struct ho_pool_queue_ops ioctl_queue_ops = {
    .path = "ioctl",
    .open = ioctl_open,
    .submit = ioctl_submit,
    .flush = ioctl_flush,
    .reap_one = ioctl_reap_one,
    .close = ioctl_close,
};

/* ---- the user-space pool's copy thread ---------------------------------- */

static void *copy_thread(void *arg)
{
	struct ho_pool_queue *q = arg;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct ho_pool_slot *s;

		while (!q->quit && q->started == q->tail)
			pthread_cond_wait(&q->work, &q->lock);
		if (q->started == q->tail)
			break; /* quit, with nothing left to copy */
		s = &q->slot[q->order[q->started % q->depth]];
		pthread_mutex_unlock(&q->lock);
		s->status = ho_pool_user_copy(q->p, s->copy, s->n);
		pthread_mutex_lock(&q->lock);
		q->started++;
		pthread_cond_signal(&q->done);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

static int thread_open(struct ho_pool_queue *q)
{
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->work, NULL);
	pthread_cond_init(&q->done, NULL);
	return 0;
}

static int thread_submit(struct ho_pool_queue *q, uint32_t id, const struct ho_pool_copy *c)
{
	struct ho_pool_slot *s = &q->slot[id];

	s->copy = malloc(s->n * sizeof(*c));
	if (!s->copy)
		return -ENOMEM;
	memcpy(s->copy, c, s->n * sizeof(*c));
	/* Made on the first chain: a queue used only by ho_pool_queue_copy needs none. */
	if (!q->thread_up) {
		int ret = pthread_create(&q->thread, NULL, copy_thread, q);

		if (ret)
			return -ret;
		q->thread_up = true;
	}
	pthread_mutex_lock(&q->lock);
	q->order[q->tail++ % q->depth] = id;
	pthread_cond_signal(&q->work);
	pthread_mutex_unlock(&q->lock);
	return 0;
}

static int thread_flush(struct ho_pool_queue *q)
{
	(void)q;
	return 0;
}

static int thread_reap_one(struct ho_pool_queue *q, bool wait, uint32_t *id)
{
	int ret = 0;

	pthread_mutex_lock(&q->lock);
	while (wait && q->started == q->head)
		pthread_cond_wait(&q->done, &q->lock);
	if (q->started == q->head)
		ret = -EAGAIN;
	else
		*id = q->order[q->head++ % q->depth];
	pthread_mutex_unlock(&q->lock);
	return ret;
}

static void thread_close(struct ho_pool_queue *q)
{
	if (q->thread_up) {
		pthread_mutex_lock(&q->lock);
		q->quit = true;
		pthread_cond_signal(&q->work);
		pthread_mutex_unlock(&q->lock);
		pthread_join(q->thread, NULL);
	}
	pthread_cond_destroy(&q->done);
	pthread_cond_destroy(&q->work);
	pthread_mutex_destroy(&q->lock);
}

static const struct ho_pool_queue_ops thread_queue_ops = {
    .path = "copy thread",
    .open = thread_open,
    .submit = thread_submit,
    .flush = thread_flush,
    .reap_one = thread_reap_one,
    .close = thread_close,
};

/* ---- common ------------------------------------------------------------- */

static bool ump_has_uring(const struct ho_pool *p)
{
	return p->ump.version.features & UMP_FEAT_URING_CMD;
}

int ho_pool_queue_open(struct ho_pool *p, unsigned int depth, unsigned int flags,
		       struct ho_pool_queue **out)
{
	struct ho_pool_queue *q;
	int ret;

	if (!depth || depth > HO_POOL_QUEUE_MAX_DEPTH || flags & ~HO_POOL_QUEUE_IOCTL)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->p = p;
	q->depth = depth;
	if (!ho_pool_is_ump(p))
		q->ops = &thread_queue_ops;
	else if (flags & HO_POOL_QUEUE_IOCTL || !ump_has_uring(p))
		q->ops = &ioctl_queue_ops;
	else
		q->ops = &uring_queue_ops;
	q->slot = calloc(depth, sizeof(*q->slot));
	q->free_slots = calloc(depth, sizeof(*q->free_slots));
	q->order = calloc(depth, sizeof(*q->order));
	if (!q->slot || !q->free_slots || !q->order) {
		ret = -ENOMEM;
		goto err_free;
	}
	for (unsigned int i = 0; i < depth; i++)
		q->free_slots[i] = depth - 1 - i;
	q->n_free = depth;
	ret = q->ops->open(q);
	if (ret)
		goto err_free;
	*out = q;
	return 0;

err_free:
	free(q->order);
	free(q->free_slots);
	free(q->slot);
	free(q);
	return ret;
}

static void slot_release(struct ho_pool_queue *q, uint32_t id)
{
	free(q->slot[id].desc);
	free(q->slot[id].copy);
	q->slot[id] = (struct ho_pool_slot){0};
	q->free_slots[q->n_free++] = id;
}

void ho_pool_queue_close(struct ho_pool_queue *q)
{
	struct ho_pool_done d[16];

	if (!q)
		return;
	/* The chains still read and write the caller's buffers: let them end. */
	while (q->in_flight && ho_pool_reap(q, d, 16, 1) >= 0)
		;
	q->ops->close(q);
	for (unsigned int i = 0; i < q->depth; i++)
		if (q->slot[i].desc || q->slot[i].copy)
			slot_release(q, i);
	free(q->order);
	free(q->free_slots);
	free(q->slot);
	free(q);
}

const char *ho_pool_queue_path(const struct ho_pool_queue *q)
{
	return q->ops->path;
}

unsigned int ho_pool_queue_in_flight(const struct ho_pool_queue *q)
{
	return q->in_flight;
}

int ho_pool_submit(struct ho_pool_queue *q, const struct ho_pool_copy *c, unsigned int n,
		   uint64_t tag)
{
	struct ho_pool_slot *s;
	uint32_t id;
	int ret;

	if (!n || n > UMP_MAX_CHAIN_DESCS)
		return -EINVAL;
	if (!q->n_free)
		return -EBUSY;
	id = q->free_slots[--q->n_free];
	s = &q->slot[id];
	*s = (struct ho_pool_slot){.tag = tag, .n = n};
	ret = q->ops->submit(q, id, c);
	if (ret) {
		slot_release(q, id);
		return ret;
	}
	q->in_flight++;
	return 0;
}

int ho_pool_flush(struct ho_pool_queue *q)
{
	return q->ops->flush(q);
}

int ho_pool_reap(struct ho_pool_queue *q, struct ho_pool_done *out, unsigned int max, int wait)
{
	unsigned int got = 0;

	while (got < max && q->in_flight) {
		uint32_t id;
		int ret = q->ops->reap_one(q, wait && !got, &id);

		if (ret == -EAGAIN)
			break;
		if (ret)
			return got ? (int)got : ret;
		out[got++] = (struct ho_pool_done){q->slot[id].tag, q->slot[id].status};
		q->in_flight--;
		slot_release(q, id);
	}
	return (int)got;
}

int ho_pool_queue_copy(struct ho_pool_queue *q, const struct ho_pool_copy *c, unsigned int n)
{
	struct ho_pool_done d;
	int ret;

	if (q->in_flight)
		return -EBUSY;
	if (q->ops == &thread_queue_ops)
		return ho_pool_user_copy(q->p, c, n);
	ret = ho_pool_submit(q, c, n, 0);
	if (ret)
		return ret;
	ret = ho_pool_reap(q, &d, 1, 1);
	return ret < 0 ? ret : d.status;
}

int ho_pool_stats(struct ho_pool *p, struct ho_pool_stats *s)
{
	struct ump_stats st;
	int ret;

	if (!ho_pool_is_ump(p))
		return -EOPNOTSUPP;
	ret = ump_stats(&p->ump, &st, NULL, 0);
	if (ret < 0)
		return ret;
	*s = (struct ho_pool_stats){
	    .chains = {st.engine[UMP_ENGINE_CPU - 1].chains, st.engine[UMP_ENGINE_DMA - 1].chains},
	    .bytes = {st.engine[UMP_ENGINE_CPU - 1].bytes, st.engine[UMP_ENGINE_DMA - 1].bytes},
	    .errors = st.engine[0].errors + st.engine[1].errors,
	    .staged = st.engine[0].staged + st.engine[1].staged,
	    .buffers = st.buffers,
	};
	return 0;
}
