/* match.c: see match.h. */
#include "match.h"
#include "fork.h"
#include "glob.h"
#include "glue.h"
#include "lock.h"
#include "stats.h"
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

struct crule {
	unsigned calls, map_req, prot_req;
	uint64_t lo, hi;
	int by_caller;
};

static struct crule rules[POL_MAX_RULES];
int match_nrules;
uint64_t match_min_size[2] = { UINT64_MAX, UINT64_MAX };
static const struct policy *mpol;

/* Calling objects.  An object is identified by its load base and the
 * generation it was seen in (a generation ends when a library is unloaded);
 * its rule mask says which rules' caller globs accept its file name.  The
 * table only grows; an object of an old generation is never matched again.
 * When it is full, further objects match no caller rule (with a note). */
#define OBJ_MAX 1024
#define OBJ_NAME 96
struct object {
	uintptr_t base;
	uint64_t mask;
	unsigned gen;
	char name[OBJ_NAME];
};
/* argv[0] and /proc/self/exe basenames; aligned(8) keeps them on the page of
 * small variables (see the Makefile on --sort-section) */
static char main_names[2][OBJ_NAME] __attribute__((aligned(8)));
/* The module's state, in one place (its tables beside it). */
static struct {
	spin_t obj_lock;
	unsigned nobjs;               /* published with release after the entry is filled */
	unsigned long long seen_subs; /* dlpi_subs when the cache was last valid */
	unsigned generation;          /* of the objects seen since (a library unloaded ends one) */
} S;

/* Address -> object cache: one word per slot, (addr << 16) | (obj + 1).
 * It and the objects are mapped at start-up where a rule asks for a
 * caller (match_setup), so that the program finds them in its address
 * space before its main, as it found the shim's BSS (mapped inside its
 * first matched mmap, they took 152 KiB of the room a program had measured
 * for it under RLIMIT_AS, and its mmap failed); else on first need (the
 * learner's first naming of a site: mapped at its start instead, a budget
 * test went from 0 to 2,900 faults a round after another file's tests,
 * tests/auto.bats "a malloc'd buffer used for seconds", cause not found),
 * and a program whose rules never ask for a caller does not carry them
 * (glue_table). */
#define CACHE_SLOTS 4096
static struct tabs {
	uint64_t cache[CACHE_SLOTS];
	struct object objs[OBJ_MAX];
} *T;

/* The tables, mapped by the first caller (a loser of the race gives its
 * mapping back); 0 when the system refused them. */
