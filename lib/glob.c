/* glob.c: see glob.h.  Iterative with one backtrack point for '*', so the
 * cost is O(len(pat) * len(s)) and hostile patterns cannot blow the stack. */
#include "glob.h"
#include <stddef.h>

/* Match one character class starting after '['; returns pointer past ']' or
 * NULL if unterminated; *hit tells whether c is in the set. */
static const char *class_match(const char *p, char c, int *hit)
{
	int neg = 0, in = 0;
	if (*p == '!' || *p == '^') {
		neg = 1;
		p++;
	}
	if (*p == ']') { /* a leading ']' is literal */
		in |= (c == ']');
		p++;
	}
	while (*p && *p != ']') {
		if (p[1] == '-' && p[2] && p[2] != ']') {
			if ((unsigned char)c >= (unsigned char)p[0] && (unsigned char)c <= (unsigned char)p[2])
				in = 1;
			p += 3;
		} else {
			in |= (*p == c);
			p++;
		}
	}
	if (*p != ']')
		return NULL;
	*hit = in ^ neg;
	return p + 1;
}

int glob_match(const char *pat, const char *s)
{
	const char *star_p = NULL, *star_s = NULL;
	while (*s) {
		if (*pat == '*') {
			while (*pat == '*')
				pat++;
			if (!*pat)
				return 1;
			star_p = pat;
			star_s = s;
			continue;
		}
		if (*pat == '?') {
			pat++;
			s++;
			continue;
		}
		if (*pat == '[') {
			int hit = 0;
			const char *next = class_match(pat + 1, *s, &hit);
			if (next && hit) {
				pat = next;
				s++;
				continue;
			}
			if (!next && *s == '[') { /* unterminated: literal '[' */
				pat++;
				s++;
				continue;
			}
		} else if (*pat && *pat == *s) {
			pat++;
			s++;
			continue;
		}
		if (!star_p)
			return 0;
		pat = star_p;
		s = ++star_s;
	}
	while (*pat == '*')
		pat++;
	return *pat == '\0';
}

const char *glob_check(const char *pat)
{
	for (; *pat; pat++) {
		if (*pat == '[') {
			int hit;
			if (!class_match(pat + 1, 'x', &hit))
				return "unterminated '[' in pattern";
		}
	}
	return NULL;
}
