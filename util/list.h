/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * list.h - intrusive circular doubly-linked lists (in the spirit of c-list).
 * Objects embed a List link; a List head is a link to itself when empty.
 * list_unlink() re-initialises the node, so unlinking twice is harmless.
 */

#include <stdbool.h>
#include <stddef.h>

#include "util/macro.h"

typedef struct List List;
struct List {
	List *next;
	List *prev;
};

#define LIST_INIT(name) { &(name), &(name) }

static inline void list_init(List *l) {
	l->next = l->prev = l;
}

static inline bool list_is_empty(const List *l) {
	return l->next == l;
}

/* a node is linked when it is not a self-loop (and was initialised) */
static inline bool list_is_linked(const List *n) {
	return n->next && n->next != n;
}

static inline void list_link_before(List *where, List *n) {
	n->prev = where->prev;
	n->next = where;
	where->prev->next = n;
	where->prev = n;
}

static inline void list_link_tail(List *head, List *n) {
	list_link_before(head, n);
}

static inline void list_link_front(List *head, List *n) {
	list_link_before(head->next, n);
}

static inline void list_unlink(List *n) {
	if (n->next) {
		n->prev->next = n->next;
		n->next->prev = n->prev;
	}
	n->next = n->prev = n;
}

/* move every node of @from to the tail of @to, leaving @from empty */
static inline void list_splice_tail(List *to, List *from) {
	if (list_is_empty(from))
		return;
	from->next->prev = to->prev;
	to->prev->next = from->next;
	from->prev->next = to;
	to->prev = from->prev;
	list_init(from);
}

#define list_entry(ptr, type, member) container_of(ptr, type, member)
#define list_first_entry(head, type, member) \
	(list_is_empty(head) ? NULL : list_entry((head)->next, type, member))
#define list_last_entry(head, type, member) \
	(list_is_empty(head) ? NULL : list_entry((head)->prev, type, member))

#define list_for_each(iter, head) \
	for (List *iter = (head)->next; iter != (head); iter = iter->next)

#define list_for_each_entry(e, head, member)                                \
	for (e = list_entry((head)->next, __typeof__(*e), member);          \
	     &e->member != (head);                                          \
	     e = list_entry(e->member.next, __typeof__(*e), member))

#define list_for_each_entry_safe(e, n, head, member)                        \
	for (e = list_entry((head)->next, __typeof__(*e), member),          \
	     n = list_entry(e->member.next, __typeof__(*e), member);        \
	     &e->member != (head);                                          \
	     e = n, n = list_entry(n->member.next, __typeof__(*e), member))
