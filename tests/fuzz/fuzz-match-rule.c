/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-match-rule.c - libFuzzer target for compat/match-rule.c.
 *
 * The input up to the first NUL byte is an AddMatch rule; what follows the
 * NUL, if it is a valid message, is matched against it.  A parsed rule is
 * checked for consistency: its canonical string parses again to an equal
 * rule with the same keys, that rule decides every message the same way,
 * and a rule is equal to itself.  Rules longer than the limit must be
 * refused with -E2BIG.
 */

#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compat/match-rule.h"
#include "compat/wire.h"
#include "util/macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool has_name(void *userdata, const char *name) {
	/* a sender/receiver owning every name that starts with "org." */
	return strncmp(name, "org.", 4) == 0;
}

static void check_matches(const MatchRule *a, const MatchRule *b, const uint8_t *m, size_t n) {
	WireHeader h;
	size_t total;
	const uint8_t *body;
	MatchContext ctx[] = {
		{ 0 },
		{ .sender = ":1.7", .sender_has_name = has_name, .receiver = ":1.8",
		  .receiver_has_name = has_name },
		{ .sender = "org.freedesktop.DBus", .eavesdropping = true },
	};

	if (wire_frame_size(m, n, WIRE_MAX_MESSAGE_SIZE, &total) < 0 || total == 0 || total > n)
		return;
	if (wire_header_parse(m, total, &h) < 0)
		return;
	body = m + h.header_len;
	if (wire_body_validate(&h, body, h.body_len) < 0)
		return;
	for (size_t i = 0; i < ELEMENTSOF(ctx); i++)
		assert(match_rule_matches(a, &h, body, &ctx[i]) ==
		       match_rule_matches(b, &h, body, &ctx[i]));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	_cleanup_(match_rule_freep) MatchRule *r = NULL, *r2 = NULL;
	MatchRuleError error;
	const uint8_t *nul;
	size_t rule_len;
	char *s;
	int k;

	if (size > 65536)
		return 0;
	nul = memchr(data, 0, size);
	rule_len = nul ? (size_t)(nul - data) : size;

	memset(error.message, 0xff, sizeof(error.message));
	k = match_rule_parse((const char *)data, size, &r, &error);
	assert(k == 0 || k == -EINVAL || k == -E2BIG || k == -ENOMEM);
	if (rule_len > MATCH_RULE_MAX_LENGTH)
		assert(k == -E2BIG);
	if (k < 0) {
		assert(!r);
		/* a refusal says why, in a NUL-terminated message */
		if (k != -ENOMEM)
			assert(error.message[0] != 0 && memchr(error.message, 0, sizeof(error.message)));
		return 0;
	}

	assert(match_rule_equal(r, r));
	assert(match_rule_get_n_args(r) <= MATCH_RULE_MAX_ARGS);
	for (unsigned i = 0; i < match_rule_get_n_args(r); i++) {
		const char *v = NULL;
		size_t l = 0;
		MatchArgKind kind = match_rule_get_arg(r, i, &v, &l);

		assert(kind == MATCH_ARG_NONE || v);
		if (kind == MATCH_ARG_NAMESPACE)
			assert(i == 0);
	}
	assert(!(match_rule_get_path(r) && match_rule_get_path_namespace(r)));

	s = match_rule_to_string(r);
	if (!s)
		return 0;
	k = match_rule_parse(s, strlen(s), &r2, NULL);
	/* the canonical form of a short rule may be longer than the limit */
	if (k == -E2BIG) {
		assert(strlen(s) > MATCH_RULE_MAX_LENGTH);
		free(s);
		return 0;
	}
	assert(k == 0);
	free(s);
	assert(match_rule_equal(r, r2) && match_rule_equal(r2, r));
	assert((match_rule_get_flags(r) & ~MATCH_RULE_EAVESDROP) == (match_rule_get_flags(r2) & ~MATCH_RULE_EAVESDROP));
	assert(match_rule_get_type(r) == match_rule_get_type(r2));
	assert(match_rule_is_eavesdrop(r) == match_rule_is_eavesdrop(r2));
	assert(match_rule_get_n_args(r) == match_rule_get_n_args(r2));

	if (nul)
		check_matches(r, r2, nul + 1, size - rule_len - 1);
	return 0;
}
