/* json.c: see json.h.  Recursive descent over RFC 8259, nesting bounded. */
#include "json.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH 128
#define MAX_FILE (64u << 20)

struct parser {
	const char *s, *end;
	int line;
	char *err;
	size_t errcap;
	int failed;
};

static void fail(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	int n;
	if (p->failed)
		return;
	p->failed = 1;
	if (!p->errcap)
		return;
	n = snprintf(p->err, p->errcap, "line %d: ", p->line);
	if (n >= 0 && (size_t)n < p->errcap) {
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errcap - (size_t)n, fmt, ap);
		va_end(ap);
	}
}

static void skip_ws(struct parser *p)
{
	while (p->s < p->end) {
		char c = *p->s;
		if (c == '\n')
			p->line++;
		else if (c != ' ' && c != '\t' && c != '\r')
			return;
		p->s++;
	}
}

static struct json *node(struct parser *p, enum json_type t)
{
	struct json *j = calloc(1, sizeof *j);
	if (!j)
		fail(p, "out of memory");
	else
		j->type = t;
	return j;
}

static int hex4(const char *s, unsigned *out)
{
	unsigned v = 0;
	int i;
	for (i = 0; i < 4; i++) {
		char c = s[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* At the opening quote.  Returns a malloc'd, decoded, NUL-terminated string. */
static char *string(struct parser *p)
{
	const char *s = ++p->s, *q;
	size_t cap;
	char *out, *o;
	/* The decoded text is never longer than the escaped one. */
	for (q = s; q < p->end && *q != '"'; q++)
		if (*q == '\\' && q + 1 < p->end)
			q++;
	if (q >= p->end) {
		fail(p, "unterminated string");
		return NULL;
	}
	cap = (size_t)(q - s) + 1;
	out = o = malloc(cap);
	if (!out) {
		fail(p, "out of memory");
		return NULL;
	}
	while (*s != '"') {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20) {
			fail(p, "control character in a string");
			goto bad;
		}
		if (c != '\\') {
			*o++ = (char)c;
			s++;
			continue;
		}
		s++;
		switch (*s) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u': {
			unsigned cp, lo;
			if (q - s < 5 || hex4(s + 1, &cp) < 0) {
				fail(p, "bad \\u escape");
				goto bad;
			}
			s += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && q - s >= 7 && s[1] == '\\' && s[2] == 'u' && hex4(s + 3, &lo) == 0 &&
			    lo >= 0xdc00 && lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				s += 6;
			} else if (cp >= 0xd800 && cp < 0xe000) {
				cp = 0xfffd; /* a lone surrogate */
			}
			if (cp == 0) {
				fail(p, "NUL in a string");
				goto bad;
			}
			o += put_utf8(o, cp); /* at most as long as the escape */
			break;
		}
		default:
			fail(p, "bad escape \\%c", *s);
			goto bad;
		}
		s++;
	}
	*o = '\0';
	p->s = q + 1;
	return out;
bad:
	free(out);
	return NULL;
}

static int digits(struct parser *p)
{
	const char *s = p->s;
	while (p->s < p->end && *p->s >= '0' && *p->s <= '9')
		p->s++;
	return p->s > s;
}

static struct json *number(struct parser *p)
{
	const char *start = p->s;
	struct json *j;
	if (p->s < p->end && *p->s == '-')
		p->s++;
	if (p->s < p->end && *p->s == '0')
		p->s++;
	else if (!digits(p))
		goto bad;
	if (p->s < p->end && *p->s == '.') {
		p->s++;
		if (!digits(p))
			goto bad;
	}
	if (p->s < p->end && (*p->s == 'e' || *p->s == 'E')) {
		p->s++;
		if (p->s < p->end && (*p->s == '+' || *p->s == '-'))
			p->s++;
		if (!digits(p))
			goto bad;
	}
	j = node(p, JSON_NUMBER);
	if (!j)
		return NULL;
	j->text = strndup(start, (size_t)(p->s - start));
	if (!j->text) {
		fail(p, "out of memory");
		free(j);
		return NULL;
	}
	return j;
bad:
	fail(p, "bad number");
	return NULL;
}

static int word(struct parser *p, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(p->end - p->s) < n || memcmp(p->s, w, n))
		return 0;
	p->s += n;
	return 1;
}

static struct json *value(struct parser *p, int depth);

/* An array or an object, at its opening bracket. */
static struct json *compound(struct parser *p, int depth, int object)
{
	struct json *j = node(p, object ? JSON_OBJECT : JSON_ARRAY), **tail;
	char close = object ? '}' : ']';
	if (!j)
		return NULL;
	if (depth >= MAX_DEPTH) {
		fail(p, "nested too deep");
		free(j);
		return NULL;
	}
	tail = &j->child;
	p->s++;
	skip_ws(p);
	if (p->s < p->end && *p->s == close) {
		p->s++;
		return j;
	}
	for (;;) {
		char *key = NULL;
		struct json *v;
		skip_ws(p);
		if (object) {
			if (p->s >= p->end || *p->s != '"') {
				fail(p, "expected a member name");
				break;
			}
			key = string(p);
			if (!key)
				break;
			skip_ws(p);
			if (p->s >= p->end || *p->s != ':') {
				fail(p, "expected ':'");
				free(key);
				break;
			}
			p->s++;
		}
		v = value(p, depth + 1);
		if (!v) {
			free(key);
			break;
		}
		v->key = key;
		*tail = v;
		tail = &v->next;
		j->count++;
		skip_ws(p);
		if (p->s < p->end && *p->s == ',') {
			p->s++;
			continue;
		}
		if (p->s < p->end && *p->s == close) {
			p->s++;
			return j;
		}
		fail(p, "expected ',' or '%c'", close);
		break;
	}
	json_free(j);
	return NULL;
}

