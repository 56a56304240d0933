#include "CPoolThreadWord.h"

_Thread_local uintptr_t rlk_pool_thread_word RLK_POOL_TLS_MODEL = 0;
_Thread_local void *rlk_pool_thread_state RLK_POOL_TLS_MODEL = 0;
void *rlk_pool_page_hook_storage = 0;
