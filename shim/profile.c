/* profile.c: fault profiling of an unmodified program (PREFAULT_PROFILE).
 *
 * Observe mode, plus three things:
 *  - mapping sites: each mmap (and each malloc block of 64 KiB or more) is
 *    charged to its site, the return address of the call together with the
 *    call and the size class; the site counts maps, unmaps and bytes, and at
 *    unmap (and at exit) how much of the range was resident (mincore): the
 *    bytes the program really touched;
 *  - sampled faults: a software page-fault perf event per thread, user space
 *    only (so it works unprivileged at perf_event_paranoid 2), recording the
 *    faulting instruction, the data address and the user call chain; a
 *    reader thread drains the ring buffers.  Each sample is charged to the
 *    mapping site whose range holds the address (recently unmapped ranges
 *    are remembered, since samples are read a little late) and to the code
 *    that took it;
 *  - at exit a tab-separated file per process, which `prefault profile`
 *    merges, tabulates, charts and turns into a policy.
 * Where perf_event_open is refused the file says so, with the reason, and the
 * mapping-level figures are still there.  Memory for the tables comes from
 * mmap at start, never from malloc.
 */
#include "glue.h"
#include "profile.h"
#include "lock.h"
#include "os.h"
#include "prefault.h"
#include "sbuf.h"
#include "shim.h"
#include "stats.h"
#include "worker.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SITES 4096
#define LIVE_MAX 65536
#define GRAVE 4096
#define IPS 16384
#define STACKS 4096
#define DEPTH 24
#define OTHERS 2048
#define THREADS 1024
#define RING_PAGES 128 /* data pages per thread: 512 KiB with 4 KiB pages */
#define MALLOC_MIN (64u << 10)
#define OUT_BUF (4 << 10) /* formatting buffer for the profile file, flushed when full */

struct site {
	uintptr_t ret;
	uint32_t call, klass;
	uint32_t mk, pk; /* MK_* and PK_* seen, OR-ed */
	uint64_t size_min, size_max, maps, unmaps, bytes, touched, faults;
};
struct live {
	uintptr_t start, end;
	uint32_t site;
};
struct ipc {
	uintptr_t ip;
	uint64_t n;
};
struct stk {
	uint64_t hash, n;
	uint32_t depth;
	uintptr_t ip[DEPTH];
};
struct oth {
	uintptr_t granule, first;
	uint64_t n;
};
struct pthr {
	int fd, used;
	struct perf_event_mmap_page *ring;
};

int profiling;
static char path_tmpl[1024];
static struct site *sites;
static unsigned nsites;
static spin_t site_lock, live_lock, drain_lock;
static struct live *maps, *blocks;
static size_t nmaps, nblocks;
static struct live grave[GRAVE];
static unsigned grave_next;
static struct ipc *ips;
static struct stk *stacks;
static struct oth *others;
static struct pthr thr[THREADS];
static uint64_t samples, lost, unattributed, in_shim;
static uintptr_t shim_lo, shim_hi; /* our own code: its faults are not the program's */
static uint64_t period = 1;
static int perf_ok = -1, perf_errno;
static int reader_pid, reader_running;
static uint32_t reader_wake;
static pid_t my_pid;

