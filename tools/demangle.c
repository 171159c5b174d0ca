/* demangle.c: see demangle.h.
 *
 * Two passes, as libiberty and LLVM do: the name is parsed into a small
 * tree (nodes in a fixed arena, children by index), recording the
 * substitution candidates in the order the ABI defines; the tree is then
 * printed, types in two halves (left and right of the declarator, so a
 * pointer to function prints as "void (*)(int)").  Template parameters are
 * resolved while parsing, to the template arguments of the encoding's name,
 * so every edge points to an earlier node: printing always ends, and a step
 * count bounds it besides.  The output follows GNU c++filt (binutils 2.40):
 * "char const*", "> >", "(anonymous namespace)", "{lambda()#1}". */
#include "demangle.h"
#include <stdlib.h>
#include <string.h>

#define MAX_NODES 8192
#define MAX_SUBS 1024
#define MAX_DEPTH 128
#define OUT_CAP 8192
#define MAX_STEPS 200000

enum kind {
	K_NAME,     /* s */
	K_STD,      /* a std:: abbreviation: s printed, s2 its simple name */
	K_NESTED,   /* a::b */
	K_TEMPLATE, /* a<list b> */
	K_CELL,     /* list cell: a item, b next */
	K_ENCODING, /* a name, b function (K_FUNC) or -1 */
	K_FUNC,     /* a return type or -1, b params list; quals cv, ref */
	K_LOCAL,    /* a encoding :: b entity */
	K_CTOR,     /* a the class */
	K_DTOR,
	K_OPERATOR, /* s */
	K_CONV,     /* operator a */
	K_ABITAG,   /* a[abi:s] */
	K_UNNAMED,  /* {unnamed type#n} */
	K_LAMBDA,   /* {lambda(b)#n} */
	K_SPECIAL,  /* s a */
	K_CTORVT,   /* construction vtable for b-in-a */
	K_QUAL,     /* a cv */
	K_VENDQ,    /* a s */
	K_PTR,
	K_LREF,
	K_RREF,
	K_ARRAY,    /* a element, s dimension (or b an expression) */
	K_PTRMEM,   /* a class, b member type */
	K_VECTOR,   /* a __vector(s) */
	K_PACK,     /* list b */
	K_EXPAND,   /* a... */
	K_LITERAL,  /* a type or -1, s digits; n: 1 negative */
	K_UNARY,    /* s(a) */
	K_BINARY,   /* (a)s(b) */
	K_CALL,     /* a(list b) */
	K_SIZEOF,   /* s (a) */
	K_TPARAM,   /* template parameter n, as a substitution: resolved where it is used */
	K_DEFARG,   /* {default arg#n} */
	K_MEMBER,   /* (a)s b: a.b, a->b */
	K_REFTEMP,  /* reference temporary #n for a */
};

struct node {
	unsigned char kind, cv, ref;
	int a, b, n;
	const char *s, *s2;
	int len;
};

struct dm {
	const char *p, *end;
	struct node nd[MAX_NODES];
	int nn;
	int subs[MAX_SUBS];
	int ns;
	int tctx;   /* printing: the template arguments T_ means (first cell), or -1 */
	int in_lambda; /* printing a lambda's parameters: T_ is auto:1 */
	int depth;
	char out[OUT_CAP];
	size_t olen;
	int bad;
	long steps;
	int pack;   /* while printing an expansion: the element of pack_node to print, or -1 */
	int pack_node;
};

/* ---- parsing helpers ---- */

static char peek(const struct dm *d) { return d->p < d->end ? *d->p : 0; }
static char peek2(const struct dm *d) { return d->end - d->p >= 2 ? d->p[1] : 0; }
static int eat(struct dm *d, char c)
{
	if (peek(d) != c)
		return 0;
	d->p++;
	return 1;
}
static int isdig(char c) { return c >= '0' && c <= '9'; }
static int islow(char c) { return c >= 'a' && c <= 'z'; }
static int isup(char c) { return c >= 'A' && c <= 'Z'; }

/* The name is not understood: say so, and unwind. */
static int fail(struct dm *d)
{
	d->bad = 1;
	return -1;
}

static int mk(struct dm *d, enum kind k, int a, int b)
{
	struct node *n;
	if (d->nn >= MAX_NODES)
		return fail(d);
	n = &d->nd[d->nn];
	memset(n, 0, sizeof *n);
	n->kind = (unsigned char)k;
	n->a = a;
	n->b = b;
	return d->nn++;
}

static int mktext(struct dm *d, enum kind k, const char *s, int len)
{
	int i = mk(d, k, -1, -1);
	if (i >= 0) {
		d->nd[i].s = s;
		d->nd[i].len = len;
	}
	return i;
}

static int mkname(struct dm *d, const char *s) { return mktext(d, K_NAME, s, (int)strlen(s)); }

static int add_sub(struct dm *d, int n)
{
	if (n < 0 || d->ns >= MAX_SUBS)
		return fail(d);
	d->subs[d->ns++] = n;
	return 0;
}

/* A list under construction: head and tail cells. */
struct list {
	int head, tail, n;
};

static void list_add(struct dm *d, struct list *l, int item)
{
	int c = mk(d, K_CELL, item, -1);
	if (c < 0)
		return;
	if (l->tail >= 0)
		d->nd[l->tail].b = c;
	else
		l->head = c;
	l->tail = c;
	l->n++;
}

/* A decimal number (non-negative); -1 if none. */
static long number(struct dm *d)
{
	long v = 0;
	if (!isdig(peek(d)))
		return -1;
	while (isdig(peek(d))) {
		v = v * 10 + (*d->p++ - '0');
		if (v > 1000000)
			return -1;
	}
	return v;
}

/* seq-id: base 36, upper case; then '_'.  S_ is 0, S0_ is 1. */
static long seq_id(struct dm *d)
{
	long v = 0;
	if (eat(d, '_'))
		return 0;
	while (isdig(peek(d)) || isup(peek(d))) {
		char c = *d->p++;
		v = v * 36 + (isdig(c) ? c - '0' : c - 'A' + 10);
		if (v > 100000)
			return -1;
	}
	return eat(d, '_') ? v + 1 : -1;
}

static int type(struct dm *d);
static int encoding(struct dm *d);
static int name(struct dm *d, int top, int *cv, int *ref, int *tmpl, int *cdtor);
static int expr(struct dm *d);
static int unresolved_name(struct dm *d);
static int simple_id(struct dm *d, int scope);
static int template_args(struct dm *d, int top);

static int enter(struct dm *d)
{
	if (++d->depth > MAX_DEPTH || d->bad)
		return fail(d);
	return 0;
}

/* ---- names ---- */

static int source_name(struct dm *d)
{
	long len = number(d);
	const char *s = d->p;
	if (len <= 0 || len > d->end - d->p)
		return fail(d);
	d->p += len;
	if (len >= 10 && !memcmp(s, "_GLOBAL_", 8) && (s[8] == '.' || s[8] == '_' || s[8] == '$') && s[9] == 'N')
		return mkname(d, "(anonymous namespace)");
	return mktext(d, K_NAME, s, (int)len);
}

