/* profile_sample.c: sampled page faults.
 *
 * A software page-fault perf event per thread, user space only (so it works
 * unprivileged at perf_event_paranoid 2), recording the faulting
 * instruction, the time, the data address and the user call chain; a reader
 * thread drains the ring buffers every 10 ms.  Each sample is charged to a
 * mapping site (profile_tables.c) and to the code that took it.
 *
 * The events' file descriptors are the program's fd table too, so they are
 * handled with care: they are moved above the low numbers a program expects
 * for its own files; they never take more than a quarter of RLIMIT_NOFILE
 * (threads beyond that go unsampled, and the profile says how many); a
 * thread's event and ring are freed when the thread exits; and an fd is
 * closed only after PERF_EVENT_IOC_ID says it still is our event: a program
 * that closed it and got the number back for a file of its own keeps it.
 */
#include "profile_int.h"
#include "glue.h"
#include "os.h"
#include "sbuf.h"
#include "stats.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define IPS 16384
#define STACKS 4096
#define DEPTH 24
#define OTHERS 2048
#define THREADS 1024
#define RING_PAGES 128 /* data pages per thread: 512 KiB with 4 KiB pages */
#define READ_NS (10ull * 1000 * 1000)

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
	int fd, used;  /* used: 0 free, 2 filling, 1 live */
	uint64_t id;   /* PERF_EVENT_IOC_ID: the event's identity */
	struct perf_event_mmap_page *ring;
};

static struct ipc *ips;
static struct stk *stacks;
static struct oth *others;
static struct pthr thr[THREADS];
static uint64_t samples, lost, unattributed, in_shim, dropped_ips, dropped_stacks, dropped_others;
static uint64_t unsampled; /* threads without an event (fd share, table, or refused) */
static int nfds, fd_cap;   /* our open events, and the most we allow ourselves */
static uintptr_t shim_lo, shim_hi; /* our own code: its faults are not the program's */
static int perf_ok = -1, perf_errno, no_perf;
static int reader_running;
static uint32_t reader_wake;
static int finished; /* the file is written: no more draining */
static pthread_key_t thr_key;
static int thr_key_ok;

