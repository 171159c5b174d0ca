/* sbuf.c: see sbuf.h.  Pure apart from io_write on a bound descriptor. */
#include "sbuf.h"
#include "io.h"
#include <errno.h>
#include <string.h>

static const char hexd[] = "0123456789abcdef";

void sb_init(struct sbuf *sb, char *buf, size_t cap, int fd)
{
	sb->buf = buf;
	sb->cap = cap;
	sb->len = 0;
	sb->fd = fd;
	sb->io = NULL;
	sb->trunc = 0;
	sb->failed = 0;
	sb->err = 0;
}

void sb_bind(struct sbuf *sb, int fd, const struct io *io)
{
	sb->fd = fd;
	sb->io = io;
}

void sb_flush(struct sbuf *sb)
{
	size_t off = 0;
	if (sb->fd < 0 || !sb->io)
		return;
	while (off < sb->len) {
		long n = sb->io->write(sb->fd, sb->buf + off, sb->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			sb->failed = 1;
			sb->err = n < 0 ? errno : EIO;
			break;
		}
		off += (size_t)n;
	}
	sb->len = 0;
}

const char *sb_cstr(struct sbuf *sb)
{
	if (sb->cap == 0)
		return "";
	if (sb->len >= sb->cap) {
		sb->len = sb->cap - 1;
		sb->trunc = 1;
	}
	sb->buf[sb->len] = '\0';
	return sb->buf;
}

void sb_strn(struct sbuf *sb, const char *s, size_t n)
{
	while (n > 0) {
		size_t room;
		if (sb->len == sb->cap) {
			if (sb->fd < 0) {
				sb->trunc = 1;
				return;
			}
			sb_flush(sb);
		}
		room = sb->cap - sb->len;
		if (room > n)
			room = n;
		memcpy(sb->buf + sb->len, s, room);
		sb->len += room;
		s += room;
		n -= room;
	}
}

void sb_chr(struct sbuf *sb, char c) { sb_strn(sb, &c, 1); }
void sb_str(struct sbuf *sb, const char *s) { sb_strn(sb, s, strlen(s)); }

void sb_u64(struct sbuf *sb, uint64_t v)
{
	char tmp[24];
	int i = (int)sizeof tmp;
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	sb_strn(sb, tmp + i, sizeof tmp - (size_t)i);
}

void sb_hex(struct sbuf *sb, uint64_t v)
{
	char tmp[18];
	int i = (int)sizeof tmp;
	do {
		tmp[--i] = hexd[v & 15];
		v >>= 4;
	} while (v);
	tmp[--i] = 'x';
	tmp[--i] = '0';
	sb_strn(sb, tmp + i, sizeof tmp - (size_t)i);
}

void sb_fixed(struct sbuf *sb, uint64_t v, int decimals)
{
	uint64_t p = 1;
	char tmp[24];
	int i;
	for (i = 0; i < decimals; i++)
		p *= 10;
	sb_u64(sb, v / p);
	if (decimals <= 0)
		return;
	sb_chr(sb, '.');
	v %= p;
	for (i = decimals - 1; i >= 0; i--) {
		tmp[i] = (char)('0' + v % 10);
		v /= 10;
	}
	sb_strn(sb, tmp, (size_t)decimals);
}

void sb_secs(struct sbuf *sb, uint64_t ns) { sb_fixed(sb, ns / 1000, 6); }

void sb_size_exact(struct sbuf *sb, uint64_t v)
{
	static const char units[] = "KMGT";
	int u = -1;
	while (v && v % 1024 == 0 && u < 3) {
		v /= 1024;
		u++;
	}
	sb_u64(sb, v);
	if (u >= 0)
		sb_chr(sb, units[u]);
}

void sb_size_human(struct sbuf *sb, uint64_t v)
{
	static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;
	uint64_t scaled = v * 10; /* one decimal */
	while (v >= 1024 && u < 4) {
		scaled = (v * 10 + 512) / 1024;
		v /= 1024;
		u++;
	}
	if (u == 0) {
		sb_u64(sb, v);
	} else if (scaled >= 1000) {
		sb_u64(sb, (scaled + 5) / 10);
	} else {
		sb_fixed(sb, scaled, 1);
	}
	sb_chr(sb, ' ');
	sb_str(sb, units[u]);
}

