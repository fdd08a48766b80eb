/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * client-io.c - a client's socket: the read buffer and recvmsg() (with
 * SCM_RIGHTS), the framing of what was read, the output ring and sendmsg()
 * straight from the core's shared payloads, the slices RECVed from the core,
 * the events and timers of the socket.  What the core delivers is taken
 * and filtered by deliver.c, into the output ring.
 */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <linux/sockios.h>

#include "compat/auth.h"
#include "compat/kdbus-client.h"
#include "daemon/bus.h"
#include "daemon/bus-hooks.h"
#include "daemon/client-internal.h"
#include "daemon/client.h"
#include "daemon/log.h"
#include "util/macro.h"

static void client_drop_input_fds(Client *c);
static void client_on_event(evutil_socket_t fd, short what, void *userdata);
static uint64_t client_ms_to_us(uint64_t ms);
static uint64_t client_now(void);
static void client_arm_timer(Client *c, uint64_t now);
static void client_on_timeout(evutil_socket_t fd, short what, void *userdata);

/*
 * The bus's read buffers that no client holds (Bus.rbuf_pool).  The spare
 * is one CLIENT_READ_MIN buffer an idle client let go of
 * (client_release_rbuf()), for the next client that reads.  The given ones
 * are buffers the core took with a large message (client_dispatch() hands
 * a message over in place), newest first.  Invalidation: a given buffer is
 * written again only once kdbus_payload_unshared() says every message that
 * took it is gone; a ninth pushes the oldest out; all go with the bus.
 */
struct ClientRbufPool {
	uint8_t *spare;
	void *spare_handle;
	struct ClientGivenRbuf {
		void *handle;
		uint8_t *buf;
		size_t cap;
	} given[8];
};

int client_rbuf_pool_new(Bus *bus) {
	bus->rbuf_pool = calloc(1, sizeof(*bus->rbuf_pool));
	return bus->rbuf_pool ? 0 : -ENOMEM;
}

void client_rbuf_pool_free(Bus *bus) {
	ClientRbufPool *p = bus->rbuf_pool;

	if (!p)
		return;
	if (p->spare_handle)
		kdbus_payload_release(bus->kbus, p->spare_handle);
	else
		free(p->spare);
	for (size_t i = 0; i < ELEMENTSOF(p->given); i++)
		kdbus_payload_release(bus->kbus, p->given[i].handle);
	free(p);
	bus->rbuf_pool = NULL;
}

static uint8_t *client_rbuf_new(Bus *bus, size_t cap, void **ret_handle) {
	ClientRbufPool *p = bus->rbuf_pool;
	uint8_t *d;

	/* a buffer the core took and gave back, of about the size */
	for (size_t i = 0; i < ELEMENTSOF(p->given); i++) {
		struct ClientGivenRbuf *g = &p->given[i];

		if (g->handle && g->cap >= cap && g->cap <= 2 * cap && kdbus_payload_unshared(bus->kbus, g->handle)) {
			*ret_handle = g->handle;
			d = g->buf;
			*g = (struct ClientGivenRbuf) {};
			return d;
		}
	}
	if (kdbus_payload_new(bus->kbus, CLIENT_RBUF_SLACK + cap, ret_handle, &d) == 0)
		return d + CLIENT_RBUF_SLACK;
	*ret_handle = NULL;
	return malloc(cap);
}

void client_rbuf_free(Bus *bus, uint8_t *buf, void *handle) {
	if (handle)
		kdbus_payload_release(bus->kbus, handle);
	else
		free(buf);
}

/* a read buffer the core took: kept for client_rbuf_new(), oldest out */
static void client_rbuf_give(Bus *bus, uint8_t *buf, void *handle, size_t cap) {
	struct ClientGivenRbuf *g = bus->rbuf_pool->given;
	size_t n = ELEMENTSOF(bus->rbuf_pool->given);

	if (g[n - 1].handle)
		kdbus_payload_release(bus->kbus, g[n - 1].handle);
	memmove(g + 1, g, (n - 1) * sizeof(*g));
	g[0] = (struct ClientGivenRbuf) { .handle = handle, .buf = buf, .cap = cap };
}

/*
 * client_rbuf_move() - the read buffer becomes a new one of @cap bytes
 * holding what the old one had from @from on; the old one goes back to
 * the bus for reuse if the core took it (@given), else it is let go.
 * Return: 0 or -ENOMEM (the old buffer stays).
 */
static int client_rbuf_move(Client *c, size_t cap, size_t from, bool given) {
	void *handle;
	uint8_t *n = client_rbuf_new(c->bus, cap, &handle);

	if (!n)
		return -ENOMEM;
	if (c->in.len > from)
		memcpy(n, c->in.buf + from, c->in.len - from);
	if (given)
		client_rbuf_give(c->bus, c->in.buf, c->in.handle, c->in.cap);
	else if (c->in.buf)
		client_rbuf_free(c->bus, c->in.buf, c->in.handle);
	c->in.buf = n;
	c->in.handle = handle;
	c->in.cap = cap;
	c->in.len = c->in.len > from ? c->in.len - from : 0;
	return 0;
}

static void client_update_fd_timer(Client *c);

void client_drop_output(Client *c) {
	out_ring_clear(&c->out, c->conn);
}

