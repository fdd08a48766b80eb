/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-policy-compile.c - libFuzzer target for policy/compile.c.
 *
 * The first input byte picks the compile options (flags and bus uid), the
 * rest is the body of a <busconfig> (policies, mostly), loaded with the
 * fixed users and groups of tests/unit/test-compile.c.  A configuration
 * that loads is compiled and then proven with test-compile.c's crosscheck:
 * for every name whose OWN or TALK the compiler calls exact, the core's
 * answer (the real policy db fed with policy_compiled_build_items()) must
 * equal policy.c's for every identity; for every residual one the core
 * must not deny what policy.c allows.  Every rule must land in exactly one
 * place.  Any difference aborts.
 */

/* reuse test-compile.c's fake user database, core view and crosscheck */
#define main test_compile_main
#include "../unit/test-compile.c"
#undef main

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	static const unsigned flag_sets[] = {
		0,
		POLICY_COMPILE_GROUPS_FROM_USERDB,
		POLICY_COMPILE_TALK_ENTRIES | POLICY_COMPILE_GROUPS_FROM_USERDB,
		POLICY_COMPILE_TALK_ENTRIES | POLICY_COMPILE_ANONYMOUS,
	};
	_cleanup_(bus_config_freep) BusConfig *c = NULL;
	_cleanup_(policy_compiled_freep) PolicyCompiled *pc = NULL;
	_cleanup_free_ char *text = NULL, *err = NULL;
	PolicyCompileOptions o = { .lookup = &lookup };
	const PolicyCompiledRule *rules;
	size_t n_rules, n_config_rules = 0;
	uint8_t mode;
	int r;

	if (size < 1 || size > 8192)
		return 0;
	mode = data[0];
	text = strndup((const char *)data + 1, size - 1);
	if (!text)
		return 0;
	if (load_xml(text, mode & 0x10, &c, &err) < 0)
		return 0;

	o.flags = flag_sets[mode & 3];
	o.bus_uid = (mode & 4) ? MESSAGEBUS : ROOT;
	r = policy_compile(c, &o, &pc);
	assert(r == 0 || r == -ENOMEM);
	if (r < 0)
		return 0;

	/* every rule of a resolvable <policy> lands in exactly one place */
	rules = policy_compiled_rules(pc, &n_rules);
	for (size_t i = 0; i < n_rules; i++) {
		assert(rules[i].place == POLICY_RULE_KDBUS || rules[i].place == POLICY_RULE_RESIDUAL);
		assert(rules[i].text && rules[i].context && rules[i].reason);
		assert(rules[i].policy_index < c->n_policies);
		assert(rules[i].rule_index < c->policies[rules[i].policy_index].n_rules);
		if (i > 0)
			assert(rules[i].policy_index > rules[i - 1].policy_index ||
			       (rules[i].policy_index == rules[i - 1].policy_index &&
				rules[i].rule_index > rules[i - 1].rule_index));
	}
	for (size_t i = 0; i < c->n_policies; i++)
		n_config_rules += c->policies[i].n_rules;
	assert(n_rules <= n_config_rules);

	/* the proof is quadratic in the number of entries: keep runs short */
	if (policy_compiled_n_names(pc) > 24)
		return 0;
	crosscheck(c, pc, "fuzz");
	return 0;
}
