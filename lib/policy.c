/* policy.c: the policy parser (see policy.h for the contract).
 *
 *     [global]                 budget, report, mlockall
 *     [rule NAME]              call, size, map, prot, caller, program, action
 *
 * '#' starts a comment anywhere on a line.  Every value is checked strictly:
 * a word we do not know is an error naming the words we do, because a typo
 * that silently matched nothing would look exactly like "prefaulting does not
 * help".  Keys are a table; each key's parser gets the value's words.
 */
#include "policy.h"
#include "defs.h"
#include "glob.h"
#include "sbuf.h"
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#define LINE_MAX_LEN 4096
#define MAX_WORDS 32

struct ctx {
	struct policy *pol;
	struct pol_error *err;
	int line;
	struct pol_rule *rule; /* NULL in [global] */
	int in_section;
};

struct word { const char *s; size_t n; };

/* "text N text": a message with a limit in it, from the constant itself. */
static int fail_n(struct ctx *c, int line, const char *a, uint64_t n, const char *b)
{
	struct sbuf sb;
	sb_init(&sb, c->err->msg, sizeof c->err->msg, -1);
	sb_str(&sb, a);
	sb_u64(&sb, n);
	sb_str(&sb, b);
	sb_cstr(&sb);
	c->err->line = line;
	return -1;
}

static int fail(struct ctx *c, int line, const char *a, const char *b, const char *d)
{
	struct sbuf sb;
	sb_init(&sb, c->err->msg, sizeof c->err->msg, -1);
	sb_str(&sb, a);
	if (b)
		sb_str(&sb, b);
	if (d)
		sb_str(&sb, d);
	sb_cstr(&sb);
	c->err->line = line;
	return -1;
}

/* Error with a quoted word in the middle: "<a>'<word>'<d>". */
static int fail_word(struct ctx *c, const char *a, const struct word *w, const char *d)
{
	char q[80];
	struct sbuf sb;
	sb_init(&sb, q, sizeof q, -1);
	sb_chr(&sb, '\'');
	sb_strn(&sb, w->s, w->n > 60 ? 60 : w->n);
	if (w->n > 60)
		sb_str(&sb, "...");
	sb_chr(&sb, '\'');
	sb_cstr(&sb);
	return fail(c, c->line, a, q, d);
}

static int weq(const struct word *w, const char *s)
{
	size_t n = strlen(s);
	return w->n == n && memcmp(w->s, s, n) == 0;
}

const char *parse_size(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0, mul = 1;
	size_t i = 0;
	if (n == 0)
		return "missing number";
	if (s[0] < '0' || s[0] > '9')
		return "not a number";
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return "number too large";
		v = v * 10 + d;
	}
	if (i < n) {
		switch (s[i]) {
		case 'K': case 'k': mul = 1ull << 10; break;
		case 'M': case 'm': mul = 1ull << 20; break;
		case 'G': case 'g': mul = 1ull << 30; break;
		case 'T': case 't': mul = 1ull << 40; break;
		default: return "unknown suffix";
		}
		i++;
		if (i < n)
			return "junk after the suffix";
	}
	if (mul > 1 && v > UINT64_MAX / mul)
		return "number too large";
	*out = v * mul;
	return NULL;
}

const char *parse_auto_budget(const char *s, uint64_t *pct, uint64_t *cap, int *hard)
{
	int have_pct = 0, have_cap = 0, have_mode = 0;
	if (!*s)
		return "empty";
	while (*s) {
		size_t n = 0, i;
		while (s[n] && s[n] != ',')
			n++;
		if (n == 4 && (!strncmp(s, "hard", 4) || !strncmp(s, "soft", 4))) {
			if (have_mode++)
				return "hard or soft, once";
			*hard = s[0] == 'h';
		} else if (n && s[n - 1] == '%') {
			uint64_t p = 0;
			if (have_pct++ || n < 2 || n > 5)
				return "expected one percentage, from 1% to 1000%";
			for (i = 0; i + 1 < n; i++) {
				if (s[i] < '0' || s[i] > '9')
					return "expected one percentage, from 1% to 1000%";
				p = p * 10 + (uint64_t)(s[i] - '0');
			}
			if (!p || p > 1000)
				return "expected one percentage, from 1% to 1000%";
			*pct = p;
		} else {
			if (have_cap++ || !n || parse_size(s, n, cap))
				return "expected one size, like 256M";
			if (!*cap)
				return "a size of 0 would hold nothing";
		}
		s += n;
		if (*s == ',' && *++s == '\0')
			return "a comma with nothing after it";
	}
	return NULL;
}