void client_input_take_fds(Client *c, int *dst, size_t n) {
	assert(n <= c->in.n_fds);
	memcpy(dst, c->in.fds, n * sizeof(int));
	memmove(c->in.fds, c->in.fds + n, (c->in.n_fds - n) * sizeof(int));
	c->in.n_fds -= n;
}

void client_input_given(Client *c) {
	c->in.given = true;	/* client_process_input() moves on to a new buffer */
}

void client_input_hold(Client *c) {
	c->in.state = CLIENT_INPUT_HELD;
}

void client_input_consumed(Client *c, size_t n) {
	memmove(c->in.buf, c->in.buf + n, c->in.len - n);
	c->in.len -= n;
}

void client_input_done(Client *c) {
	client_drop_input_fds(c);
	free(c->in.fds);
	c->in.fds = NULL;
	client_rbuf_free(c->bus, c->in.buf, c->in.handle);
	c->in.buf = NULL;
	c->in.handle = NULL;
	c->in.len = c->in.cap = 0;
}

static void client_drop_input_fds(Client *c) {
	for (size_t i = 0; i < c->in.n_fds; i++)
		safe_close(c->in.fds[i]);
	c->in.n_fds = 0;
}
/* ---- output ------------------------------------------------------------- */

static size_t iov_total(const struct iovec *iov, size_t n) {
	size_t t = 0;
	for (size_t i = 0; i < n; i++)
		t += iov[i].iov_len;
	return t;
}

int client_queue_owned(Client *c, uint8_t *msg, size_t len) {
	ClientOut o = {
		.owned = msg,
		.iov[0] = { .iov_base = msg, .iov_len = len },
		.n_iov = 1,
		.len = len,
	};
	int r = out_ring_push(&c->out, &o);
	if (r < 0)
		free(msg);
	return r;
}

static int client_pull(Client *c);

int client_send_owned(Client *c, uint8_t *msg, size_t len) {
	/* after what the core holds for @c: it was sent before */
	int r = client_pull(c);

	if (r < 0) {
		free(msg);
		return r;
	}
	r = client_queue_owned(c, msg, len);

	if (r >= 0)
		r = client_write(c);
	if (r < 0)
		return r;
	client_update_events(c);
	return 0;
}

int client_queue_owned_fds(Client *c, uint8_t *msg, size_t len, int *fds, unsigned n_fds) {
	ClientOut o = {
		.owned = msg,
		.iov[0] = { .iov_base = msg, .iov_len = len },
		.n_iov = 1,
		.len = len,
		.fds = fds,
		.n_fds = n_fds,
	};
	int r = out_ring_push(&c->out, &o);
	if (r < 0) {
		for (unsigned i = 0; i < n_fds; i++)
			safe_close(fds[i]);
		free(msg);
	}
	return r;
}

/*
 * A large message goes through the default socket buffer (208 KiB) in
 * five writes, each after a wakeup when the reader made room.  A client
 * that receives large messages gets a buffer of up to 2 MiB instead, once:
 * the bytes sit in its socket rather than in our queue.  Not for a
 * limited output (client_limit_output()), whose small buffer is the point.
 * Asked for when such a message from the core joins the ring (deliver.c).
 */
_noinline_ void client_grow_sndbuf(Client *c) {
	int v = CLIENT_SNDBUF_LARGE;

	if (c->sndbuf_grown || c->out_limit || c->fd < 0)
		return;
	c->sndbuf_grown = true;
	(void) setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
}

/* the iovecs of what is next in the ring, for one sendmsg(); a message's
 * fds travel with its first byte: one such message per sendmsg(), and only
 * at the start of the batch.  Return: how many */
static size_t client_write_gather(Client *c, struct iovec *iov) {
	size_t n_iov = 0;

	for (size_t i = 0; i < c->out.n && n_iov < CLIENT_IOV_MAX - 2; i++) {
		ClientOut *o = out_ring_at(&c->out, i);
		size_t skip = o->sent;

		if (i > 0 && o->n_fds)
			break;
		for (unsigned k = 0; k < o->n_iov; k++) {
			if (skip >= o->iov[k].iov_len) {
				skip -= o->iov[k].iov_len;
				continue;
			}
			iov[n_iov].iov_base = (uint8_t *) o->iov[k].iov_base + skip;
			iov[n_iov].iov_len = o->iov[k].iov_len - skip;
			n_iov++;
			skip = 0;
		}
	}
	return n_iov;
}

/* SCM_RIGHTS with @o's fds in @mh, in @control (CMSG_SPACE() of them) */
static void client_write_attach_fds(struct msghdr *mh, uint8_t *control, const ClientOut *o) {
	mh->msg_control = control;
	mh->msg_controllen = CMSG_SPACE(sizeof(int) * o->n_fds);
	memset(control, 0, mh->msg_controllen);	/* the padding too (valgrind) */
	struct cmsghdr *cm = CMSG_FIRSTHDR(mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * o->n_fds);
	memcpy(CMSG_DATA(cm), o->fds, sizeof(int) * o->n_fds);
}

/* @k bytes went out: the messages written leave the ring (their slices go
 * back to the core in one batch), a partly written one keeps its place */