static const struct op {
	char code[3];
	const char *name;
	int arity;
} ops[] = {
	{ "nw", "new", 3 }, { "na", "new[]", 3 }, { "dl", "delete", 1 }, { "da", "delete[]", 1 },
	{ "ps", "+", 1 }, { "ng", "-", 1 }, { "ad", "&", 1 }, { "de", "*", 1 }, { "co", "~", 1 },
	{ "pl", "+", 2 }, { "mi", "-", 2 }, { "ml", "*", 2 }, { "dv", "/", 2 }, { "rm", "%", 2 },
	{ "an", "&", 2 }, { "or", "|", 2 }, { "eo", "^", 2 }, { "aS", "=", 2 }, { "pL", "+=", 2 },
	{ "mI", "-=", 2 }, { "mL", "*=", 2 }, { "dV", "/=", 2 }, { "rM", "%=", 2 }, { "aN", "&=", 2 },
	{ "oR", "|=", 2 }, { "eO", "^=", 2 }, { "ls", "<<", 2 }, { "rs", ">>", 2 }, { "lS", "<<=", 2 },
	{ "rS", ">>=", 2 }, { "eq", "==", 2 }, { "ne", "!=", 2 }, { "lt", "<", 2 }, { "gt", ">", 2 },
	{ "le", "<=", 2 }, { "ge", ">=", 2 }, { "ss", "<=>", 2 }, { "nt", "!", 1 }, { "aa", "&&", 2 },
	{ "oo", "||", 2 }, { "pp", "++", 1 }, { "mm", "--", 1 }, { "cm", ",", 2 }, { "pm", "->*", 2 },
	{ "pt", "->", 2 }, { "cl", "()", 2 }, { "ix", "[]", 2 }, { "qu", "?", 3 }, { "aw", "co_await", 1 },
};

