/* fmt.c: the shim's formatting helpers (sbuf.h) for the tool's stdio
 * output, so that a size or a JSON string looks the same wherever it is
 * printed; and a write(2) that finishes. */
#include "fmt.h"
#include "cli.h"
#include "path_walk.h"
#include "report_file.h"
#include "sbuf.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void human_size(char *out, size_t cap, uint64_t v)
{
	struct sbuf sb;
	sb_init(&sb, out, cap, -1);
	sb_size_human(&sb, v);
	sb_cstr(&sb);
}

const char *tty_str(const char *s)
{
	static char ring[4][16384]; /* (a path of 4 KiB, every byte escaped) */
	static unsigned next;
	struct sbuf sb;
	sb_init(&sb, ring[next++ % 4], sizeof ring[0], -1);
	sb_text(&sb, s ? s : "");
	return sb_cstr(&sb);
}

void json_string(FILE *f, const char *s)
{
	size_t cap = strlen(s) * 6 + 3; /* every byte escaped as \u00XX, and the quotes */
	char *buf = malloc(cap + 1);
	struct sbuf sb;
	if (!buf) {
		fputs("\"\"", f);
		return;
	}
	sb_init(&sb, buf, cap + 1, -1);
	sb_json_str(&sb, s);
	fputs(sb_cstr(&sb), f);
	free(buf);
}

int close_output(FILE *f, const char *path, const char *tool)
{
	int bad = ferror(f), e = errno;
	if (fclose(f) != 0 && !bad) {
		bad = 1;
		e = errno;
	}
	if (!bad)
		return 0;
	fprintf(stderr, "%s: cannot write %s: %s\n", tool, tty_str(path), strerror(e ? e : EIO));
	return -1;
}

/* Is last, in the directory dfd, a symlink report_link_ok refuses? */
static int last_link_refused(int dfd, const char *last)
{
	struct stat ds, ls;
	if (fstatat(dfd, last, &ls, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISLNK(ls.st_mode))
		return 0;
	return fstat(dfd, &ds) != 0 || !report_link_ok(&ds, &ls, (unsigned long)geteuid());
}

/* open_output's refusals, asked before a long run (output_writable). */
static int output_refused(const char *path)
{
	static struct path_walk w;
	const char *last;
	int dfd = path_walk_dir(&libc_io, (unsigned long)geteuid(), path, &last, &w), bad;
	if (dfd < 0)
		return errno == ENOLINK; /* (other failures: access() says them) */
	bad = last_link_refused(dfd, last);
	close(dfd);
	return bad;
}

/* Made anew where nothing is there (O_EXCL: a link planted after a look
 * cannot be followed); else a link is followed only if report_link_ok
 * allows it (one another user made in a sticky directory cannot be
 * replaced by them, and one of theirs is refused), and a file that is not
 * a link is opened with O_NOFOLLOW (replaced by a link meanwhile: ELOOP). */
FILE *open_output(const char *path)
{
	static struct path_walk w;
	const char *last;
	int dfd = path_walk_dir(&libc_io, (unsigned long)geteuid(), path, &last, &w), fd, e, flags;
	FILE *f;
	if (dfd < 0) {
		if (errno == ENOLINK)
			errno = EPERM;
		return NULL;
	}
	flags = O_WRONLY | O_CLOEXEC | O_NOCTTY;
	fd = openat(dfd, last, flags | O_CREAT | O_EXCL | O_NOFOLLOW, 0666);
	if (fd < 0 && errno == EEXIST) {
		struct stat ls;
		int link = fstatat(dfd, last, &ls, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(ls.st_mode);
		if (link && last_link_refused(dfd, last)) {
			close(dfd);
			errno = EPERM;
			return NULL;
		}
		fd = openat(dfd, last, flags | O_TRUNC | (link ? 0 : O_NOFOLLOW));
	}
	e = errno;
	close(dfd);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		if (fd >= 0) {
			e = errno;
			close(fd);
		}
		errno = e;
		return NULL;
	}
	return f;
}

int output_writable(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	if (output_refused(path)) {
		errno = EPERM;
		return 0;
	}
	if (access(path, F_OK) == 0)
		return access(path, W_OK) == 0;
	if (!slash)
		return access(".", W_OK) == 0;
	snprintf(dir, sizeof dir, "%.*s", (int)(slash - path) + (slash == path), path);
	return access(dir, W_OK) == 0;
}

void write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}