static void client_write_done(Client *c, size_t k) {
	size_t left = k;
	uint64_t done[CLIENT_IOV_MAX];
	size_t n_done = 0;

	while (c->out.n && left > 0) {
		ClientOut *o = out_ring_first(&c->out);
		size_t rest = o->len - o->sent;
		if (left < rest) {
			o->sent += left;
			left = 0;
			break;
		}
		left -= rest;
		(void) out_ring_pop(&c->out);
		/* the slices of what was written go back in one batch */
		if (o->slice && c->conn && n_done < ELEMENTSOF(done)) {
			done[n_done++] = o->slice;
			o->slice = 0;
		}
		/* a written slot with nothing else to let go is left as it
		 * is: out_ring_reserve() fills it anew */
		if (o->owned || o->n_fds || o->slice)
			out_slot_release(o, c->conn);
	}
	if (n_done)
		(void) kdbus_free_batch(c->conn, done, n_done);
	/* zero-length messages cannot exist, but be safe */
	while (c->out.n && out_ring_first(&c->out)->len == out_ring_first(&c->out)->sent)
		out_slot_release(out_ring_pop(&c->out), c->conn);
}

/*
 * The first message of the ring, whose fds the kernel would not pass
 * (ETOOMANYREFS: the bus's user has more fds in flight than its
 * RLIMIT_NOFILE, or they are passed too deep), is dropped unwritten and the
 * connection stays, as libdbus drops it (dbus-transport-socket.c
 * do_writing()): the receiver cannot be knocked off the bus by what others
 * leave unread.  Its fds travel with its first byte, so none of it was sent.
 */
static void client_write_drop_first(Client *c) {
	ClientOut *o = out_ring_first(&c->out);

	assert(o->sent == 0 && o->n_fds > 0);
	log_debug("Dropping a message of %zu bytes with %u fds to %s: the kernel refuses to pass its fds "
		  "(too many in flight)", o->len, o->n_fds, client_name(c));
	out_slot_release(out_ring_pop(&c->out), c->conn);
}

/* write as much of the output ring as the socket takes; -ECONNRESET etc.
 * on error (a message whose fds cannot be passed is dropped, the rest goes
 * on; so is everything once the peer no longer reads) */
/*
 * The peer shut its socket for reading (EPIPE, and the peer is still
 * there: client_peer_gone()).  As dbus-daemon, the connection stays and
 * what the peer sends is still taken; what is for it cannot reach it, so
 * it is dropped, now and from now on.
 */
static _noinline_ void client_write_shut(Client *c) {
	if (!c->out_shut)
		log_debug("%s (%s) no longer reads: what is sent to it is dropped", client_name(c),
			  client_loginfo(c));
	c->out_shut = true;
	client_drop_output(c);
}

/* a write failed with EPIPE: has the peer closed its socket altogether
 * (our end is shut both ways: POLLHUP, or at least for reading), rather
 * than shut it for reading only (our end is shut for writing alone)?
 * Then the connection ends now, as it always did: a service that dies
 * must let go of its names before more calls are routed to it */
static _noinline_ bool client_peer_gone(Client *c) {
	struct pollfd p = { .fd = c->fd, .events = POLLRDHUP };

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR));
}

int client_write(Client *c) {
	if (_unlikely_(c->out_shut)) {
		client_write_shut(c);
		return 0;
	}
	while (c->out.n) {
		struct iovec iov[CLIENT_IOV_MAX];
		union {
			struct cmsghdr cm;
			uint8_t buf[CMSG_SPACE(sizeof(int) * CLIENT_MAX_FDS_PER_READ)];
		} control;
		struct msghdr mh = {};
		ClientOut *first = out_ring_first(&c->out);
		size_t n_iov = client_write_gather(c, iov);

		mh.msg_iov = iov;
		mh.msg_iovlen = n_iov;
		if (first->n_fds && first->sent == 0)
			client_write_attach_fds(&mh, control.buf, first);

		ssize_t k = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			if (errno == ETOOMANYREFS && mh.msg_control) {
				client_write_drop_first(c);
				continue;
			}
			if (errno == EPIPE && !client_peer_gone(c)) {
				client_write_shut(c);
				return 0;
			}
			return -errno;
		}
		client_write_done(c, k);
		if ((size_t) k < iov_total(iov, n_iov))
			return 0;	/* short write: the socket is full */
	}
	return 0;
}

void client_expect_handover(Client *c) {
	c->handover_unchecked = true;
}

void client_limit_output(Client *c) {
	int v = 1;	/* the kernel's minimum */
	socklen_t l = sizeof(v);

	/* (kdbus.ko gives nothing back to an activator: on the kernel bus
	 * the ring takes what the client has not read, client_pull()) */
	if (c->out_limit || c->fd < 0 || c->bus->on_kernel)
		return;
	/* EV_WRITE fires once the peer has read down to a quarter of the
	 * send buffer: the limit is just above that */
	if (setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)) < 0 ||
	    getsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &v, &l) < 0 || v <= 0)
		return;
	c->out_limit = (size_t) v / 4 + CLIENT_LIMIT_SLACK;
}

/* limited output: may more go out?  (SIOCOUTQ: what the peer has not read) */
static bool client_out_room(Client *c) {
	int outq = 0;

	if (!c->out_limit || ioctl(c->fd, SIOCOUTQ, &outq) < 0)
		return true;
	if ((size_t) outq + c->out.bytes < c->out_limit)
		return true;
	c->out_held = true;
	return false;
}

