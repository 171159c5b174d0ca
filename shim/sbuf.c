/* sbuf.c: see sbuf.h.  Pure apart from write(2) on a bound descriptor. */
#include "sbuf.h"
#include <errno.h>
#include <string.h>
#include <unistd.h>

void sb_init(struct sbuf *sb, char *buf, size_t cap, int fd)
{
	sb->buf = buf;
	sb->cap = cap;
	sb->len = 0;
	sb->fd = fd;
	sb->trunc = 0;
	sb->failed = 0;
}

void sb_flush(struct sbuf *sb)
{
	size_t off = 0;
	if (sb->fd < 0)
		return;
	while (off < sb->len) {
		ssize_t n = write(sb->fd, sb->buf + off, sb->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			sb->failed = 1;
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

void sb_i64(struct sbuf *sb, int64_t v)
{
	if (v < 0) {
		sb_chr(sb, '-');
		sb_u64(sb, (uint64_t)0 - (uint64_t)v);
	} else {
		sb_u64(sb, (uint64_t)v);
	}
}

void sb_hex(struct sbuf *sb, uint64_t v)
{
	char tmp[18];
	int i = (int)sizeof tmp;
	do {
		tmp[--i] = "0123456789abcdef"[v & 15];
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

void sb_json_str(struct sbuf *sb, const char *s)
{
	sb_chr(sb, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			sb_chr(sb, '\\');
			sb_chr(sb, (char)c);
		} else if (c < 0x20 || c == 0x7f) {
			sb_str(sb, "\\u00");
			sb_chr(sb, "0123456789abcdef"[c >> 4]);
			sb_chr(sb, "0123456789abcdef"[c & 15]);
		} else {
			sb_chr(sb, (char)c);
		}
	}
	sb_chr(sb, '"');
}

void sb_pad(struct sbuf *sb, size_t from, size_t width)
{
	while (sb->len >= from && sb->len - from < width)
		sb_chr(sb, ' ');
}
