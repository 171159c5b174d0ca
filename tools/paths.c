/* paths.c: finding the shim and the shipped policies.
 *
 * Next to the tool first (the build tree: build/prefault beside
 * build/libprefault.so, policies/ one level up), then the installed layout
 * relative to the tool (bin/../lib/prefault), then the configured prefix.
 * So a build tree, an installed copy and a relocated DESTDIR all work.
 */
#include "cli.h"
#include "fmt.h"
#include "policy_file.h"
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PREFAULT_LIBDIR
#define PREFAULT_LIBDIR "/usr/local/lib/prefault"
#endif
#ifndef PREFAULT_DATADIR
#define PREFAULT_DATADIR "/usr/local/share/prefault"
#endif

static char exe_dir[PATH_MAX];

static const char *self_dir(void)
{
	if (!exe_dir[0]) {
		ssize_t n = readlink("/proc/self/exe", exe_dir, sizeof exe_dir - 1);
		char *slash;
		if (n <= 0)
			return ".";
		exe_dir[n] = '\0';
		slash = strrchr(exe_dir, '/');
		if (slash)
			*slash = '\0';
	}
	return exe_dir;
}

static int first_existing(char *out, size_t cap, const char *const *cands, const char *suffix)
{
	for (; *cands; cands++) {
		int n = snprintf(out, cap, "%s%s", *cands, suffix);
		if (n > 0 && (size_t)n < cap && access(out, R_OK) == 0)
			return 1;
	}
	return 0;
}

/* The loader splits LD_PRELOAD at ' ' and ':' and expands '$ORIGIN',
 * '$LIB' and '$PLATFORM' in it: a path with one of these would load
 * something else (a relative "x/libprefault.so" from the program's current
 * directory, say). */
static int loader_safe(const char *path) { return !strpbrk(path, " :$"); }

static char alias_dir[PATH_MAX], alias[PATH_MAX + 32];

void shim_alias_remove(void)
{
	if (alias[0])
		unlink(alias);
	if (alias_dir[0])
		rmdir(alias_dir);
	alias[0] = alias_dir[0] = '\0';
}

/* A link to the shim whose path the loader takes as it is: in a private
 * directory (mode 0700) of our own, removed when the tool exits. */
static const char *make_alias(const char *shim)
{
	const char *tmp = getenv("TMPDIR"), *bases[4];
	int i, n = 0;
	if (tmp && tmp[0] == '/' && loader_safe(tmp))
		bases[n++] = tmp;
	bases[n++] = "/dev/shm";
	bases[n++] = "/tmp";
	for (i = 0; i < n; i++) {
		snprintf(alias_dir, sizeof alias_dir, "%s/prefault-shim.XXXXXX", bases[i]);
		if (!mkdtemp(alias_dir)) {
			alias_dir[0] = '\0';
			continue;
		}
		snprintf(alias, sizeof alias, "%s/libprefault.so", alias_dir);
		if (loader_safe(alias) && symlink(shim, alias) == 0) {
			atexit(shim_alias_remove);
			return alias;
		}
		alias[0] = '\0';
		rmdir(alias_dir);
		alias_dir[0] = '\0';
	}
	fprintf(stderr, "prefault: the shim's path %s holds a space, ':' or '$', which the loader would split or "
	        "expand, and no private directory for a link to it could be made (%s): install it elsewhere\n",
	        tty_str(shim), strerror(errno));
	return NULL;
}

const char *find_shim(void)
{
	static char path[PATH_MAX + 64];
	char a[PATH_MAX + 32], b[PATH_MAX + 32];
	const char *env = getenv("PREFAULT_SHIM");
	const char *cands[4];
	if (env && *env)
		return env;
	if (alias[0])
		return alias;
	snprintf(a, sizeof a, "%s", self_dir());
	snprintf(b, sizeof b, "%s/../lib/prefault", self_dir());
	cands[0] = a;
	cands[1] = b;
	cands[2] = PREFAULT_LIBDIR;
	cands[3] = NULL;
	if (!first_existing(path, sizeof path, cands, "/libprefault.so"))
		return NULL;
	{
		char *r = realpath(path, NULL);
		if (r) {
			snprintf(path, sizeof path, "%s", r);
			free(r);
		}
	}
	return loader_safe(path) ? path : make_alias(path);
}