/*
 * On kdbus.ko what a client has not read cannot stay in the kernel as it
 * stays in the in-process core: the kernel queues at most 256 messages
 * of one sending user for a connection (the final ABI's quota), where
 * dbus-daemon keeps up to max_outgoing_bytes for a slow reader.  The
 * client's ring takes what the kernel queued, up to half its pool
 * (max_outgoing_bytes: the other half is the kernel's incoming queue).
 */
static _noinline_ void client_kernel_out_limits(Client *c, size_t *out_max, size_t *bytes_max) {
	uint64_t half = c->bus->limits.max_outgoing_bytes / 2;

	*out_max = SIZE_MAX / 2;
	if (half > *bytes_max)
		*bytes_max = half > SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t) half;
}

/* pull from the core while there is room in flight (inlined in
 * client_flush(), the common path, though client_send_owned() uses it too) */
static inline __attribute__((always_inline)) int client_pull(Client *c) {
	if (!c->conn)
		return 0;
	size_t out_max = CLIENT_OUT_MAX, bytes_max = CLIENT_OUT_BYTES_MAX;
	c->out_held = false;
	if (_unlikely_(c->bus->on_kernel))
		client_kernel_out_limits(c, &out_max, &bytes_max);
	while (c->out.n < out_max && c->out.bytes < bytes_max && client_out_room(c)) {
		/* a batch per lock round in the core; while much is in flight
		 * one at a time, so that the byte limit holds */
		uint64_t offs[CLIENT_RECV_BATCH];
		size_t want = c->out.bytes < bytes_max / 2 && !c->out_limit ? CLIENT_RECV_BATCH : 1;
		if (want > out_max - c->out.n)
			want = out_max - c->out.n;
		int n = kdbus_recv_batch(c->conn, offs, want);
		if (n == -EAGAIN)
			goto empty;
		if (n < 0)
			return n;
		for (int i = 0; i < n; i++) {
			int r = c->bus->hooks->deliver(c, offs[i]);
			if (r < 0) {
				/* the rest is not taken: give it back */
				if (c->conn && i + 1 < n)
					(void) kdbus_free_batch(c->conn, offs + i + 1, n - i - 1);
				return r;
			}
		}
		if ((size_t) n < want)
			goto empty;
		c->kqueue_drained = false;
	}
	return 0;
empty:
	c->handover_unchecked = false;
	c->kqueue_drained = true;
	return 0;
}

bool client_take_queue(Bus *bus, uint64_t id) {
	Client *d = client_registry_find(&bus->registry, id);
	size_t before;

	if (!bus->on_kernel || !d || !d->conn || d->state != CLIENT_ACTIVE)
		return false;
	before = d->out.n;
	if (client_pull(d) < 0)
		return false;
	bus_schedule_ready(bus, d);
	return d->out.n != before;
}

void client_take_queued(Client *c) {
	size_t before = c->out.n;

	if (client_pull(c) < 0)
		return;	/* (client_flush() meets the error again) */
	if (c->out.n != before)
		bus_schedule_ready(c->bus, c);
}

void client_drain(Client *c) {
	while (c->conn) {
		uint64_t off;
		if (kdbus_recv_batch(c->conn, &off, 1) < 0 || c->bus->hooks->deliver(c, off) < 0)
			break;
	}
	/* slices must not outlive the connection they belong to */
	for (size_t i = 0; i < c->out.n; i++) {
		ClientOut *o = out_ring_at(&c->out, i);
		if (!o->slice)
			continue;
		uint8_t *copy = malloc(o->len ? o->len : 1);
		size_t at = 0;
		if (!copy)
			continue;
		for (unsigned k = 0; k < o->n_iov; k++) {
			memcpy(copy + at, o->iov[k].iov_base, o->iov[k].iov_len);
			at += o->iov[k].iov_len;
		}
		(void) kdbus_free_batch(c->conn, &o->slice, 1);
		o->slice = 0;
		o->owned = copy;
		o->iov[0] = (struct iovec) { .iov_base = copy, .iov_len = at };
		o->n_iov = 1;
	}
}

void client_flush(Client *c) {
	int r;

	for (int round = 0; round < 64; round++) {
		r = client_pull(c);
		if (r < 0)
			goto fail;
		if (!c->out.n)
			break;
		size_t before = c->out.n;
		r = client_write(c);
		if (r < 0)
			goto fail;
		if (c->out.n == before && c->out.n)
			break;	/* socket full */
		/* (on kdbus.ko a poll() per message: a queue the last pull
		 * found empty wakes the client again when something comes) */
		if (c->conn && !c->out.n && (c->bus->on_kernel ? c->kqueue_drained : !kdbus_conn_has_messages(c->conn)))
			break;
	}
	client_update_events(c);
	return;
fail:
	c->bus->hooks->close(c, r == -EPIPE || r == -ECONNRESET ? "peer closed" : "write failed");
}

/* ---- input -------------------------------------------------------------- */

