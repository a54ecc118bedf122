/* The core's one hash table: global id -> value (an index into the caller's arrays), for
 * peaks, graph cells, AMR ghost cells, particles and per-task sums. Linear probing over a
 * power-of-two table of (key, value) slots kept at most half full; it grows, so it never
 * overflows. Keys are any int64; values are >= 0. */
#ifndef PHEW_BASE_ID_MAP_H
#define PHEW_BASE_ID_MAP_H

#include <stdint.h>

/* A hash of a global id whose low bits depend on every bit of the id (splitmix64's
 * finaliser): ids that differ only in high bits must not share a probe run. */
static inline uint64_t hash_id(int64_t id)
{
  uint64_t z = (uint64_t)id;
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

typedef struct id_slot {
  int64_t key;
  int64_t value; /* -1: an empty slot */
} id_slot;

typedef struct id_map {
  id_slot *slots;
  uint64_t mask;      /* number of slots - 1 */
  int64_t n;          /* entries */
  int64_t collisions; /* occupied slots passed while inserting (a statistic) */
} id_map;

/* An empty map with room for `expected` entries before it grows; 0, or -1 without memory. */
int id_map_init(id_map *m, int64_t expected);
void id_map_free(id_map *m);
/* The value of id, or -1. */
static inline int64_t id_map_find(const id_map *m, int64_t id)
{
  for (uint64_t s = hash_id(id) & m->mask;; s = (s + 1) & m->mask) {
    if (m->slots[s].value < 0)
      return -1;
    if (m->slots[s].key == id)
      return m->slots[s].value;
  }
}
/* Adds id -> value (value >= 0) unless id is there; *existing gets the value stored for id
 * (new or old). 0, or -1 without memory (the map is then unchanged). */
int id_map_insert(id_map *m, int64_t id, int64_t value, int64_t *existing);

#endif
