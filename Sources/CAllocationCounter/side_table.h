#ifndef RLK_SIDE_TABLE_H
#define RLK_SIDE_TABLE_H

// The generations mode's side table: every live block's usable size, site and generation, keyed
// by its address, in memory taken straight from glibc (never through the interposed malloc).

#include <stddef.h>
#include <stdint.h>

void rlk_side_table_insert(void *pointer, size_t usable, uint32_t site);
void rlk_side_table_remove(void *pointer);
uint32_t rlk_side_table_site_count(void);
int64_t rlk_side_table_site_live(uint32_t site);
/// Allocates the buckets (once); returns 0 when glibc had no memory for them.
int rlk_side_table_prepare(void);

#endif