static __attribute__((noinline)) void client_set_events(Client *c, bool want_read, bool want_write) {
	c->want_write = want_write;
	c->want_read = want_read;
	event_del(c->ev);
	if (!want_read && !want_write)
		return;
	event_assign(c->ev, c->bus->base, c->fd, EV_PERSIST | (want_read ? EV_READ : 0) | (want_write ? EV_WRITE : 0),
		     event_get_callback(c->ev), c);
	event_add(c->ev, NULL);
}

/* client_update_events() while input is held (or has just resumed) */
static __attribute__((noinline)) void client_update_held_events(Client *c, bool want_write) {
	/* held input resumes once the core says the client's messages in
	 * flight dropped below the limits (it wakes the client then) */
	if (c->in.state == CLIENT_INPUT_HELD && !kdbus_conn_inflight_full(c->conn))
		c->in.state = CLIENT_INPUT_RESUMED;
	bool want_read = c->in.state != CLIENT_INPUT_HELD && c->in.state != CLIENT_INPUT_YIELDED;
	if (want_write != c->want_write || want_read != c->want_read)
		client_set_events(c, want_read, want_write);
	/* what was read while held is dispatched first, whether or not more
	 * comes (client_on_event(), which may have been busy writing) */
	if (c->in.state == CLIENT_INPUT_RESUMED)
		event_active(c->ev, EV_READ, 0);
}

void client_update_events(Client *c) {
	size_t pending = 0;
	if (c->auth)
		(void) auth_output(c->auth, &pending);
	/* a client on the ready list is flushed before the loop polls again
	 * (bus_on_ready()), which comes back here: no EV_WRITE for that */
	bool want_write = (c->out.n > 0 && !list_is_linked(&c->ready_link)) || pending > 0 || c->out_held;
	if (_unlikely_(c->in.state != CLIENT_INPUT_READ)) {
		client_update_held_events(c, want_write);
		return;
	}
	if (want_write == c->want_write && c->want_read)
		return;
	client_set_events(c, true, want_write);
}

static int client_reserve(Client *c, size_t need) {
	if (c->in.cap - c->in.len >= need)
		return 0;
	if (!c->in.buf && need <= CLIENT_READ_MIN && c->bus->rbuf_pool->spare) {
		c->in.buf = TAKE_PTR(c->bus->rbuf_pool->spare);
		c->in.handle = TAKE_PTR(c->bus->rbuf_pool->spare_handle);
		c->in.cap = CLIENT_READ_MIN;
		return 0;
	}
	size_t cap = c->in.cap ? c->in.cap : CLIENT_READ_MIN;
	while (cap - c->in.len < need)
		cap *= 2;
	return client_rbuf_move(c, cap, 0, false);
}

/*
 * An idle connection holds no read buffer: once everything read is
 * processed the buffer goes back to the bus, for the next client that
 * reads (one spare; any other is freed).  dbus-broker's idle connections
 * cost about 3 KiB; a 64 KiB buffer per connection, even mostly untouched,
 * would cost more.  Only buffers of the default size go back.
 */
static void client_release_rbuf(Client *c) {
	/* a larger buffer stays: the client sends large messages, which
	 * would otherwise be copied into a grown buffer every time
	 * (client_process_input() shrinks it past CLIENT_RBUF_KEEP) */
	if (!c->in.buf || c->in.len || c->in.cap != CLIENT_READ_MIN)
		return;
	if (!c->bus->rbuf_pool->spare) {
		c->bus->rbuf_pool->spare = c->in.buf;
		c->bus->rbuf_pool->spare_handle = c->in.handle;
	} else {
		client_rbuf_free(c->bus, c->in.buf, c->in.handle);
	}
	c->in.buf = NULL;
	c->in.handle = NULL;
	c->in.cap = 0;
}

static void client_close_fds(int *fds, size_t n) {
	for (size_t i = 0; i < n; i++)
		safe_close(fds[i]);
}

/*
 * read once; 0 on EOF, -EAGAIN when drained, > 0 bytes read.
 *
 * File descriptors are taken as libdbus's transport and loader take
 * them (dbus-transport-socket.c do_reading(), dbus-message.c
 * the loader's get_buffer()): not at all before authentication
 * or without NEGOTIATE_UNIX_FD (a plain read, the kernel closes them);
 * at most max_message_unix_fds pending at a time, more in one read is an
 * error; and while fds are pending, only the rest of the current message
 * is read, without fds.
 */
/* how much the next read may take, and whether fds may come with it */
static size_t client_read_room(Client *c, bool *ret_take_fds) {
	size_t room = c->in.cap - c->in.len;
	bool take_fds = c->unix_fd && (c->state == CLIENT_AWAIT_HELLO || c->state == CLIENT_ACTIVE ||
				       c->state == CLIENT_MONITOR);

	if (take_fds && c->in.n_fds && c->in.len) {
		size_t total = 0;

		if (c->in.len < WIRE_FIXED_HEADER_SIZE)
			total = WIRE_FIXED_HEADER_SIZE;
		else if (wire_frame_size(c->in.buf, c->in.len, c->bus->limits.max_message_size, &total) < 0)
			total = 0;	/* invalid: the connection goes anyway */
		if (total > c->in.len) {
			room = MIN(room, total - c->in.len);
			take_fds = false;
		}
	}
	*ret_take_fds = take_fds;
	return room;
}