static const struct op *find_op(const struct dm *d)
{
	size_t i;
	if (d->end - d->p < 2)
		return NULL;
	for (i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (d->p[0] == ops[i].code[0] && d->p[1] == ops[i].code[1])
			return &ops[i];
	return NULL;
}

static int operator_name(struct dm *d, int *cdtor)
{
	const struct op *o;
	if (peek(d) == 'c' && peek2(d) == 'v') { /* conversion: operator T */
		int t;
		d->p += 2;
		t = type(d);
		*cdtor = 1;
		return t < 0 ? -1 : mk(d, K_CONV, t, -1);
	}
	if (peek(d) == 'l' && peek2(d) == 'i') { /* operator"" _suffix */
		int s, n;
		d->p += 2;
		s = source_name(d);
		if (s < 0)
			return -1;
		n = mk(d, K_OPERATOR, -1, -1);
		if (n >= 0) {
			d->nd[n].s = "\"\" ";
			d->nd[n].len = 3;
			d->nd[n].a = s;
		}
		return n;
	}
	o = find_op(d);
	if (!o)
		return fail(d);
	d->p += 2;
	return mktext(d, K_OPERATOR, o->name, (int)strlen(o->name));
}

/* <unqualified-name> [<abi-tags>]; scope: the prefix (for constructors). */
static int unqualified_name(struct dm *d, int scope, int *cdtor)
{
	int n = -1;
	char c;
	if (enter(d) < 0)
		return -1;
	*cdtor = 0;
	eat(d, 'L'); /* internal linkage (GCC) */
	c = peek(d);
	if (isdig(c)) {
		n = source_name(d);
	} else if (islow(c)) {
		n = operator_name(d, cdtor);
	} else if (c == 'C' || (c == 'D' && (peek2(d) == '0' || peek2(d) == '1' || peek2(d) == '2' || peek2(d) == '4' ||
	                                     peek2(d) == '5'))) {
		int inherit = 0;
		if (scope < 0)
			return fail(d);
		d->p++;
		if (c == 'C' && eat(d, 'I'))
			inherit = 1;
		if (!isdig(peek(d)))
			return fail(d);
		d->p++;
		if (inherit && type(d) < 0)
			return -1;
		n = mk(d, c == 'C' ? K_CTOR : K_DTOR, scope, -1);
		*cdtor = 1;
	} else if (c == 'U' && peek2(d) == 't') { /* unnamed type */
		long k;
		d->p += 2;
		k = isdig(peek(d)) ? number(d) + 1 : 0;
		if (k < 0 || !eat(d, '_'))
			return fail(d);
		n = mk(d, K_UNNAMED, -1, -1);
		if (n >= 0)
			d->nd[n].n = (int)k + 1;
	} else if (c == 'U' && peek2(d) == 'l') { /* lambda: its parameter types */
		struct list l = { -1, -1, 0 };
		long k;
		d->p += 2;
		while (!d->bad && peek(d) && peek(d) != 'E') {
			int t = type(d);
			if (t < 0)
				return -1;
			list_add(d, &l, t);
		}
		if (!eat(d, 'E'))
			return fail(d);
		if (l.n == 1 && d->nd[d->nd[l.head].a].kind == K_NAME && d->nd[d->nd[l.head].a].len == 4 &&
		    !memcmp(d->nd[d->nd[l.head].a].s, "void", 4))
			l.head = -1;
		k = isdig(peek(d)) ? number(d) + 1 : 0;
		if (k < 0 || !eat(d, '_'))
			return fail(d);
		n = mk(d, K_LAMBDA, -1, l.head);
		if (n >= 0)
			d->nd[n].n = (int)k + 1;
	} else return fail(d);
	while (n >= 0 && peek(d) == 'B') { /* [abi:tag] */
		int t;
		d->p++;
		t = source_name(d);
		if (t < 0)
			return -1;
		n = mk(d, K_ABITAG, n, -1);
		if (n >= 0) {
			d->nd[n].s = d->nd[t].s;
			d->nd[n].len = d->nd[t].len;
		}
	}
	d->depth--;
	return n;
}

static const struct stdab {
	char c;
	const char *text, *simple;
} stdabs[] = {
	{ 't', "std", "std" },
	{ 'a', "std::allocator", "allocator" },
	{ 'b', "std::basic_string", "basic_string" },
	{ 's', "std::basic_string<char, std::char_traits<char>, std::allocator<char> >", "basic_string" },
	{ 'i', "std::basic_istream<char, std::char_traits<char> >", "basic_istream" },
	{ 'o', "std::basic_ostream<char, std::char_traits<char> >", "basic_ostream" },
	{ 'd', "std::basic_iostream<char, std::char_traits<char> >", "basic_iostream" },
};

/* <substitution>: S_, S<seq-id>_, or a std:: abbreviation. */
static int substitution(struct dm *d)
{
	size_t i;
	long k;
	if (!eat(d, 'S'))
		return fail(d);
	for (i = 0; i < sizeof stdabs / sizeof stdabs[0]; i++) {
		if (peek(d) == stdabs[i].c) {
			int n;
			d->p++;
			n = mktext(d, K_STD, stdabs[i].text, (int)strlen(stdabs[i].text));
			if (n >= 0)
				d->nd[n].s2 = stdabs[i].simple;
			return n;
		}
	}
	k = seq_id(d);
	if (k < 0 || k >= d->ns)
		return fail(d);
	return d->subs[k];
}

/* T_, T0_...: a reference, resolved when printed (in a function
 * template's encoding, to its template arguments; in a generic lambda's
 * parameters, to auto:N), as the ABI means it: a substitution of it later
 * means the parameter of wherever it is used. */
static int template_param(struct dm *d)
{
	long k;
	int t;
	if (!eat(d, 'T') || (k = seq_id(d)) < 0)
		return fail(d);
	t = mk(d, K_TPARAM, -1, -1);
	if (t >= 0)
		d->nd[t].n = (int)k;
	return t;
}

static int nested_name(struct dm *d, int top, int *cv, int *ref, int *tmpl, int *cdtor)
{
	int ret = -1;
	d->p++; /* N */
	while (peek(d) == 'r' || peek(d) == 'V' || peek(d) == 'K') {
		char c = *d->p++;
		*cv |= c == 'K' ? 1 : c == 'V' ? 2 : 4;
	}
	if (peek(d) == 'R' || peek(d) == 'O')
		*ref = *d->p++ == 'R' ? 1 : 2;
	for (;;) {
		char c = peek(d);
		int comp, was_sub = 0;
		if (d->bad)
			return -1;
		if (c == 'E') {
			d->p++;
			if (ret < 0)
				d->bad = 1;
			return ret;
		}
		if (c == 'I') {
			int args;
			if (ret < 0)
				return fail(d);
			args = template_args(d, top);
			if (args < 0 && d->bad)
				return -1;
			ret = mk(d, K_TEMPLATE, ret, args); /* (a constructor template stays one) */
			*tmpl = 1;
			if (peek(d) != 'E' && add_sub(d, ret) < 0)
				return -1;
			continue;
		}
		if (c == 'M') { /* the scope of a lambda's initializer */
			d->p++;
			continue;
		}
		*tmpl = 0;
		*cdtor = 0;
		if (c == 'S' && peek2(d) == 't') {
			d->p += 2;
			comp = mkname(d, "std");
			was_sub = 1;
		} else if (c == 'S') {
			comp = substitution(d);
			was_sub = 1;
		} else if (c == 'T') {
			comp = template_param(d);
		} else if (c == 'D' && (peek2(d) == 't' || peek2(d) == 'T')) {
			comp = type(d); /* decltype */
		} else if (isdig(c) || islow(c) || c == 'C' || c == 'D' || c == 'U' || c == 'L') {
			comp = unqualified_name(d, ret, cdtor);
		} else return fail(d);
		if (comp < 0)
			return -1;
		ret = ret < 0 ? comp : mk(d, K_NESTED, ret, comp);
		if (!was_sub && peek(d) != 'E' && add_sub(d, ret) < 0)
			return -1;
	}
}

/* <discriminator>: _ <digit>, or __ <number> _ */
static void discriminator(struct dm *d)
{
	if (peek(d) != '_')
		return;
	d->p++;
	if (eat(d, '_')) {
		number(d);
		eat(d, '_');
	} else {
		number(d);
	}
}

static int local_name(struct dm *d, int *cv, int *ref, int *tmpl, int *cdtor)
{
	int enc, ent, defarg = -1, kind;
	d->p++; /* Z */
	enc = encoding(d);
	if (enc < 0 || !eat(d, 'E'))
		return fail(d);
	if (eat(d, 's')) {
		ent = mkname(d, "string literal");
		discriminator(d);
		return mk(d, K_LOCAL, enc, ent);
	}
	if (eat(d, 'd')) { /* a default argument's scope: d [<number>] _ <name> */
		long k = isdig(peek(d)) ? number(d) + 1 : 0;
		if (k < 0 || !eat(d, '_'))
			return fail(d);
		defarg = mk(d, K_DEFARG, -1, -1);
		if (defarg >= 0)
			d->nd[defarg].n = (int)k + 1;
	}
	ent = name(d, 1, cv, ref, tmpl, cdtor);
	if (ent < 0)
		return -1;
	kind = d->nd[ent].kind;
	if (kind != K_LAMBDA && kind != K_UNNAMED) /* (those end in their own number) */
		discriminator(d);
	if (defarg >= 0)
		ent = mk(d, K_NESTED, defarg, ent);
	return mk(d, K_LOCAL, enc, ent);
}

/* <name>.  top: the name of an encoding (its template arguments are what
 * T_ means in the rest of it).  cv, ref: of a member function; tmpl: ends
 * in template arguments; cdtor: a constructor, destructor or conversion. */
static int name(struct dm *d, int top, int *cv, int *ref, int *tmpl, int *cdtor)
{
	int n;
	char c = peek(d);
	if (enter(d) < 0)
		return -1;
	*tmpl = *cdtor = 0;
	if (c == 'N') {
		n = nested_name(d, top, cv, ref, tmpl, cdtor);
	} else if (c == 'Z') {
		n = local_name(d, cv, ref, tmpl, cdtor);
	} else {
		int was_sub = 0;
		if (c == 'S' && peek2(d) == 't') {
			int u;
			d->p += 2;
			u = unqualified_name(d, -1, cdtor);
			n = u < 0 ? -1 : mk(d, K_NESTED, mkname(d, "std"), u);
		} else if (c == 'S') {
			n = substitution(d);
			was_sub = 1;
		} else {
			n = unqualified_name(d, -1, cdtor);
		}
		if (n >= 0 && peek(d) == 'I') {
			int args;
			if (!was_sub && add_sub(d, n) < 0)
				return -1;
			args = template_args(d, top);
			if (args < 0 && d->bad)
				return -1;
			n = mk(d, K_TEMPLATE, n, args);
			*tmpl = 1;
		}
	}
	d->depth--;
	return d->bad ? -1 : n;
}

/* ---- types ---- */

static const struct builtin {
	char c;
	const char *name;
} builtins[] = {
	{ 'v', "void" }, { 'w', "wchar_t" }, { 'b', "bool" }, { 'c', "char" }, { 'a', "signed char" },
	{ 'h', "unsigned char" }, { 's', "short" }, { 't', "unsigned short" }, { 'i', "int" },
	{ 'j', "unsigned int" }, { 'l', "long" }, { 'm', "unsigned long" }, { 'x', "long long" },
	{ 'y', "unsigned long long" }, { 'n', "__int128" }, { 'o', "unsigned __int128" }, { 'f', "float" },
	{ 'd', "double" }, { 'e', "long double" }, { 'g', "__float128" }, { 'z', "..." },
};

static const struct builtin dbuiltins[] = {
	{ 'd', "decimal64" }, { 'e', "decimal128" }, { 'f', "decimal32" }, { 'h', "half" }, { 'i', "char32_t" },
	{ 's', "char16_t" }, { 'u', "char8_t" }, { 'a', "auto" }, { 'c', "decltype(auto)" }, { 'n', "decltype(nullptr)" },
};

/* The parameter types of a function up to 'E' (or the end of the name): a
 * lone "v" is no parameters. */
static int param_list(struct dm *d, char stop)
{
	struct list l = { -1, -1, 0 };
	while (!d->bad && peek(d) && peek(d) != stop && peek(d) != '.') {
		int t = type(d);
		if (t < 0)
			return -1;
		list_add(d, &l, t);
	}
	if (l.n == 1) {
		const struct node *t = &d->nd[d->nd[l.head].a];
		if (t->kind == K_NAME && t->len == 4 && !memcmp(t->s, "void", 4) && t->a == -2)
			return -1; /* (void): no parameters; d->bad stays 0 */
	}
	return l.head;
}

static int function_type(struct dm *d, int cv)
{
	int ret, params, f, ref = 0;
	d->p++; /* F */
	eat(d, 'Y'); /* extern "C" */
	ret = type(d);
	if (ret < 0)
		return -1;
	params = param_list(d, 'E');
	if (d->bad)
		return -1;
	if (peek(d) == 'R' && peek2(d) == 'E') {
		d->p++;
		ref = 1;
	} else if (peek(d) == 'O' && peek2(d) == 'E') {
		d->p++;
		ref = 2;
	}
	if (!eat(d, 'E'))
		return fail(d);
	f = mk(d, K_FUNC, ret, params);
	if (f >= 0) {
		d->nd[f].cv = (unsigned char)cv;
		d->nd[f].ref = (unsigned char)ref;
	}
	return f;
}

/* cv applied to type n; on an array it applies to the elements, which is
 * how it prints: "int const (&) [3]". */
static int qualify(struct dm *d, int n, int cv)
{
	int t, k;
	if (n >= 0 && d->nd[n].kind == K_ARRAY && ++d->depth < MAX_DEPTH) {
		int el = qualify(d, d->nd[n].a, cv);
		d->depth--;
		if (el < 0)
			return -1;
		t = mk(d, K_ARRAY, el, d->nd[n].b);
		if (t >= 0) {
			d->nd[t].s = d->nd[n].s;
			d->nd[t].len = d->nd[n].len;
		}
		return t;
	}
	k = mk(d, K_QUAL, n, -1);
	if (k >= 0)
		d->nd[k].cv = (unsigned char)cv;
	return k;
}

static int type(struct dm *d)
{
	int t = -1, subst = 1;
	char c = peek(d);
	size_t i;
	if (enter(d) < 0)
		return -1;
	for (i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
		if (c == builtins[i].c) {
			d->p++;
			t = mkname(d, builtins[i].name);
			if (t >= 0)
				d->nd[t].a = -2; /* a builtin (for "v" as no parameters) */
			d->depth--;
			return t;
		}
	}
	switch (c) {
	case 'r':
	case 'V':
	case 'K': {
		int cv = 0;
		while (peek(d) == 'r' || peek(d) == 'V' || peek(d) == 'K') {
			char q = *d->p++;
			cv |= q == 'K' ? 1 : q == 'V' ? 2 : 4;
		}
		if (peek(d) == 'F') { /* the qualifiers of a member function type */
			t = function_type(d, cv);
		} else {
			int inner = type(d);
			if (inner < 0)
				return -1;
			t = qualify(d, inner, cv);
		}
		break;
	}
	case 'P':
	case 'R':
	case 'O': {
		int inner;
		d->p++;
		inner = type(d);
		if (inner < 0)
			return -1;
		t = mk(d, c == 'P' ? K_PTR : c == 'R' ? K_LREF : K_RREF, inner, -1);
		break;
	}
	case 'C': /* complex, imaginary */
	case 'G': {
		int inner;
		d->p++;
		inner = type(d);
		if (inner < 0)
			return -1;
		t = mk(d, K_VENDQ, inner, -1);
		if (t >= 0) {
			d->nd[t].s = c == 'C' ? "_Complex" : "_Imaginary";
			d->nd[t].len = (int)strlen(d->nd[t].s);
		}
		break;
	}
	case 'U': { /* vendor qualifier: U <source-name> [<template-args>] <type> */
		int q, inner;
		d->p++;
		q = source_name(d);
		if (q < 0)
			return -1;
		if (peek(d) == 'I')
			return fail(d);
		inner = type(d);
		if (inner < 0)
			return -1;
		t = mk(d, K_VENDQ, inner, -1);
		if (t >= 0) {
			d->nd[t].s = d->nd[q].s;
			d->nd[t].len = d->nd[q].len;
		}
		break;
	}
	case 'F':
		t = function_type(d, 0);
		break;
	case 'A': { /* array: A <number> _ <type>, A <expression> _ <type>, A _ <type> */
		const char *dim = d->p + 1;
		int len = 0, e = -1, el;
		d->p++;
		if (isdig(peek(d))) {
			while (isdig(peek(d)))
				d->p++;
			len = (int)(d->p - dim);
		} else if (peek(d) != '_') {
			e = expr(d);
			if (e < 0)
				return -1;
		}
		if (!eat(d, '_'))
			return fail(d);
		el = type(d);
		if (el < 0)
			return -1;
		t = mk(d, K_ARRAY, el, e);
		if (t >= 0) {
			d->nd[t].s = dim;
			d->nd[t].len = len;
		}
		break;
	}
	case 'M': { /* pointer to member: M <class type> <member type> */
		int cl, mem;
		d->p++;
		cl = type(d);
		if (cl < 0)
			return -1;
		mem = type(d); /* (a qualified function type: the member function's) */
		if (mem < 0)
			return -1;
		t = mk(d, K_PTRMEM, cl, mem);
		break;
	}
	case 'T':
		t = template_param(d);
		if (t >= 0 && peek(d) == 'I') { /* a template template parameter with its arguments */
			int args;
			if (add_sub(d, t) < 0)
				return -1;
			args = template_args(d, 0);
			if (args < 0 && d->bad)
				return -1;
			t = mk(d, K_TEMPLATE, t, args);
		}
		break;
	case 'S':
		if (peek2(d) != 't' && (isdig(peek2(d)) || peek2(d) == '_' || isup(peek2(d)) || peek2(d) == 'a' ||
		                        peek2(d) == 'b' || peek2(d) == 's' || peek2(d) == 'i' || peek2(d) == 'o' ||
		                        peek2(d) == 'd')) {
			t = substitution(d);
			if (t >= 0 && peek(d) == 'I') {
				int args = template_args(d, 0);
				if (args < 0 && d->bad)
					return -1;
				t = mk(d, K_TEMPLATE, t, args);
			} else {
				subst = 0;
			}
		} else {
			int cv = 0, ref = 0, tmpl, cdtor;
			t = name(d, 0, &cv, &ref, &tmpl, &cdtor);
		}
		break;
	case 'D': {
		char c2 = peek2(d);
		if (c2 == 'p') { /* pack expansion */
			int inner;
			d->p += 2;
			inner = type(d);
			if (inner < 0)
				return -1;
			t = mk(d, K_EXPAND, inner, -1);
			break;
		}
		if (c2 == 't' || c2 == 'T') { /* decltype (expression) */
			int e;
			d->p += 2;
			e = expr(d);
			if (e < 0 || !eat(d, 'E'))
				return fail(d);
			t = mk(d, K_UNARY, e, -1);
			if (t >= 0) {
				d->nd[t].s = "decltype ";
				d->nd[t].len = 9;
			}
			break;
		}
		if (c2 == 'v') { /* vector: Dv <number> _ <type> */
			const char *n0;
			int el, len;
			d->p += 2;
			n0 = d->p;
			if (number(d) < 0)
				return fail(d);
			len = (int)(d->p - n0);
			if (!eat(d, '_'))
				return fail(d);
			el = type(d);
			if (el < 0)
				return -1;
			t = mk(d, K_VECTOR, el, -1);
			if (t >= 0) {
				d->nd[t].s = n0;
				d->nd[t].len = len;
			}
			break;
		}
		if (c2 == 'F') { /* _FloatN: DF <number> _ */
			const char *n0;
			int len;
			d->p += 2;
			n0 = d->p;
			if (number(d) < 0)
				return fail(d);
			len = (int)(d->p - n0);
			if (!eat(d, '_'))
				return fail(d);
			t = mktext(d, K_NAME, n0 - 1, 0);
			if (t >= 0) { /* printed as "_Float" + digits */
				d->nd[t].s = n0;
				d->nd[t].len = len;
				d->nd[t].s2 = "_Float";
			}
			subst = 0;
			break;
		}
		for (i = 0; i < sizeof dbuiltins / sizeof dbuiltins[0]; i++) {
			if (c2 == dbuiltins[i].c) {
				d->p += 2;
				t = mkname(d, dbuiltins[i].name);
				d->depth--;
				return t;
			}
		}
		d->bad = 1;
		return -1;
	}
	case 'u': { /* vendor extended type */
		d->p++;
		t = source_name(d);
		break;
	}
	default:
		if (isdig(c) || c == 'N' || c == 'Z') {
			int cv = 0, ref = 0, tmpl, cdtor;
			t = name(d, 0, &cv, &ref, &tmpl, &cdtor);
			break;
		}
		d->bad = 1;
		return -1;
	}
	if (t < 0 || d->bad)
		return fail(d);
	if (subst && add_sub(d, t) < 0)
		return -1;
	d->depth--;
	return t;
}

/* ---- expressions (template arguments, decltype, array sizes): the common forms ---- */

static int expr_primary(struct dm *d)
{
	int t, n;
	const char *v;
	d->p++; /* L */
	if (peek(d) == '_' && peek2(d) == 'Z') {
		d->p += 2;
		t = encoding(d);
		if (t < 0 || !eat(d, 'E'))
			return fail(d);
		return t;
	}
	t = type(d);
	if (t < 0)
		return -1;
	n = mk(d, K_LITERAL, t, -1);
	if (n < 0)
		return -1;
	if (eat(d, 'n'))
		d->nd[n].n = 1;
	v = d->p;
	while (peek(d) && peek(d) != 'E')
		d->p++;
	if (!eat(d, 'E'))
		return fail(d);
	d->nd[n].s = v;
	d->nd[n].len = (int)(d->p - 1 - v);
	return n;
}

/* <simple-id>: a source name with its template arguments, if any. */
static int simple_id(struct dm *d, int scope)
{
	int cd, n = unqualified_name(d, scope, &cd);
	if (n >= 0 && peek(d) == 'I') {
		int args = template_args(d, 0);
		if (args < 0 && d->bad)
			return -1;
		n = mk(d, K_TEMPLATE, n, args);
	}
	return n;
}

/* After "sr": the qualifiers (a type, or levels of names up to 'E') and
 * the name.  Without that 'E' (the old mangling) the last level is the
 * name: told apart by what follows the 'E'. */
static int unresolved_name(struct dm *d)
{
	int q = -1, n;
	if (isdig(peek(d)) || islow(peek(d))) {
		int last = -1;
		while (!d->bad && (isdig(peek(d)) || peek(d) == 'L')) {
			int l = simple_id(d, q);
			if (l < 0)
				return -1;
			if (last >= 0)
				q = q < 0 ? last : mk(d, K_NESTED, q, last);
			last = l;
		}
		if (last < 0)
			return fail(d);
		if (peek(d) != 'E' || !(isdig(peek2(d)) || islow(peek2(d)) || peek2(d) == 'L'))
			return q < 0 ? last : mk(d, K_NESTED, q, last);
		d->p++;
		q = q < 0 ? last : mk(d, K_NESTED, q, last);
	} else {
		q = type(d);
		if (q < 0)
			return -1;
	}
	n = simple_id(d, q);
	return n < 0 ? -1 : mk(d, K_NESTED, q, n);
}

static int expr(struct dm *d)
{
	const struct op *o;
	char c = peek(d);
	int r;
	if (enter(d) < 0)
		return -1;
	if (c == 'L') {
		r = expr_primary(d);
	} else if (c == 'T') {
		r = template_param(d);
	} else if (c == 'f' && peek2(d) == 'p') { /* a function parameter: {parm#N} */
		long k;
		d->p += 2;
		while (peek(d) == 'r' || peek(d) == 'V' || peek(d) == 'K')
			d->p++;
		k = isdig(peek(d)) ? number(d) + 1 : 0;
		if (k < 0 || !eat(d, '_'))
			return fail(d);
		r = mk(d, K_LITERAL, -1, -1);
		if (r >= 0) {
			d->nd[r].s = "{parm#";
			d->nd[r].len = 6;
			d->nd[r].n = 2 + (int)k; /* n >= 2: a parameter, numbered n - 1 */
		}
	} else if (c == 's' && peek2(d) == 'r') { /* an unresolved name */
		d->p += 2;
		r = unresolved_name(d);
	} else if ((c == 'd' || c == 'p') && peek2(d) == 't') { /* member access: a.name, a->name */
		int a, nm;
		d->p += 2;
		a = expr(d);
		if (a < 0)
			return -1;
		nm = (peek(d) == 's' && peek2(d) == 'r') ? (d->p += 2, unresolved_name(d)) : simple_id(d, -1);
		if (nm < 0)
			return -1;
		r = mk(d, K_MEMBER, a, nm);
		if (r >= 0) {
			d->nd[r].s = c == 'd' ? "." : "->";
			d->nd[r].len = (int)strlen(d->nd[r].s);
		}
	} else if (c == 's' && peek2(d) == 'p') { /* pack expansion */
		d->p += 2;
		r = expr(d);
		r = r < 0 ? -1 : mk(d, K_EXPAND, r, -1);
	} else if (c == 'f' && peek2(d) == 'p' && d->end - d->p >= 3 && d->p[2] == 'T') {
		d->p += 3;
		r = mkname(d, "this");
	} else if (c == 's' && peek2(d) == 'Z') { /* sizeof...(pack) */
		int a;
		d->p += 2;
		a = peek(d) == 'T' ? template_param(d) : expr(d);
		r = a < 0 ? -1 : mk(d, K_SIZEOF, a, -1);
		if (r >= 0) {
			d->nd[r].s = "sizeof...";
			d->nd[r].len = 9;
		}
	} else if ((c == 's' || c == 'a') && (peek2(d) == 't' || peek2(d) == 'z')) { /* sizeof, alignof */
		int ty = c == 's' ? 1 : 0, e;
		int istype = peek2(d) == 't';
		d->p += 2;
		e = istype ? type(d) : expr(d);
		if (e < 0)
			return -1;
		r = mk(d, K_SIZEOF, e, -1);
		if (r >= 0) {
			d->nd[r].s = ty ? "sizeof" : "alignof";
			d->nd[r].len = (int)strlen(d->nd[r].s);
		}
	} else if (c == 'c' && peek2(d) == 'l') { /* call: cl <expression>+ E */
		struct list l = { -1, -1, 0 };
		int fn;
		d->p += 2;
		fn = expr(d);
		if (fn < 0)
			return -1;
		while (!d->bad && peek(d) && peek(d) != 'E') {
			int a = expr(d);
			if (a < 0)
				return -1;
			list_add(d, &l, a);
		}
		if (!eat(d, 'E'))
			return fail(d);
		r = mk(d, K_CALL, fn, l.head);
	} else if ((o = find_op(d)) && (o->arity == 1 || o->arity == 2)) {
		int a, b = -1;
		d->p += 2;
		a = expr(d);
		if (a < 0)
			return -1;
		if (o->arity == 2) {
			b = expr(d);
			if (b < 0)
				return -1;
		}
		r = mk(d, o->arity == 1 ? K_UNARY : K_BINARY, a, b);
		if (r >= 0) {
			d->nd[r].s = o->name;
			d->nd[r].len = (int)strlen(o->name);
		}
	} else return fail(d);
	d->depth--;
	return d->bad ? -1 : r;
}

/* I <template-arg>+ E; returns the first cell (or -1 for none: "<>"). */
static int template_args(struct dm *d, int top)
{
	struct list l = { -1, -1, 0 };
	if (enter(d) < 0)
		return -1;
	d->p++; /* I */
	while (!d->bad && peek(d) != 'E') {
		int a;
		char c = peek(d);
		if (!c)
			return fail(d);
		if (c == 'L') {
			a = expr_primary(d);
		} else if (c == 'X') {
			d->p++;
			a = expr(d);
			if (a >= 0 && !eat(d, 'E'))
				d->bad = 1;
		} else if (c == 'J') { /* an argument pack */
			struct list p = { -1, -1, 0 };
			d->p++;
			while (!d->bad && peek(d) && peek(d) != 'E') {
				int x = peek(d) == 'L' ? expr_primary(d) : type(d);
				if (x < 0)
					return -1;
				list_add(d, &p, x);
			}
			if (!eat(d, 'E'))
				return fail(d);
			a = mk(d, K_PACK, -1, p.head);
		} else {
			a = type(d);
		}
		if (a < 0 || d->bad)
			return fail(d);
		list_add(d, &l, a);
	}
	d->p++; /* E */
	(void)top;
	d->depth--;
	return l.head;
}

/* ---- encodings and special names ---- */

static int call_offset(struct dm *d)
{
	char c = peek(d);
	d->p++;
	eat(d, 'n');
	if (number(d) < 0 || !eat(d, '_'))
		return -1;
	if (c == 'v') {
		eat(d, 'n');
		if (number(d) < 0 || !eat(d, '_'))
			return -1;
	} else if (c != 'h') {
		return -1;
	}
	return 0;
}

static int special(struct dm *d, const char *text, int inner)
{
	int n;
	if (inner < 0)
		return -1;
	n = mk(d, K_SPECIAL, inner, -1);
	if (n >= 0) {
		d->nd[n].s = text;
		d->nd[n].len = (int)strlen(text);
	}
	return n;
}

static int encoding(struct dm *d)
{
	int nm, cv = 0, ref = 0, tmpl = 0, cdtor = 0, ret = -1, params, f, e;
	char c = peek(d), c2 = peek2(d);
	if (enter(d) < 0)
		return -1;
	if (c == 'T' || (c == 'G' && (c2 == 'V' || c2 == 'R' || c2 == 'T' || c2 == 'A'))) {
		int r = -1;
		d->p += 2;
		switch (c == 'T' ? c2 : c2 + 0x100) {
		case 'V': r = special(d, "vtable for ", type(d)); break;
		case 'T': r = special(d, "VTT for ", type(d)); break;
		case 'I': r = special(d, "typeinfo for ", type(d)); break;
		case 'S': r = special(d, "typeinfo name for ", type(d)); break;
		case 'H': r = special(d, "TLS init function for ", name(d, 0, &cv, &ref, &tmpl, &cdtor)); break;
		case 'W': r = special(d, "TLS wrapper function for ", name(d, 0, &cv, &ref, &tmpl, &cdtor)); break;
		case 'h':
		case 'v':
			d->p--;
			if (call_offset(d) < 0)
				break;
			r = special(d, c2 == 'h' ? "non-virtual thunk to " : "virtual thunk to ", encoding(d));
			break;
		case 'c':
			if (call_offset(d) < 0 || call_offset(d) < 0)
				break;
			r = special(d, "covariant return thunk to ", encoding(d));
			break;
		case 'C': {
			int derived = type(d), base;
			if (derived < 0 || number(d) < 0 || !eat(d, '_'))
				break;
			base = type(d);
			if (base >= 0)
				r = mk(d, K_CTORVT, derived, base);
			break;
		}
		case 'V' + 0x100: r = special(d, "guard variable for ", name(d, 0, &cv, &ref, &tmpl, &cdtor)); break;
		case 'R' + 0x100: { /* GR <name> [<seq-id>] _ : reference temporary #N for */
			int who = name(d, 0, &cv, &ref, &tmpl, &cdtor);
			long k = 0;
			if (who < 0)
				break;
			while (isdig(peek(d)) || isup(peek(d))) {
				char q = *d->p++;
				k = k * 36 + (isdig(q) ? q - '0' : q - 'A' + 10);
				if (k > 100000)
					break;
			}
			if (!eat(d, '_') || k > 100000)
				break;
			r = mk(d, K_REFTEMP, who, -1);
			if (r >= 0)
				d->nd[r].n = (int)k;
			break;
		}
		case 'T' + 0x100:
			if (eat(d, 't'))
				r = special(d, "transaction clone for ", encoding(d));
			else if (eat(d, 'n'))
				r = special(d, "non-transaction clone for ", encoding(d));
			break;
		case 'A' + 0x100: r = special(d, "hidden alias for ", encoding(d)); break;
		default: break;
		}
		if (r < 0)
			d->bad = 1;
		d->depth--;
		return r;
	}
	nm = name(d, 1, &cv, &ref, &tmpl, &cdtor);
	if (nm < 0)
		return -1;
	if (!peek(d) || peek(d) == 'E' || peek(d) == '.') { /* data, or the function of a local name without its type */
		d->depth--;
		return mk(d, K_ENCODING, nm, -1);
	}
	if (tmpl && !cdtor) {
		ret = type(d);
		if (ret < 0)
			return -1;
	}
	params = param_list(d, 'E');
	if (d->bad)
		return -1;
	f = mk(d, K_FUNC, ret, params);
	if (f >= 0) {
		d->nd[f].cv = (unsigned char)cv;
		d->nd[f].ref = (unsigned char)ref;
	}
	e = mk(d, K_ENCODING, nm, f);
	d->depth--;
	return e;
}

/* ---- printing ---- */

static void emit(struct dm *d, const char *s, size_t n)
{
	if (n > OUT_CAP - 1 - d->olen) {
		d->bad = 1;
		return;
	}
	memcpy(d->out + d->olen, s, n);
	d->olen += n;
}
static void emits(struct dm *d, const char *s) { emit(d, s, strlen(s)); }
static char last(const struct dm *d) { return d->olen ? d->out[d->olen - 1] : 0; }

static void print(struct dm *d, int n);
static void print_left(struct dm *d, int n);
static int resolve(const struct dm *d, int n);

/* Into a node to print: bounded in steps and depth; *n resolved.  NULL
 * (and d->bad) past the bounds.  The caller ends with d->depth--. */
static const struct node *print_enter(struct dm *d, int *n)
{
	if (d->bad || ++d->steps > MAX_STEPS || ++d->depth > 4 * MAX_DEPTH || (*n = resolve(d, *n)) < 0) {
		d->bad = 1;
		return NULL;
	}
	return &d->nd[*n];
}

static void emit_num(struct dm *d, long k)
{
	char tmp[24];
	size_t len = 0;
	do
		tmp[sizeof tmp - 1 - len++] = (char)('0' + k % 10);
	while ((k /= 10) > 0 && len < sizeof tmp);
	emit(d, tmp + sizeof tmp - len, len);
}
static void print_right(struct dm *d, int n);

/* The node n stands for: a pack while one of its elements is printed is
 * that element. */
static int resolve(const struct dm *d, int n)
{
	int guard;
	for (guard = 0; n >= 0 && guard < 64; guard++) {
		const struct node *x = &d->nd[n];
		int c, k;
		if (x->kind == K_TPARAM && !d->in_lambda) { /* the template's argument */
			for (c = d->tctx, k = x->n; c >= 0 && k > 0; k--)
				c = d->nd[c].b;
			if (c < 0)
				return -1;
			n = d->nd[c].a;
		} else if (x->kind == K_PACK && d->pack >= 0 && n == d->pack_node) { /* the element being printed */
			for (c = x->b, k = d->pack; c >= 0 && k > 0; k--)
				c = d->nd[c].b;
			if (c < 0)
				return -1;
			n = d->nd[c].a;
		} else {
			return n;
		}
	}
	return -1;
}

static int is_kind(const struct dm *d, int n, enum kind k)
{
	n = resolve(d, n);
	return n >= 0 && d->nd[n].kind == k;
}

static void print_list(struct dm *d, int cell)
{
	int first = 1;
	for (; cell >= 0 && !d->bad; cell = d->nd[cell].b) {
		size_t mark = d->olen;
		if (!first)
			emits(d, ", ");
		print(d, d->nd[cell].a);
		if (d->olen == mark + (first ? 0 : 2))
			d->olen = mark; /* an empty expansion: no separator */
		else
			first = 0;
	}
}

static void print_cv(struct dm *d, unsigned cv)
{
	if (cv & 1)
		emits(d, " const");
	if (cv & 2)
		emits(d, " volatile");
	if (cv & 4)
		emits(d, " restrict");
}

/* The simple name of a class (for its constructors): no scope, no
 * template arguments. */
static void print_simple(struct dm *d, int n)
{
	int scope = -1;
	n = resolve(d, n);
	while (n >= 0) {
		const struct node *x = &d->nd[n];
		if (x->kind == K_NESTED) {
			scope = x->a;
			n = x->b;
		} else if (x->kind == K_TEMPLATE || x->kind == K_ABITAG) {
			n = x->a;
		} else if ((x->kind == K_UNNAMED || x->kind == K_LAMBDA) && scope >= 0) {
			n = scope; /* named after the last name before it, as c++filt */
			scope = -1;
		} else {
			break;
		}
	}
	if (n < 0) {
		d->bad = 1;
		return;
	}
	if (d->nd[n].kind == K_STD)
		emits(d, d->nd[n].s2);
	else
		print(d, n);
}

/* An expansion (pattern...): the pattern once per element of the pack it
 * holds, or with "..." if it holds none. */
static int find_pack(const struct dm *d, int n, int depth)
{
	const struct node *x;
	int r;
	if (n < 0 || depth > 32 || (n = resolve(d, n)) < 0)
		return -1;
	x = &d->nd[n];
	if (x->kind == K_PACK)
		return n;
	if (x->kind == K_CELL || x->kind == K_TEMPLATE || x->kind == K_FUNC || x->kind == K_NESTED) {
		r = find_pack(d, x->a, depth + 1);
		return r >= 0 ? r : find_pack(d, x->b, depth + 1);
	}
	if (x->kind == K_PTR || x->kind == K_LREF || x->kind == K_RREF || x->kind == K_QUAL || x->kind == K_ARRAY ||
	    x->kind == K_VENDQ)
		return find_pack(d, x->a, depth + 1);
	return -1;
}

static void print_expand(struct dm *d, int pattern)
{
	int pack = find_pack(d, pattern, 0), saved = d->pack, saved_node = d->pack_node, k = 0, c;
	if (pack < 0 || d->pack >= 0) {
		print(d, pattern);
		emits(d, "...");
		return;
	}
	for (c = d->nd[pack].b; c >= 0 && !d->bad; c = d->nd[c].b, k++) {
		if (k)
			emits(d, ", ");
		d->pack = k;
		d->pack_node = pack;
		print(d, pattern);
	}
	d->pack = saved;
	d->pack_node = saved_node;
}

static void print_literal(struct dm *d, const struct node *x)
{
	static const struct {
		const char *type, *suffix;
	} sfx[] = { { "int", "" }, { "unsigned int", "u" }, { "long", "l" }, { "unsigned long", "ul" },
		    { "long long", "ll" }, { "unsigned long long", "ull" } };
	const struct node *t = x->a >= 0 ? &d->nd[resolve(d, x->a) >= 0 ? resolve(d, x->a) : x->a] : NULL;
	size_t i;
	if (x->n >= 2) { /* {parm#N} */
		emits(d, "{parm#");
		emit_num(d, x->n - 1);
		emits(d, "}");
		return;
	}
	if (t && t->kind == K_NAME && t->len == 4 && !memcmp(t->s, "bool", 4) && x->len == 1 && !x->n) {
		emits(d, x->s[0] == '0' ? "false" : x->s[0] == '1' ? "true" : "?");
		return;
	}
	if (t && t->kind == K_NAME && t->len == 17 && !memcmp(t->s, "decltype(nullptr)", 17) && !x->len) {
		emits(d, "nullptr");
		return;
	}
	for (i = 0; t && t->kind == K_NAME && i < sizeof sfx / sizeof sfx[0]; i++) {
		if ((size_t)t->len == strlen(sfx[i].type) && !memcmp(t->s, sfx[i].type, (size_t)t->len)) {
			if (x->n)
				emits(d, "-");
			emit(d, x->s, (size_t)x->len);
			emits(d, sfx[i].suffix);
			return;
		}
	}
	emits(d, "(");
	if (x->a >= 0)
		print(d, x->a);
	emits(d, ")");
	if (x->n)
		emits(d, "-");
	emit(d, x->s, (size_t)x->len);
}

/* n, or the array under its qualifiers (an array of const elements). */
static int unqual_array(const struct dm *d, int n)
{
	int k, r = resolve(d, n);
	for (k = 0; k < 16 && r >= 0 && d->nd[r].kind == K_QUAL; k++) {
		int c = resolve(d, d->nd[r].a);
		if (c < 0 || (d->nd[c].kind != K_ARRAY && d->nd[c].kind != K_QUAL))
			break;
		r = c;
	}
	return r >= 0 && d->nd[r].kind == K_ARRAY ? r : n;
}

static int is_decl(const struct dm *d, int n)
{
	return is_kind(d, n, K_FUNC) || is_kind(d, unqual_array(d, n), K_ARRAY);
}

/* Does the type print anything right of a declarator's name (a pointer to
 * function does: "void (*f)(int)")? */
static int has_rhs(const struct dm *d, int n)
{
	int k;
	for (k = 0; k < 64; k++) {
		n = resolve(d, n);
		if (n < 0)
			return 0;
		switch (d->nd[n].kind) {
		case K_FUNC:
		case K_ARRAY:
			return 1;
		case K_PTR:
		case K_LREF:
		case K_RREF:
		case K_QUAL:
		case K_VENDQ:
			n = d->nd[n].a;
			break;
		case K_PTRMEM:
			n = d->nd[n].b;
			break;
		default:
			return 0;
		}
	}
	return 0;
}

static void print_ref(struct dm *d, int n, int left)
{
	/* Reference collapsing (in expansions): & & is &, && & is &, && && is &&. */
	int kind = d->nd[n].kind, t = resolve(d, d->nd[n].a);
	while (t >= 0 && (d->nd[t].kind == K_LREF || d->nd[t].kind == K_RREF)) {
		if (d->nd[t].kind == K_LREF)
			kind = K_LREF;
		t = resolve(d, d->nd[t].a);
	}
	if (t < 0) {
		d->bad = 1;
		return;
	}
	if (left) {
		print_left(d, t);
		if (is_kind(d, unqual_array(d, t), K_ARRAY))
			emits(d, " ");
		if (is_decl(d, t))
			emits(d, "(");
		emits(d, kind == K_LREF ? "&" : "&&");
	} else {
		if (is_decl(d, t))
			emits(d, ")");
		print_right(d, t);
	}
}

static void print_left(struct dm *d, int n)
{
	const struct node *x = print_enter(d, &n);
	if (!x)
		return;
	switch (x->kind) {
	case K_PTR:
		print_left(d, x->a);
		if (is_kind(d, unqual_array(d, x->a), K_ARRAY))
			emits(d, " ");
		if (is_decl(d, x->a))
			emits(d, "(");
		emits(d, "*");
		break;
	case K_LREF:
	case K_RREF:
		print_ref(d, n, 1);
		break;
	case K_QUAL: { /* const over const is const */
		unsigned cv = x->cv;
		int c = resolve(d, x->a), k;
		for (k = 0; k < 16 && c >= 0 && d->nd[c].kind == K_QUAL; k++) {
			cv |= d->nd[c].cv;
			c = resolve(d, d->nd[c].a);
		}
		print_left(d, c);
		print_cv(d, cv);
		break;
	}
	case K_VENDQ:
		print_left(d, x->a);
		emits(d, " ");
		emit(d, x->s, (size_t)x->len);
		break;
	case K_FUNC:
		if (x->a >= 0)
			print_left(d, x->a);
		if (x->a < 0 || !has_rhs(d, x->a))
			emits(d, " ");
		break;
	case K_ARRAY:
		print_left(d, x->a);
		break;
	case K_PTRMEM:
		print_left(d, x->b);
		emits(d, is_decl(d, x->b) ? (last(d) == ' ' ? "(" : " (") : " ");
		print(d, x->a);
		emits(d, "::*");
		break;
	default:
		print(d, n);
	}
	d->depth--;
}

static void print_right(struct dm *d, int n)
{
	const struct node *x = print_enter(d, &n);
	if (!x)
		return;
	switch (x->kind) {
	case K_PTR:
		if (is_decl(d, x->a))
			emits(d, ")");
		print_right(d, x->a);
		break;
	case K_LREF:
	case K_RREF:
		print_ref(d, n, 0);
		break;
	case K_QUAL:
	case K_VENDQ:
		print_right(d, x->a);
		break;
	case K_FUNC:
		emits(d, "(");
		print_list(d, x->b);
		emits(d, ")");
		if (x->a >= 0)
			print_right(d, x->a);
		print_cv(d, x->cv);
		if (x->ref)
			emits(d, x->ref == 1 ? " &" : " &&");
		break;
	case K_ARRAY:
		if (last(d) != ']')
			emits(d, " ");
		emits(d, "[");
		if (x->b >= 0)
			print(d, x->b);
		else
			emit(d, x->s, (size_t)x->len);
		emits(d, "]");
		print_right(d, x->a);
		break;
	case K_PTRMEM:
		if (is_decl(d, x->b))
			emits(d, ")");
		print_right(d, x->b);
		break;
	default:
		break;
	}
	d->depth--;
}

static void print_encoding_in(struct dm *d, const struct node *x, const struct node *f, int full, int ret);

/* An encoding: as a whole (full), or its name alone (top level, short);
 * ret: with its return type (not inside a local name, as c++filt). */
static void print_encoding(struct dm *d, const struct node *x, int full, int ret)
{
	const struct node *f = x->b >= 0 ? &d->nd[x->b] : NULL;
	int saved = d->tctx, t = x->a, k;
	/* A function template: its arguments are what T_ means in its type. */
	for (k = 0; t >= 0 && k < 64; k++) {
		const struct node *y = &d->nd[t];
		if (y->kind == K_TEMPLATE) {
			if (f)
				d->tctx = y->b;
			break;
		}
		t = y->kind == K_LOCAL ? y->b : y->kind == K_ABITAG ? y->a : -1;
	}
	print_encoding_in(d, x, f, full, ret);
	d->tctx = saved;
}

static void print_encoding_in(struct dm *d, const struct node *x, const struct node *f, int full, int ret)
{
	if (!f || !full) {
		print(d, x->a);
		return;
	}
	if (f->a >= 0 && ret) {
		print_left(d, f->a);
		if (!has_rhs(d, f->a))
			emits(d, " ");
	}
	print(d, x->a);
	emits(d, "(");
	print_list(d, f->b);
	emits(d, ")");
	if (f->a >= 0)
		print_right(d, f->a);
	print_cv(d, f->cv);
	if (f->ref)
		emits(d, f->ref == 1 ? " &" : " &&");
}

/* An operand: in parentheses unless it is a name (as c++filt). */
static void print_sub(struct dm *d, int n)
{
	int r = resolve(d, n), simple = 0;
	if (r >= 0) {
		const struct node *x = &d->nd[r];
		int k = x->kind;
		if (k == K_ENCODING && x->b < 0 && x->a >= 0)
			k = d->nd[x->a].kind;
		simple = k == K_NAME || k == K_NESTED || (k == K_LITERAL && x->n >= 2);
	}
	if (!simple)
		emits(d, "(");
	print(d, n);
	if (!simple)
		emits(d, ")");
}

static void print(struct dm *d, int n)
{
	const struct node *x = print_enter(d, &n);
	if (!x)
		return;
	switch (x->kind) {
	case K_NAME:
		if (x->s2)
			emits(d, x->s2);
		emit(d, x->s, (size_t)x->len);
		break;
	case K_STD:
		emit(d, x->s, (size_t)x->len);
		break;
	case K_NESTED:
		print(d, x->a);
		emits(d, "::");
		print(d, x->b);
		break;
	case K_TEMPLATE:
		print(d, x->a);
		if (last(d) == '<')
			emits(d, " ");
		emits(d, "<");
		print_list(d, x->b);
		if (last(d) == '>')
			emits(d, " ");
		emits(d, ">");
		break;
	case K_ENCODING:
		print_encoding(d, x, 1, 1);
		break;
	case K_LOCAL:
		if (d->nd[x->a].kind == K_ENCODING)
			print_encoding(d, &d->nd[x->a], 1, 0);
		else
			print(d, x->a);
		emits(d, "::");
		print(d, x->b);
		break;
	case K_CTOR:
		print_simple(d, x->a);
		break;
	case K_DTOR:
		emits(d, "~");
		print_simple(d, x->a);
		break;
	case K_OPERATOR:
		emits(d, "operator");
		if (x->a >= 0) { /* operator"" _x */
			emits(d, "\"\" ");
			print(d, x->a);
		} else {
			if (x->s[0] >= 'a' && x->s[0] <= 'z')
				emits(d, " ");
			emit(d, x->s, (size_t)x->len);
		}
		break;
	case K_CONV:
		emits(d, "operator ");
		print(d, x->a);
		break;
	case K_ABITAG:
		print(d, x->a);
		emits(d, "[abi:");
		emit(d, x->s, (size_t)x->len);
		emits(d, "]");
		break;
	case K_UNNAMED:
	case K_LAMBDA:
		emits(d, x->kind == K_UNNAMED ? "{unnamed type#" : "{lambda(");
		if (x->kind == K_LAMBDA) {
			d->in_lambda++;
			print_list(d, x->b);
			d->in_lambda--;
			emits(d, ")#");
		}
		emit_num(d, x->n);
		emits(d, "}");
		break;
	case K_SPECIAL:
		emit(d, x->s, (size_t)x->len);
		print(d, x->a);
		break;
	case K_CTORVT:
		emits(d, "construction vtable for ");
		print(d, x->b);
		emits(d, "-in-");
		print(d, x->a);
		break;
	case K_VECTOR:
		print(d, x->a);
		emits(d, " __vector(");
		emit(d, x->s, (size_t)x->len);
		emits(d, ")");
		break;
	case K_PACK:
		print_list(d, x->b);
		break;
	case K_EXPAND:
		print_expand(d, x->a);
		break;
	case K_LITERAL:
		print_literal(d, x);
		break;
	case K_UNARY: {
		int op = resolve(d, x->a);
		emit(d, x->s, (size_t)x->len);
		/* The address of a member function: its name, no parameters. */
		if (x->len == 1 && x->s[0] == '&' && op >= 0 && d->nd[op].kind == K_ENCODING &&
		    d->nd[d->nd[op].a].kind == K_NESTED)
			print(d, d->nd[op].a);
		else if (x->len == 9) /* decltype */
			print_sub(d, x->a);
		else
			print_sub(d, x->a);
		break;
	}
	case K_BINARY:
		print_sub(d, x->a);
		emit(d, x->s, (size_t)x->len);
		print_sub(d, x->b);
		break;
	case K_MEMBER:
		print_sub(d, x->a);
		emit(d, x->s, (size_t)x->len);
		print(d, x->b);
		break;
	case K_CALL:
		print_sub(d, x->a);
		emits(d, "(");
		print_list(d, x->b);
		emits(d, ")");
		break;
	case K_SIZEOF:
		emit(d, x->s, (size_t)x->len);
		emits(d, " (");
		print(d, x->a);
		emits(d, ")");
		break;
	case K_REFTEMP:
	case K_DEFARG:
		emits(d, x->kind == K_DEFARG ? "{default arg#" : "reference temporary #");
		emit_num(d, x->n);
		if (x->kind == K_DEFARG) {
			emits(d, "}");
		} else {
			emits(d, " for ");
			print(d, x->a);
		}
		break;
	case K_TPARAM: /* (only in a generic lambda's parameters) */
		emits(d, "auto:");
		emit_num(d, x->n + 1);
		break;
	case K_CELL:
		d->bad = 1;
		break;
	default: /* a type: both halves */
		print_left(d, n);
		print_right(d, n);
	}
	d->depth--;
}

/* The length of one clone suffix at s (".constprop.0", ".cold"), as GCC
 * writes them: '.' [a-z0-9_]+ ('.' [0-9]+)*; 0 if none. */
static size_t clone_len(const char *s)
{
	const char *p = s;
	if (p[0] != '.' || !((p[1] >= 'a' && p[1] <= 'z') || (p[1] >= '0' && p[1] <= '9') || p[1] == '_'))
		return 0;
	for (p += 2; (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'; p++)
		;
	while (p[0] == '.' && p[1] >= '0' && p[1] <= '9')
		for (p += 2; *p >= '0' && *p <= '9'; p++)
			;
	return (size_t)(p - s);
}

static int clone_suffix(const char *s)
{
	size_t n;
	while (*s && (n = clone_len(s)))
		s += n;
	return *s == 0;
}

char *demangle(const char *mangled, int full)
{
	struct dm *d;
	char *r = NULL;
	int e;
	size_t len;
	if (!mangled || mangled[0] != '_' || mangled[1] != 'Z')
		return NULL;
	d = malloc(sizeof *d);
	if (!d)
		return NULL;
	len = strlen(mangled);
	d->p = mangled + 2;
	d->end = mangled + len;
	d->nn = d->ns = d->depth = d->bad = 0;
	d->olen = 0;
	d->steps = 0;
	d->pack = -1;
	d->pack_node = -1;
	d->tctx = -1;
	d->in_lambda = 0;
	e = encoding(d);
	if (e >= 0 && !d->bad && (d->p == d->end || (*d->p == '.' && clone_suffix(d->p)))) {
		d->depth = 0;
		if (d->nd[e].kind == K_ENCODING)
			print_encoding(d, &d->nd[e], full, 1);
		else
			print(d, e);
		while (full && d->p < d->end && !d->bad) {
			size_t n = clone_len(d->p);
			emits(d, " [clone ");
			emit(d, d->p, n);
			emits(d, "]");
			d->p += n;
		}
		if (!d->bad) {
			d->out[d->olen] = 0;
			r = strdup(d->out);
		}
	}
	free(d);
	return r;
}
