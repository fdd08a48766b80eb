// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pool.c - a connection's receive pool: a shmem file the owner maps
 * read-only, cut into slices (received messages, query results).
 *
 * The slices tile the pool in offset order; allocation is first fit with
 * splitting, release merges free neighbours.  A slice is "public" while
 * userspace may FREE it and "queued" while a queue entry refers to it; it
 * returns to the free space when it is neither.
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/uio.h>

#include "internal.h"

struct kdbus_slice {
	struct list_head entry;		/* in pool->slices, by offset */
	size_t off, size;
	bool free, public, queued;
};

struct kdbus_pool {
	struct file *f;
	size_t size;
	size_t busy;			/* bytes in non-free slices */
	struct list_head slices;
};

struct kdbus_pool *kdbus_pool_new(const char *name, size_t size)
{
	struct kdbus_pool *pool;
	struct kdbus_slice *s;
	struct file *f;

	pool = kzalloc(sizeof(*pool), GFP_KERNEL);
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!pool || !s)
		goto enomem;
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
enomem:
	kfree(s);
	kfree(pool);
	return ERR_PTR(-ENOMEM);
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

/**
 * kdbus_pool_slice_alloc() - take @size bytes of the pool
 * @pool:	the pool
 * @size:	bytes wanted (rounded up to 8)
 * @msg_quota:	a message from another connection: it may not take more
 *		than half of what is left
 *
 * Return: the slice, ERR_PTR(-ENOBUFS) when nothing fits, -EXFULL when
 * the quota refuses.
 */
struct kdbus_slice *kdbus_pool_slice_alloc(struct kdbus_pool *pool, size_t size, bool msg_quota)
{
	struct kdbus_slice *s, *rest;
	size_t left = pool->size - pool->busy;

	size = KDBUS_ALIGN8(size);
	if (size == 0 || size > left)
		return ERR_PTR(-ENOBUFS);
	if (msg_quota && size > left / 2)
		return ERR_PTR(-EXFULL);
	list_for_each_entry(s, &pool->slices, entry) {
		if (!s->free || s->size < size)
			continue;
		if (s->size > size) {
			rest = kzalloc(sizeof(*rest), GFP_KERNEL);
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
		pool->busy += s->size;
		return s;
	}
	return ERR_PTR(-ENOBUFS);
}

static void kdbus_slice_merge(struct kdbus_pool *pool, struct kdbus_slice *s, struct kdbus_slice *next)
{
	s->size += next->size;
	list_del(&next->entry);
	kfree(next);
}

void kdbus_pool_slice_release(struct kdbus_pool *pool, struct kdbus_slice *s)
{
	struct kdbus_slice *n;

	if (!s || s->free)
		return;
	s->free = true;
	s->public = false;
	s->queued = false;
	pool->busy -= s->size;
	if (!list_is_last(&s->entry, &pool->slices)) {
		n = list_next_entry(s, entry);
		if (n->free)
			kdbus_slice_merge(pool, s, n);
	}
	if (!list_is_first(&s->entry, &pool->slices)) {
		n = list_prev_entry(s, entry);
		if (n->free)
			kdbus_slice_merge(pool, n, s);
	}
}

/* the busy slice starting at @off */
struct kdbus_slice *kdbus_pool_slice_find(struct kdbus_pool *pool, size_t off)
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
void kdbus_slice_set_public(struct kdbus_slice *s, bool public) { s->public = public; }
bool kdbus_slice_is_public(const struct kdbus_slice *s) { return s->public; }
void kdbus_slice_set_queued(struct kdbus_slice *s, bool queued) { s->queued = queued; }
bool kdbus_slice_is_queued(const struct kdbus_slice *s) { return s->queued; }

int kdbus_pool_write(struct kdbus_pool *pool, size_t off, const void *data, size_t len)
{
	loff_t pos = off;
	ssize_t n;

	if (len == 0)
		return 0;
	n = kernel_write(pool->f, data, len, &pos);
	if (n < 0)
		return n;
	return n == len ? 0 : -EFAULT;
}

int kdbus_pool_read(struct kdbus_pool *pool, size_t off, void *data, size_t len)
{
	loff_t pos = off;
	ssize_t n;

	n = kernel_read(pool->f, data, len, &pos);
	if (n < 0)
		return n;
	return n == len ? 0 : -EFAULT;
}

/* copy @len bytes of the caller's memory straight into the pool */
int kdbus_pool_write_user(struct kdbus_pool *pool, size_t off, const void __user *data, size_t len)
{
	struct iov_iter iter;
	struct iovec iov;
	loff_t pos = off;
	ssize_t n;
	int ret;

	if (len == 0)
		return 0;
	ret = import_single_range(WRITE, (void __user *)data, len, &iov, &iter);
	if (ret < 0)
		return ret;
	file_start_write(pool->f);
	n = vfs_iter_write(pool->f, &iter, &pos, 0);
	file_end_write(pool->f);
	if (n < 0)
		return n;
	return n == len ? 0 : -EFAULT;
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