static int size_word(struct ctx *c, const char *s, size_t n, uint64_t *out)
{
	struct word w = { s, n };
	char tail[96];
	struct sbuf sb;
	const char *e = parse_size(s, n, out);
	if (!e)
		return 0;
	sb_init(&sb, tail, sizeof tail, -1);
	sb_str(&sb, ": ");
	sb_str(&sb, e);
	sb_str(&sb, " (sizes are N, A..B, >=N or <=N, with K, M, G or T)");
	return fail_word(c, "bad size ", &w, sb_cstr(&sb));
}

/* ---- value parsers, one per key ---- */

static int p_budget(struct ctx *c, struct word *w, int nw)
{
	if (nw != 1)
		return fail(c, c->line, "budget takes one size, like 512M", NULL, NULL);
	if (weq(&w[0], "unlimited")) {
		c->pol->budget = UINT64_MAX;
	} else if (size_word(c, w[0].s, w[0].n, &c->pol->budget)) {
		return -1;
	}
	c->pol->has_budget = 1;
	return 0;
}

static int p_report(struct ctx *c, struct word *w, int nw)
{
	/* The whole value, spaces included, is one destination. */
	size_t n = (size_t)(w[nw - 1].s + w[nw - 1].n - w[0].s);
	if (n >= sizeof c->pol->report)
		return fail(c, c->line, "report path too long", NULL, NULL);
	memcpy(c->pol->report, w[0].s, n);
	c->pol->report[n] = '\0';
	c->pol->has_report = 1;
	return 0;
}

static int p_mlockall(struct ctx *c, struct word *w, int nw)
{
	int i, f = 0;
	for (i = 0; i < nw; i++) {
		if (weq(&w[i], "current"))
			f |= MCL_CURRENT;
		else if (weq(&w[i], "future"))
			f |= MCL_FUTURE;
		else if (weq(&w[i], "onfault"))
			f |= MCL_ONFAULT;
		else if (weq(&w[i], "no") && nw == 1)
			f = 0;
		else
			return fail_word(c, "unknown mlockall mode ", &w[i], " (expected current, future, onfault, or no)");
	}
	if (f == MCL_ONFAULT)
		return fail(c, c->line, "mlockall: onfault goes with current or future (it locks their pages as they are touched)", NULL, NULL);
	c->pol->mlockall = f;
	return 0;
}

static int p_call(struct ctx *c, struct word *w, int nw)
{
	int i;
	unsigned m = 0;
	for (i = 0; i < nw; i++) {
		if (weq(&w[i], "mmap"))
			m |= CALL_MMAP;
		else if (weq(&w[i], "malloc"))
			m |= CALL_MALLOC;
		else if (weq(&w[i], "any"))
			m |= CALL_ANY;
		else if (weq(&w[i], "stack"))
			m |= CALL_STACK;
		else
			return fail_word(c, "unknown call ", &w[i], " (expected mmap, malloc, stack or any)");
	}
	c->rule->calls = m;
	return 0;
}

static int size_range(struct ctx *c, struct word *w, int nw)
{
	char buf[128];
	size_t n = 0;
	int i;
	const char *dots;
	struct pol_rule *r = c->rule;
	/* "256K .. 1M" and "256K..1M" mean the same: join the words. */
	for (i = 0; i < nw; i++) {
		if (n + w[i].n >= sizeof buf)
			return fail(c, c->line, "size value too long", NULL, NULL);
		memcpy(buf + n, w[i].s, w[i].n);
		n += w[i].n;
	}
	buf[n] = '\0';
	if (nw > 1 && !strstr(buf, "..") && buf[0] != '>' && buf[0] != '<')
		return fail(c, c->line, "size takes one size or one range (for two sizes, write two rules)", NULL, NULL);
	if (!strcmp(buf, "any")) {
		r->size_lo = 0;
		r->size_hi = UINT64_MAX;
		return 0;
	}
	if (n >= 2 && (buf[0] == '>' || buf[0] == '<')) {
		int eq = buf[1] == '=';
		uint64_t v;
		if (size_word(c, buf + 1 + eq, n - 1 - (size_t)eq, &v))
			return -1;
		if (buf[0] == '>') {
			if (!eq && v == UINT64_MAX)
				return fail(c, c->line, "size >N with N at the maximum can never match", NULL, NULL);
			r->size_lo = eq ? v : v + 1;
			r->size_hi = UINT64_MAX;
		} else {
			if (!eq && v == 0)
				return fail(c, c->line, "size <0 can never match", NULL, NULL);
			r->size_lo = 0;
			r->size_hi = eq ? v : v - 1;
		}
		return 0;
	}
	dots = strstr(buf, "..");
	if (dots) {
		if (size_word(c, buf, (size_t)(dots - buf), &r->size_lo) ||
		    size_word(c, dots + 2, n - (size_t)(dots - buf) - 2, &r->size_hi))
			return -1;
		if (r->size_lo > r->size_hi)
			return fail(c, c->line, "size range is empty: the low end is above the high end", NULL, NULL);
		return 0;
	}
	if (size_word(c, buf, n, &r->size_lo))
		return -1;
	r->size_hi = r->size_lo;
	return 0;
}

