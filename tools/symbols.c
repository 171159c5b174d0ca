/* symbols.c: see symbols.h.  Each object file is read once (mapped, with
 * its debug file and MiniDebugInfo, which the names point into) and kept
 * for every process of the tree that mapped it.  Where two symbols start
 * at one address, the one perf would show is kept (choose_best_symbol in
 * perf's symbol.c: a sized one, then not weak, then global, then fewer
 * leading underscores, then the longer name). */
#include "symbols.h"
#include "demangle.h"
#include "elfread.h"
#include "xz.h"
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MINIDEBUG_MAX (256u << 20) /* the most .gnu_debugdata may decompress to */
#define MAX_LOADS 32

struct fsym {
	uint64_t start, end;
	const char *name;
	char *shown; /* demangled, once asked for */
	unsigned bind;
};

struct object {
	char *path;
	uint64_t inode;
	int readable; /* an ELF file, read */
	struct elf_phdr loads[MAX_LOADS];
	int nloads;
	struct fsym *syms;
	size_t nsyms, cap;
	void *map[2]; /* the file and its debug file, mapped: the names point into them */
	size_t maplen[2];
	uint8_t *mini; /* MiniDebugInfo, decompressed */
	char source[512];
	struct object *next;
};

static struct object *objects;

/* ---- gathering and ordering symbols ---- */

static void add_sym(void *arg, const struct elf_sym *s)
{
	struct object *o = arg;
	struct fsym *f;
	if ((s->type != STT_FUNC && s->type != STT_GNU_IFUNC) || s->shndx == SHN_UNDEF)
		return;
	if (o->nsyms == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 256;
		f = realloc(o->syms, cap * sizeof *f);
		if (!f)
			return;
		o->syms = f;
		o->cap = cap;
	}
	f = &o->syms[o->nsyms++];
	f->start = s->value;
	f->end = s->value + s->size < s->value ? s->value : s->value + s->size;
	f->name = s->name;
	f->shown = NULL;
	f->bind = s->bind;
}

