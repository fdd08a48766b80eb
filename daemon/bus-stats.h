/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * bus-stats.h - the bus's Debug.Stats figures, a part of Bus (Bus.stats):
 * the well-known names owned or queued for and the match rules of all
 * clients, and the peaks.  Written only through these functions, read by
 * driver-stats.c.
 */

#include <stdint.h>

typedef struct BusStats {
	uint64_t wk_names;		/* well-known names owned or queued for */
	uint64_t match_rules;
	uint32_t peak_bus_names, peak_bus_names_per_conn;
	uint32_t peak_match_rules, peak_match_rules_per_conn;
} BusStats;

/* a Debug.Stats peak: @peak becomes @v if that is more (saturating) */
static inline void stats_peak(uint32_t *peak, uint64_t v) {
	if (v > *peak)
		*peak = v > UINT32_MAX ? UINT32_MAX : (uint32_t) v;
}

/* a client's count of well-known names went from @before to @now */
static inline void bus_stats_wk_names(BusStats *s, uint32_t before, uint32_t now) {
	s->wk_names = s->wk_names - before + now;
}

/* a name was added: the peaks, with @conn_names those of the connection
 * (its unique name too) and @all the bus's */
static inline void bus_stats_names_peak(BusStats *s, uint64_t conn_names, uint64_t all) {
	stats_peak(&s->peak_bus_names_per_conn, conn_names);
	stats_peak(&s->peak_bus_names, all);
}

/* @n match rules were added (or went, negative) */
static inline void bus_stats_match_rules(BusStats *s, int64_t n) {
	s->match_rules += (uint64_t) n;
}

/* a rule was added: the peaks, with @conn_rules the connection's */
static inline void bus_stats_match_rules_peak(BusStats *s, uint64_t conn_rules) {
	stats_peak(&s->peak_match_rules_per_conn, conn_rules);
	stats_peak(&s->peak_match_rules, s->match_rules);
}