static void *grab(size_t bytes)
{
	void *p = sys_mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void thread_gone(void *slot);

void sample_init(void)
{
	const char *per = getenv("PREFAULT_PROFILE_PERIOD");
	struct rlimit rl;
	Dl_info info;
	ips = grab(IPS * sizeof *ips);
	stacks = grab(STACKS * sizeof *stacks);
	others = grab(OTHERS * sizeof *others);
	if (per && *per) {
		uint64_t v = 0;
		for (; *per >= '0' && *per <= '9'; per++)
			v = v * 10 + (uint64_t)(*per - '0');
		if (!*per && v)
			period = v;
	}
	no_perf = getenv("PREFAULT_TEST_NO_PERF") != NULL; /* the refused path, for tests */
	fd_cap = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 4 < THREADS
	                 ? (int)(rl.rlim_cur / 4)
	                 : THREADS;
	if (pthread_key_create(&thr_key, thread_gone) == 0)
		thr_key_ok = 1;
	/* Our own extent, from our ELF program headers. */
	if (dladdr((void *)sample_init, &info) && info.dli_fbase) {
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

/* ---- counting samples (drain_lock held) ---- */

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
	dropped_ips += period;
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
	dropped_stacks += period;
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
	dropped_others += period;
}

static void one_sample(const uint64_t *p, size_t words)
{
	/* IP, TID (pid u32 + tid u32), TIME, ADDR, CALLCHAIN (nr, ips) */
	uintptr_t ip, addr;
	uint64_t nr, t;
	if (words < 5)
		return;
	ip = (uintptr_t)p[0];
	t = p[2];
	addr = (uintptr_t)p[3];
	nr = p[4];
	if (nr > words - 5)
		nr = words - 5;
	samples += period;
	if (ip >= shim_lo && ip < shim_hi) {
		in_shim += period; /* the shim touching its own tables */
		return;
	}
	if (tables_fault(addr, t) < 0)
		count_other(addr);
	count_ip(ip);
	count_stack(p + 5, nr);
}

static void drain_one(struct pthr *t)
{
	struct perf_event_mmap_page *m = t->ring;
	char *data = (char *)m + m->data_offset;
	uint64_t size = m->data_size, head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE), tail = m->data_tail;
	uint64_t rec[1 + 5 + DEPTH + 8];
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

void sample_drain_locked(void)
{
	int i;
	if (finished)
		return;
	for (i = 0; i < THREADS; i++)
		if (__atomic_load_n(&thr[i].used, __ATOMIC_ACQUIRE) == 1)
			drain_one(&thr[i]);
}

/* ---- events ---- */

/* Close fd only if it still is the event we opened. */
static void close_ours(int fd, uint64_t id)
{
	uint64_t now = 0;
	if (sys_call(SYS_ioctl, fd, (long)PERF_EVENT_IOC_ID, (long)&now, 0, 0, 0) == 0 && now == id)
		close(fd);
}

/* Free a slot's ring and event (drain_lock held). */
static void release_slot(struct pthr *t)
{
	if (__atomic_load_n(&t->used, __ATOMIC_ACQUIRE) != 1)
		return;
	drain_one(t);
	sys_munmap(t->ring, (RING_PAGES + 1) * page_size);
	close_ours(t->fd, t->id);
	__atomic_sub_fetch(&nfds, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&t->used, 0, __ATOMIC_RELEASE);
}

static void thread_gone(void *slot)
{
	struct pthr *t = slot;
	shim_guard++;
	spin_lock(&drain_lock);
	release_slot(t);
	spin_unlock(&drain_lock);
	shim_guard--;
}

void sample_close_all(void)
{
	int i;
	for (i = 0; i < THREADS; i++)
		release_slot(&thr[i]);
	finished = 1;
}

/* Move fd above the numbers programs use for their own files. */
static int move_high(int fd)
{
	int lo = fd_cap * 3 < 1000 ? fd_cap * 3 : 1000, nfd;
	if (lo <= fd)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, lo);
	if (nfd < 0)
		return fd;
	close(fd);
	return nfd;
}

void profile_thread_start(void)
{
	struct perf_event_attr a;
	int fd, i;
	uint64_t id = 0;
	void *ring;
	if (!profiling)
		return;
	if (no_perf) {
		perf_ok = 0;
		perf_errno = EACCES;
		return;
	}
	if (__atomic_add_fetch(&nfds, 1, __ATOMIC_RELAXED) > fd_cap) {
		__atomic_sub_fetch(&nfds, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&unsampled, 1, __ATOMIC_RELAXED);
		return;
	}
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	a.sample_period = period;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CALLCHAIN;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC; /* the clock the map times are read with */
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.exclude_callchain_kernel = 1;
	a.sample_max_stack = DEPTH;
	fd = (int)sys_call(SYS_perf_event_open, (long)&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC, 0);
	if (fd < 0) {
		if (perf_ok != 1) {
			perf_ok = 0;
			perf_errno = errno;
		}
		goto unsampled;
	}
	fd = move_high(fd);
	if (sys_call(SYS_ioctl, fd, (long)PERF_EVENT_IOC_ID, (long)&id, 0, 0, 0) != 0) {
		close(fd);
		goto unsampled;
	}
	ring = sys_mmap(NULL, (RING_PAGES + 1) * page_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		close(fd);
		goto unsampled;
	}
	for (i = 0; i < THREADS; i++) {
		int expect = 0;
		if (__atomic_compare_exchange_n(&thr[i].used, &expect, 2, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			thr[i].fd = fd;
			thr[i].id = id;
			thr[i].ring = ring;
			__atomic_store_n(&thr[i].used, 1, __ATOMIC_RELEASE);
			perf_ok = 1;
			if (thr_key_ok)
				pthread_setspecific(thr_key, &thr[i]); /* freed when the thread exits */
			return;
		}
	}
	sys_munmap(ring, (RING_PAGES + 1) * page_size);
	close(fd);
unsampled:
	__atomic_sub_fetch(&nfds, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&unsampled, 1, __ATOMIC_RELAXED);
}

/* ---- the reader thread ---- */

static void *reader_main(void *arg)
{
	pid_t mine = (pid_t)(uintptr_t)arg;
	for (;;) {
		uint32_t seen = __atomic_load_n(&reader_wake, __ATOMIC_ACQUIRE);
		glue_wait(&reader_wake, seen, READ_NS); /* woken early only to leave */
		if (glue_leaving() || sys_getpid() != mine)
			break;
		spin_lock(&drain_lock);
		sample_drain_locked();
		spin_unlock(&drain_lock);
	}
	__atomic_store_n(&reader_running, 0, __ATOMIC_RELEASE);
	return NULL;
}

void profile_tick(void)
{
	/* The reader thread starts on first need, in each process. */
	if (perf_ok != 1 || __atomic_load_n(&reader_running, __ATOMIC_ACQUIRE))
		return;
	if (__atomic_exchange_n(&reader_running, 1, __ATOMIC_ACQUIRE))
		return;
	if (glue_spawn(reader_main, (void *)(uintptr_t)my_pid, 128 << 10, &reader_wake) != 0)
		__atomic_store_n(&reader_running, 0, __ATOMIC_RELEASE);
}

void sample_fork_child(void)
{
	int i;
	/* The parent's events and rings are not ours (the rings are not even
	 * mapped here: perf rings are not inherited); their fds are copies,
	 * closed if they still are what the parent opened. */
	for (i = 0; i < THREADS; i++) {
		if (thr[i].used == 1)
			close_ours(thr[i].fd, thr[i].id);
		thr[i].used = 0;
	}
	memset(ips, 0, IPS * sizeof *ips);
	memset(stacks, 0, STACKS * sizeof *stacks);
	memset(others, 0, OTHERS * sizeof *others);
	samples = lost = unattributed = in_shim = 0;
	dropped_ips = dropped_stacks = dropped_others = unsampled = 0;
	nfds = 0;
	finished = 0;
	perf_ok = -1;
	reader_running = 0;
	profile_thread_start();
}

/* ---- output ---- */

void profile_tab_u64(struct sbuf *sb, uint64_t v)
{
	sb_chr(sb, '\t');
	sb_u64(sb, v);
}

void profile_tab_name(struct sbuf *sb, const char *s)
{
	for (; *s; s++)
		sb_chr(sb, (*s == '\t' || *s == '\n') ? ' ' : *s);
}

/* object and symbol for a code address; `caller` means a return address,
 * which points after the call. */
void profile_symbol(struct sbuf *sb, uintptr_t ip, int caller, char sep)
{
	Dl_info info;
	const char *obj = "?";
	memset(&info, 0, sizeof info);
	if (dladdr((void *)(ip - (caller ? 1 : 0)), &info) && info.dli_fname) {
		obj = strrchr(info.dli_fname, '/') ? strrchr(info.dli_fname, '/') + 1 : info.dli_fname;
		if (!*obj)
			obj = program_invocation_short_name;
	}
	profile_tab_name(sb, obj);
	sb_chr(sb, sep);
	if (info.dli_sname) {
		profile_tab_name(sb, info.dli_sname);
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
		profile_tab_name(sb, label);
		sb_chr(sb, '\t');
		sb_u64(sb, others[i].n);
		sb_chr(sb, '\n');
	}
}

void sample_write(struct sbuf *sb)
{
	int i;
	sb_str(sb, "perf\t");
	if (perf_ok == 1) {
		sb_str(sb, "ok\t-");
	} else {
		sb_str(sb, "refused\t");
		sb_str(sb, perf_errno == EACCES || perf_errno == EPERM
		               ? "perf_event_open not permitted (kernel.perf_event_paranoid, seccomp or a container)"
		               : perf_errno == ENOSYS ? "perf_event_open not available (no perf events in this kernel)"
		               : perf_errno == ENOENT ? "no software page-fault event"
		               : perf_errno == EMFILE ? "no file descriptor left for the fault event"
		                                      : "perf_event_open failed");
		sb_str(sb, " (errno ");
		sb_u64(sb, (uint64_t)perf_errno);
		sb_chr(sb, ')');
	}
	sb_str(sb, "\nperiod\t");
	sb_u64(sb, period);
	sb_str(sb, "\nsamples\t");
	sb_u64(sb, samples);
	profile_tab_u64(sb, lost);
	profile_tab_u64(sb, unattributed);
	profile_tab_u64(sb, in_shim);
	sb_str(sb, "\nlimits\tunsampled_threads");
	profile_tab_u64(sb, unsampled);
	sb_str(sb, "\tdropped_code");
	profile_tab_u64(sb, dropped_ips);
	sb_str(sb, "\tdropped_stacks");
	profile_tab_u64(sb, dropped_stacks);
	sb_str(sb, "\tdropped_other");
	profile_tab_u64(sb, dropped_others);
	sb_str(sb, "\tmerged_sites");
	profile_tab_u64(sb, sites_merged);
	sb_str(sb, "\tuntracked_ranges");
	profile_tab_u64(sb, live_dropped);
	sb_chr(sb, '\n');
	for (i = 0; i < IPS; i++) {
		if (!ips[i].n)
			continue;
		sb_str(sb, "code\t");
		profile_symbol(sb, ips[i].ip, 0, '\t');
		profile_tab_u64(sb, ips[i].n);
		sb_chr(sb, '\n');
	}
	for (i = 0; i < STACKS; i++) {
		int k;
		if (!stacks[i].n)
			continue;
		sb_str(sb, "stack\t");
		sb_u64(sb, stacks[i].n);
		sb_chr(sb, '\t');
		for (k = (int)stacks[i].depth - 1; k >= 0; k--) { /* root first */
			char fr[300];
			struct sbuf f1;
			char *tab;
			sb_init(&f1, fr, sizeof fr, -1);
			profile_symbol(&f1, stacks[i].ip[k], k > 0, '\t');
			sb_cstr(&f1);
			tab = strchr(fr, '\t'); /* folded frames: the symbol, or object+offset */
			for (char *c = tab ? tab + 1 : fr; *c; c++)
				if (*c == ';' || *c == ' ')
					*c = '_';
			sb_str(sb, tab ? tab + 1 : fr);
			if (k)
				sb_chr(sb, ';');
		}
		sb_chr(sb, '\n');
	}
	others_by_mapping(sb);
}
