/* report.h: the report written at exit, as text or JSON.
 *
 * Formatted into a stack buffer bound to the destination's descriptor (see
 * sbuf.h), so it works from _exit and from a destructor with the heap in any
 * state.  Fault counts are since the shim started in this process image.
 */
#ifndef PREFAULT_REPORT_H
#define PREFAULT_REPORT_H
#include <sys/types.h>
#include "os.h"
#include "policy.h"

#define PF_VERSION "0.1.0"

struct proc_info {
	pid_t pid, ppid;
	char program[256];     /* argv[0]'s file name */
	char exe[1024];        /* /proc/self/exe */
	const char *policy_path; /* NULL: observe only */
	uint64_t t0;           /* os_now_ns() at start */
	struct faults f0;      /* process fault counts at start */
};

void report_write(int fd, int json, const struct proc_info *pi, const struct policy *pol);
#endif