static int policy_dirs(const char *out[4], char bufs[2][PATH_MAX + 32])
{
	snprintf(bufs[0], sizeof bufs[0], "%s/../policies", self_dir());
	snprintf(bufs[1], sizeof bufs[1], "%s/../share/prefault/policies", self_dir());
	out[0] = bufs[0];
	out[1] = bufs[1];
	out[2] = PREFAULT_DATADIR "/policies";
	out[3] = NULL;
	return 3;
}

/* A file of this name in the current directory (NAME or NAME.policy), which
 * a bare name does not mean: "./NAME" does. */
static const char *file_here(const char *arg)
{
	static char alt[300];
	struct stat st;
	if (stat(arg, &st) == 0 && !S_ISDIR(st.st_mode))
		return arg;
	snprintf(alt, sizeof alt, "%s.policy", arg);
	if (stat(alt, &st) == 0 && !S_ISDIR(st.st_mode))
		return alt;
	return NULL;
}

char *resolve_policy(const char *arg)
{
	char bufs[2][PATH_MAX + 32], path[2 * PATH_MAX + 512], suffix[300];
	const char *dirs[4], *here;
	/* A path has a '/'.  A bare name is a shipped policy's, whatever the
	 * current directory holds: a file there (planted in a shared directory,
	 * say) is never taken for it. */
	if (strchr(arg, '/')) {
		char *r = realpath(arg, NULL);
		if (!r)
			fprintf(stderr, "prefault: %s: %s\n", tty_str(arg), strerror(errno));
		return r;
	}
	here = strlen(arg) <= 200 ? file_here(arg) : NULL;
	policy_dirs(dirs, bufs);
	snprintf(suffix, sizeof suffix, "/%s.policy", arg);
	if (strlen(arg) <= 200 && first_existing(path, sizeof path, dirs, suffix)) {
		char *r = realpath(path, NULL);
		if (r && here) /* say which one: the user may have meant the other */
			fprintf(stderr, "prefault: %s is the shipped policy %s; for the file here, write ./%s\n", tty_str(arg),
			        tty_str(r), tty_str(here));
		return r;
	}
	fprintf(stderr, "prefault: %s: no shipped policy of that name (shipped: ", tty_str(arg));
	list_shipped(stderr);
	if (here)
		fprintf(stderr, "); for the file here, write ./%s\n", tty_str(here));
	else
		fprintf(stderr, "); a file is named by a path (./%s)\n", tty_str(arg));
	return NULL;
}

void list_shipped(FILE *out)
{
	char bufs[2][PATH_MAX + 32];
	const char *dirs[4];
	int i, first = 1;
	policy_dirs(dirs, bufs);
	for (i = 0; dirs[i]; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *e;
		if (!d)
			continue;
		while ((e = readdir(d))) {
			size_t n = strlen(e->d_name);
			if (n > 7 && !strcmp(e->d_name + n - 7, ".policy")) {
				e->d_name[n - 7] = '\0';
				fprintf(out, "%s%s", first ? "" : ", ", tty_str(e->d_name));
				first = 0;
			}
		}
		closedir(d);
		if (!first)
			break;
	}
	if (first)
		fprintf(out, "none found");
}

/* The shim reads the file with the same function, into the same size, so
 * `check` and the shim give the same answer for every file. */
int load_policy_file(const char *path, const char *shown, struct policy *pol)
{
	static char buf[POL_FILE_MAX + 2];
	size_t n;
	struct pol_error err;
	int line, r = policy_file_read(path, buf, sizeof buf, &n, &libc_io);
	if (r != PFR_OK) {
		const char *why = policy_file_error(r);
		fprintf(stderr, "%s: cannot use the policy: %s\n", tty_str(shown),
		        r == PFR_ERRNO && !strcmp(why, "cannot read") ? strerror(errno) : why);
		return -1;
	}
	line = policy_parse(buf, n, pol, &err);
	if (line) {
		fprintf(stderr, "%s:%d: %s\n", tty_str(shown), line, tty_str(err.msg));
		return -1;
	}
	return 0;
}
