/* report.h: the report written at exit, as text or JSON.
 *
 * Formatted into a static buffer bound to the destination's descriptor (see
 * sbuf.h), so it works from _exit, from a destructor with the heap in any
 * state, and on a small thread stack.  Fault counts are since the shim
 * started in this process image.
 */
#ifndef PREFAULT_REPORT_H
#define PREFAULT_REPORT_H
#include <sys/types.h>
#include "os.h"
#include "policy.h"

struct proc_info {
	pid_t pid, ppid;
	char program[256];     /* argv[0]'s file name */
	char exe[1024];        /* /proc/self/exe */
	const char *policy_path; /* NULL: observe only */
	uint64_t t0;           /* os_now_ns() at start */
	struct faults f0;      /* process fault counts at start */
};

/* 0, or -1 with errno set when a write failed (the report is incomplete). */
int report_write(int fd, int json, const struct proc_info *pi, const struct policy *pol, int may_wait);
/* The same report in memory: its length, or -1 if it does not fit in cap. */
long report_render(char *buf, size_t cap, int json, const struct proc_info *pi, const struct policy *pol,
                   int may_wait);
#endif
