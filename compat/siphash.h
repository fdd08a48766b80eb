/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * siphash.h - SipHash-2-4 (Aumasson, Bernstein), 64-bit output, as used by
 * systemd's kdbus bloom filters; one-shot and streaming.
 */

#include <stddef.h>
#include <stdint.h>

/* streaming state; treat as opaque */
typedef struct SipHash {
	uint64_t v0, v1, v2, v3;
	uint64_t tail;		/* pending bytes, little endian */
	size_t len;		/* bytes so far */
} SipHash;

/**
 * siphash24_init() - start a hash
 * @s:		the state
 * @key:	the 128-bit key, as 16 bytes (k0 and k1 little endian)
 */
void siphash24_init(SipHash *s, const uint8_t key[16]);

/**
 * siphash24_update() - hash more bytes
 * @s:		the state
 * @data:	the bytes
 * @len:	how many
 */
void siphash24_update(SipHash *s, const void *data, size_t len);

/**
 * siphash24_final() - finish
 * @s:		the state (not usable afterwards)
 *
 * Return: the hash; its canonical byte serialisation is little endian.
 */
uint64_t siphash24_final(SipHash *s);

/**
 * siphash24() - SipHash-2-4 of a buffer
 * @data:	the input
 * @len:	its length
 * @key:	the key, as for siphash24_init()
 *
 * Return: the hash.
 */
uint64_t siphash24(const void *data, size_t len, const uint8_t key[16]);
