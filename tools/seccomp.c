/* seccomp.c: under a seccomp filter the tool inherited (a container's, a
 * service's), may the shim make its calls?  No unprivileged process can
 * read a filter, and a call it does not allow may kill the process, so the
 * shim stays out of the program's way under any filter it was not told to
 * trust (shim/init.c).  The tool tries every kind of call the shim makes
 * (lib/syscalls.h, with arguments the kernel refuses at once, and a thread
 * started and joined) in a child of its own, under the same filters: if the
 * child lives, PREFAULT_SECCOMP=trust:N tells the shim that these N filters
 * let its calls through (a filter added later, by a sandbox the program
 * starts in, is not vouched for); if it dies, the tool says so. */
#include "cli.h"
#include "syscalls.h"
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif

static void *nothing(void *arg) { return (char *)arg + 1; }

/* (every argument -1 or 0: a bad descriptor, address or size, refused
 * before anything is done; exit_group is the child's end) */
static void try_all(void)
{
	static const long nr[] = {
#define PF_SC_NR(name) SYS_##name,
		PF_SYSCALLS(PF_SC_NR)
#undef PF_SC_NR
	};
	static char mark;
	pthread_t t;
	void *back = NULL;
	size_t i;
	for (i = 0; i < sizeof nr / sizeof nr[0]; i++)
		if (nr[i] != SYS_exit_group && nr[i] != SYS_munlockall)
			syscall(nr[i], -1L, 0L, 0L, 0L, 0L, 0L);
	/* (a thread the filter killed alone returns nothing) */
	if (pthread_create(&t, NULL, nothing, &mark) != 0 || pthread_join(t, &back) != 0 || back != &mark + 1)
		_exit(3);
}

/* "Seccomp:" and "Seccomp_filters:" of /proc/self/status */
static int my_seccomp(long *filters)
{
	char line[256];
	int mode = -1;
	FILE *f = fopen("/proc/self/status", "re");
	*filters = -1;
	while (f && fgets(line, sizeof line, f)) {
		if (!strncmp(line, "Seccomp:", 8))
			mode = atoi(line + 8);
		else if (!strncmp(line, "Seccomp_filters:", 16))
			*filters = atol(line + 16);
	}
	if (f)
		fclose(f);
	return mode;
}

void seccomp_vouch(void)
{
	static int done;
	long filters;
	int mode, status;
	pid_t pid;
	char val[32];
	if (done++ || getenv("PREFAULT_SECCOMP") || (mode = my_seccomp(&filters)) <= 0)
		return;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		try_all();
		_exit(0);
	}
	while (pid > 0 && waitpid(pid, &status, 0) < 0)
		;
	if (pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 && mode == 2 && filters >= 0) {
		snprintf(val, sizeof val, "trust:%ld", filters);
		setenv("PREFAULT_SECCOMP", val, 1);
		return;
	}
	if (pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		fprintf(stderr, "prefault: a seccomp filter is in force here and let the shim's system calls through, but "
		                "this kernel does not count filters (Linux 5.9 does), so a filter added later could not be "
		                "told apart: the shim stays out of the program's way (no policy, no report); "
		                "PREFAULT_SECCOMP=trust to have it act all the same\n");
	else if (pid > 0 && WIFSIGNALED(status))
		fprintf(stderr, "prefault: a seccomp filter is in force here and killed a child trying the shim's "
		                "system calls (signal %d): the shim stays out of the program's way (no policy, no report); "
		                "PREFAULT_SECCOMP=trust to have it act all the same\n", WTERMSIG(status));
	else
		fprintf(stderr, "prefault: a seccomp filter is in force here and the shim's system calls could not be "
		                "tried under it: the shim stays out of the program's way (no policy, no report); "
		                "PREFAULT_SECCOMP=trust to have it act all the same\n");
}
