/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * client-header.c - the headers of the messages clients receive, parsed
 * once for all their receivers: the receivers of one broadcast share one
 * payload, and a stream of like signals shares one header but the serial.
 */

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compat/wire.h"
#include "daemon/bus.h"
#include "daemon/client-internal.h"
#include "daemon/client.h"
#include "util/macro.h"

/*
 * Bus.header_cache.  by_bytes: direct-mapped by a header's bytes without
 * the serial, so like signals share one slot.  by_payload: direct-mapped
 * by the core's payload id (broadcasts in flight are recent), so that the
 * receivers of one message do not even compare bytes.
 *
 * Invalidation: none is needed.  A parse depends on the header's bytes
 * alone, and a by_bytes slot answers only for the very same bytes (the
 * serial aside) and message length; the core never reuses a payload id on
 * a bus, so a by_payload slot answers only for its own payload.  A slot is
 * replaced when another header or payload maps to it (a by_bytes slot then
 * takes a new id); everything goes with the bus.
 */
struct ClientHeaderCache {
	struct {
		uint8_t bytes[256];	/* the header's bytes: the cache key */
		size_t header_len;
		size_t len;
		const uint8_t *data;	/* what h's strings point into */
		uint64_t id;		/* unique per filling: same id, same header */
		WireHeader h;
	} by_bytes[64];
	uint64_t next_id;
	struct {
		uint64_t payload_id;
		uint64_t header_id;
		WireHeader h;
	} by_payload[128];
	WireHeader scratch;	/* the last parse of a payload without id */
	uint64_t scratch_id;
};

int client_header_cache_new(Bus *bus) {
	bus->header_cache = calloc(1, sizeof(*bus->header_cache));
	return bus->header_cache ? 0 : -ENOMEM;
}

void client_header_cache_free(Bus *bus) {
	free(bus->header_cache);
	bus->header_cache = NULL;
}

static void wire_string_rebase(WireString *s, const uint8_t *from, const uint8_t *to) {
	if (s->s)
		s->s = (const char *) to + ((const uint8_t *) s->s - from);
}

/* the cache slot of a header: by its bytes, not its address, and not by
 * the serial (bytes 8..11), so that a stream of like signals shares a slot */
static size_t header_cache_slot(const uint8_t *data, size_t len) {
	uint64_t k = len, w;

	if (len >= 32) {
		memcpy(&w, data + 16, 8);
		k ^= w;
		memcpy(&w, data + 24, 8);
		k ^= w * 31;
	}
	memcpy(&w, data, 8);
	k ^= w << 1;
	k *= 0x9e3779b97f4a7c15ULL;
	return (size_t) (k >> 58);	/* 0..63: ELEMENTSOF(ClientHeaderCache.by_bytes) */
}

int client_header_parse_shared(Bus *bus, const uint8_t *data, size_t len, WireHeader *ret) {
	uint64_t id;
	return client_header_parse_shared_id(bus, data, len, ret, &id);
}

int client_header_parse_shared_id(Bus *bus, const uint8_t *data, size_t len, WireHeader *ret, uint64_t *ret_id) {
	typeof(bus->header_cache->by_bytes[0]) *c;
	int r;

	*ret_id = 0;
	if (len < 16)
		return wire_header_parse_trusted(data, len, ret);
	c = &bus->header_cache->by_bytes[header_cache_slot(data, len)];
	if (c->header_len && c->len == len && len >= c->header_len && memcmp(c->bytes, data, 8) == 0 &&
	    memcmp(c->bytes + 12, data + 12, c->header_len - 12) == 0) {
		*ret = c->h;
		/* only the serial may differ */
		memcpy(&ret->serial, data + 8, 4);
		if (ret->big_endian)
			ret->serial = be32toh(ret->serial);
		else
			ret->serial = le32toh(ret->serial);
		/* the same bytes at another address: the same offsets */
		wire_string_rebase(&ret->path, c->data, data);
		wire_string_rebase(&ret->interface, c->data, data);
		wire_string_rebase(&ret->member, c->data, data);
		wire_string_rebase(&ret->error_name, c->data, data);
		wire_string_rebase(&ret->destination, c->data, data);
		wire_string_rebase(&ret->sender, c->data, data);
		wire_string_rebase(&ret->signature, c->data, data);
		*ret_id = c->id;
		return 0;
	}
	r = wire_header_parse_trusted(data, len, ret);
	if (r < 0)
		return r;
	c->header_len = 0;
	if (ret->header_len <= sizeof(c->bytes)) {
		memcpy(c->bytes, data, ret->header_len);
		c->header_len = ret->header_len;
		c->len = len;
		c->data = data;
		c->h = *ret;
		c->id = ++bus->header_cache->next_id;
		*ret_id = c->id;
	}
	return 0;
}

ClientPayloadHeader client_header_parse_payload(Bus *bus, uint64_t pid, const uint8_t *data, size_t len) {
	ClientHeaderCache *hc = bus->header_cache;
	typeof(hc->by_payload[0]) *ph = &hc->by_payload[pid % ELEMENTSOF(hc->by_payload)];

	if (pid && ph->payload_id == pid)
		/* a broadcast's receivers share one parse */
		return (ClientPayloadHeader) { .h = &ph->h, .id = ph->header_id };
	if (!pid) {
		if (client_header_parse_shared_id(bus, data, len, &hc->scratch, &hc->scratch_id) < 0)
			return (ClientPayloadHeader) {};
		return (ClientPayloadHeader) { .h = &hc->scratch, .id = hc->scratch_id };
	}
	ph->payload_id = 0;
	if (client_header_parse_shared_id(bus, data, len, &ph->h, &ph->header_id) < 0)
		return (ClientPayloadHeader) {};
	ph->payload_id = pid;
	return (ClientPayloadHeader) { .h = &ph->h, .id = ph->header_id };
}
