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
 *
 * The counts add up (profile_format.h).  The window is from the first
 * event opened in the process to sample_stop_all() at exit, which stops
 * every event before the exit-time drain touches the tables; the process's
 * faults are read at both ends.  Inside it, the shim's own faults are
 * either sampled (its code touching its tables: in_shim) or measured
 * (RUSAGE_THREAD): the reader thread's, and a thread start's, during which
 * the starting thread's event is paused, so that pthread_create's faults
 * on the new stack are not shown as the program's code.
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
/* One past the highest slot ever used here: the loops over the slots stop
 * there (a scan of all 1024 would fault in pages of the table). */
static int thr_hi;
static int slots_hi(void) { return __atomic_load_n(&thr_hi, __ATOMIC_ACQUIRE); }
static uint64_t samples, lost, unattributed, in_shim, dropped_ips, dropped_stacks, dropped_others;
static uint64_t unsampled; /* threads without an event (fd share, table, or refused) */
static int nfds, fd_cap;   /* our open events, and the most we allow ourselves */
static uintptr_t shim_lo, shim_hi; /* our own code: its faults are not the program's */
static int perf_ok = -1, perf_errno, no_perf;
static int window_open;      /* the first event of this process is open */
static struct faults win0;   /* the process's faults then */
static uint64_t own_measured; /* the shim's own faults outside the samples */
static uint64_t reader_faults; /* the reader thread's (RUSAGE_THREAD), drain_lock held */
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

void sample_init(const char *per, int refused)
{
	struct rlimit rl;
	Dl_info info;
	ips = grab(IPS * sizeof *ips);
	stacks = grab(STACKS * sizeof *stacks);
	others = grab(OTHERS * sizeof *others);
	os_faults_self(&win0); /* (the window opens again with the first event) */
	if (per && *per) {
		uint64_t v = 0;
		for (; *per >= '0' && *per <= '9'; per++)
			v = v * 10 + (uint64_t)(*per - '0');
		if (!*per && v)
			period = v;
	}
	no_perf = refused; /* the refused path, for tests */
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
	for (i = 0; i < slots_hi(); i++)
		if (__atomic_load_n(&thr[i].used, __ATOMIC_ACQUIRE) == 1)
			drain_one(&thr[i]);
}

/* ---- events ---- */

static int still_ours(int fd, uint64_t id);

/* Close fd only if it still is the event we opened. */
static void close_ours(int fd, uint64_t id)
{
	if (still_ours(fd, id))
		sys_close(fd);
}

/* Free a slot's ring and event (drain_lock held), draining it first if
 * drain. */
static void release_slot(struct pthr *t, int drain)
{
	if (__atomic_load_n(&t->used, __ATOMIC_ACQUIRE) != 1)
		return;
	if (drain)
		drain_one(t);
	sys_munmap(t->ring, (RING_PAGES + 1) * page_size);
	close_ours(t->fd, t->id);
	__atomic_sub_fetch(&nfds, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&t->used, 0, __ATOMIC_RELEASE);
}

static void thread_gone(void *slot)
{
	struct pthr *t = slot;
	struct guard g = guard_enter();
	spin_lock(&drain_lock);
	release_slot(t, 1);
	spin_unlock(&drain_lock);
	guard_leave(g);
}

void sample_close_all(int drain)
{
	int i;
	for (i = 0; i < slots_hi(); i++)
		release_slot(&thr[i], drain);
	finished = 1;
}

/* Move fd above the numbers programs use for their own files. */
static int move_high(int fd)
{
	int lo = fd_cap * 3 < 1000 ? fd_cap * 3 : 1000, nfd;
	if (lo <= fd)
		return fd;
	nfd = (int)sys_call(SYS_fcntl, fd, F_DUPFD_CLOEXEC, lo, 0, 0, 0); /* (raw: fcntl is a cancellation point) */
	if (nfd < 0)
		return fd;
	sys_close(fd);
	return nfd;
}

