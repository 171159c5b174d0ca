/* proctree.h: a process tree as /proc shows it, for the tool as a parent
 * (child.c): who a signal came from, whether the program is stopped, and
 * the processes to stop at a deadline.  Processes that have left the tree
 * (orphans, adopted by init) are not in it. */
#ifndef PREFAULT_PROCTREE_H
#define PREFAULT_PROCTREE_H
#include <sys/types.h>

/* The state letter of /proc/PID/stat ('R', 'S', 'T' stopped, 'Z'...), 0 if
 * the process is gone.  Async-signal-safe. */
char proc_state(pid_t pid);
/* PID's parent, or -1 if it is gone.  Async-signal-safe. */
pid_t proc_parent(pid_t pid);
/* Is PID root or one of its descendants?  Async-signal-safe. */
int proc_in_tree(pid_t pid, pid_t root);

#define PROC_LIST_MAX 1024
struct proc_list {
	int n;
	pid_t pid[PROC_LIST_MAX];
	unsigned long long start[PROC_LIST_MAX]; /* start times: the same process later */
};
/* root and its descendants now. */
void proc_tree(pid_t root, struct proc_list *l);
/* sig to each process of l that is still the one listed (not a new process
 * given its pid). */
void proc_list_signal(const struct proc_list *l, int sig);
#endif
