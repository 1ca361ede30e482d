/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file hashmap.h
 * @brief A small string-keyed hash map (keys are borrowed, not copied).
 *
 * The broker looks up clients by unique bus name and requests by object path on
 * every call; with a thousand clients a list would make each call O(n).
 */
#ifndef GB_HASHMAP_H
#define GB_HASHMAP_H

#include <stddef.h>

typedef struct Hashmap Hashmap;

Hashmap *hashmap_new(void);
void hashmap_free(Hashmap *h);
/** Insert; -EEXIST if the key is present, -ENOMEM. The key must outlive the entry. */
int hashmap_put(Hashmap *h, const char *key, void *value);
void *hashmap_get(const Hashmap *h, const char *key);
void *hashmap_remove(Hashmap *h, const char *key);
size_t hashmap_size(const Hashmap *h);
/** Iterate: start with *state = 0; returns NULL at the end. Do not modify meanwhile. */
void *hashmap_iterate(const Hashmap *h, size_t *state, const char **key);

#endif
