/* shim.h: the shim's own state, shared by init.c and interpose.c. */
#ifndef PREFAULT_SHIM_H
#define PREFAULT_SHIM_H
#include "glue.h"
#include "policy.h"

enum { SHIM_NONE, SHIM_INIT, SHIM_ON, SHIM_PASS };
extern int shim_state;
/* Nonzero while this thread runs the shim's own code: wrappers entered then
 * (dladdr, a signal handler, our own allocations) pass straight through. */
extern TLS int shim_guard;

void shim_init(void);
void shim_report(void);
const struct policy *shim_policy(void);

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