/* the fds that came with a read (@mh) join the pending ones.  Return: 0,
 * -EMFILE (the daemon is short of fds), -ENOMEM, -ENOSPC (more came than
 * there was room for); the fds are closed on error */
static int client_read_fds(Client *c, struct msghdr *mh) {
	for (struct cmsghdr *cm = mh->msg_controllen ? CMSG_FIRSTHDR(mh) : NULL; cm; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int *fds = (int *) CMSG_DATA(cm);
		int *nf;

		/* more than there was room for: libdbus closes what it got
		 * and takes the read as failed (CVE-2020-12049) */
		if (mh->msg_flags & MSG_CTRUNC) {
			client_close_fds(fds, n);
			continue;
		}
		/* the last part of the fd table is kept for new connections,
		 * the driver and root: the lowest free fd is taken, so an fd
		 * there means the rest is full */
		for (size_t i = 0; i < n; i++)
			if (fds[i] >= c->bus->fd_reserve_start && !(c->is_unix && c->creds.uid == 0)) {
				log_warning("Connection \"%s\" (uid=%u pid=%d) sent unix fds while the daemon is "
					    "short of fds, closing it", client_name(c), (unsigned) c->creds.uid,
					    (int) c->creds.pid);
				client_close_fds(fds, n);
				return -EMFILE;
			}
		nf = realloc(c->in.fds, (c->in.n_fds + n) * sizeof(int));
		if (!nf) {
			client_close_fds(fds, n);
			return -ENOMEM;
		}
		c->in.fds = nf;
		memcpy(c->in.fds + c->in.n_fds, fds, n * sizeof(int));
		c->in.n_fds += n;
	}
	return mh->msg_flags & MSG_CTRUNC ? -ENOSPC : 0;
}

static ssize_t client_read_once(Client *c, size_t want) {
	union {
		struct cmsghdr cm;
		uint8_t buf[CMSG_SPACE(sizeof(int) * CLIENT_MAX_FDS_PER_READ)];
	} control;
	struct iovec iov;
	struct msghdr mh = {};
	bool take_fds;
	ssize_t k;
	int r;

	r = client_reserve(c, want);
	if (r < 0)
		return r;
	iov.iov_base = c->in.buf + c->in.len;
	iov.iov_len = client_read_room(c, &take_fds);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (take_fds) {
		uint64_t max = c->bus->limits.max_message_unix_fds;
		size_t space = max > c->in.n_fds ? MIN(max - c->in.n_fds, (uint64_t) CLIENT_MAX_FDS_PER_READ) : 0;

		mh.msg_control = control.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * space);
	}
	k = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (k < 0)
		return errno == EINTR ? -EAGAIN : -errno;
	/* without take_fds, fds that came along are closed: MSG_CTRUNC says so */
	if (take_fds) {
		r = client_read_fds(c, &mh);
		if (r < 0)
			return r;
	}
	c->in.len += k;
	return k;
}

/* the nonce of a nonce-tcp connection (out of line: its buffer would cost
 * every read a stack canary).  Return: 1 once it came and was right (the
 * client goes on to SASL), 0 while it is not all there, -EBADMSG when
 * wrong, -ECONNRESET when the peer went before sending it */
static _noinline_ int client_read_nonce(Client *c) {
	uint8_t buf[16];
	ssize_t k = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_PEEK);

	if (k < 0 && errno == EAGAIN)
		return 0;
	if (k < 16)
		return k > 0 ? 0 : -ECONNRESET;	/* wait for the whole nonce */
	(void) recv(c->fd, buf, 16, MSG_DONTWAIT);
	if (memcmp(buf, c->nonce, 16) != 0)
		return -EBADMSG;
	c->bus->hooks->nonce_accepted(c);
	return 1;
}

/* a read failed with @r (out of line: the text's buffer would cost every
 * read a stack canary) */
static _noinline_ void client_close_read_failed(Client *c, int r) {
	char why[64];

	snprintf(why, sizeof(why), "read failed: %s", strerror(-r));
	c->bus->hooks->close(c, why);
}

static void client_on_event(evutil_socket_t fd, short what, void *userdata) {
	Client *c = userdata;
	size_t budget = CLIENT_READ_BUDGET;
	int r;

	if (what & EV_WRITE) {
		if (c->auth) {
			r = c->bus->hooks->auth_step(c);
			if (r < 0)
				return c->bus->hooks->close(c, "authentication failed");
		} else {
			client_flush(c);
			return;	/* c may be gone; reading resumes on the next EV_READ */
		}
	}
	if (!(what & EV_READ))
		return;
	bool resumed = false;
	if (_unlikely_(c->in.state != CLIENT_INPUT_READ)) {
		if (c->in.state == CLIENT_INPUT_HELD || c->in.state == CLIENT_INPUT_YIELDED)
			return;
		/* what was read while held first */
		c->in.state = CLIENT_INPUT_READ;
		resumed = c->in.len > 0;
	}

	while (budget > 0 && c->in.state == CLIENT_INPUT_READ) {
		ssize_t k = 0;

		if (_unlikely_(resumed)) {
			/* k = 0: what comes next waits for the next EV_READ */
			resumed = false;
			goto process;
		}
		if (c->state == CLIENT_NONCE) {
			r = client_read_nonce(c);
			if (r < 0)
				return c->bus->hooks->close(c, r == -EBADMSG ? "wrong nonce" : "nonce missing");
			if (r == 0)
				return;
			continue;
		}

		k = client_read_once(c, c->state == CLIENT_AUTH ? 512 : CLIENT_READ_MIN / 4);
		if (k == -EAGAIN)
			break;
		if (k == 0 || k == -ECONNRESET)
			return c->bus->hooks->close(c, "peer closed");
		if (k < 0)
			return client_close_read_failed(c, (int) k);
		budget = budget > (size_t) k ? budget - k : 0;

		if (c->state == CLIENT_AUTH) {
			r = c->bus->hooks->auth_step(c);
			if (r < 0)
				return c->bus->hooks->close(c, "authentication failed");
			if (c->state == CLIENT_AUTH)
				continue;
		}
process:
		r = client_process_input(c);
		if (r < 0)
			return; /* closed */
		if ((size_t) k < c->in.cap - (c->in.len - k) && c->state != CLIENT_AUTH)
			break;	/* short read: drained for now */
	}
	client_release_rbuf(c);
	client_update_events(c);
}

