/* cause.c: why the shim cannot load into a program, read from the program's
 * file rather than guessed: no program interpreter (statically linked: the
 * loader never runs), set-user-ID or set-group-ID for another user, or file
 * capabilities (the loader then ignores LD_PRELOAD).  A script is judged by
 * its interpreter.  NULL when the file shows no such cause: the shim should
 * have loaded, and the caller says what else it may have been. */
#include "cli.h"
#include "elfread.h"
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

/* argv[0] as execvp finds it: a path as it is, else the first executable
 * file of that name along PATH. */
static int find_program(const char *name, char *out, size_t cap)
{
	const char *path = getenv("PATH"), *p;
	if (strchr(name, '/'))
		return snprintf(out, cap, "%s", name) < (int)cap ? 0 : -1;
	for (p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin"; ; p += strcspn(p, ":") + 1) {
		int n = (int)strcspn(p, ":");
		if (snprintf(out, cap, "%.*s%s%s", n, p, n ? "/" : "", name) < (int)cap && access(out, X_OK) == 0)
			return 0;
		if (!p[n])
			return -1;
	}
}

static const char *cause_of(const char *name, int depth)
{
	char path[PATH_MAX], head[PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd, dyn;
	if (find_program(name, path, sizeof path) < 0 || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return NULL;
	}
	if ((st.st_mode & S_ISUID) && st.st_uid != geteuid()) {
		close(fd);
		return "it is set-user-ID (checked): the loader ignores LD_PRELOAD for it";
	}
	if ((st.st_mode & S_ISGID) && st.st_gid != getegid()) {
		close(fd);
		return "it is set-group-ID (checked): the loader ignores LD_PRELOAD for it";
	}
	if (fgetxattr(fd, "security.capability", head, sizeof head) > 0) {
		close(fd);
		return "it has file capabilities (checked): the loader ignores LD_PRELOAD for it";
	}
	n = pread(fd, head, sizeof head - 1, 0);
	if (n > 2 && head[0] == '#' && head[1] == '!' && depth == 0) { /* a script: its interpreter */
		char *interp = head + 2;
		close(fd);
		head[n] = '\0';
		interp += strspn(interp, " \t");
		interp[strcspn(interp, " \t\n")] = '\0';
		return *interp ? cause_of(interp, 1) : NULL;
	}
	dyn = elf_fd_interp(fd); /* (either ELF class: a 32-bit static program is static too) */
	close(fd);
	return dyn == 0 ? "it is statically linked (checked: no program interpreter, so nothing is preloaded)" : NULL;
}

const char *shim_cannot_load(const char *program)
{
	return cause_of(program, 0);
}

const char *why_no_report(const char *program, int wstatus, char *buf, size_t cap)
{
	const char *cause = shim_cannot_load(program);
	if (WIFSIGNALED(wstatus))
		snprintf(buf, cap, "it was killed by signal %d (%s), whose default action skips the exit where the shim "
		         "writes", WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
	else if (cause)
		snprintf(buf, cap, "%s", cause);
	else if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus))
		snprintf(buf, cap, "the shim can load into it (dynamically linked, not set-user-ID: checked), but it failed "
		         "with exit status %d, perhaps before the shim started (see its messages)", WEXITSTATUS(wstatus));
	else
		snprintf(buf, cap, "the shim can load into it (dynamically linked, not set-user-ID: checked), but it, or a "
		         "program it ran in its place, may have cleared LD_PRELOAD, changed its user or sandboxed itself");
	return buf;
}
