// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pool.c - a connection's receive pool: a shmem file the owner maps
 * read-only, cut into slices (received messages, query results).
 *
 * The slices tile the pool in offset order; allocation is first fit with
 * splitting, release merges free neighbours.  A slice is owned by
 * reference, never by its offset: the command that allocated it holds a
 * kernel reference until it is done with it, a queue entry owns it while
 * it is "queued", and userspace owns it while it is "public" (until FREE).
 * It returns to the free space when it has none of these owners, so an
 * error path never has to find a slice again by its offset.
 *
 * Half of the pool is the owner's: the other half is all that messages
 * from other connections ("accounted" slices, until they are received)
 * may take, and each sending user only a share of that (connection.c,
 * kdbus_conn_quota_charge()).
 *
 * The bytes are copied with the pages of the shmem file in hand, never
 * through the VFS write path: a write on behalf of a sender must not
 * depend on the sender's RLIMIT_FSIZE or signals, and never touches user
 * memory (what a sender sends is in kernel memory by then).  Every call
 * here is made with the owning connection's lock held.
 */
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>

#include "internal.h"

struct kdbus_slice {
	struct list_head entry;		/* in pool->slices, by offset */
	size_t off, size;
	unsigned int kernel_refs;	/* commands in flight that hold it */
	bool free;
	bool public;			/* userspace may FREE it */
	bool queued;			/* a queue entry owns it */
	bool accounted;			/* in the incoming half (pool->accounted) */
};

struct kdbus_pool {
	struct file *f;
	size_t size;
	size_t busy;			/* bytes in non-free slices */
	size_t accounted;		/* bytes in accounted slices */
	struct list_head slices;
};

struct kdbus_pool *kdbus_pool_new(const char *name, size_t size)
{
	struct kdbus_pool *pool;
	struct kdbus_slice *s;
	struct file *f;

	pool = kzalloc(sizeof(*pool), GFP_KERNEL_ACCOUNT);
	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!pool || !s) {
		kfree(s);
		kfree(pool);
		return ERR_PTR(-ENOMEM);
	}
	f = shmem_file_setup(name, size, VM_NORESERVE);
	if (IS_ERR(f)) {
		kfree(s);
		kfree(pool);
		return ERR_CAST(f);
	}
	pool->f = f;
	pool->size = size;
	INIT_LIST_HEAD(&pool->slices);
	s->off = 0;
	s->size = size;
	s->free = true;
	list_add(&s->entry, &pool->slices);
	return pool;
}

void kdbus_pool_free(struct kdbus_pool *pool)
{
	struct kdbus_slice *s, *tmp;

	if (!pool)
		return;
	list_for_each_entry_safe(s, tmp, &pool->slices, entry)
		kfree(s);
	fput(pool->f);
	kfree(pool);
}

size_t kdbus_pool_size(const struct kdbus_pool *pool) { return pool->size; }
size_t kdbus_pool_accounted(const struct kdbus_pool *pool) { return pool->accounted; }

/**
 * kdbus_pool_slice_alloc() - take @size bytes of the pool
 * @pool:	the pool
 * @size:	bytes wanted (rounded up to 8)
 * @accounted:	a message from another connection: it counts against the
 *		incoming half until kdbus_pool_slice_unaccount()
 *
 * Return: the slice with one kernel reference (kdbus_pool_slice_put()),
 * ERR_PTR(-ENOBUFS) when nothing fits, -ENOMEM.
 */
struct kdbus_slice *kdbus_pool_slice_alloc(struct kdbus_pool *pool, size_t size, bool accounted)
{
	struct kdbus_slice *s, *rest;

	size = KDBUS_ALIGN8(size);
	if (size == 0 || size > pool->size - pool->busy)
		return ERR_PTR(-ENOBUFS);
	list_for_each_entry(s, &pool->slices, entry) {
		if (!s->free || s->size < size)
			continue;
		if (s->size > size) {
			rest = kzalloc(sizeof(*rest), GFP_KERNEL_ACCOUNT);
			if (!rest)
				return ERR_PTR(-ENOMEM);
			rest->off = s->off + size;
			rest->size = s->size - size;
			rest->free = true;
			list_add(&rest->entry, &s->entry);
			s->size = size;
		}
		s->free = false;
		s->public = false;
		s->queued = false;
		s->kernel_refs = 1;
		s->accounted = accounted;
		pool->busy += s->size;
		if (accounted)
			pool->accounted += s->size;
		return s;
	}
	return ERR_PTR(-ENOBUFS);
}

static void kdbus_slice_merge(struct kdbus_slice *s, struct kdbus_slice *next)
{
	s->size += next->size;
	list_del(&next->entry);
	kfree(next);
}