/* Length of the UTF-8 sequence at s (1 to 4), or 0 if it is not valid
 * UTF-8 (overlong forms, surrogates and code points past U+10FFFF are not). */
static int utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	int n, i;
	unsigned cp;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

void sb_json_str(struct sbuf *sb, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	sb_chr(sb, '"');
	while (*s) {
		unsigned c = *s;
		int n;
		if (c == '"' || c == '\\') {
			sb_chr(sb, '\\');
			sb_chr(sb, (char)c);
			s++;
		} else if (c < 0x20 || c == 0x7f) {
			sb_str(sb, "\\u00");
			sb_chr(sb, hexd[c >> 4]);
			sb_chr(sb, hexd[c & 15]);
			s++;
		} else if ((n = utf8_len(s)) > 0) {
			sb_strn(sb, (const char *)s, (size_t)n);
			s += n;
		} else {
			sb_str(sb, "\\ufffd");
			s++;
		}
	}
	sb_chr(sb, '"');
}

static void sb_xbyte(struct sbuf *sb, unsigned c)
{
	sb_str(sb, "\\x");
	sb_chr(sb, hexd[c >> 4]);
	sb_chr(sb, hexd[c & 15]);
}

void sb_text(struct sbuf *sb, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	while (*s) {
		int n = utf8_len(s);
		if (*s == '\n') {
			sb_str(sb, "\\n");
			s++;
		} else if (*s == '\t') {
			sb_str(sb, "\\t");
			s++;
		} else if (n == 0 || *s < 0x20 || *s == 0x7f) {
			sb_xbyte(sb, *s++);
		} else if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0) {
			/* U+0080 to U+009F: C1 controls (U+009B is a CSI to some terminals) */
			sb_xbyte(sb, *s++);
			sb_xbyte(sb, *s++);
		} else {
			sb_strn(sb, (const char *)s, (size_t)n);
			s += n;
		}
	}
}

void sb_template(struct sbuf *sb, const char *t, uint64_t pid, const char *program)
{
	for (; *t; t++) {
		if (t[0] == '%' && t[1] == 'p') {
			sb_u64(sb, pid);
			t++;
		} else if (t[0] == '%' && t[1] == 'e') {
			const unsigned char *p = (const unsigned char *)program;
			/* A program name is not a path: no directory of it, and
			 * never one that climbs or stays put. */
			if (!*p || !strcmp(program, ".") || !strcmp(program, ".."))
				sb_chr(sb, '_');
			else
				for (; *p; p++)
					sb_chr(sb, (*p == '/' || *p < 0x20 || *p == 0x7f) ? '_' : (char)*p);
			t++;
		} else if (t[0] == '%' && t[1] == '%') {
			sb_chr(sb, '%');
			t++;
		} else {
			sb_chr(sb, *t);
		}
	}
}

void sb_jw_key(struct sb_jw *w, const char *path)
{
	const char *dot = strchr(path, '.');
	size_t glen = dot ? (size_t)(dot - path) : 0;
	if (w->group && (!dot || glen != w->glen || strncmp(path, w->group, glen))) {
		sb_chr(w->sb, '}');
		w->group = NULL;
		w->first = 0;
	}
	if (dot && !w->group) {
		sb_str(w->sb, w->first ? "\"" : ",\"");
		sb_strn(w->sb, path, glen);
		sb_str(w->sb, "\":{");
		w->group = path;
		w->glen = glen;
		w->first = 1;
	}
	sb_str(w->sb, w->first ? "\"" : ",\"");
	sb_str(w->sb, dot ? dot + 1 : path);
	sb_str(w->sb, "\":");
	w->first = 0;
}

void sb_jw_close(struct sb_jw *w)
{
	if (w->group)
		sb_chr(w->sb, '}');
	w->group = NULL;
}
