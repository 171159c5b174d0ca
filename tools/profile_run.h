/* profile_run.h: run a program once under the profiler and read back the
 * merged profile of its process tree.  Used by profile and tune. */
#ifndef PREFAULT_PROFILE_RUN_H
#define PREFAULT_PROFILE_RUN_H
#include "profile_data.h"
#include <sys/types.h>

struct profiled {
	struct profile merged; /* sites heaviest first, code and other by count */
	struct profile *procs; /* one per process that wrote a profile */
	int nproc;
	pid_t root;            /* the process we started */
	int status;            /* its wait status */
	int exec_errno;        /* it never ran: the child said why */
	double wall_s;
};

/* CMD under the shim in observe mode with PREFAULT_PROFILE set; stdio are
 * fd_in, fd_out, fd_err (-1: ours).  Sites are marked in_root or with the
 * programs they were seen in (see struct psite).  Returns 0 with p filled
 * (nproc may be 0: nothing wrote a profile), or -1 if no child could be
 * made (errno set) or the set-up failed (a message printed, errno 0). */
int profile_program(char **cmd, int fd_in, int fd_out, int fd_err, struct profiled *p);
#endif
