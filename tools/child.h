/* child.h: running the program as our child: fork, exec, wait, and pass on
 * the signals meant for it.  Used by run, profile, trial (and tune).
 *
 * The program must see what it would see without us between it and its
 * caller:
 *  - its stdin, stdout and stderr are ours (or the files a caller gives),
 *    and no other descriptor of ours but the report socket (collect,
 *    below): everything the tool opens is O_CLOEXEC, and so is the pipe
 *    that tells us whether exec worked;
 *  - the signal dispositions and mask it inherits are the ones the tool was
 *    started with (an ignored SIGINT stays ignored, as under nohup);
 *  - it stays in our process group, so the terminal's Ctrl-C and Ctrl-Z
 *    reach it directly.  Every catchable asynchronous signal someone sends
 *    to the tool with kill(2) or sigqueue(3) (si_code <= 0) is passed on to
 *    it; those that come from the terminal or the kernel are not, since the
 *    program got its own.  A signal the program or one of its descendants
 *    sent (si_pid in its tree, as /proc shows it) is never passed back: one
 *    to its parent ("I'm ready") goes on to the tool's own parent, its real
 *    caller, as it would without us; a stop or continue is the job's own.
 *    (A signal the tree sent to the whole process group reaches a caller in
 *    the same group twice; a descendant already gone, reaped, when the tool
 *    looks cannot be told from anyone else, and its signal is passed on.)  The tool survives them until the program has
 *    exited, so it can still print its report.  SIGKILL cannot be caught:
 *    the program is started with PR_SET_PDEATHSIG = SIGKILL, so that it dies
 *    with the tool, as it would had it been killed itself (the one thing
 *    the program could see: prctl(PR_GET_PDEATHSIG) answers SIGKILL);
 *  - a signal ignored when the tool started (nohup, trap '' INT) stays
 *    ignored, by the tool as by the program;
 *  - when the program stops, the tool stops too, with the same signal, so
 *    the shell sees it; `fg` continues both.  When only the program is
 *    continued (a supervisor's kill -CONT), a watcher process outside the
 *    job continues the tool as well.  When the terminal stops the tool for
 *    its own access to it (a background job under `stty tostop` printing
 *    its report), or Ctrl-Z comes while no program runs, the tool stops as
 *    any program would;
 *  - at a deadline (child_set_deadline: tune -t), the program's tree is
 *    sent SIGTERM, and SIGKILL a second later;
 *  - when the program dies of a signal, the tool dies of it too, after its
 *    report (child_exit), so the caller sees that death, not an exit code;
 *  - SIGPIPE is ignored by the tool only after the fork, so a closed stderr
 *    cannot kill the tool before it returns the program's status.
 */
#ifndef PREFAULT_CHILD_H
#define PREFAULT_CHILD_H
#include <sys/resource.h>
#include <sys/types.h>

struct child_spec {
	char **argv;                 /* argv[0] is looked up in PATH */
	int fd_in, fd_out, fd_err;   /* -1: the tool's own; else becomes 0, 1 or 2 */
	void (*in_child)(void *arg); /* after fork, before exec: environment changes */
	void *arg;
	/* Where the shim's reports and profiles go (NULL: nowhere of ours).
	 * The program also gets a socket (PREFAULT_REPORT_FD): a process that
	 * cannot write a file there (it dropped its privileges, sandboxed
	 * itself, or went into a chroot) sends its file through it, and
	 * child_run writes what came into this directory once the program
	 * has ended.  The one descriptor of ours the program has. */
	const char *collect;
};

struct child_result {
	pid_t pid;
	int status;       /* from wait4 */
	int exec_errno;   /* 0, or why exec failed: the program never ran */
	struct rusage ru; /* the child's and its waited-for descendants' */
	double wall_s;    /* fork to reaped */
	int timed_out;    /* stopped at the deadline */
};

/* Run one program to its end.  Returns 0 with *r filled, or -1 if no child
 * could be made (errno set).  A program that cannot be executed is a result
 * (exec_errno, exit status 127 or 126, and a message on its stderr). */
int child_run(const struct child_spec *spec, struct child_result *r);

/* From now on, every program still running at time t (progress.h's mono_s
 * clock) is stopped then, with its tree; 0: never. */
void child_set_deadline(double t);
/* Was the last program stopped at the deadline? */
int child_timed_out(void);

/* A shell's view of a wait status: the exit status, or 128+N after signal N. */
int child_exit_code(int status);

/* exit(code), but if code is 128+N for the signal N the last program died
 * of, die of N instead (with no core dump of the tool's own). */
void child_exit(int code) __attribute__((noreturn));

/* The last of the four signals that reached the tool while no program ran
 * (0 if none), and clears it: a tool running several programs stops there. */
int child_take_pending_signal(void);

/* The last of the four signals that reached the tool at all since the last
 * call (0 if none), and clears it and the pending one: a Ctrl-C from the
 * terminal reaches the program and the tool alike, and a tool that runs a
 * program many times (trial, tune) stops there rather than blame the
 * program for dying of it. */
int child_take_signal(void);

#endif
