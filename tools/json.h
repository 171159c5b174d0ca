/* json.h: a small JSON reader for the shim's reports.
 *
 * json_parse() turns a whole document into a tree; the getters never fail
 * on a missing member or a wrong type: they return the default given, so a
 * reader can walk a report from an older or newer shim without checks at
 * every step.  Numbers keep their text, so integers up to 2^64-1 (a budget
 * of "unlimited") and fixed-point seconds come back exactly.
 */
#ifndef PREFAULT_JSON_H
#define PREFAULT_JSON_H
#include <stddef.h>
#include <stdint.h>

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json {
	enum json_type type;
	char *key;          /* the member's name, inside an object; else NULL */
	char *text;         /* JSON_STRING: the decoded string (UTF-8, may hold no NUL);
	                       JSON_NUMBER: the number as written */
	int boolean;        /* JSON_BOOL */
	size_t count;       /* JSON_ARRAY, JSON_OBJECT: elements or members */
	struct json *child; /* the first element or member */
	struct json *next;  /* the next one in the same array or object */
};

/* Parse len bytes (the whole text must be one value, with white space
 * around it allowed).  Returns the tree, or NULL with a message in err
 * ("line N: what is wrong"). */
struct json *json_parse(const char *text, size_t len, char *err, size_t errcap);
/* Read and parse a file (at most 64 MiB); NULL with a message in err. */
struct json *json_parse_file(const char *path, char *err, size_t errcap);
void json_free(struct json *j);

/* An object's member (the first of that name), or NULL. */
const struct json *json_get(const struct json *obj, const char *key);
/* Members through objects: json_path(d, "faults.minor"). */
const struct json *json_path(const struct json *j, const char *dotted);
/* An array's element i, or NULL. */
const struct json *json_at(const struct json *arr, size_t i);

/* A non-negative integer, exactly; a fraction is truncated, a negative
 * number is 0, a larger one saturates at UINT64_MAX; dflt if j is not a
 * number. */
uint64_t json_u64(const struct json *j, uint64_t dflt);
double json_double(const struct json *j, double dflt);
/* A non-negative decimal as a count of 10^-decimals units, truncated,
 * computed on the digits (no floating point): 0.1239 with 3 is 123. */
uint64_t json_fixed(const struct json *j, int decimals, uint64_t dflt);
/* A string's text, or dflt if j is not a string. */
const char *json_str(const struct json *j, const char *dflt);
/* An array's or object's size, or 0. */
size_t json_count(const struct json *j);

#endif
