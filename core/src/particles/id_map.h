/* Global particle id -> local index, an open-addressing hash that grows. Internal. */
#ifndef PHEW_PARTICLES_ID_MAP_H
#define PHEW_PARTICLES_ID_MAP_H

#include <stdint.h>

typedef struct id_map {
  int64_t *key;   /* id, or -1 for an empty slot (ids are >= 0) */
  int64_t *value;
  uint64_t mask;
  int64_t n;
} id_map;

int id_map_init(id_map *m, int64_t expected); /* 0, or -1 without memory */
void id_map_free(id_map *m);
/* The value of id, or -1. */
int64_t id_map_find(const id_map *m, int64_t id);
/* Adds id -> value unless id is there; *existing gets the value stored for id (new or old).
 * 0, or -1 without memory. */
int id_map_insert(id_map *m, int64_t id, int64_t value, int64_t *existing);

#endif