void client_start(Client *c) {
	client_on_event(c->fd, EV_READ, c);
}

/*
 * On kdbus.ko a receiver's queue takes at most 256 messages of one user
 * (the final ABI's quota), and what one read gave is dispatched at once:
 * a burst of signals would be dropped for subscribers whose queues the
 * daemon had no turn to empty.  After CLIENT_KERNEL_INPUT_BATCH messages
 * the client's input waits until the loop has polled (a zero timeout runs
 * after the poll's events): the receivers' kdbus fds are served first.
 */
static _noinline_ void client_yield_input(Client *c) {
	c->in.state = CLIENT_INPUT_YIELDED;
	bus_schedule_yield(c->bus, c);
}

void client_resume_yielded(Client *c) {
	list_unlink(&c->yield_link);
	if (c->in.state != CLIENT_INPUT_YIELDED)
		return;
	c->in.state = CLIENT_INPUT_RESUMED;
	client_on_event(c->fd, EV_READ, c);
}

int client_process_input(Client *c) {
	size_t pos = 0;
	unsigned batch = 0;
	int r;

	while (c->in.state != CLIENT_INPUT_HELD &&
	       (c->state == CLIENT_AWAIT_HELLO || c->state == CLIENT_ACTIVE || c->state == CLIENT_MONITOR)) {
		size_t total;
		r = wire_frame_size(c->in.buf + pos, c->in.len - pos, c->bus->limits.max_message_size, &total);
		if (r < 0) {
			c->bus->hooks->close(c, r == -EMSGSIZE ? "message too large" : "invalid message framing");
			return r;
		}
		if (total == 0 || total > c->in.len - pos) {
			if (total > c->in.cap - pos) {
				/* make room for the whole message at once */
				memmove(c->in.buf, c->in.buf + pos, c->in.len - pos);
				c->in.len -= pos;
				pos = 0;
				r = client_reserve(c, total - c->in.len);
				if (r < 0) {
					c->bus->hooks->close(c, "out of memory");
					return r;
				}
			}
			break;
		}
		if (_unlikely_(c->bus->on_kernel) && ++batch > CLIENT_KERNEL_INPUT_BATCH) {
			client_yield_input(c);
			break;
		}
		if (c->bus->hooks->dispatch(c, c->in.buf + pos, total) == DISPATCH_CLOSED)
			return -ECONNRESET;
		pos += total;
		if (c->in.given) {
			/* the core has the buffer now: what follows the message
			 * moves to a new one, as large (the next message is
			 * likely as large) */
			c->in.given = false;
			r = client_rbuf_move(c, c->in.cap, pos, true);
			if (r < 0) {
				c->bus->hooks->close(c, "out of memory");
				return r;
			}
			pos = 0;
		}
	}
	if (pos) {
		memmove(c->in.buf, c->in.buf + pos, c->in.len - pos);
		c->in.len -= pos;
	}
	if (c->state == CLIENT_ACTIVE || c->state == CLIENT_AWAIT_HELLO)
		client_update_fd_timer(c);
	/* a grown buffer shrinks back once it holds little (or stays) */
	if (c->in.cap > CLIENT_RBUF_KEEP && c->in.len < CLIENT_READ_MIN)
		(void) client_rbuf_move(c, CLIENT_READ_MIN, 0, false);
	return 0;
}

void client_wakeup(KdbusConn *conn, void *userdata) {
	Client *c = userdata;
	bus_schedule_ready(c->bus, c);
}

/* a limit in ms as µs, saturating far beyond any real deadline */
static uint64_t client_ms_to_us(uint64_t ms) {
	return ms > UINT64_C(1) << 52 ? UINT64_C(1) << 62 : ms * 1000;
}

/* (out of line: its timespec would cost its callers on the message path a
 * stack canary; it is read only when a deadline changes) */
