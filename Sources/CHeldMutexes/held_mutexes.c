#include "CHeldMutexes.h"

static _Thread_local int rlk_held_mutex_count;

int *rlk_held_mutexes(void) { return &rlk_held_mutex_count; }
