/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz-config.c - libFuzzer target for policy/config.c, the busconfig loader.
 *
 * The input is loaded as a configuration file from memory.  Includes are
 * treated as missing, no directory is created and users/groups are
 * resolved by a fixed table (root/0 only), so a run touches no files and
 * is deterministic.  A loaded configuration is checked for consistency,
 * every rule is formatted back to XML, and the policy is compiled and
 * asked a few questions.
 */

#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/config.h"
#include "policy/policy.h"
#include "util/macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int lookup_user(const char *name, uid_t *ret, void *userdata) {
	if (strcmp(name, "root") == 0 || strcmp(name, "0") == 0) {
		*ret = 0;
		return 0;
	}
	return -ESRCH;
}

static int lookup_group(const char *name, gid_t *ret, void *userdata) {
	if (strcmp(name, "root") == 0 || strcmp(name, "0") == 0) {
		*ret = 0;
		return 0;
	}
	return -ESRCH;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	static const BusConfigLoadOptions opts = {
		.flags = BUS_CONFIG_LOAD_NO_INCLUDES | BUS_CONFIG_LOAD_NO_MKDIR,
		.selinux_enabled = -1,
		.lookup_user = lookup_user,
		.lookup_group = lookup_group,
	};
	BusConfig *c = NULL;
	char *err = NULL;
	int r;

	r = bus_config_load_string((const char *)data, size, "/fuzz/fuzz.conf", &opts, &c, &err);
	if (r < 0) {
		assert(!c);
		assert(r == -ENOMEM || err);
		free(err);
		return 0;
	}
	assert(c && !err);
	assert(c->listen && c->listen[0]);
	assert(c->files && strcmp(c->files[0], "/fuzz/fuzz.conf") == 0);
	assert(c->limits.reply_timeout >= -1);
	for (size_t i = 0; i < c->n_servicedirs; i++)
		assert(c->servicedirs[i]);
	for (size_t i = 0; i < c->n_policies; i++) {
		const BusConfigPolicy *p = &c->policies[i];

		assert(p->file == c->files[0]);
		for (size_t j = 0; j < p->n_rules; j++) {
			const BusConfigRule *rule = &p->rules[j];
			char *s = NULL;

			assert(rule->min_fds <= 33554432 && rule->max_fds <= 33554432);
			assert(!(rule->destination_is_prefix && !rule->destination));
			if (bus_config_rule_format(rule, &s) == 0) {
				assert(s[0] == '<');
				free(s);
			}
		}
	}

	{
		static const PolicyLookup lookup = { .lookup_user = lookup_user, .lookup_group = lookup_group };
		static const gid_t gids[] = { 0, 100 };
		PolicyIdentity id = { .uid = 0, .gids = gids, .n_gids = 2 };
		PolicyMessage m = {
			.type = BUS_CONFIG_MESSAGE_METHOD_CALL, .destination = "org.example.Dest",
			.path = "/", .interface = "org.example.I", .member = "M", .sender = ":1.1",
		};
		const char *const names[] = { ":1.2", "org.example.Dest", NULL };
		PolicySnapshot *s = NULL;
		Policy *p = NULL;
		PolicyDecision d;

		r = policy_new(&p, c, &lookup);
		assert(r == 0 || r == -ENOMEM);
		if (r == 0 && policy_snapshot_new(&s, p, &id) == 0) {
			assert(policy_snapshot_check_own(s, "org.example.Dest", NULL) >= 0);
			assert(policy_snapshot_check_send(s, &m, names, false, &d) >= 0);
			assert(!d.rule || d.rule->type == BUS_CONFIG_RULE_SEND);
			m.has_reply_serial = true;
			m.type = BUS_CONFIG_MESSAGE_ERROR;
			assert(policy_snapshot_check_receive(s, &m, NULL, true, true, &d) >= 0);
			assert(!d.rule || d.rule->type == BUS_CONFIG_RULE_RECEIVE);
			assert(policy_check_connect(p, 1000, gids, 2, 0, NULL) >= 0);
		}
		policy_snapshot_free(s);
		policy_unref(p);
	}
	bus_config_free(c);
	return 0;
}
