/* path_walk.h: the directory a file's path ends in, reached with no
 * symlink followed by the kernel: each link on the way is read and
 * followed here, and only where report_link_ok (report_file.h) allows, so
 * that another user's link planted in a sticky shared directory (/tmp,
 * /dev/shm) never sends a report, a profile or an output of the tool into
 * a directory of the link's choosing, whatever fs.protected_symlinks says
 * (helper-34: root's report written through nobody's link in a sticky
 * directory).  What is checked is what is used: every component is opened
 * (O_PATH) relative to the one before, nothing looked up by name twice.
 * Pure, and all here (a header, as report_file.h: the shim's floor and
 * the tool both call it, and lib's modules sit above the floor): the
 * caller's file calls (io.h). */
#ifndef PREFAULT_PATH_WALK_H
#define PREFAULT_PATH_WALK_H
#include "io.h"
#include "report_file.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

/* Scratch: the caller's own (a path may be PATH_MAX long; an exit's stack
 * may be a signal handler's small one). */
struct path_walk {
	char rest[PATH_MAX];
	char link[PATH_MAX];
};

/* One link met in the walk: nfd (opened O_PATH | O_NOFOLLOW, its stat ls)
 * in the directory dfd.  Its text in w->link, its length returned; 0 for a
 * link of /proc's (/proc/self/fd/3, /proc/PID/root: they name an open
 * object, not a path, and the kernel follows them, as it would: there is
 * no sticky directory in /proc); -1 with errno: ENOLINK refused
 * (report_link_ok), ELOOP past WALK_LINKS links (*links counts them),
 * ENOENT an empty link, ENAMETOOLONG, or the failing call's.  The text is
 * read from nfd, the link whose owner was checked, not looked up again. */
#define WALK_LINKS 40
static inline long path_walk_link(const struct io *io, unsigned long euid, int dfd, int nfd,
                                  const struct stat *ls, int *links, struct path_walk *w)
{
	struct stat ds;
	struct statfs fs;
	long k;
	if (io->fstat(dfd, &ds) != 0 || io->fstatfs(dfd, &fs) != 0)
		return -1;
	if (!report_link_ok(&ds, ls, euid) || ++*links > WALK_LINKS) {
		errno = *links > WALK_LINKS ? ELOOP : ENOLINK;
		return -1;
	}
	if (fs.f_type == PROC_SUPER_MAGIC)
		return 0;
	k = io->readlinkat(nfd, "", w->link, sizeof w->link);
	if (k <= 0 || (size_t)k >= sizeof w->link) {
		errno = k < 0 ? errno : k == 0 ? ENOENT : ENAMETOOLONG;
		return -1;
	}
	w->link[k] = '\0';
	return k;
}

/* The directory path's last component is in, opened with O_PATH (close it
 * with io->close); *last: that component, in path.  euid: the writer's.
 * -1 with errno: ENOLINK a link refused (no call fails so: the callers
 * say it in their words), ELOOP more than 40 links, EISDIR a path ending
 * in '/', ENAMETOOLONG, or the failing call's. */
static inline int path_walk_dir(const struct io *io, unsigned long euid, const char *path, const char **last,
                                struct path_walk *w)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0, len;
	int dfd, links = 0, e;
	char *pos;
	*last = slash ? slash + 1 : path;
	if (!**last) {
		errno = EISDIR;
		return -1;
	}
	if (n >= sizeof w->rest) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(w->rest, path, n);
	w->rest[n] = '\0';
	dfd = io->open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	pos = w->rest;
	while (dfd >= 0) {
		struct stat ls;
		char *c, *end;
		int nfd;
		while (*pos == '/')
			pos++;
		if (!*pos)
			return dfd;
		c = pos;
		end = strchr(c, '/');
		pos = end ? end + 1 : c + strlen(c);
		if (end)
			*end = '\0';
		if (!strcmp(c, "."))
			continue;
		/* (O_DIRECTORY: an automount on the way is triggered, as open does) */
		nfd = io->openat(dfd, c, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
		if (nfd >= 0) {
			io->close(dfd);
			dfd = nfd;
			continue;
		}
		if (errno != ENOTDIR)
			goto fail;
		nfd = io->openat(dfd, c, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 || io->fstat(nfd, &ls) != 0)
			goto fail;
		if (!S_ISLNK(ls.st_mode)) {
			errno = ENOTDIR;
			goto fail;
		}
		{
			long k = path_walk_link(io, euid, dfd, nfd, &ls, &links, w);
			if (k < 0)
				goto fail;
			if (k == 0) { /* (/proc's: the kernel follows it) */
				io->close(nfd);
				nfd = io->openat(dfd, c, O_PATH | O_DIRECTORY | O_CLOEXEC);
				if (nfd < 0)
					goto fail;
				io->close(dfd);
				dfd = nfd;
				continue;
			}
			/* the link's text, then what was left after it */
			io->close(nfd);
			nfd = -1;
			len = strlen(pos);
			if ((size_t)k + 1 + len >= sizeof w->rest) {
				errno = ENAMETOOLONG;
				goto fail;
			}
			memmove(w->rest + k + 1, pos, len + 1);
			memcpy(w->rest, w->link, (size_t)k);
			w->rest[k] = '/';
			pos = w->rest;
			if (w->link[0] == '/') {
				io->close(dfd);
				dfd = io->open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
			}
		}
		continue;
	fail:
		e = errno;
		if (nfd >= 0)
			io->close(nfd);
		io->close(dfd);
		errno = e;
		return -1;
	}
	return -1;
}
#endif
