/* shim.h: the shim's life in a process (init.c): start-up, fork, exit. */
#ifndef PREFAULT_SHIM_H
#define PREFAULT_SHIM_H
#include "glue.h"

enum { SHIM_NONE, SHIM_INIT, SHIM_ON, SHIM_PASS };
extern int shim_state;

void shim_init(void);
/* Write this process's report (once; not in a vfork child). */
void shim_report(void);
/* A child of _Fork (no fork handlers ran): the shim is off in it. */
void shim_child_off(void);
/* The program is sandboxing itself (seccomp): report now, then pass through. */
void shim_sandboxed(void);

/* Should this call be matched and counted?  Starts the shim if need be. */
static inline int shim_on(void)
{
	int s = __atomic_load_n(&shim_state, __ATOMIC_ACQUIRE);
	if (unlikely(s != SHIM_ON)) {
		if (s != SHIM_NONE)
			return 0;
		shim_init();
		s = __atomic_load_n(&shim_state, __ATOMIC_ACQUIRE);
		if (s != SHIM_ON)
			return 0;
	}
	return shim_guard == 0;
}
#endif