static void *grab(size_t bytes)
{
	void *p = sys_mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void profile_init(const char *tmpl)
{
	const char *per = getenv("PREFAULT_PROFILE_PERIOD");
	size_t n = strlen(tmpl);
	if (n >= sizeof path_tmpl)
		return;
	sites = grab(SITES * sizeof *sites);
	maps = grab(LIVE_MAX * sizeof *maps);
	blocks = grab(LIVE_MAX * sizeof *blocks);
	ips = grab(IPS * sizeof *ips);
	stacks = grab(STACKS * sizeof *stacks);
	others = grab(OTHERS * sizeof *others);
	if (!sites || !maps || !blocks || !ips || !stacks || !others)
		return;
	memcpy(path_tmpl, tmpl, n + 1);
	if (per && *per) {
		uint64_t v = 0;
		for (; *per >= '0' && *per <= '9'; per++)
			v = v * 10 + (uint64_t)(*per - '0');
		if (!*per && v)
			period = v;
	}
	my_pid = sys_getpid();
	{
		/* Our own extent, from our ELF program headers. */
		Dl_info info;
		if (dladdr((void *)profile_init, &info) && info.dli_fbase) {
			const ElfW(Ehdr) *eh = info.dli_fbase;
			const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
			uintptr_t hi = 0;
			int k;
			for (k = 0; k < eh->e_phnum; k++)
				if (ph[k].p_type == PT_LOAD && ph[k].p_vaddr + ph[k].p_memsz > hi)
					hi = ph[k].p_vaddr + ph[k].p_memsz;
			shim_lo = (uintptr_t)info.dli_fbase;
			shim_hi = shim_lo + hi;
		}
	}
	profiling = 1;
}

/* ---- sites and live ranges ---- */

static uint32_t site_of(uintptr_t ret, unsigned call, uint64_t len, unsigned mk, unsigned pk)
{
	uint32_t k = (uint32_t)size_class(len), i;
	uint64_t h = (ret * 0x9e3779b97f4a7c15ull) ^ (call * 31 + k);
	spin_lock(&site_lock);
	for (i = (uint32_t)(h % SITES);; i = (i + 1) % SITES) {
		struct site *s = &sites[i];
		if (s->maps == 0 && s->ret == 0) {
			if (nsites >= SITES * 3 / 4) { /* full: the last slot collects the rest */
				i = SITES - 1;
				break;
			}
			s->ret = ret;
			s->call = call;
			s->klass = k;
			s->size_min = len;
			nsites++;
			break;
		}
		if (s->ret == ret && s->call == call && s->klass == k)
			break;
	}
	if (len < sites[i].size_min)
		sites[i].size_min = len;
	if (len > sites[i].size_max)
		sites[i].size_max = len;
	sites[i].maps++;
	sites[i].bytes += len;
	sites[i].mk |= mk;
	sites[i].pk |= pk;
	spin_unlock(&site_lock);
	return i;
}

static size_t lower(const struct live *t, size_t n, uintptr_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void live_insert(struct live *t, size_t *n, uintptr_t s, uintptr_t e, uint32_t site)
{
	size_t i;
	if (*n == LIVE_MAX)
		return;
	i = lower(t, *n, s);
	memmove(&t[i + 1], &t[i], (*n - i) * sizeof *t);
	t[i].start = s;
	t[i].end = e;
	t[i].site = site;
	(*n)++;
}

/* Resident bytes of [s, e), counting the partial pages at the ends (a malloc
 * block need not be page-aligned) only for the part inside the range. */
static size_t resident_bytes(uintptr_t s, uintptr_t e)
{
	size_t n = os_resident_pages(s, e, pf_page) * pf_page;
	return n < e - s ? n : e - s;
}

/* Remove what overlaps [s, e) from t, counting touched bytes, remembering
 * the ranges for late samples. */
static void live_remove(struct live *t, size_t *n, uintptr_t s, uintptr_t e, int count_unmap)
{
	size_t i = lower(t, *n, s);
	while (i < *n && t[i].start < e) {
		struct live *l = &t[i];
		uintptr_t os = l->start > s ? l->start : s, oe = l->end < e ? l->end : e;
		size_t touched = resident_bytes(os, oe);
		struct site *st = &sites[l->site];
		__atomic_fetch_add(&st->touched, touched, __ATOMIC_RELAXED);
		if (count_unmap)
			__atomic_fetch_add(&st->unmaps, 1, __ATOMIC_RELAXED);
		grave[grave_next % GRAVE] = (struct live){ os, oe, l->site };
		grave_next++;
		if (os == l->start && oe == l->end) {
			memmove(l, l + 1, (*n - i - 1) * sizeof *l);
			(*n)--;
		} else if (os == l->start) {
			l->start = oe;
			i++;
		} else if (oe == l->end) {
			l->end = os;
			i++;
		} else { /* a hole: keep the front, drop the back (rare) */
			l->end = os;
			i++;
		}
	}
}

void profile_map(uintptr_t start, size_t len, unsigned call, const void *ret, unsigned mk, unsigned pk)
{
	uint32_t s = site_of((uintptr_t)ret, call, len, mk, pk);
	spin_lock(&live_lock);
	live_remove(maps, &nmaps, start, start + len, 0); /* MAP_FIXED over old ones */
	live_insert(maps, &nmaps, start, start + len, s);
	spin_unlock(&live_lock);
	profile_tick();
}

void profile_unmap(uintptr_t start, size_t len)
{
	spin_lock(&live_lock);
	live_remove(maps, &nmaps, start, start + len, 1);
	spin_unlock(&live_lock);
}

void profile_block(const void *p, size_t len, const void *ret)
{
	uint32_t s;
	if (len < MALLOC_MIN)
		return;
	s = site_of((uintptr_t)ret, CALL_MALLOC, len, MK_ANON | MK_PRIVATE, PK_READ | PK_WRITE);
	spin_lock(&live_lock);
	live_insert(blocks, &nblocks, (uintptr_t)p, (uintptr_t)p + len, s);
	spin_unlock(&live_lock);
}

void profile_free(const void *p)
{
	size_t i;
	if (!__atomic_load_n(&nblocks, __ATOMIC_RELAXED))
		return;
	spin_lock(&live_lock);
	i = lower(blocks, nblocks, (uintptr_t)p);
	if (i < nblocks && blocks[i].start == (uintptr_t)p)
		live_remove(blocks, &nblocks, blocks[i].start, blocks[i].end, 1);
	spin_unlock(&live_lock);
}

/* ---- samples ---- */

static int find_site(uintptr_t addr)
{
	size_t i;
	unsigned g;
	int s = -1;
	spin_lock(&live_lock);
	i = lower(blocks, nblocks, addr);
	if (i < nblocks && blocks[i].start <= addr)
		s = (int)blocks[i].site;
	if (s < 0) {
		i = lower(maps, nmaps, addr);
		if (i < nmaps && maps[i].start <= addr)
			s = (int)maps[i].site;
	}
	for (g = 0; s < 0 && g < GRAVE && g < grave_next; g++) { /* newest first */
		struct live *l = &grave[(grave_next - 1 - g) % GRAVE];
		if (addr >= l->start && addr < l->end)
			s = (int)l->site;
	}
	spin_unlock(&live_lock);
	return s;
}

static void count_ip(uintptr_t ip)
{
	uint64_t i = (ip * 0x9e3779b97f4a7c15ull) % IPS, k;
	for (k = 0; k < IPS; k++, i = (i + 1) % IPS) {
		if (ips[i].ip == ip || ips[i].ip == 0) {
			ips[i].ip = ip;
			ips[i].n += period;
			return;
		}
	}
}

static void count_stack(const uint64_t *chain, uint64_t nr)
{
	uintptr_t f[DEPTH];
	uint32_t d = 0;
	uint64_t h = 1469598103934665603ull, i, k;
	for (i = 0; i < nr && d < DEPTH; i++) {
		if (chain[i] >= (uint64_t)PERF_CONTEXT_MAX)
			continue; /* context markers */
		f[d++] = (uintptr_t)chain[i];
		h = (h ^ chain[i]) * 1099511628211ull;
	}
	if (!d)
		return;
	i = h % STACKS;
	for (k = 0; k < STACKS; k++, i = (i + 1) % STACKS) {
		struct stk *s = &stacks[i];
		if (s->n && s->hash == h && s->depth == d && !memcmp(s->ip, f, d * sizeof f[0])) {
			s->n += period;
			return;
		}
		if (!s->n) {
			s->hash = h;
			s->depth = d;
			memcpy(s->ip, f, d * sizeof f[0]);
			s->n = period;
			return;
		}
	}
}

static void count_other(uintptr_t addr)
{
	uintptr_t g = addr >> 21;
	uint64_t i = (g * 0x9e3779b97f4a7c15ull) % OTHERS, k;
	unattributed += period;
	for (k = 0; k < OTHERS; k++, i = (i + 1) % OTHERS) {
		if (others[i].granule == g || others[i].n == 0) {
			if (!others[i].n)
				others[i].first = addr;
			others[i].granule = g;
			others[i].n += period;
			return;
		}
	}
}

static void one_sample(const uint64_t *p, size_t words)
{
	/* IP, TID (pid u32 + tid u32), ADDR, CALLCHAIN (nr, ips) */
	uintptr_t ip, addr;
	uint64_t nr;
	int s;
	if (words < 4)
		return;
	ip = (uintptr_t)p[0];
	addr = (uintptr_t)p[2];
	nr = p[3];
	if (nr > words - 4)
		nr = words - 4;
	samples += period;
	if (ip >= shim_lo && ip < shim_hi) {
		in_shim += period; /* the shim touching its own tables */
		return;
	}
	s = find_site(addr);
	if (s >= 0)
		__atomic_fetch_add(&sites[s].faults, period, __ATOMIC_RELAXED);
	else
		count_other(addr);
	count_ip(ip);
	count_stack(p + 4, nr);
}

static void drain_one(struct pthr *t)
{
	struct perf_event_mmap_page *m = t->ring;
	char *data = (char *)m + m->data_offset;
	uint64_t size = m->data_size, head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE), tail = m->data_tail;
	uint64_t rec[1 + 4 + DEPTH + 8];
	while (tail < head) {
		struct perf_event_header h;
		size_t off = tail % size, n;
		memcpy(&h, data + off, sizeof h);
		if (h.size < sizeof h)
			break;
		n = h.size <= sizeof rec ? h.size : sizeof rec;
		if (off + n <= size) {
			memcpy(rec, data + off, n);
		} else { /* the record wraps around the end of the buffer */
			memcpy(rec, data + off, size - off);
			memcpy((char *)rec + (size - off), data, n - (size - off));
		}
		if (h.type == PERF_RECORD_SAMPLE)
			one_sample(rec + 1, (n - sizeof h) / 8);
		else if (h.type == PERF_RECORD_LOST && n >= sizeof h + 16)
			lost += rec[2];
		tail += h.size;
	}
	__atomic_store_n(&m->data_tail, tail, __ATOMIC_RELEASE);
}

static int finished; /* the file is written: no more draining */

static void drain_locked(void)
{
	int i;
	for (i = 0; i < THREADS; i++)
		if (__atomic_load_n(&thr[i].used, __ATOMIC_ACQUIRE))
			drain_one(&thr[i]);
}

static void drain_all(void)
{
	spin_lock(&drain_lock);
	if (!finished)
		drain_locked();
	spin_unlock(&drain_lock);
}

static void *reader_main(void *arg)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	(void)arg;
	shim_guard = 1;
	for (;;) {
		syscall(SYS_futex, &reader_wake, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
		if (__atomic_load_n(&reader_pid, __ATOMIC_RELAXED) != sys_getpid())
			return NULL;
		drain_all();
	}
	return NULL;
}

void profile_tick(void)
{
	/* The reader thread starts on first need, in each process. */
	if (__atomic_load_n(&reader_pid, __ATOMIC_RELAXED) == my_pid || perf_ok != 1)
		return;
	if (__atomic_exchange_n(&reader_running, 1, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&reader_pid, my_pid, __ATOMIC_RELEASE);
	{
		int n = 0;
		shim_spawn(reader_main, 128 << 10, &n, 1);
	}
}

void profile_thread_start(void)
{
	struct perf_event_attr a;
	int fd, i;
	void *ring;
	if (!profiling)
		return;
	if (getenv("PREFAULT_TEST_NO_PERF")) { /* the refused path, for tests */
		perf_ok = 0;
		perf_errno = EACCES;
		return;
	}
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	a.sample_period = period;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_CALLCHAIN;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.exclude_callchain_kernel = 1;
	a.sample_max_stack = DEPTH;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		if (perf_ok != 1) {
			perf_ok = 0;
			perf_errno = errno;
		}
		return;
	}
	ring = sys_mmap(NULL, (RING_PAGES + 1) * pf_page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		close(fd);
		return;
	}
	for (i = 0; i < THREADS; i++) {
		int expect = 0;
		if (__atomic_compare_exchange_n(&thr[i].used, &expect, 2, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			thr[i].fd = fd;
			thr[i].ring = ring;
			__atomic_store_n(&thr[i].used, 1, __ATOMIC_RELEASE);
			perf_ok = 1;
			return;
		}
	}
	sys_munmap(ring, (RING_PAGES + 1) * pf_page);
	close(fd);
}

void profile_fork_child(void)
{
	int i;
	if (!profiling)
		return;
	/* The parent's events and rings are not ours (the rings are not even
	 * mapped here); counts start afresh; the live ranges are ours too. */
	for (i = 0; i < THREADS; i++) {
		if (thr[i].used)
			close(thr[i].fd);
		thr[i].used = 0;
	}
	for (i = 0; i < SITES; i++) {
		sites[i].maps = sites[i].unmaps = sites[i].bytes = sites[i].touched = sites[i].faults = 0;
	}
	memset(ips, 0, IPS * sizeof *ips);
	memset(stacks, 0, STACKS * sizeof *stacks);
	memset(others, 0, OTHERS * sizeof *others);
	samples = lost = unattributed = in_shim = 0;
	finished = 0;
	perf_ok = -1;
	reader_running = 0;
	reader_pid = 0;
	my_pid = sys_getpid();
	spin_init(&site_lock);
	spin_init(&live_lock);
	spin_init(&drain_lock);
	profile_thread_start();
}

/* Lock order: drain_lock before live_lock (the reader holds the first while
 * it looks up sites under the second); site_lock is never held with either.
 * The fork handler must take them in the same order, or a fork while the
 * reader drains deadlocks. */
void profile_lock(void)
{
	spin_lock(&drain_lock);
	spin_lock(&live_lock);
	spin_lock(&site_lock);
}

void profile_unlock(void)
{
	spin_unlock(&site_lock);
	spin_unlock(&live_lock);
	spin_unlock(&drain_lock);
}

/* ---- output ---- */

/* A tab, then a number: the profile file's fields. */
static void tab_u64(struct sbuf *sb, uint64_t v)
{
	sb_chr(sb, '\t');
	sb_u64(sb, v);
}

static void tab_name(struct sbuf *sb, const char *s)
{
	for (; *s; s++)
		sb_chr(sb, (*s == '\t' || *s == '\n') ? ' ' : *s);
}

/* object and symbol for a code address; `caller` means a return address,
 * which points after the call. */
static void symbolise(struct sbuf *sb, uintptr_t ip, int caller, char sep)
{
	Dl_info info;
	const char *obj = "?";
	memset(&info, 0, sizeof info);
	if (dladdr((void *)(ip - (caller ? 1 : 0)), &info) && info.dli_fname) {
		obj = strrchr(info.dli_fname, '/') ? strrchr(info.dli_fname, '/') + 1 : info.dli_fname;
		if (!*obj)
			obj = program_invocation_short_name;
	}
	tab_name(sb, obj);
	sb_chr(sb, sep);
	if (info.dli_sname) {
		tab_name(sb, info.dli_sname);
	} else if (info.dli_fbase) {
		sb_str(sb, obj);
		sb_chr(sb, '+');
		sb_hex(sb, ip - (uintptr_t)info.dli_fbase);
	} else {
		sb_hex(sb, ip);
	}
}

static void others_by_mapping(struct sbuf *sb)
{
	/* Label unattributed faults by what /proc/self/maps says is at the
	 * first address seen in each 2 MiB granule now. */
	static char mb[256 * 1024];
	static struct {
		uintptr_t lo, hi;
		const char *label;
	} mm[8192];
	int nmm = 0, i, j, k;
	long n = os_read_file("/proc/self/maps", mb, sizeof mb);
	char *line = mb;
	while (n > 0 && *line && nmm < 8192) {
		char *nl = strchr(line, '\n'), *p;
		if (nl)
			*nl = '\0';
		mm[nmm].lo = strtoul(line, &p, 16);
		mm[nmm].hi = strtoul(p + 1, &p, 16);
		for (k = 0; k < 4; k++) { /* perms, offset, device, inode */
			while (*p == ' ')
				p++;
			while (*p && *p != ' ')
				p++;
		}
		while (*p == ' ')
			p++;
		mm[nmm].label = *p ? (strrchr(p, '/') && *p == '/' ? strrchr(p, '/') + 1 : p) : "[anon]";
		nmm++;
		if (!nl)
			break;
		line = nl + 1;
	}
	for (i = 0; i < OTHERS; i++) {
		const char *label = "[unmapped]";
		if (!others[i].n)
			continue;
		for (j = 0; j < nmm; j++) {
			if (others[i].first >= mm[j].lo && others[i].first < mm[j].hi) {
				label = mm[j].label;
				break;
			}
		}
		sb_str(sb, "other\t");
		tab_name(sb, label);
		sb_chr(sb, '\t');
		sb_u64(sb, others[i].n);
		sb_chr(sb, '\n');
	}
}

void profile_finish(const char *program, const char *exe, pid_t ppid, const struct faults *f)
{
	char path[1200], buf[OUT_BUF];
	struct sbuf sb, pth;
	int fd, i;
	const char *t;
	if (!profiling || sys_getpid() != my_pid)
		return;
	/* The reader must not count while the tables are written out: hold
	 * the drain lock throughout, and leave it retired. */
	spin_lock(&drain_lock);
	drain_locked();
	finished = 1;
	/* what is still mapped: count what was touched */
	spin_lock(&live_lock);
	for (i = 0; (size_t)i < nmaps; i++)
		__atomic_fetch_add(&sites[maps[i].site].touched, resident_bytes(maps[i].start, maps[i].end), __ATOMIC_RELAXED);
	for (i = 0; (size_t)i < nblocks; i++)
		__atomic_fetch_add(&sites[blocks[i].site].touched, resident_bytes(blocks[i].start, blocks[i].end),
		                   __ATOMIC_RELAXED);
	spin_unlock(&live_lock);
	sb_init(&pth, path, sizeof path, -1);
	for (t = path_tmpl; *t; t++) {
		if (t[0] == '%' && t[1] == 'p') {
			sb_u64(&pth, (uint64_t)my_pid);
			t++;
		} else {
			sb_chr(&pth, *t);
		}
	}
	fd = os_open_report(sb_cstr(&pth));
	if (fd < 0) {
		spin_unlock(&drain_lock);
		return;
	}
	sb_init(&sb, buf, sizeof buf, fd);
	sb_str(&sb, "prefault-profile\t1\nprocess\t");
	sb_u64(&sb, (uint64_t)my_pid);
	tab_u64(&sb, (uint64_t)ppid);
	sb_chr(&sb, '\t');
	tab_name(&sb, program);
	sb_chr(&sb, '\t');
	tab_name(&sb, exe);
	sb_str(&sb, "\nperf\t");
	if (perf_ok == 1) {
		sb_str(&sb, "ok\t-");
	} else {
		sb_str(&sb, "refused\t");
		sb_str(&sb, perf_errno == EACCES || perf_errno == EPERM
		                ? "perf_event_open not permitted (kernel.perf_event_paranoid, seccomp or a container)"
		                : perf_errno == ENOSYS ? "perf_event_open not available (no perf events in this kernel)"
		                                       : perf_errno == ENOENT ? "no software page-fault event" : "perf_event_open failed");
		sb_str(&sb, " (errno ");
		sb_u64(&sb, (uint64_t)perf_errno);
		sb_chr(&sb, ')');
	}
	sb_str(&sb, "\nperiod\t");
	sb_u64(&sb, period);
	sb_str(&sb, "\nsamples\t");
	sb_u64(&sb, samples);
	tab_u64(&sb, lost);
	tab_u64(&sb, unattributed);
	tab_u64(&sb, in_shim);
	sb_str(&sb, "\nfaults\t");
	sb_u64(&sb, f->minor);
	tab_u64(&sb, f->major);
	sb_chr(&sb, '\n');
	for (i = 0; i < SITES; i++) {
		struct site *s = &sites[i];
		if (!s->maps)
			continue;
		sb_str(&sb, "site\t");
		if (s->ret)
			symbolise(&sb, s->ret, 1, '\t');
		else
			sb_str(&sb, "?\t?");
		sb_str(&sb, s->call == CALL_MALLOC ? "\tmalloc\t" : "\tmmap\t");
		sb_str(&sb, (s->mk & MK_FILE) ? ((s->mk & MK_ANON) ? "mixed" : "file") : "anon");
		sb_str(&sb, (s->mk & MK_SHARED) ? ((s->mk & MK_PRIVATE) ? ",mixed\t" : ",shared\t") : ",private\t");
		if (s->pk & PK_READ) sb_chr(&sb, 'r');
		if (s->pk & PK_WRITE) sb_chr(&sb, 'w');
		if (s->pk & PK_EXEC) sb_chr(&sb, 'x');
		if (!(s->pk & (PK_READ | PK_WRITE | PK_EXEC))) sb_str(&sb, "none");
		tab_u64(&sb, 1ull << s->klass);
		tab_u64(&sb, s->size_min);
		tab_u64(&sb, s->size_max);
		tab_u64(&sb, s->maps);
		tab_u64(&sb, s->unmaps);
		tab_u64(&sb, s->bytes);
		tab_u64(&sb, s->touched);
		tab_u64(&sb, s->faults);
		sb_chr(&sb, '\n');
	}
	for (i = 0; i < IPS; i++) {
		if (!ips[i].n)
			continue;
		sb_str(&sb, "code\t");
		symbolise(&sb, ips[i].ip, 0, '\t');
		tab_u64(&sb, ips[i].n);
		sb_chr(&sb, '\n');
	}
	for (i = 0; i < STACKS; i++) {
		int k;
		if (!stacks[i].n)
			continue;
		sb_str(&sb, "stack\t");
		sb_u64(&sb, stacks[i].n);
		sb_chr(&sb, '\t');
		for (k = (int)stacks[i].depth - 1; k >= 0; k--) { /* root first */
			char fr[300];
			struct sbuf f1;
			char *tab;
			sb_init(&f1, fr, sizeof fr, -1);
			symbolise(&f1, stacks[i].ip[k], k > 0, '\t');
			sb_cstr(&f1);
			tab = strchr(fr, '\t'); /* folded frames: the symbol, or object+offset */
			for (char *c = tab ? tab + 1 : fr; *c; c++)
				if (*c == ';' || *c == ' ')
					*c = '_';
			sb_str(&sb, tab ? tab + 1 : fr);
			if (k)
				sb_chr(&sb, ';');
		}
		sb_chr(&sb, '\n');
	}
	others_by_mapping(&sb);
	sb_str(&sb, "end\n");
	sb_flush(&sb);
	close(fd);
	spin_unlock(&drain_lock);
}