static int tabs_ready(void)
{
	struct tabs *t, *none = NULL;
	if (likely(__atomic_load_n(&T, __ATOMIC_ACQUIRE)))
		return 1;
	if (!(t = glue_table(sizeof *t, 0)))
		return 0;
	if (__atomic_compare_exchange_n(&T, &none, t, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		glue_table_list(t, sizeof *t);
	else
		glue_table_free(t, sizeof *t);
	return 1;
}

static int subs_cb(struct dl_phdr_info *info, size_t size, void *out)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
		*(unsigned long long *)out = info->dlpi_subs;
	return 1; /* the first object is enough: the counters are global */
}

/* A library has been unloaded since the cache was filled: start a new
 * generation with an empty cache. */
static void check_unloads(void)
{
	unsigned long long subs = 0;
	dl_iterate_phdr(subs_cb, &subs);
	if (subs == __atomic_load_n(&S.seen_subs, __ATOMIC_ACQUIRE))
		return;
	spin_lock(&S.obj_lock);
	if (subs != S.seen_subs) {
		size_t i;
		for (i = 0; i < CACHE_SLOTS; i++)
			__atomic_store_n(&T->cache[i], 0, __ATOMIC_RELAXED);
		__atomic_store_n(&S.generation, S.generation + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&S.seen_subs, subs, __ATOMIC_RELEASE);
	}
	spin_unlock(&S.obj_lock);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static void copy_name(char *dst, const char *src)
{
	size_t n = strlen(src);
	if (n >= OBJ_NAME)
		n = OBJ_NAME - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static uint64_t mask_for(const char *name, const char *alt)
{
	uint64_t m = 0;
	int i, k;
	for (i = 0; i < match_nrules; i++) {
		const struct pol_rule *r = &mpol->rules[i];
		for (k = 0; k < r->ncaller; k++) {
			const char *g = pol_str(mpol, r->caller[k]);
			if (glob_match(g, name) || (alt && glob_match(g, alt))) {
				m |= 1ull << i;
				break;
			}
		}
	}
	return m;
}

void match_setup(const struct policy *pol, const char *argv0_base, const char *exe_base)
{
	int i, k, callers = 0;
	mpol = pol;
	match_nrules = pol ? pol->nrules : 0;
	copy_name(main_names[0], argv0_base);
	copy_name(main_names[1], exe_base);
	match_min_size[0] = match_min_size[1] = UINT64_MAX;
	for (i = 0; i < match_nrules; i++) {
		const struct pol_rule *r = &pol->rules[i];
		struct crule *c = &rules[i];
		int on = r->nprogram == 0;
		for (k = 0; k < r->nprogram && !on; k++) {
			const char *g = pol_str(pol, r->program[k]);
			on = glob_match(g, argv0_base) || glob_match(g, exe_base);
		}
		c->calls = on ? r->calls : 0; /* a rule for another program is off */
		c->map_req = r->map_req;
		c->prot_req = r->prot_req;
		c->lo = r->size_lo;
		c->hi = r->size_hi;
		c->by_caller = r->ncaller > 0;
		if ((c->calls & CALL_MMAP) && c->lo < match_min_size[0])
			match_min_size[0] = c->lo;
		if ((c->calls & CALL_MALLOC) && c->lo < match_min_size[1])
			match_min_size[1] = c->lo;
		callers |= c->by_caller;
	}
	if (callers && !tabs_ready())
		stats_note(N_NO_TABLE);
}

/* Object index for a code address, registering the object on first sight. */
static int object_of(const void *addr)
{
	uintptr_t a = (uintptr_t)addr;
	uint64_t slot = (a ^ (a >> 12)) & (CACHE_SLOTS - 1), v;
	Dl_info info;
	unsigned i, n, g;
	int e = errno;
	if (unlikely(!tabs_ready())) {
		stats_note(N_NO_TABLE);
		return -1;
	}
	check_unloads();
	g = __atomic_load_n(&S.generation, __ATOMIC_ACQUIRE);
	v = __atomic_load_n(&T->cache[slot], __ATOMIC_ACQUIRE);
	if (a < (1ull << 48) && v && (v >> 16) == a)
		return (int)(v & 0xffff) - 1;
	memset(&info, 0, sizeof info);
	if (!dladdr(addr, &info) || !info.dli_fbase) {
		errno = e;
		return -1;
	}
	errno = e;
	n = __atomic_load_n(&S.nobjs, __ATOMIC_ACQUIRE);
	for (i = 0; i < n; i++)
		if (T->objs[i].base == (uintptr_t)info.dli_fbase && T->objs[i].gen == g)
			goto found;
	spin_lock(&S.obj_lock);
	n = S.nobjs;
	for (i = 0; i < n; i++)
		if (T->objs[i].base == (uintptr_t)info.dli_fbase && T->objs[i].gen == g)
			break;
	if (i == n) {
		const char *fname = info.dli_fname ? info.dli_fname : "";
		int is_main = !fname[0] || !strcmp(fname, program_invocation_name);
		if (n == OBJ_MAX) {
			spin_unlock(&S.obj_lock);
			stats_note(N_OBJECTS);
			return -1;
		}
		T->objs[i].base = (uintptr_t)info.dli_fbase;
		T->objs[i].gen = g;
		/* The main program: dladdr names it after argv[0]; accept either the
		 * name it was run by or the real file's name (python3 vs python3.11). */
		if (is_main) {
			copy_name(T->objs[i].name, main_names[1][0] ? main_names[1] : main_names[0]);
			T->objs[i].mask = mask_for(main_names[0], main_names[1]);
		} else {
			copy_name(T->objs[i].name, base_name(fname));
			T->objs[i].mask = mask_for(T->objs[i].name, NULL);
		}
		__atomic_store_n(&S.nobjs, n + 1, __ATOMIC_RELEASE);
	}
	spin_unlock(&S.obj_lock);
found:
	if (a < (1ull << 48))
		__atomic_store_n(&T->cache[slot], (a << 16) | (i + 1), __ATOMIC_RELEASE);
	return (int)i;
}

int match_caller(const void *ret, const char **name, uintptr_t *base)
{
	int i = object_of(ret);
	if (i < 0)
		return -1;
	*name = T->objs[i].name;
	*base = T->objs[i].base;
	return 0;
}

void match_anon_request(struct request *rq, unsigned call, size_t len, const void *ret)
{
	rq->call = call;
	rq->len = len;
	rq->mk = MK_ANON | MK_PRIVATE;
	rq->pk = PK_READ | PK_WRITE;
	rq->prot = PROT_READ | PROT_WRITE;
	rq->flags = MAP_PRIVATE | MAP_ANONYMOUS;
	rq->fd = -1;
	rq->off = 0;
	rq->hint = NULL;
	rq->ret = ret;
	rq->epoch = 0;
	rq->weight = 0;
}

void match_classify_mmap(struct request *rq, int prot, int flags, int fd)
{
	unsigned mk = 0, pk = 0;
	mk |= (flags & MAP_ANONYMOUS) ? MK_ANON : MK_FILE;
	mk |= (flags & MAP_SHARED) || (flags & 0x03) == 0x03 /* MAP_SHARED_VALIDATE */ ? MK_SHARED : MK_PRIVATE;
	if (flags & MAP_NORESERVE)
		mk |= MK_NORESERVE;
	if (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE))
		mk |= MK_FIXED;
	if (prot & PROT_READ) pk |= PK_READ;
	if (prot & PROT_WRITE) pk |= PK_WRITE;
	if (prot & PROT_EXEC) pk |= PK_EXEC;
	if (!(prot & (PROT_READ | PROT_WRITE | PROT_EXEC)))
		pk = PK_NONE;
	rq->mk = mk;
	rq->pk = pk;
	rq->epoch = 0;
	rq->weight = 0;
	rq->prot = prot;
	rq->flags = flags;
	rq->fd = fd;
}

int match_request(const struct request *rq)
{
	int i, obj = -2;
	/* A reservation (PROT_NONE or MAP_NORESERVE) is only for rules that
	 * name it: prefaulting address space kept in reserve defeats its point. */
	int reservation = (rq->pk & PK_NONE) || (rq->mk & MK_NORESERVE);
	for (i = 0; i < match_nrules; i++) {
		const struct crule *c = &rules[i];
		if (!(c->calls & rq->call) || rq->len < c->lo || rq->len > c->hi)
			continue;
		if ((rq->mk & c->map_req) != c->map_req)
			continue;
		if (c->prot_req & PK_NONE) {
			if (!(rq->pk & PK_NONE))
				continue;
		} else if ((rq->pk & c->prot_req) != c->prot_req) {
			continue;
		}
		if (reservation && !(c->prot_req & PK_NONE) && !(c->map_req & MK_NORESERVE))
			continue;
		if (c->by_caller) {
			if (obj == -2)
				obj = object_of(rq->ret);
			if (obj < 0 || !(T->objs[obj].mask & (1ull << i)))
				continue;
		}
		return i;
	}
	return -1;
}

void match_atfork(int who)
{
	if (who == FORK_PREPARE)
		spin_lock(&S.obj_lock);
	else if (who == FORK_PARENT)
		spin_unlock(&S.obj_lock);
	else
		spin_init(&S.obj_lock);
}