static int by_start(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int underscores(const char *s)
{
	int n = 0;
	while (*s++ == '_')
		n++;
	return n;
}

/* Is a the symbol perf would show rather than b (same start)? */
static int better(const struct fsym *a, const struct fsym *b)
{
	uint64_t la = a->end - a->start, lb = b->end - b->start;
	size_t na, nb;
	if (la != 0 && lb == 0)
		return 1;
	if (la == 0 && lb != 0)
		return 0;
	if ((a->bind == STB_WEAK) != (b->bind == STB_WEAK))
		return b->bind == STB_WEAK;
	if ((a->bind == STB_GLOBAL) != (b->bind == STB_GLOBAL))
		return a->bind == STB_GLOBAL;
	if (underscores(a->name) != underscores(b->name))
		return underscores(a->name) < underscores(b->name);
	na = strlen(a->name);
	nb = strlen(b->name);
	return na >= nb;
}

/* Sort, keep one symbol per address, and give unsized ones an end: the
 * next symbol's start (perf's symbols__fixup_end). */
static void finish_syms(struct object *o)
{
	size_t i, k = 0;
	if (!o->nsyms)
		return;
	qsort(o->syms, o->nsyms, sizeof *o->syms, by_start);
	for (i = 1; i < o->nsyms; i++) {
		if (o->syms[i].start == o->syms[k].start) {
			if (better(&o->syms[i], &o->syms[k]))
				o->syms[k] = o->syms[i];
		} else {
			o->syms[++k] = o->syms[i];
		}
	}
	o->nsyms = k + 1;
	for (i = 0; i < o->nsyms; i++) {
		struct fsym *f = &o->syms[i];
		if (f->end == f->start)
			f->end = i + 1 < o->nsyms ? o->syms[i + 1].start : ((f->start + 4095) & ~(uint64_t)4095) + 4096;
	}
}

static const struct fsym *lookup(const struct object *o, uint64_t vaddr)
{
	size_t lo = 0, hi = o->nsyms, k;
	while (lo < hi) { /* the first symbol starting after vaddr */
		size_t mid = lo + (hi - lo) / 2;
		if (o->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = 0; k < 8 && lo > k; k++) { /* the nearest that holds it (symbols may nest) */
		const struct fsym *f = &o->syms[lo - 1 - k];
		if (vaddr < f->end)
			return f;
	}
	return NULL;
}

/* ---- reading files ---- */

static void *map_file(const char *path, size_t *len, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *p;
	if (fd < 0)
		return NULL;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode) || st->st_size <= 0 || (uint64_t)st->st_size > SIZE_MAX) {
		close(fd);
		return NULL;
	}
	*len = (size_t)st->st_size;
	p = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/* MiniDebugInfo: the .symtab of the ELF file in .gnu_debugdata. */
static long minidebuginfo(struct object *o, const struct elf *e)
{
	struct elf_shdr sh;
	const uint8_t *d;
	const char *why;
	uint8_t *out;
	size_t n;
	struct elf inner;
	long got;
	if (elf_find_section(e, ".gnu_debugdata", &sh) < 0 || !(d = elf_section_data(e, &sh)))
		return -1;
	if (xz_decode(d, sh.size, MINIDEBUG_MAX, &out, &n, &why) < 0)
		return -1;
	if (elf_open_mem(&inner, out, n, &why) < 0 || (got = elf_symbols(&inner, SHT_SYMTAB, add_sym, o)) <= 0) {
		free(out);
		return -1;
	}
	free(o->mini);
	o->mini = out;
	return got;
}

static const char *debug_dirs(void)
{
	const char *d = getenv("PREFAULT_DEBUG_DIR");
	return d && *d ? d : "/usr/lib/debug";
}

/* The next directory of a colon-separated list into out; NULL at the end. */
static const char *next_dir(const char *list, char *out, size_t cap)
{
	const char *colon;
	size_t len;
	if (!list || !*list)
		return NULL;
	colon = strchr(list, ':');
	len = colon ? (size_t)(colon - list) : strlen(list);
	snprintf(out, cap, "%.*s", (int)len, list);
	return colon ? colon + 1 : list + len;
}

/* A debug file for o at path: the same machine and build ID (or, without
 * IDs, the CRC32 .gnu_debuglink gives), and a .symtab.  Then its symbols
 * are o's. */
static int try_debug(struct object *o, const struct elf *e, const char *path, const uint8_t *id, size_t idlen,
                     const uint32_t *crc, const char *how)
{
	struct stat st;
	size_t len;
	void *p = map_file(path, &len, &st);
	struct elf d;
	uint8_t did[64];
	size_t dlen;
	const char *why;
	if (!p)
		return 0;
	if ((uint64_t)st.st_ino == o->inode || elf_open_mem(&d, p, len, &why) < 0 || d.machine != e->machine ||
	    d.is64 != e->is64)
		goto no;
	dlen = elf_build_id(&d, did, sizeof did);
	if (idlen && dlen) {
		if (dlen != idlen || memcmp(did, id, idlen))
			goto no;
	} else if (!crc || xz_crc32(0, p, len) != *crc) {
		goto no;
	}
	if (elf_symbols(&d, SHT_SYMTAB, add_sym, o) <= 0)
		goto no;
	o->map[1] = p;
	o->maplen[1] = len;
	snprintf(o->source, sizeof o->source, "debug file %s (%s)", path, how);
	return 1;
no:
	munmap(p, len);
	return 0;
}

static int find_debug_file(struct object *o, const struct elf *e)
{
	uint8_t id[64];
	size_t idlen = elf_build_id(e, id, sizeof id), k;
	char dir[1024], path[4096], link[256], odir[2048];
	const char *list = debug_dirs(), *slash;
	uint32_t crc;
	if (idlen >= 2 && idlen <= sizeof id) {
		const char *l = list;
		while ((l = next_dir(l, dir, sizeof dir))) {
			int n = snprintf(path, sizeof path, "%s/.build-id/%02x/", dir, id[0]);
			for (k = 1; k < idlen && n > 0 && (size_t)n + 3 < sizeof path; k++)
				n += snprintf(path + n, sizeof path - (size_t)n, "%02x", id[k]);
			if (n > 0 && (size_t)n + 7 < sizeof path) {
				memcpy(path + n, ".debug", 7);
				if (try_debug(o, e, path, id, idlen, NULL, "build ID"))
					return 1;
			}
		}
	}
	if (elf_debuglink(e, link, sizeof link, &crc) < 0)
		return 0;
	slash = strrchr(o->path, '/');
	if (!slash)
		return 0;
	snprintf(odir, sizeof odir, "%.*s", (int)(slash - o->path), o->path);
	snprintf(path, sizeof path, "%s/%s", odir, link);
	if (try_debug(o, e, path, id, idlen, &crc, ".gnu_debuglink"))
		return 1;
	snprintf(path, sizeof path, "%s/.debug/%s", odir, link);
	if (try_debug(o, e, path, id, idlen, &crc, ".gnu_debuglink"))
		return 1;
	while ((list = next_dir(list, dir, sizeof dir))) {
		snprintf(path, sizeof path, "%s%s/%s", dir, odir, link);
		if (try_debug(o, e, path, id, idlen, &crc, ".gnu_debuglink"))
			return 1;
	}
	return 0;
}

/* Every name for o from e (and, given a path, the debug files), best
 * first; then o's .dynsym besides. */
static void gather(struct object *o, const struct elf *e, int files)
{
	struct elf_phdr ph;
	unsigned i;
	o->nloads = 0;
	for (i = 0; elf_segment(e, i, &ph) == 0 && o->nloads < MAX_LOADS; i++)
		if (ph.type == PT_LOAD)
			o->loads[o->nloads++] = ph;
	if (files && find_debug_file(o, e))
		;
	else if (elf_symbols(e, SHT_SYMTAB, add_sym, o) > 0)
		snprintf(o->source, sizeof o->source, "the .symtab of %s", o->path);
	else if (minidebuginfo(o, e) > 0)
		snprintf(o->source, sizeof o->source, "MiniDebugInfo (.gnu_debugdata) of %s", o->path);
	else
		snprintf(o->source, sizeof o->source, "the .dynsym of %s", o->path);
	elf_symbols(e, SHT_DYNSYM, add_sym, o);
	finish_syms(o);
}

static struct object *object_of(const char *path, uint64_t inode)
{
	struct object *o;
	struct stat st;
	struct elf e;
	const char *why;
	for (o = objects; o; o = o->next)
		if (o->inode == inode && !strcmp(o->path, path))
			return o;
	o = calloc(1, sizeof *o);
	if (!o || !(o->path = strdup(path))) {
		free(o);
		return NULL;
	}
	o->inode = inode;
	o->next = objects;
	objects = o;
	snprintf(o->source, sizeof o->source, "nothing: %s cannot be read", path);
	if (path[0] != '/')
		return o; /* [vdso] and the like */
	o->map[0] = map_file(path, &o->maplen[0], &st);
	if (!o->map[0])
		return o;
	if (inode && (uint64_t)st.st_ino != inode) { /* replaced since the run */
		snprintf(o->source, sizeof o->source, "nothing: %s is not the file the program ran (another inode)", path);
		return o;
	}
	if (elf_open_mem(&e, o->map[0], o->maplen[0], &why) < 0)
		return o;
	o->readable = 1;
	gather(o, &e, 1);
	return o;
}

const char *symbols_source(const char *path, uint64_t inode)
{
	struct object *o = object_of(path, inode);
	return o ? o->source : "nothing: out of memory";
}

void symbols_reset(void)
{
	while (objects) {
		struct object *o = objects;
		size_t i;
		objects = o->next;
		for (i = 0; i < o->nsyms; i++)
			free(o->syms[i].shown);
		for (i = 0; i < 2; i++)
			if (o->map[i])
				munmap(o->map[i], o->maplen[i]);
		free(o->syms);
		free(o->mini);
		free(o->path);
		free(o);
	}
}

/* ---- naming ---- */

static const char *shown(struct fsym *f)
{
	if (!f->shown && f->name[0] == '_' && f->name[1] == 'Z')
		f->shown = demangle(f->name, 0);
	return f->shown ? f->shown : f->name;
}

static uint64_t to_vaddr(const struct object *o, uint64_t off)
{
	int i;
	for (i = 0; i < o->nloads; i++)
		if (off >= o->loads[i].offset && off - o->loads[i].offset < o->loads[i].filesz)
			return off - o->loads[i].offset + o->loads[i].vaddr;
	return off;
}

void symbolize(const struct mapping *maps, size_t n, uint64_t addr, int caller, char *obj, size_t ocap, char *name,
               size_t ncap)
{
	uint64_t a = caller && addr ? addr - 1 : addr, vaddr;
	const struct mapping *m = NULL;
	const char *base, *del;
	struct object *o;
	const struct fsym *f = NULL;
	size_t i, blen;
	for (i = 0; i < n && !m; i++)
		if (a >= maps[i].start && a < maps[i].end)
			m = &maps[i];
	if (!m) {
		snprintf(obj, ocap, "?");
		snprintf(name, ncap, "0x%llx", (unsigned long long)addr);
		return;
	}
	base = strrchr(m->path, '/') ? strrchr(m->path, '/') + 1 : m->path;
	del = strstr(base, " (deleted)");
	blen = del && !del[10] ? (size_t)(del - base) : strlen(base);
	snprintf(obj, ocap, "%.*s", (int)blen, base);
	o = object_of(m->path, m->inode);
	vaddr = a - m->start + m->offset;
	if (o && o->readable) {
		vaddr = to_vaddr(o, vaddr);
		f = lookup(o, vaddr);
	}
	if (f)
		snprintf(name, ncap, "%s", shown((struct fsym *)f));
	else
		snprintf(name, ncap, "%.*s+0x%llx", (int)blen, base, (unsigned long long)(vaddr + (a != addr)));
}

long symbols_from_buffer(const uint8_t *p, size_t n, uint64_t vaddr, char *name, size_t ncap)
{
	struct object o;
	struct elf e;
	const char *why;
	const struct fsym *f;
	long count;
	size_t i;
	memset(&o, 0, sizeof o);
	o.path = (char *)"(buffer)";
	if (elf_open_mem(&e, p, n, &why) < 0)
		return -1;
	gather(&o, &e, 0);
	f = lookup(&o, vaddr);
	snprintf(name, ncap, "%s", f ? shown((struct fsym *)f) : "");
	count = (long)o.nsyms;
	for (i = 0; i < o.nsyms; i++) {
		(void)shown(&o.syms[i]); /* every name through the demangler */
		free(o.syms[i].shown);
	}
	free(o.syms);
	free(o.mini);
	return count;
}
