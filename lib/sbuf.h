/* sbuf.h: formatting into a caller's buffer, never stdio, never malloc.
 *
 * The shim formats its warnings, reports and profiles with these (stdio
 * may allocate and take locks; neither is allowed in a wrapper or at
 * _exit); the command-line tool uses the same helpers, so a size or a JSON
 * string looks the same wherever it is printed.  A buffer may be bound to a
 * file descriptor: when it fills, it is written out with write(2) and
 * reused, so output of any length needs only a small buffer.  Without a
 * descriptor, output past the end is dropped and `trunc` is set.  Pure, but
 * for write(2) on a bound descriptor.
 */
#ifndef PREFAULT_SBUF_H
#define PREFAULT_SBUF_H
#include <stddef.h>
#include <stdint.h>

struct sbuf {
	char *buf;
	size_t cap, len;
	int fd;        /* -1: memory only */
	const struct io *io; /* how fd is written (io.h) */
	int trunc;     /* output was dropped */
	int failed;    /* a write(2) failed */
	int err;       /* its errno */
};

/* A buffer in memory (fd -1), or bound to fd, written out with io's write
 * when full and at sb_flush. */
struct io;
void sb_init(struct sbuf *sb, char *buf, size_t cap, int fd);
void sb_bind(struct sbuf *sb, int fd, const struct io *io);
void sb_flush(struct sbuf *sb);
const char *sb_cstr(struct sbuf *sb); /* NUL-terminates (memory buffers) */
void sb_chr(struct sbuf *sb, char c);
void sb_strn(struct sbuf *sb, const char *s, size_t n);
void sb_str(struct sbuf *sb, const char *s);
void sb_u64(struct sbuf *sb, uint64_t v);
void sb_hex(struct sbuf *sb, uint64_t v);
/* v / 10^decimals, printed with exactly `decimals` digits after the point. */
void sb_fixed(struct sbuf *sb, uint64_t v, int decimals);
/* Seconds from nanoseconds, with 6 decimals. */
void sb_secs(struct sbuf *sb, uint64_t ns);
/* A size as a policy would write it: 256K, 1M, 1536K, 4097. */
void sb_size_exact(struct sbuf *sb, uint64_t v);
/* A size for people: 1.5 MiB, 320 KiB, 12 B. */
void sb_size_human(struct sbuf *sb, uint64_t v);
/* A JSON string literal, quotes included: always valid JSON; bytes that are
 * not UTF-8 become U+FFFD. */
void sb_json_str(struct sbuf *sb, const char *s);
/* JSON keys with a path ("background.leaps") into nested objects, written
 * in the order given: a group opens where its first key stands (the report's
 * figures and the profile's counters are described that way).  first:
 * nothing written yet in the object being written; then sb_jw_key before
 * each value, and sb_jw_close at the end. */
struct sb_jw {
	struct sbuf *sb;
	const char *group; /* open group, or NULL */
	size_t glen;
	int first;
};
void sb_jw_key(struct sb_jw *w, const char *path);
void sb_jw_close(struct sb_jw *w);
/* A name from outside (argv[0], a path, policy text) in a line of text:
 * control characters (C0, DEL, and the C1 range as UTF-8 encodes it) and
 * bytes that are not UTF-8 are written as \n, \t, \xNN, so a name can
 * neither forge lines nor send a terminal an escape sequence. */
void sb_text(struct sbuf *sb, const char *s);
/* A report or profile path template: %p the pid, %e the program name (made
 * a safe file name: no '/', never "." or "..", no control characters), %%
 * a '%'.  Anything else is copied. */
void sb_template(struct sbuf *sb, const char *tmpl, uint64_t pid, const char *program);

#endif
