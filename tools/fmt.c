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
#include <sys/statfs.h>
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

/* Made anew where nothing is there (O_EXCL: a link planted after a look
 * cannot be followed); a file that is there and is not a link opened
 * with O_NOFOLLOW (replaced by a link meanwhile: ELOOP); a link followed
 * as path_walk follows one on the way (helper-35: the kernel following
 * the user's own link went through another user's on the way of its
 * text), its target made if it is not there, as fopen makes it; /proc's
 * links (/dev/stdout) by the kernel, as they name an open file. */
/* The descriptor, or with check the file looked at and not opened: 0
 * where open_output would go on to open it, or a fd.  -1 with errno. */
static int output_fd(const char *path, int check)
{
	static struct path_walk w;
	static char cur[PATH_MAX], next[PATH_MAX];
	const int flags = O_WRONLY | O_CLOEXEC | O_NOCTTY;
	const char *last;
	int links = 0, dfd, fd, e;
	if (strlen(path) >= sizeof cur) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(cur, path);
	for (;;) {
		struct stat ls;
		struct statfs fs;
		long k;
		dfd = path_walk_dir(&libc_io, (unsigned long)geteuid(), cur, &last, &w);
		if (dfd < 0) {
			if (errno == ENOLINK)
				errno = EPERM;
			return -1;
		}
		if (check) {
			fd = fstatat(dfd, last, &ls, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(ls.st_mode) ? -1 : 0;
			errno = EEXIST;
		} else {
			fd = openat(dfd, last, flags | O_CREAT | O_EXCL | O_NOFOLLOW, 0666);
		}
		if (fd >= 0 || errno != EEXIST)
			break;
		if (fstatat(dfd, last, &ls, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISLNK(ls.st_mode)) {
			fd = openat(dfd, last, flags | O_TRUNC | O_NOFOLLOW);
			break;
		}
		if (last_link_refused(dfd, last) || ++links > 40) {
			close(dfd);
			errno = links > 40 ? ELOOP : EPERM;
			return -1;
		}
		if (fstatfs(dfd, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC) {
			fd = check ? 0 : openat(dfd, last, flags | O_TRUNC);
			break;
		}
		k = readlinkat(dfd, last, next, sizeof next);
		e = k < 0 ? errno : k == 0 ? ENOENT : ENAMETOOLONG;
		close(dfd);
		if (k <= 0 || (size_t)k >= sizeof next ||
		    (next[0] != '/' && (size_t)(last - cur) + (size_t)k >= sizeof cur)) {
			errno = k > 0 && (size_t)k < sizeof next ? ENAMETOOLONG : e;
			return -1;
		}
		next[k] = '\0';
		/* (relative: to the link's directory, cur's part before last) */
		memcpy(next[0] == '/' ? cur : cur + (last - cur), next, (size_t)k + 1);
	}
	e = errno;
	close(dfd);
	errno = e;
	return fd;
}

FILE *open_output(const char *path)
{
	int fd = output_fd(path, 0), e;
	FILE *f;
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		if (fd >= 0) {
			e = errno;
			close(fd);
			errno = e;
		}
		return NULL;
	}
	return f;
}

int output_writable(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	/* (open_output's refusals, said before a long run) */
	if (output_fd(path, 1) < 0 && (errno == EPERM || errno == ELOOP))
		return 0;
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
