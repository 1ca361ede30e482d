/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "hashmap.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Open addressing with linear probing and tombstones; grows at 70 % load. */
struct Entry {
	const char *key; /* NULL: empty; TOMBSTONE: deleted */
	void *value;
	uint32_t hash;
};

struct Hashmap {
	struct Entry *e;
	size_t cap, n, used; /* used counts tombstones too */
};

static const char tombstone;
#define TOMBSTONE (&tombstone)

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

Hashmap *hashmap_new(void)
{
	Hashmap *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->cap = 16;
	h->e = calloc(h->cap, sizeof(*h->e));
	if (!h->e) {
		free(h);
		return NULL;
	}
	return h;
}

void hashmap_free(Hashmap *h)
{
	if (!h)
		return;
	free(h->e);
	free(h);
}

static struct Entry *find(const Hashmap *h, const char *key, uint32_t hash)
{
	for (size_t i = hash & (h->cap - 1), n = 0; n < h->cap; i = (i + 1) & (h->cap - 1), n++) {
		struct Entry *e = &h->e[i];

		if (!e->key)
			return NULL;
		if (e->key != TOMBSTONE && e->hash == hash && strcmp(e->key, key) == 0)
			return e;
	}
	return NULL;
}

static int grow(Hashmap *h, size_t cap)
{
	struct Entry *old = h->e;
	size_t oldcap = h->cap;

	h->e = calloc(cap, sizeof(*h->e));
	if (!h->e) {
		h->e = old;
		return -ENOMEM;
	}
	h->cap = cap;
	h->used = h->n;
	for (size_t i = 0; i < oldcap; i++) {
		size_t j;

		if (!old[i].key || old[i].key == TOMBSTONE)
			continue;
		for (j = old[i].hash & (cap - 1); h->e[j].key; j = (j + 1) & (cap - 1))
			;
		h->e[j] = old[i];
	}
	free(old);
	return 0;
}

int hashmap_put(Hashmap *h, const char *key, void *value)
{
	uint32_t hash = hash_str(key);
	size_t i;

	if (find(h, key, hash))
		return -EEXIST;
	if ((h->used + 1) * 10 >= h->cap * 7) {
		int r = grow(h, h->n * 2 >= h->cap / 2 ? h->cap * 2 : h->cap);

		if (r < 0)
			return r;
	}
	for (i = hash & (h->cap - 1); h->e[i].key && h->e[i].key != TOMBSTONE; i = (i + 1) & (h->cap - 1))
		;
	if (!h->e[i].key)
		h->used++;
	h->e[i] = (struct Entry){ key, value, hash };
	h->n++;
	return 0;
}

void *hashmap_get(const Hashmap *h, const char *key)
{
	struct Entry *e = find(h, key, hash_str(key));

	return e ? e->value : NULL;
}

void *hashmap_remove(Hashmap *h, const char *key)
{
	struct Entry *e = find(h, key, hash_str(key));
	void *v;

	if (!e)
		return NULL;
	v = e->value;
	e->key = TOMBSTONE;
	e->value = NULL;
	h->n--;
	return v;
}

size_t hashmap_size(const Hashmap *h)
{
	return h->n;
}

void *hashmap_iterate(const Hashmap *h, size_t *state, const char **key)
{
	for (; *state < h->cap; (*state)++) {
		struct Entry *e = &h->e[*state];

		if (e->key && e->key != TOMBSTONE) {
			(*state)++;
			if (key)
				*key = e->key;
			return e->value;
		}
	}
	return NULL;
}