_noinline_ static uint64_t client_now(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

/* the timer for @deadline (out of line: its timeval would cost every
 * client_arm_timer() a stack canary, and the deadline rarely changes) */
static _noinline_ void client_arm_timer_at(Client *c, uint64_t deadline, uint64_t now) {
	if (!now)
		now = client_now();
	uint64_t d = deadline > now ? deadline - now : 0;
	struct timeval tv = { .tv_sec = (time_t) (d / 1000000), .tv_usec = (suseconds_t) (d % 1000000) };
	evtimer_add(c->timers.ev, &tv);
}

/* arm the timer for the earliest deadline, or disarm it */
static void client_arm_timer(Client *c, uint64_t now) {
	uint64_t d = c->timers.hello;

	if (c->timers.fds && (!d || c->timers.fds < d))
		d = c->timers.fds;
	if (c->timers.stall && (!d || c->timers.stall < d))
		d = c->timers.stall;
	if (d == c->timers.armed_at || !c->timers.ev)
		return;
	c->timers.armed_at = d;
	if (!d) {
		event_del(c->timers.ev);
		return;
	}
	client_arm_timer_at(c, d, now);
}

int client_events_new(Client *c) {
	Bus *bus = c->bus;

	c->ev = event_new(bus->base, c->fd, EV_READ | EV_PERSIST, client_on_event, c);
	c->want_read = true;
	c->timers.ev = evtimer_new(bus->base, client_on_timeout, c);
	if (!c->ev || !c->timers.ev)
		return -ENOMEM;
	event_add(c->ev, NULL);
	/* dbus-daemon closes a connection that has not said Hello
	 * auth_timeout after it was accepted */
	c->timers.hello = client_now() + client_ms_to_us(bus->limits.auth_timeout);
	if (!c->timers.hello)
		c->timers.hello = 1;
	client_arm_timer(c, 0);
	return 0;
}

void client_events_free(Client *c) {
	if (c->timers.ev)
		event_free(c->timers.ev);
	c->timers.ev = NULL;
	if (c->ev)
		event_free(c->ev);
	c->ev = NULL;
}

static void client_on_timeout(evutil_socket_t fd, short what, void *userdata) {
	Client *c = userdata;
	uint64_t now = client_now();

	c->timers.armed_at = 0;
	if (c->timers.hello && c->timers.hello <= now) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		double elapsed = (double) (ts.tv_sec - c->connect_time.tv_sec) * 1000 +
				 (double) (ts.tv_nsec - c->connect_time.tv_nsec) / 1e6;
		log_warning("Connection has not authenticated soon enough, closing it (auth_timeout=%" PRIu64
			    "ms, elapsed: %.0fms)", c->bus->limits.auth_timeout, elapsed);
		c->bus->hooks->close(c, "authentication timed out");
		return;
	}
	if (c->timers.fds && c->timers.fds <= now) {
		/* dbus-daemon: a connection that keeps fds without the rest
		 * of their message for pending_fd_timeout is dropped */
		log_warning("Connection \"%s\" (%s) has had Unix fds pending for too long, closing it "
			    "(pending_fd_timeout=%" PRIu64 " ms)", c->unique_name_len ? c->unique_name : "(null)",
			    client_loginfo(c), c->bus->limits.pending_fd_timeout);
		c->bus->hooks->close(c, "file descriptors pending for too long");
		return;
	}
	if (c->timers.stall && c->timers.stall <= now) {
		/* not a dbus-daemon message: debug only */
		log_debug("Connection \"%s\" (%s) has sent %zu bytes of a message and nothing "
			  "more for too long, closing it (pending_fd_timeout=%" PRIu64 " ms)", client_name(c),
			  client_loginfo(c), c->in.len, c->bus->limits.pending_fd_timeout);
		c->bus->hooks->close(c, "partial message pending for too long");
		return;
	}
	client_arm_timer(c, now);
}

/*
 * the deadlines after the input was processed: pending fds get
 * pending_fd_timeout from when they arrived (dbus-daemon's
 * check_pending_fds_cb(): the timer starts when the count leaves 0 and
 * stops when it is 0 again; uid 0 is immune); and (an extension) a
 * partial message that makes no progress for as long is dropped, so that
 * a peer that stops in the middle of a message does not keep its buffer
 * forever.  Hello ends the auth_timeout.
 */
static void client_update_fd_timer(Client *c) {
	/* (not while held: the bus does not read, so the fds and bytes wait
	 * for it, not for the client; they start again when it reads) */
	bool held = c->in.state == CLIENT_INPUT_HELD;
	bool fds = c->in.n_fds > 0 && !(c->is_unix && c->creds.uid == 0) && !held;
	bool partial = c->in.len > 0 && !held;
	bool progress = partial && (c->in.len != c->timers.stall_rlen || c->stats.in_messages != c->timers.stall_msgs);
	uint64_t now = 0;

	if (c->timers.hello && c->state != CLIENT_AWAIT_HELLO)
		c->timers.hello = 0;
	if (fds && !c->timers.fds)
		c->timers.fds = (now = client_now()) + client_ms_to_us(c->bus->limits.pending_fd_timeout);
	else if (!fds)
		c->timers.fds = 0;
	if (progress)
		c->timers.stall = (now ? now : (now = client_now())) +
				   client_ms_to_us(c->bus->limits.pending_fd_timeout);
	else if (!partial)
		c->timers.stall = 0;
	c->timers.stall_rlen = c->in.len;
	c->timers.stall_msgs = c->stats.in_messages;
	client_arm_timer(c, now);
}
