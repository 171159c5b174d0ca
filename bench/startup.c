/* startup: what starting a trivial program costs.
 *
 *   startup [N] [PROGRAM]        (default 500 runs of /bin/true)
 *
 * fork, execve PROGRAM with this process's environment (so an LD_PRELOAD
 * given to us reaches every child), wait; N times after N/10 untimed runs.
 * Prints the mean wall time of one whole run in microseconds:
 * "US us per run (N runs of PROGRAM)".  Loader, preload constructors,
 * program, exit-time reporting and reaping are all inside the figure.
 * If this process carries a preload, fork pays the preload's fork handlers
 * too, as it would in a preloaded shell.  To measure the program's start
 * alone, give the preload as LY_PRELOAD=...: this process runs without it
 * and each child's environment has it renamed to LD_PRELOAD (same size).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;
static char **child_env;

/* environ, with LY_PRELOAD= renamed LD_PRELOAD= */
static char **make_env(void)
{
	size_t n = 0, i;
	char **e;
	while (environ[n])
		n++;
	e = calloc(n + 1, sizeof *e);
	if (!e)
		exit(1);
	for (i = 0; i < n; i++) {
		e[i] = environ[i];
		if (!strncmp(e[i], "LY_PRELOAD=", 11)) {
			e[i] = strdup(e[i]);
			if (!e[i])
				exit(1);
			e[i][1] = 'D';
		}
	}
	return e;
}

static void one(const char *prog)
{
	char *argv[] = {(char *)prog, NULL};
	int st;
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		execve(prog, argv, child_env);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "startup: %s failed (status 0x%x)\n", prog, st);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 500, i;
	const char *prog = argc > 2 ? argv[2] : "/bin/true";
	struct timespec a, b;
	if (n <= 0)
		return 2;
	child_env = make_env();
	for (i = 0; i < n / 10; i++)
		one(prog);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		one(prog);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f us per run (%ld runs of %s)\n",
	       ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / n, n, prog);
	return 0;
}