static struct json *value(struct parser *p, int depth)
{
	struct json *j;
	skip_ws(p);
	if (p->s >= p->end) {
		fail(p, "unexpected end");
		return NULL;
	}
	switch (*p->s) {
	case '{':
		return compound(p, depth, 1);
	case '[':
		return compound(p, depth, 0);
	case '"': {
		char *s = string(p);
		if (!s)
			return NULL;
		j = node(p, JSON_STRING);
		if (!j)
			free(s);
		else
			j->text = s;
		return j;
	}
	case 't':
	case 'f':
		if (word(p, "true") || word(p, "false")) {
			j = node(p, JSON_BOOL);
			if (j)
				j->boolean = p->s[-1] == 'e' && p->s[-2] == 'u';
			return j;
		}
		break;
	case 'n':
		if (word(p, "null"))
			return node(p, JSON_NULL);
		break;
	default:
		if (*p->s == '-' || (*p->s >= '0' && *p->s <= '9'))
			return number(p);
	}
	fail(p, "unexpected character '%c'", *p->s);
	return NULL;
}

struct json *json_parse(const char *text, size_t len, char *err, size_t errcap)
{
	struct parser p = { text, text + len, 1, err, errcap, 0 };
	struct json *j;
	if (errcap)
		err[0] = '\0';
	j = value(&p, 0);
	if (!j)
		return NULL;
	skip_ws(&p);
	if (p.s != p.end) {
		fail(&p, "text after the value");
		json_free(j);
		return NULL;
	}
	return j;
}

struct json *json_parse_file(const char *path, char *err, size_t errcap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	struct json *j;
	char *buf;
	size_t n = 0;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > MAX_FILE) {
		snprintf(err, errcap, "%s", fd < 0 ? strerror(errno) : "not a regular file of a sensible size");
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		snprintf(err, errcap, "out of memory");
		return NULL;
	}
	while (n < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	j = json_parse(buf, n, err, errcap);
	free(buf);
	return j;
}

void json_free(struct json *j)
{
	while (j) {
		struct json *next = j->next;
		json_free(j->child);
		free(j->key);
		free(j->text);
		free(j);
		j = next;
	}
}

const struct json *json_get(const struct json *obj, const char *key)
{
	const struct json *m;
	if (!obj || obj->type != JSON_OBJECT)
		return NULL;
	for (m = obj->child; m; m = m->next)
		if (!strcmp(m->key, key))
			return m;
	return NULL;
}

const struct json *json_path(const struct json *j, const char *dotted)
{
	char name[256];
	while (j && *dotted) {
		const char *dot = strchr(dotted, '.');
		size_t n = dot ? (size_t)(dot - dotted) : strlen(dotted);
		if (n >= sizeof name)
			return NULL;
		memcpy(name, dotted, n);
		name[n] = '\0';
		j = json_get(j, name);
		dotted += n + (dot != NULL);
	}
	return j;
}

const struct json *json_at(const struct json *arr, size_t i)
{
	const struct json *e;
	if (!arr || arr->type != JSON_ARRAY)
		return NULL;
	for (e = arr->child; e && i; e = e->next)
		i--;
	return e;
}

uint64_t json_fixed(const struct json *j, int decimals, uint64_t dflt)
{
	const char *s;
	uint64_t v = 0;
	int exp = decimals, frac = 0;
	if (!j || j->type != JSON_NUMBER)
		return dflt;
	s = j->text;
	if (*s == '-')
		return 0;
	{
		/* The exponent moves the point: 1.5e3 with 0 decimals is 1500. */
		const char *e = strpbrk(s, "eE");
		if (e) {
			long x = strtol(e + 1, NULL, 10);
			if (x > 40)
				return UINT64_MAX;
			if (x < -40)
				return 0;
			exp += (int)x;
		}
	}
	for (; *s && *s != 'e' && *s != 'E'; s++) {
		if (*s == '.') {
			frac = 1;
			continue;
		}
		if (frac) {
			if (exp <= 0)
				break; /* truncate */
			exp--;
		}
		{
			uint64_t d = (uint64_t)(*s - '0');
			if (v > UINT64_MAX / 10 || (v == UINT64_MAX / 10 && d > UINT64_MAX % 10))
				return UINT64_MAX;
			v = v * 10 + d;
		}
	}
	/* Digits before the point, or fewer decimals than asked: scale up. */
	for (; exp > 0; exp--) {
		if (v > UINT64_MAX / 10)
			return UINT64_MAX;
		v *= 10;
	}
	for (; exp < 0; exp++)
		v /= 10;
	return v;
}

uint64_t json_u64(const struct json *j, uint64_t dflt) { return json_fixed(j, 0, dflt); }

double json_double(const struct json *j, double dflt)
{
	if (!j || j->type != JSON_NUMBER)
		return dflt;
	return strtod(j->text, NULL);
}

const char *json_str(const struct json *j, const char *dflt)
{
	return j && j->type == JSON_STRING ? j->text : dflt;
}

size_t json_count(const struct json *j)
{
	return j && (j->type == JSON_ARRAY || j->type == JSON_OBJECT) ? j->count : 0;
}
