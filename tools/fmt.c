/* fmt.c: the shim's formatting helpers (sbuf.h) for the tool's stdio
 * output, so that a size or a JSON string looks the same wherever it is
 * printed; and a write(2) that finishes. */
#include "fmt.h"
#include "sbuf.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
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

int output_writable(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
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
