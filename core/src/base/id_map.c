/* The hash from global ids (id_map.h). */
#include "id_map.h"
#include "base.h"

#include <stdlib.h>
#include <string.h>

static int allocate(id_map *m, uint64_t slots)
{
  m->slots = phew_malloc(slots, sizeof *m->slots);
  if (!m->slots)
    return -1;
  memset(m->slots, 0xff, slots * sizeof *m->slots); /* value -1 everywhere */
  m->mask = slots - 1;
  m->n = 0;
  return 0;
}

int id_map_init(id_map *m, int64_t expected)
{
  uint64_t slots = 64;
  while (slots < 2 * (uint64_t)(expected > 0 ? expected : 0))
    slots <<= 1;
  m->collisions = 0;
  return allocate(m, slots);
}

void id_map_free(id_map *m)
{
  free(m->slots);
  memset(m, 0, sizeof *m);
}

/* The slot of id, or the empty slot where it goes. */
static uint64_t slot_of(id_map *m, int64_t id)
{
  uint64_t s = hash_id(id) & m->mask;
  while (m->slots[s].value >= 0 && m->slots[s].key != id) {
    ++m->collisions;
    s = (s + 1) & m->mask;
  }
  return s;
}

/* Twice the slots, every entry placed again. */
static int grow(id_map *m)
{
  id_map old = *m;
  if (allocate(m, 2 * (old.mask + 1)) != 0) {
    *m = old;
    return -1;
  }
  for (uint64_t s = 0; s <= old.mask; ++s)
    if (old.slots[s].value >= 0) {
      m->slots[slot_of(m, old.slots[s].key)] = old.slots[s];
      m->n++;
    }
  free(old.slots);
  return 0;
}

int id_map_insert(id_map *m, int64_t id, int64_t value, int64_t *existing)
{
  uint64_t s = slot_of(m, id);
  if (m->slots[s].value < 0) {
    if (2 * (uint64_t)(m->n + 1) > m->mask + 1) {
      if (grow(m) != 0)
        return -1;
      s = slot_of(m, id);
    }
    m->slots[s] = (id_slot){id, value};
    m->n++;
  }
  *existing = m->slots[s].value;
  return 0;
}
