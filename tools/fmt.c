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

/* Made anew where nothing is there (O_EXCL: a link planted after a look
 * cannot be followed); a file that is there and is not a link opened
 * with O_NOFOLLOW (replaced by a link meanwhile: ELOOP); a link followed
 * as path_walk follows one on the way (path_walk_link: helper-35, the
 * kernel following the user's own link went through another user's on
 * the way of its text), its target made if it is not there, as fopen
 * makes it; /proc's links (/dev/stdout) by the kernel, as they name an
 * open file. */
/* The descriptor, or with check the file looked at and not opened: 0
 * where open_output would go on to open it, or a fd.  -1 with errno
 * (EPERM: a link refused). */
static int output_fd(const char *path, int check)
{
	static struct path_walk w;
	static char cur[PATH_MAX];
	const int flags = O_WRONLY | O_CLOEXEC | O_NOCTTY;
	const char *last;
	int links = 0, dfd, fd, nfd, e;
	if (strlen(path) >= sizeof cur) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(cur, path);
	for (;;) {
		struct stat ls;
		long k;
		dfd = path_walk_dir(&libc_io, (unsigned long)geteuid(), cur, &last, &w);
		if (dfd < 0) {
			if (errno == ENOLINK)
				errno = EPERM;
			return -1;
		}
		if (!check) {
			fd = openat(dfd, last, flags | O_CREAT | O_EXCL | O_NOFOLLOW, 0666);
			if (fd >= 0 || errno != EEXIST)
				break;
		}
		nfd = openat(dfd, last, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 || fstat(nfd, &ls) != 0 || !S_ISLNK(ls.st_mode)) {
			if (nfd >= 0)
				close(nfd);
			/* (there and not a link; with check: not there either) */
			fd = check ? 0 : openat(dfd, last, flags | O_TRUNC | O_NOFOLLOW);
			break;
		}
		k = path_walk_link(&libc_io, (unsigned long)geteuid(), dfd, nfd, &ls, &links, &w);
		close(nfd);
		if (k == 0) {
			fd = check ? 0 : openat(dfd, last, flags | O_TRUNC);
			break;
		}
		e = k < 0 ? (errno == ENOLINK ? EPERM : errno) : 0;
		/* (relative: to the link's directory, cur's part before last) */
		if (k > 0 && w.link[0] != '/' && (size_t)(last - cur) + (size_t)k >= sizeof cur)
			e = ENAMETOOLONG;
		close(dfd);
		if (e) {
			errno = e;
			return -1;
		}
		memcpy(w.link[0] == '/' ? cur : cur + (last - cur), w.link, (size_t)k + 1);
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