static int p_size(struct ctx *c, struct word *w, int nw)
{
	if (size_range(c, w, nw))
		return -1;
	if (c->rule->size_hi == 0) /* (mmap of 0 bytes fails; malloc(0) is no memory to prepare) */
		return fail(c, c->line, "size 0 can never match: no mapping or block is empty", NULL, NULL);
	return 0;
}

/* The words of map = and action =, for the parser and the printer alike. */
const struct pol_word pol_map_words[] = {
	{ "anon", MK_ANON }, { "file", MK_FILE }, { "private", MK_PRIVATE },
	{ "shared", MK_SHARED }, { "noreserve", MK_NORESERVE }, { "fixed", MK_FIXED }, { NULL, 0 },
};
/* From actions.h: the words in bit order (so a rule prints its actions
 * the same way whatever order its file gave them in), and the records in
 * apply()'s order. */
#define PF_ACTION_WORD(name, word, bit, calls, excl, why, knob, hint, tune, step) [bit] = { word, A_##name },
#define PF_ACTION_REC(name, word, bit, calls, excl, why, knob, hint, tune, step)                    \
	{ word, A_##name, calls, (unsigned)(excl), why, knob, hint, tune },
#define PF_ACTION_OR(name, word, bit, calls, excl, why, knob, hint, tune, step) | A_##name
/* The bits run from 0 with no gap, so the first empty entry ends the words. */
_Static_assert((((0 PF_ACTIONS(PF_ACTION_OR)) + 1u) & (0 PF_ACTIONS(PF_ACTION_OR))) == 0,
               "actions.h: action bits must run 0, 1, 2, ... with no gap");
const struct pol_word pol_action_words[sizeof(unsigned) * 8 + 1] = { PF_ACTIONS(PF_ACTION_WORD) };
#undef PF_ACTION_OR
const struct pol_action pol_actions[] = { PF_ACTIONS(PF_ACTION_REC){ NULL, 0, 0, 0, NULL, NULL, NULL, 0 } };
#undef PF_ACTION_WORD
#undef PF_ACTION_REC

/* The bit of word w in table t, or 0. */
static unsigned word_bit(const struct pol_word *t, const struct word *w)
{
	for (; t->s; t++)
		if (weq(w, t->s))
			return t->bit;
	return 0;
}

static int p_map(struct ctx *c, struct word *w, int nw)
{
	unsigned m = 0, bit;
	int i;
	for (i = 0; i < nw; i++) {
		if (!(bit = word_bit(pol_map_words, &w[i])))
			return fail_word(c, "unknown mapping kind ", &w[i],
			                 " (expected anon, file, private, shared, noreserve or fixed)");
		m |= bit;
	}
	if ((m & (MK_ANON | MK_FILE)) == (MK_ANON | MK_FILE))
		return fail(c, c->line, "map = anon file can never match: a mapping is one or the other", NULL, NULL);
	if ((m & (MK_PRIVATE | MK_SHARED)) == (MK_PRIVATE | MK_SHARED))
		return fail(c, c->line, "map = private shared can never match: a mapping is one or the other", NULL, NULL);
	c->rule->map_req = m;
	return 0;
}

static int p_prot(struct ctx *c, struct word *w, int nw)
{
	size_t i;
	unsigned m = 0;
	if (nw != 1)
		return fail(c, c->line, "prot takes one word: letters from rwx, or none", NULL, NULL);
	if (weq(&w[0], "none")) {
		c->rule->prot_req = PK_NONE;
		return 0;
	}
	for (i = 0; i < w[0].n; i++) {
		unsigned bit = w[0].s[i] == 'r' ? PK_READ : w[0].s[i] == 'w' ? PK_WRITE : w[0].s[i] == 'x' ? PK_EXEC : 0;
		if (!bit || (m & bit))
			return fail_word(c, "bad prot ", &w[0], " (expected letters from rwx, each once, or none)");
		m |= bit;
	}
	c->rule->prot_req = m;
	return 0;
}

static int add_globs(struct ctx *c, struct word *w, int nw, uint16_t *dst, uint8_t *cnt)
{
	int i;
	if (nw > POL_MAX_GLOBS)
		return fail_n(c, c->line, "too many patterns (at most ", POL_MAX_GLOBS, ")");
	for (i = 0; i < nw; i++) {
		char tmp[256];
		const char *e;
		struct policy *p = c->pol;
		if (w[i].n >= sizeof tmp)
			return fail(c, c->line, "pattern too long", NULL, NULL);
		memcpy(tmp, w[i].s, w[i].n);
		tmp[w[i].n] = '\0';
		e = glob_check(tmp);
		if (e)
			return fail_word(c, "bad pattern ", &w[i], ": unterminated '['");
		if (strchr(tmp, '/'))
			return fail_word(c, "bad pattern ", &w[i], ": patterns match file names, not paths (drop the directories)");
		if (p->pool_len + w[i].n + 1 > sizeof p->pool)
			return fail(c, c->line, "too many patterns in this policy", NULL, NULL);
		memcpy(p->pool + p->pool_len, tmp, w[i].n + 1);
		dst[i] = (uint16_t)p->pool_len;
		p->pool_len += w[i].n + 1;
	}
	*cnt = (uint8_t)nw;
	return 0;
}

static int p_caller(struct ctx *c, struct word *w, int nw) { return add_globs(c, w, nw, c->rule->caller, &c->rule->ncaller); }
static int p_program(struct ctx *c, struct word *w, int nw) { return add_globs(c, w, nw, c->rule->program, &c->rule->nprogram); }

/* "(expected none, populate, ... or recycle)": none first, then in bit order. */
static const char *action_list(char *buf, size_t cap)
{
	struct sbuf sb;
	const struct pol_word *t;
	int n = 0, i = 0;
	for (t = pol_action_words; t->s; t++)
		n++;
	sb_init(&sb, buf, cap, -1);
	sb_str(&sb, " (expected none");
	for (t = pol_action_words; t->s; t++) {
		if (t->bit == A_NONE)
			continue;
		sb_str(&sb, ++i == n - 1 ? " or " : ", ");
		sb_str(&sb, t->s);
	}
	sb_chr(&sb, ')');
	return sb_cstr(&sb);
}

static int p_action(struct ctx *c, struct word *w, int nw)
{
	const struct pol_action *a;
	unsigned m = 0, bit;
	int i;
	for (i = 0; i < nw; i++) {
		if (!(bit = word_bit(pol_action_words, &w[i]))) {
			char list[160];
			return fail_word(c, "unknown action ", &w[i], action_list(list, sizeof list));
		}
		m |= bit;
	}
	for (a = pol_actions; a->word; a++)
		if ((m & a->bit) && (m & a->excludes))
			return fail(c, c->line, a->why, NULL, NULL);
	/* carve is recycle with huge-page reserves: it keeps what the program
	 * unmaps as recycle does, and recycles alone where it cannot carve. */
	if (m & A_CARVE)
		m |= A_RECYCLE;
	c->rule->actions = m;
	return 0;
}

/* A whole number in [lo, hi], strictly. */
static int count_word(struct ctx *c, struct word *w, int nw, const char *key, unsigned lo, unsigned hi, unsigned *out)
{
	uint64_t v = 0;
	size_t i;
	char msg[96];
	struct sbuf sb;
	sb_init(&sb, msg, sizeof msg, -1);
	sb_str(&sb, key);
	sb_str(&sb, " takes a whole number from ");
	sb_u64(&sb, lo);
	sb_str(&sb, " to ");
	sb_u64(&sb, hi);
	sb_cstr(&sb);
	if (nw != 1 || w[0].n == 0 || w[0].n > 6)
		return fail(c, c->line, msg, NULL, NULL);
	for (i = 0; i < w[0].n; i++) {
		if (w[0].s[i] < '0' || w[0].s[i] > '9')
			return fail(c, c->line, msg, NULL, NULL);
		v = v * 10 + (uint64_t)(w[0].s[i] - '0');
	}
	if (v < lo || v > hi)
		return fail(c, c->line, msg, NULL, NULL);
	*out = (unsigned)v;
	return 0;
}

static int one_size(struct ctx *c, struct word *w, int nw, const char *key, uint64_t lo, uint64_t *out)
{
	if (nw != 1)
		return fail(c, c->line, key, " takes one size, like 2M", NULL);
	if (size_word(c, w[0].s, w[0].n, out))
		return -1;
	if (*out < lo)
		return fail(c, c->line, key, " is too small", NULL);
	return 0;
}

static int p_workers(struct ctx *c, struct word *w, int nw) { return count_word(c, w, nw, "workers", 1, 64, &c->pol->workers); }
static int p_threads(struct ctx *c, struct word *w, int nw) { return count_word(c, w, nw, "threads", 1, 64, &c->rule->threads); }
static int p_chunk(struct ctx *c, struct word *w, int nw) { return one_size(c, w, nw, "chunk", 64 << 10, &c->rule->chunk); }
static int p_depth(struct ctx *c, struct word *w, int nw) { return one_size(c, w, nw, "depth", 4 << 10, &c->rule->depth); }
static int p_recycle_max(struct ctx *c, struct word *w, int nw)
{
	if (one_size(c, w, nw, "recycle_max", 0, &c->rule->recycle_max))
		return -1;
	if (c->rule->recycle_max == 0) /* (0 inside the struct means "not given": the default) */
		return fail(c, c->line, "recycle_max = 0 would keep nothing: to recycle nothing, drop 'recycle' from the actions",
		            NULL, NULL);
	return 0;
}

static int p_reserve(struct ctx *c, struct word *w, int nw) { return one_size(c, w, nw, "reserve", 64 << 10, &c->rule->reserve); }
static int p_carve_min_rss(struct ctx *c, struct word *w, int nw)
{
	return one_size(c, w, nw, "carve_min_rss", 0, &c->rule->carve_min_rss);
}
static int p_huge_check(struct ctx *c, struct word *w, int nw)
{
	if (nw != 1 || (!weq(&w[0], "yes") && !weq(&w[0], "no")))
		return fail(c, c->line, "hugepage_check takes yes or no", NULL, NULL);
	c->rule->huge_check = (uint8_t)weq(&w[0], "yes");
	return 0;
}

enum { SEC_GLOBAL = 1, SEC_RULE = 2 };
static const struct key {
	const char *name;
	int section;
	int (*parse)(struct ctx *, struct word *, int);
} keys[] = {
	{ "budget", SEC_GLOBAL, p_budget },
	{ "report", SEC_GLOBAL, p_report },
	{ "mlockall", SEC_GLOBAL, p_mlockall },
	{ "workers", SEC_GLOBAL, p_workers },
	{ "call", SEC_RULE, p_call },
	{ "size", SEC_RULE, p_size },
	{ "map", SEC_RULE, p_map },
	{ "prot", SEC_RULE, p_prot },
	{ "caller", SEC_RULE, p_caller },
	{ "program", SEC_RULE, p_program },
	{ "action", SEC_RULE, p_action },
	{ "threads", SEC_RULE, p_threads },
	{ "chunk", SEC_RULE, p_chunk },
	{ "depth", SEC_RULE, p_depth },
	{ "recycle_max", SEC_RULE, p_recycle_max },
	{ "reserve", SEC_RULE, p_reserve },
	{ "carve_min_rss", SEC_RULE, p_carve_min_rss },
	{ "hugepage_check", SEC_RULE, p_huge_check },
};
#define N_KEYS (sizeof keys / sizeof keys[0])

/* keys[]'s index of a key of n bytes (rule->seen has a bit per index). */
static unsigned key_index(const char *name, size_t n)
{
	unsigned k;
	for (k = 0; k < N_KEYS && (strncmp(keys[k].name, name, n) || keys[k].name[n]); k++)
		;
	return k;
}
#define GLOBAL_KEYS "budget, report, mlockall, workers"
#define RULE_KEYS "call, size, map, prot, caller, program, action, threads, chunk, depth, recycle_max, reserve, carve_min_rss, hugepage_check"

/* The actions' own checks (actions.h), at the rule's header line: each
 * action works on its calls only, and its knobs need it. */
static int action_checks(struct ctx *c, const struct pol_rule *r)
{
	const struct pol_action *a;
	for (a = pol_actions; a->word; a++) {
		const char *knob = a->knob;
		/* (hugepage_check measures carve's huge pages too: carve is huge pages) */
		unsigned with = a->bit | (a->bit == A_HUGEPAGE ? A_CARVE : 0);
		for (; knob && *knob; knob += strspn(knob, " ")) { /* (knob: its knobs, one word each) */
			size_t n = strcspn(knob, " ");
			char msg[160];
			struct sbuf sb;
			if (!(r->seen & (1u << key_index(knob, n))) || (r->actions & with)) {
				knob += n;
				continue;
			}
			sb_init(&sb, msg, sizeof msg, -1);
			sb_str(&sb, "': ");
			sb_strn(&sb, knob, n);
			sb_str(&sb, " applies to ");
			sb_str(&sb, a->word);
			if (a->knob_hint)
				sb_str(&sb, a->knob_hint);
			return fail(c, r->line, "rule '", r->name, sb_cstr(&sb));
		}
		if (!(r->actions & a->bit) || !(r->calls & ~a->calls))
			continue;
		if (r->calls == CALL_STACK)
			return fail(c, r->line, "rule '", r->name, "': call = stack takes action populate (or none)");
		{
			char msg[160];
			struct sbuf sb;
			sb_init(&sb, msg, sizeof msg, -1);
			sb_str(&sb, "': ");
			sb_str(&sb, a->word);
			sb_str(&sb, a->calls == CALL_MMAP ? " works on mmap calls only (add 'call = mmap')"
			                                  : " does not work on these calls");
			return fail(c, r->line, "rule '", r->name, sb_cstr(&sb));
		}
	}
	return 0;
}

/* Checks that need the whole rule, reported at its header line. */
static int finish_rule(struct ctx *c)
{
	struct pol_rule *r = c->rule;
	if (!r)
		return 0;
	if (!r->actions)
		return fail(c, r->line, "rule '", r->name, "' has no action (say 'action = none' to only count)");
	if (r->calls == CALL_MALLOC && (r->map_req & (MK_FILE | MK_SHARED | MK_NORESERVE | MK_FIXED)))
		return fail(c, r->line, "rule '", r->name, "' can never match: malloc blocks are anon private memory");
	if (r->calls == CALL_MALLOC && (r->prot_req & (PK_EXEC | PK_NONE)))
		return fail(c, r->line, "rule '", r->name, "' can never match: malloc blocks are read-write");
	if ((r->actions & A_RECYCLE) && (r->map_req & (MK_FILE | MK_SHARED | MK_FIXED)))
		return fail(c, r->line, "rule '", r->name,
		            r->actions & A_CARVE ? "': carve serves anonymous private mappings only"
		                                 : "': recycle keeps anonymous private mappings only");
	if ((r->calls & CALL_STACK) && r->calls != CALL_STACK)
		return fail(c, r->line, "rule '", r->name, "': call = stack cannot be combined with other calls");
	if (action_checks(c, r))
		return -1;
	if (r->calls & CALL_STACK) {
		if (!r->depth)
			return fail(c, r->line, "rule '", r->name, "': call = stack needs depth (how much of each stack to prefault)");
		if (r->map_req || r->prot_req)
			return fail(c, r->line, "rule '", r->name, "': map and prot do not apply to call = stack");
	} else if (r->depth) {
		return fail(c, r->line, "rule '", r->name, "': depth applies to call = stack");
	}
	return 0;
}

static int is_name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '-' || ch == '_' || ch == '.';
}

