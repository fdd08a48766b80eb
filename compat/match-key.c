/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * match-key.c - exact keys of signals and match rules (see match-key.h)
 */

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "compat/match-key.h"
#include "compat/match-rule.h"
#include "compat/siphash.h"

static uint8_t match_key_secret[16];
static pthread_once_t match_key_once = PTHREAD_ONCE_INIT;

static void match_key_init(void) {
	size_t got = 0;

	while (got < sizeof(match_key_secret)) {
		ssize_t k = getrandom(match_key_secret + got, sizeof(match_key_secret) - got, GRND_NONBLOCK);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	if (got < sizeof(match_key_secret)) {
		/* no entropy yet (early boot): still a per-process value */
		struct timespec ts;
		uint64_t v[2];

		clock_gettime(CLOCK_MONOTONIC, &ts);
		v[0] = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30);
		v[1] = (uint64_t)getpid() ^ (uint64_t)(uintptr_t)&ts;
		memcpy(match_key_secret, v, sizeof(v));
	}
}

/* SipHash of "<kind>\0<a>\0<b>" */
static uint64_t match_key(char kind, const char *a, const char *b) {
	SipHash h;

	pthread_once(&match_key_once, match_key_init);
	siphash24_init(&h, match_key_secret);
	siphash24_update(&h, &kind, 1);
	siphash24_update(&h, a, strlen(a) + 1);
	if (b)
		siphash24_update(&h, b, strlen(b) + 1);
	return siphash24_final(&h);
}

size_t match_keys_of_signal(const char *interface, const char *member, uint64_t keys[static MATCH_KEYS_MAX]) {
	size_t n = 0;

	if (interface && member)
		keys[n++] = match_key('p', interface, member);
	if (member)
		keys[n++] = match_key('m', member, NULL);
	if (interface)
		keys[n++] = match_key('i', interface, NULL);
	return n;
}

bool match_key_of_rule(const MatchRule *r, uint64_t *ret) {
	const char *interface = match_rule_get_interface(r), *member = match_rule_get_member(r);

	if (interface && member)
		*ret = match_key('p', interface, member);
	else if (member)
		*ret = match_key('m', member, NULL);
	else if (interface)
		*ret = match_key('i', interface, NULL);
	else
		return false;
	return true;
}