/* the slice has no owner left: back to the free space */
static void kdbus_pool_slice_maybe_free(struct kdbus_pool *pool, struct kdbus_slice *s)
{
	struct kdbus_slice *n;

	if (s->kernel_refs || s->public || s->queued)
		return;
	kdbus_pool_slice_unaccount(pool, s);
	s->free = true;
	pool->busy -= s->size;
	if (!list_is_last(&s->entry, &pool->slices)) {
		n = list_next_entry(s, entry);
		if (n->free)
			kdbus_slice_merge(s, n);
	}
	if (!list_is_first(&s->entry, &pool->slices)) {
		n = list_prev_entry(s, entry);
		if (n->free)
			kdbus_slice_merge(n, s);
	}
}

/* another kernel reference, for a command that gives up the lock and
 * needs the slice afterwards */
void kdbus_pool_slice_get(struct kdbus_slice *s)
{
	s->kernel_refs++;
}

/* drop a kernel reference */
void kdbus_pool_slice_put(struct kdbus_pool *pool, struct kdbus_slice *s)
{
	if (!s)
		return;
	s->kernel_refs--;
	kdbus_pool_slice_maybe_free(pool, s);
}

/* userspace may FREE it from now on */
void kdbus_slice_publish(struct kdbus_slice *s)
{
	s->public = true;
}

/* userspace's ownership ends (FREE, or it could not be told the offset) */
void kdbus_pool_slice_unpublish(struct kdbus_pool *pool, struct kdbus_slice *s)
{
	s->public = false;
	kdbus_pool_slice_maybe_free(pool, s);
}

void kdbus_slice_set_queued(struct kdbus_slice *s)
{
	s->queued = true;
}

/* the queue entry's ownership ends */
void kdbus_pool_slice_dequeue(struct kdbus_pool *pool, struct kdbus_slice *s)
{
	s->queued = false;
	kdbus_pool_slice_maybe_free(pool, s);
}

/* a received message is the owner's: it no longer counts as incoming */
void kdbus_pool_slice_unaccount(struct kdbus_pool *pool, struct kdbus_slice *s)
{
	if (s->accounted) {
		s->accounted = false;
		pool->accounted -= s->size;
	}
}

/* the busy slice at @off (public or not), or NULL */
struct kdbus_slice *kdbus_pool_slice_find(struct kdbus_pool *pool, u64 off)
{
	struct kdbus_slice *s;

	list_for_each_entry(s, &pool->slices, entry) {
		if (s->off > off)
			break;
		if (s->off == off && !s->free)
			return s;
	}
	return NULL;
}

size_t kdbus_slice_offset(const struct kdbus_slice *s) { return s->off; }
size_t kdbus_slice_size(const struct kdbus_slice *s) { return s->size; }
bool kdbus_slice_is_public(const struct kdbus_slice *s) { return s->public; }

/*
 * Copy between kernel memory and the pool, a page at a time, with the
 * page of the shmem file in hand (allocated on first use).  @to_pool:
 * the direction.
 */
static int kdbus_pool_copy(struct kdbus_pool *pool, size_t off, void *data, size_t len, bool to_pool)
{
	struct address_space *mapping = pool->f->f_mapping;

	if (off > pool->size || len > pool->size - off)
		return -EFAULT;
	while (len > 0) {
		size_t in_page = offset_in_page(off), n = min_t(size_t, len, PAGE_SIZE - in_page);
		struct page *page;
		void *kaddr;

		page = shmem_read_mapping_page(mapping, off >> PAGE_SHIFT);
		if (IS_ERR(page))
			return PTR_ERR(page);
		kaddr = kmap_local_page(page);
		if (to_pool)
			memcpy(kaddr + in_page, data, n);
		else
			memcpy(data, kaddr + in_page, n);
		kunmap_local(kaddr);
		if (to_pool) {
			flush_dcache_page(page);
			set_page_dirty_lock(page);
		}
		mark_page_accessed(page);
		put_page(page);
		off += n;
		data = (u8 *)data + n;
		len -= n;
	}
	return 0;
}

int kdbus_pool_write(struct kdbus_pool *pool, size_t off, const void *data, size_t len)
{
	return kdbus_pool_copy(pool, off, (void *)data, len, true);
}

int kdbus_pool_read(struct kdbus_pool *pool, size_t off, void *data, size_t len)
{
	return kdbus_pool_copy(pool, off, data, len, false);
}

/* map the pool read-only; it can never become writable */
int kdbus_pool_mmap(struct kdbus_pool *pool, struct vm_area_struct *vma)
{
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	vma->vm_flags &= ~VM_MAYWRITE;
	if (vma->vm_pgoff > (pool->size >> PAGE_SHIFT) ||
	    vma->vm_end - vma->vm_start > pool->size - ((size_t)vma->vm_pgoff << PAGE_SHIFT))
		return -EFAULT;
	vma_set_file(vma, pool->f);
	return call_mmap(pool->f, vma);
}