static int section(struct ctx *c, const char *s, size_t n)
{
	struct policy *p = c->pol;
	struct word w = { s, n };
	size_t i;
	if (finish_rule(c))
		return -1;
	c->rule = NULL;
	if (n < 2 || s[n - 1] != ']')
		return fail_word(c, "bad section header ", &w, " (expected [global] or [rule NAME])");
	s++;
	n -= 2;
	while (n && (*s == ' ' || *s == '\t')) { s++; n--; }
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
	if (n == 6 && !memcmp(s, "global", 6)) {
		if (p->gseen & (1u << 31))
			return fail(c, c->line, "[global] given twice", NULL, NULL);
		p->gseen |= 1u << 31;
		c->in_section = SEC_GLOBAL;
		return 0;
	}
	if (n == 4 && !memcmp(s, "rule", 4))
		return fail(c, c->line, "a rule needs a name: [rule NAME]", NULL, NULL);
	if (n > 5 && !memcmp(s, "rule", 4) && (s[4] == ' ' || s[4] == '\t')) {
		struct pol_rule *r;
		int k;
		s += 5;
		n -= 5;
		while (n && (*s == ' ' || *s == '\t')) { s++; n--; }
		w.s = s;
		w.n = n;
		if (n == 0 || n >= POL_NAME_MAX)
			return fail_n(c, c->line, "a rule needs a name of 1 to ", POL_NAME_MAX - 1, " characters");
		for (i = 0; i < n; i++)
			if (!is_name_char(s[i]))
				return fail_word(c, "bad rule name ", &w, " (letters, digits, '-', '_' and '.' only)");
		if (p->nrules == POL_MAX_RULES)
			return fail_n(c, c->line, "too many rules (at most ", POL_MAX_RULES, ")");
		for (k = 0; k < p->nrules; k++)
			if (strlen(p->rules[k].name) == n && !memcmp(p->rules[k].name, s, n))
				return fail_word(c, "rule ", &w, " defined twice");
		r = &p->rules[p->nrules++];
		memset(r, 0, sizeof *r);
		memcpy(r->name, s, n);
		r->line = c->line;
		r->calls = CALL_ANY;
		r->size_hi = UINT64_MAX;
		c->rule = r;
		c->in_section = SEC_RULE;
		return 0;
	}
	return fail_word(c, "unknown section ", &w, " (expected [global] or [rule NAME])");
}