void profile_thread_start(void)
{
	struct faults at = { 0, 0 };
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
	if (!__atomic_load_n(&window_open, __ATOMIC_ACQUIRE))
		os_faults_self(&at); /* before this thread touches anything of ours */
	fd = move_high(fd);
	if (sys_call(SYS_ioctl, fd, (long)PERF_EVENT_IOC_ID, (long)&id, 0, 0, 0) != 0) {
		sys_close(fd);
		goto unsampled;
	}
	ring = sys_mmap(NULL, (RING_PAGES + 1) * page_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED) {
		sys_close(fd);
		goto unsampled;
	}
	for (i = 0; i < THREADS; i++) {
		int expect = 0;
		if (__atomic_compare_exchange_n(&thr[i].used, &expect, 2, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			int hi = slots_hi();
			while (hi < i + 1 && !__atomic_compare_exchange_n(&thr_hi, &hi, i + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				;
			thr[i].fd = fd;
			thr[i].id = id;
			thr[i].ring = ring;
			__atomic_store_n(&thr[i].used, 1, __ATOMIC_RELEASE);
			perf_ok = 1;
			if (!__atomic_load_n(&window_open, __ATOMIC_ACQUIRE) &&
			    !__atomic_exchange_n(&window_open, 1, __ATOMIC_ACQ_REL))
				win0 = at;
			if (thr_key_ok)
				pthread_setspecific(thr_key, &thr[i]); /* freed when the thread exits */
			return;
		}
	}
	sys_munmap(ring, (RING_PAGES + 1) * page_size);
	sys_close(fd);
unsampled:
	__atomic_sub_fetch(&nfds, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&unsampled, 1, __ATOMIC_RELAXED);
}

/* ---- the reader thread ---- */

/* The reader's faults so far (drain_lock held): all the shim's own. */
static void reader_count(void)
{
	struct faults f;
	os_faults_thread(&f);
	reader_faults = f.minor + f.major;
}

static void *reader_main(void *arg)
{
	pid_t mine = (pid_t)(uintptr_t)arg;
	spin_lock(&drain_lock);
	reader_count(); /* its start: the new stack, its TLS */
	spin_unlock(&drain_lock);
	for (;;) {
		uint32_t seen = __atomic_load_n(&reader_wake, __ATOMIC_ACQUIRE);
		glue_wait(&reader_wake, seen, READ_NS); /* woken early only to leave */
		if (glue_leaving() || sys_getpid() != mine)
			break;
		spin_lock(&drain_lock);
		sample_drain_locked();
		reader_count();
		spin_unlock(&drain_lock);
	}
	__atomic_store_n(&reader_running, 0, __ATOMIC_RELEASE);
	return NULL;
}

/* Is fd still the event we opened? */
static int still_ours(int fd, uint64_t id)
{
	uint64_t now = 0;
	return sys_call(SYS_ioctl, fd, (long)PERF_EVENT_IOC_ID, (long)&now, 0, 0, 0) == 0 && now == id;
}

static int event_ctl(const struct pthr *t, unsigned long op)
{
	return still_ours(t->fd, t->id) && sys_call(SYS_ioctl, t->fd, (long)op, 0, 0, 0, 0) == 0;
}

void profile_tick(void)
{
	struct pthr *me;
	struct faults f0, f1;
	int paused;
	/* The reader thread starts on first need, in each process. */
	if (perf_ok != 1 || __atomic_load_n(&reader_running, __ATOMIC_ACQUIRE))
		return;
	if (__atomic_exchange_n(&reader_running, 1, __ATOMIC_ACQUIRE))
		return;
	/* Starting it is the shim's work, not the program's: this thread's
	 * event pauses, and the faults are measured instead. */
	me = thr_key_ok ? pthread_getspecific(thr_key) : NULL;
	paused = me && __atomic_load_n(&me->used, __ATOMIC_ACQUIRE) == 1 && event_ctl(me, PERF_EVENT_IOC_DISABLE);
	os_faults_thread(&f0);
	if (glue_spawn(reader_main, (void *)(uintptr_t)my_pid, 128 << 10, &reader_wake) != 0)
		__atomic_store_n(&reader_running, 0, __ATOMIC_RELEASE);
	os_faults_thread(&f1);
	if (paused)
		event_ctl(me, PERF_EVENT_IOC_ENABLE);
	__atomic_add_fetch(&own_measured, (f1.minor - f0.minor) + (f1.major - f0.major), __ATOMIC_RELAXED);
}

void sample_stop_all(struct profile_counts *c)
{
	struct faults now;
	int i;
	for (i = 0; i < slots_hi(); i++)
		if (__atomic_load_n(&thr[i].used, __ATOMIC_ACQUIRE) == 1)
			event_ctl(&thr[i], PERF_EVENT_IOC_DISABLE);
	os_faults_self(&now);
	c->minor = now.minor - win0.minor;
	c->major = now.major - win0.major;
	c->shim_faults = __atomic_load_n(&own_measured, __ATOMIC_RELAXED) + reader_faults;
}

void sample_fork_child(void)
{
	int i;
	/* The parent's events and rings are not ours (the rings are not even
	 * mapped here: perf rings are not inherited); their fds are copies,
	 * closed if they still are what the parent opened. */
	for (i = 0; i < slots_hi(); i++) {
		if (thr[i].used == 1)
			close_ours(thr[i].fd, thr[i].id);
		thr[i].used = 0;
	}
	thr_hi = 0;
	/* Fresh zero pages, without touching them (a memset would fault in
	 * every page of the tables, the parent's untouched ones too). */
	sys_madvise(ips, PAGE_UP(IPS * sizeof *ips), MADV_DONTNEED);
	sys_madvise(stacks, PAGE_UP(STACKS * sizeof *stacks), MADV_DONTNEED);
	sys_madvise(others, PAGE_UP(OTHERS * sizeof *others), MADV_DONTNEED);
	samples = lost = unattributed = in_shim = 0;
	dropped_ips = dropped_stacks = dropped_others = unsampled = 0;
	nfds = 0;
	finished = 0;
	perf_ok = -1;
	reader_running = 0;
	/* The child's window opens with its event (its fault counts began at
	 * zero at fork, and the resets above are the shim's, before it). */
	window_open = 0;
	own_measured = reader_faults = 0;
	win0.minor = win0.major = 0;
	profile_thread_start();
}

/* ---- output ---- */

void profile_tab_u64(struct sbuf *sb, uint64_t v)
{
	sb_chr(sb, '\t');
	sb_u64(sb, v);
}

void profile_tab_hex(struct sbuf *sb, uint64_t v)
{
	sb_chr(sb, '\t');
	sb_hex(sb, v);
}

void profile_tab_name(struct sbuf *sb, const char *s)
{
	for (; *s; s++)
		sb_chr(sb, (*s == '\t' || *s == '\n') ? ' ' : *s);
}

/* /proc/self/maps at exit: what each address is, for the "object" and
 * "other" records. */
#define MAPS 8192
static struct mapping {
	uintptr_t lo, hi, off;
	uint64_t inode;
	int exec;
	const char *path; /* NULL: anonymous */
} mm[MAPS];
static int nmm;

static void read_maps(void)
{
	static char mb[512 * 1024];
	long n = os_read_file("/proc/self/maps", mb, sizeof mb);
	char *line = mb;
	nmm = 0;
	while (n > 0 && *line && nmm < MAPS) {
		char *nl = strchr(line, '\n'), *p;
		struct mapping *m = &mm[nmm];
		if (nl)
			*nl = '\0';
		m->lo = strtoul(line, &p, 16);
		m->hi = strtoul(p + 1, &p, 16);
		while (*p == ' ')
			p++;
		m->exec = p[0] && p[1] && p[2] == 'x';
		while (*p && *p != ' ')
			p++;
		m->off = strtoul(p, &p, 16);
		while (*p == ' ')
			p++;
		while (*p && *p != ' ') /* device */
			p++;
		m->inode = strtoull(p, &p, 10);
		while (*p == ' ')
			p++;
		m->path = *p ? p : NULL;
		nmm++;
		if (!nl)
			break;
		line = nl + 1;
	}
}

/* The executable file mappings: the tool names code addresses with them. */
static void write_objects(struct sbuf *sb)
{
	int i;
	for (i = 0; i < nmm; i++) {
		if (!mm[i].exec || !mm[i].path)
			continue;
		sb_str(sb, "object");
		profile_tab_hex(sb, mm[i].lo);
		profile_tab_hex(sb, mm[i].hi);
		profile_tab_hex(sb, mm[i].off);
		profile_tab_u64(sb, mm[i].inode);
		sb_chr(sb, '\t');
		profile_tab_name(sb, mm[i].path);
		sb_chr(sb, '\n');
	}
}

static void others_by_mapping(struct sbuf *sb)
{
	/* Label unattributed faults by what /proc/self/maps says is at the
	 * first address seen in each 2 MiB granule now. */
	int i, j;
	for (i = 0; i < OTHERS; i++) {
		const char *label = "[unmapped]";
		if (!others[i].n)
			continue;
		for (j = 0; j < nmm; j++) {
			if (others[i].first >= mm[j].lo && others[i].first < mm[j].hi) {
				const char *p = mm[j].path;
				label = !p ? "[anon]" : (*p == '/' && strrchr(p, '/')) ? strrchr(p, '/') + 1 : p;
				break;
			}
		}
		sb_str(sb, "other\t");
		profile_tab_name(sb, label);
		profile_tab_u64(sb, others[i].n);
		sb_chr(sb, '\n');
	}
}

void sample_write(struct sbuf *sb, struct profile_counts *c)
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
	sb_chr(sb, '\n');
	c->period = period;
	c->sampled = samples;
	c->lost = lost;
	c->unattributed = unattributed;
	c->in_shim = in_shim;
	c->shim_faults += in_shim;
	c->unsampled_threads = unsampled;
	c->dropped_code = dropped_ips;
	c->dropped_stacks = dropped_stacks;
	c->dropped_other = dropped_others;
	read_maps();
	write_objects(sb);
	for (i = 0; i < IPS; i++) {
		if (!ips[i].n)
			continue;
		sb_str(sb, "code");
		profile_tab_hex(sb, ips[i].ip);
		profile_tab_u64(sb, ips[i].n);
		sb_chr(sb, '\n');
	}
	for (i = 0; i < STACKS; i++) {
		uint32_t k;
		if (!stacks[i].n)
			continue;
		sb_str(sb, "stack");
		profile_tab_u64(sb, stacks[i].n);
		sb_chr(sb, '\t');
		for (k = 0; k < stacks[i].depth; k++) { /* innermost first */
			if (k)
				sb_chr(sb, ',');
			sb_hex(sb, stacks[i].ip[k]);
		}
		sb_chr(sb, '\n');
	}
	others_by_mapping(sb);
}
