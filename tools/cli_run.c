/* cli_run.c: `prefault run [-p POLICY] [-o REPORT] -- CMD [ARGS...]`.
 *
 * Checks the policy first (a bad one exits 2 and starts nothing), then
 * prepends the shim to LD_PRELOAD (keeping what was there, libeatmydata
 * style), sets PREFAULT_POLICY and PREFAULT_REPORT, and execs CMD, so the
 * exit status is the program's own.
 */
#include "cli.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int preload_has(const char *list, const char *lib)
{
	size_t n = strlen(lib);
	const char *p = list;
	while ((p = strstr(p, lib))) {
		int start = p == list || p[-1] == ':' || p[-1] == ' ';
		int end = p[n] == '\0' || p[n] == ':' || p[n] == ' ';
		if (start && end)
			return 1;
		p += n;
	}
	return 0;
}

int set_preload(const char *shim)
{
	const char *old = getenv("LD_PRELOAD");
	char *v;
	if (old && *old) {
		if (preload_has(old, shim))
			return 0;
		v = malloc(strlen(shim) + strlen(old) + 2);
		if (!v)
			return -1;
		sprintf(v, "%s:%s", shim, old);
	} else {
		v = strdup(shim);
		if (!v)
			return -1;
	}
	setenv("LD_PRELOAD", v, 1);
	free(v);
	return 0;
}

/* Shared by run, trial and profile: policy checked, environment set. */
int prepare_env(const char *policy_arg, const char *report)
{
	static struct policy pol;
	const char *shim = find_shim();
	if (!shim) {
		fprintf(stderr, "prefault: cannot find libprefault.so (set PREFAULT_SHIM)\n");
		return -1;
	}
	if (policy_arg) {
		char *path = resolve_policy(policy_arg);
		if (!path)
			return -1;
		if (load_policy_file(path, strchr(policy_arg, '/') ? policy_arg : path, &pol) < 0) {
			free(path);
			return -1;
		}
		setenv("PREFAULT_POLICY", path, 1);
		free(path);
	} else {
		unsetenv("PREFAULT_POLICY");
	}
	if (report)
		setenv("PREFAULT_REPORT", report, 1);
	return set_preload(shim);
}

void exec_or_die(char **cmd)
{
	int e;
	execvp(cmd[0], cmd);
	e = errno;
	fprintf(stderr, "prefault: %s: %s\n", cmd[0], strerror(e));
	exit(e == ENOENT ? 127 : 126);
}

int cmd_run(int argc, char **argv)
{
	const char *policy = NULL, *report = NULL;
	int i;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (!strcmp(argv[i], "-p") || !strcmp(argv[i], "--policy")) {
			if (++i == argc)
				goto usage;
			policy = argv[i];
		} else if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--report")) {
			if (++i == argc)
				goto usage;
			report = argv[i];
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "prefault run: unknown option %s\n", argv[i]);
			goto usage;
		} else {
			break;
		}
	}
	if (i >= argc) {
		fprintf(stderr, "prefault run: no command given\n");
		goto usage;
	}
	if (prepare_env(policy, report) < 0)
		return EXIT_USAGE;
	exec_or_die(argv + i);
	return 127;
usage:
	fprintf(stderr, "usage: prefault run [-p POLICY] [-o REPORT] -- CMD [ARGS...]\n");
	return EXIT_USAGE;
}
