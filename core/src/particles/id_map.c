/* Global particle id -> local index: linear probing over a power-of-two table kept at most
 * half full. */
#include "id_map.h"
#include "../internal.h"

#include <stdlib.h>
#include <string.h>

static uint64_t slot_of(int64_t id, uint64_t mask) { return hash_id(id) & mask; }

static int allocate(id_map *m, uint64_t slots)
{
  m->key = malloc(slots * sizeof *m->key);
  m->value = malloc(slots * sizeof *m->value);
  if (!m->key || !m->value) {
    free(m->key);
    free(m->value);
    m->key = m->value = NULL;
    return -1;
  }
  memset(m->key, 0xff, slots * sizeof *m->key); /* -1 everywhere */
  m->mask = slots - 1;
  m->n = 0;
  return 0;
}

int id_map_init(id_map *m, int64_t expected)
{
  uint64_t slots = 64;
  while (slots < 2 * (uint64_t)(expected > 0 ? expected : 0))
    slots <<= 1;
  return allocate(m, slots);
}

void id_map_free(id_map *m)
{
  free(m->key);
  free(m->value);
  memset(m, 0, sizeof *m);
}

int64_t id_map_find(const id_map *m, int64_t id)
{
  for (uint64_t s = slot_of(id, m->mask);; s = (s + 1) & m->mask) {
    if (m->key[s] == id)
      return m->value[s];
    if (m->key[s] < 0)
      return -1;
  }
}

int id_map_insert(id_map *m, int64_t id, int64_t value, int64_t *existing)
{
  if (2 * (uint64_t)(m->n + 1) > m->mask + 1) { /* grow: rehash into twice the slots */
    id_map old = *m;
    if (allocate(m, 2 * (old.mask + 1)) != 0) {
      *m = old;
      return -1;
    }
    for (uint64_t s = 0; s <= old.mask; ++s)
      if (old.key[s] >= 0) {
        int64_t ignored;
        id_map_insert(m, old.key[s], old.value[s], &ignored);
      }
    id_map_free(&old);
  }
  uint64_t s = slot_of(id, m->mask);
  while (m->key[s] >= 0 && m->key[s] != id)
    s = (s + 1) & m->mask;
  if (m->key[s] != id) {
    m->key[s] = id;
    m->value[s] = value;
    m->n++;
  }
  *existing = m->value[s];
  return 0;
}