static int assignment(struct ctx *c, const char *s, size_t n)
{
	struct word key, words[MAX_WORDS];
	const char *eq = memchr(s, '=', n), *v, *end = s + n;
	int nw = 0;
	size_t k;
	unsigned *seen;
	if (!eq) {
		struct word w = { s, n };
		return fail_word(c, "expected 'key = value' or a [section], got ", &w, NULL);
	}
	key.s = s;
	key.n = (size_t)(eq - s);
	while (key.n && (key.s[key.n - 1] == ' ' || key.s[key.n - 1] == '\t'))
		key.n--;
	if (key.n == 0)
		return fail(c, c->line, "missing key before '='", NULL, NULL);
	for (v = eq + 1; v < end;) {
		const char *b;
		while (v < end && (*v == ' ' || *v == '\t'))
			v++;
		if (v == end)
			break;
		b = v;
		while (v < end && *v != ' ' && *v != '\t')
			v++;
		if (nw == MAX_WORDS)
			return fail(c, c->line, "too many words in one value", NULL, NULL);
		words[nw].s = b;
		words[nw].n = (size_t)(v - b);
		nw++;
	}
	for (k = 0; k < N_KEYS; k++)
		if (weq(&key, keys[k].name))
			break;
	if (!c->in_section)
		return fail_word(c, "key ", &key, " outside any section (start with [global] or [rule NAME])");
	if (k == N_KEYS || keys[k].section != c->in_section)
		return fail_word(c, c->in_section == SEC_GLOBAL ? "unknown key " : "unknown rule key ", &key,
		                 c->in_section == SEC_GLOBAL ? " in [global] (expected " GLOBAL_KEYS ")"
		                                             : " (expected " RULE_KEYS ")");
	seen = c->in_section == SEC_GLOBAL ? &c->pol->gseen : &c->rule->seen;
	if (*seen & (1u << k))
		return fail_word(c, "key ", &key, " given twice in this section");
	*seen |= 1u << k;
	if (nw == 0)
		return fail_word(c, "key ", &key, " has no value");
	return keys[k].parse(c, words, nw);
}

