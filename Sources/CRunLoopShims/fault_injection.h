#ifndef RLK_FAULT_INJECTION_H
#define RLK_FAULT_INJECTION_H

// RLK_FAULT(call): 1 with errno set when a test's plan (rlk_fault_inject) says this system call
// fails now. Without RLK_FAULT_INJECTION (release builds) it is the constant 0, and the
// compiler removes the branch. Private to the shims' .c files.
#ifdef RLK_FAULT_INJECTION
__attribute__((visibility("hidden"))) int rlk_fault_take(int call);
#define RLK_FAULT(call) rlk_fault_take(call)
#else
#define RLK_FAULT(call) 0
#endif

#endif