int policy_parse(const char *buf, size_t len, struct policy *pol, struct pol_error *err)
{
	struct ctx c;
	size_t pos = 0;
	/* Zero the header only: rules are zeroed as they are made, and the pool
	 * is written before it is read (a whole-struct memset touches 27 KiB). */
	memset(pol, 0, offsetof(struct policy, rules));
	pol->pool_len = 0;
	err->line = 0;
	err->msg[0] = '\0';
	c.pol = pol;
	c.err = err;
	c.line = 0;
	c.rule = NULL;
	c.in_section = 0;
	/* A UTF-8 byte order mark, as some editors write one: not text. */
	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
		pos = 3;
	while (pos < len) {
		const char *s = buf + pos, *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos;
		const char *hash;
		pos += n + (nl ? 1 : 0);
		c.line++;
		if (memchr(s, '\0', n))
			return fail(&c, c.line, "NUL byte in policy (is this a text file?)", NULL, NULL), c.line;
		if (n > LINE_MAX_LEN)
			return fail(&c, c.line, "line too long", NULL, NULL), c.line;
		hash = memchr(s, '#', n);
		if (hash)
			n = (size_t)(hash - s);
		while (n && (*s == ' ' || *s == '\t')) { s++; n--; }
		while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) n--;
		if (n == 0)
			continue;
		if ((*s == '[' ? section(&c, s, n) : assignment(&c, s, n)) < 0)
			return err->line;
	}
	c.line++;
	if (finish_rule(&c) < 0)
		return err->line;
	return 0;
}

static void describe_bits(struct sbuf *sb, unsigned m, const struct pol_word *t)
{
	int first = 1;
	for (; t->s; t++) {
		if (m & t->bit) {
			if (!first)
				sb_chr(sb, ',');
			sb_str(sb, t->s);
			first = 0;
		}
	}
}

static void describe_globs(struct sbuf *sb, const struct policy *pol, const char *key, const uint16_t *g, int n)
{
	int i;
	if (!n)
		return;
	sb_str(sb, key);
	for (i = 0; i < n; i++) {
		if (i)
			sb_chr(sb, ',');
		sb_str(sb, pol_str(pol, g[i]));
	}
}

void policy_describe_rule(struct sbuf *sb, const struct policy *pol, const struct pol_rule *r)
{
	sb_str(sb, "rule ");
	sb_str(sb, r->name);
	sb_str(sb, ": call=");
	sb_str(sb, r->calls == CALL_ANY ? "any" : r->calls == CALL_MMAP ? "mmap" : r->calls == CALL_MALLOC ? "malloc" : "stack");
	sb_str(sb, " size=");
	if (r->size_lo == 0 && r->size_hi == UINT64_MAX) {
		sb_str(sb, "any");
	} else if (r->size_lo == r->size_hi) {
		sb_size_exact(sb, r->size_lo);
	} else if (r->size_hi == UINT64_MAX) {
		sb_str(sb, ">=");
		sb_size_exact(sb, r->size_lo);
	} else if (r->size_lo == 0) {
		sb_str(sb, "<=");
		sb_size_exact(sb, r->size_hi);
	} else {
		sb_size_exact(sb, r->size_lo);
		sb_str(sb, "..");
		sb_size_exact(sb, r->size_hi);
	}
	if (r->map_req) {
		sb_str(sb, " map=");
		describe_bits(sb, r->map_req, pol_map_words);
	}
	if (r->prot_req) {
		sb_str(sb, " prot=");
		if (r->prot_req & PK_NONE)
			sb_str(sb, "none");
		if (r->prot_req & PK_READ) sb_chr(sb, 'r');
		if (r->prot_req & PK_WRITE) sb_chr(sb, 'w');
		if (r->prot_req & PK_EXEC) sb_chr(sb, 'x');
	}
	describe_globs(sb, pol, " caller=", r->caller, r->ncaller);
	describe_globs(sb, pol, " program=", r->program, r->nprogram);
	sb_str(sb, " -> ");
	describe_bits(sb, r->actions, pol_action_words);
	if (r->threads) {
		sb_str(sb, " threads=");
		sb_u64(sb, r->threads);
	}
	if (r->chunk) {
		sb_str(sb, " chunk=");
		sb_size_exact(sb, r->chunk);
	}
	if (r->depth) {
		sb_str(sb, " depth=");
		sb_size_exact(sb, r->depth);
	}
	if (r->huge_check)
		sb_str(sb, " hugepage_check=yes");
	if (r->actions & A_RECYCLE) {
		sb_str(sb, " recycle_max=");
		sb_size_exact(sb, r->recycle_max ? r->recycle_max : RECYCLE_MAX_DEFAULT);
	}
	if (r->actions & A_CARVE) {
		sb_str(sb, " reserve=");
		sb_size_exact(sb, r->reserve ? r->reserve : CARVE_RESERVE_DEFAULT);
		if (r->carve_min_rss) {
			sb_str(sb, " carve_min_rss=");
			sb_size_exact(sb, r->carve_min_rss);
		}
	}
}
