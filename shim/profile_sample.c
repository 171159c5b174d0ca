/* profile_sample.c: sampled page faults.
 *
 * A software page-fault perf event per thread, user space only (so it works
 * unprivileged at perf_event_paranoid 2), recording the faulting
 * instruction, the time, the data address and the user call chain; the
 * reader thread (its rounds are in profile.c) drains the ring buffers every
 * 10 ms.  Each sample is charged to a
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
	/* Samples read from its ring, and lost as the kernel's
	 * PERF_RECORD_LOST records said (drain_lock held). */
	uint64_t got, lost_said;
};

/* The events' slots (P.my.thr_hi: one past the highest used here; the
 * loops over the slots stop there, since a scan of all 1024 would fault in
 * pages of the table). */
static struct pthr *thr; /* THREADS of them, mapped by sample_init */
/* /proc/self/maps at exit: what each address is, for the "object" and
 * "other" records. */
#define MAPS 8192
static struct mapping {
	uintptr_t lo, hi, off;
	uint64_t inode;
	int exec;
	const char *path; /* NULL: anonymous */
} *mm; /* MAPS of them, and the text they point into: mapped by sample_init */
#define MB (512 * 1024)
static char *mb;

static int slots_hi(void) { return __atomic_load_n(&P.my.thr_hi, __ATOMIC_ACQUIRE); }

static void thread_gone(void *slot);

void sample_init(const char *per, int refused)
{
	struct rlimit rl;
	Dl_info info;
	P.ips = glue_table(IPS * sizeof *P.ips, 0);
	P.stacks = glue_table(STACKS * sizeof *P.stacks, 0);
	P.others = glue_table(OTHERS * sizeof *P.others, 0);
	thr = glue_table(THREADS * sizeof *thr, 0); /* (none: every thread unsampled) */
	/* (at start-up, not at the snapshot: a program short of memory by then
	 * would get a profile with no names) */
	mm = glue_table(MAPS * sizeof *mm + MB, 0);
	mb = mm ? (char *)(mm + MAPS) : NULL;
	if (!thr || !mm)
		stats_note(N_NO_TABLE);
	os_faults_self(&P.my.win0); /* (the window opens again with the first event) */
	if (per && *per) {
		uint64_t v = 0;
		for (; *per >= '0' && *per <= '9'; per++)
			v = v * 10 + (uint64_t)(*per - '0');
		if (!*per && v)
			P.period = v;
	}
	P.no_perf = refused; /* the refused path, for tests */
	P.fd_cap = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 4 < THREADS
	                 ? (int)(rl.rlim_cur / 4)
	                 : THREADS;
	if (pthread_key_create(&P.thr_key, thread_gone) == 0)
		P.thr_key_ok = 1;
	/* Our own extent, from our ELF program headers. */
	if (dladdr((void *)sample_init, &info) && info.dli_fbase) {
		const ElfW(Ehdr) *eh = info.dli_fbase;
		const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
		uintptr_t hi = 0;
		int k;
		for (k = 0; k < eh->e_phnum; k++)
			if (ph[k].p_type == PT_LOAD && ph[k].p_vaddr + ph[k].p_memsz > hi)
				hi = ph[k].p_vaddr + ph[k].p_memsz;
		P.shim_lo = (uintptr_t)info.dli_fbase;
		P.shim_hi = P.shim_lo + hi;
	}
}

/* ---- counting samples (drain_lock held) ---- */

static void count_ip(uintptr_t ip)
{
	uint64_t i = (ip * 0x9e3779b97f4a7c15ull) % IPS, k;
	for (k = 0; k < IPS; k++, i = (i + 1) % IPS) {
		if (P.ips[i].ip == ip || P.ips[i].ip == 0) {
			P.ips[i].ip = ip;
			P.ips[i].n += P.period;
			return;
		}
	}
	P.my.dropped_ips += P.period;
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
		struct stk *s = &P.stacks[i];
		if (s->n && s->hash == h && s->depth == d && !memcmp(s->ip, f, d * sizeof f[0])) {
			s->n += P.period;
			return;
		}
		if (!s->n) {
			s->hash = h;
			s->depth = d;
			memcpy(s->ip, f, d * sizeof f[0]);
			s->n = P.period;
			return;
		}
	}
	P.my.dropped_stacks += P.period;
}

static void count_other(uintptr_t addr)
{
	uintptr_t g = addr >> 21;
	uint64_t i = (g * 0x9e3779b97f4a7c15ull) % OTHERS, k;
	P.my.unattributed += P.period;
	for (k = 0; k < OTHERS; k++, i = (i + 1) % OTHERS) {
		if (P.others[i].granule == g || P.others[i].n == 0) {
			if (!P.others[i].n)
				P.others[i].first = addr;
			P.others[i].granule = g;
			P.others[i].n += P.period;
			return;
		}
	}
	P.my.dropped_others += P.period;
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
	P.my.samples += P.period;
	if (ip >= P.shim_lo && ip < P.shim_hi) {
		P.my.in_shim += P.period; /* the shim touching its own tables */
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
		if (h.type == PERF_RECORD_SAMPLE) {
			t->got++;
			one_sample(rec + 1, (n - sizeof h) / 8);
		} else if (h.type == PERF_RECORD_LOST && n >= sizeof h + 16) {
			t->lost_said += rec[2];
		}
		tail += h.size;
	}
	__atomic_store_n(&m->data_tail, tail, __ATOMIC_RELEASE);
}

/* ---- lost samples ----
 * A full ring drops samples, and the kernel says so only in a
 * PERF_RECORD_LOST it writes once there is room again: never, for the
 * samples dropped before the last drain at exit.  So each event's loss is
 * worked out from its own count (read() on its fd: the faults it counted
 * while enabled, one sample taken every period): the samples it took,
 * less those read from its ring (never less than its LOST records said). */

static int still_ours(int fd, uint64_t id);
static int event_ctl(const struct pthr *t, unsigned long op);

/* The samples slot t's event has taken so far, or -1 if unknown (the fd
 * is no longer our event, or the count cannot be read). */
static int64_t slot_taken(const struct pthr *t)
{
	uint64_t n = 0;
	if (!still_ours(t->fd, t->id) || sys_read(t->fd, &n, sizeof n) != (long)sizeof n)
		return -1;
	return (int64_t)(n / P.period);
}

/* Its lost samples, given what it had taken (drain_lock held). */
static uint64_t slot_lost(const struct pthr *t, int64_t taken)
{
	uint64_t by_count = taken > 0 && (uint64_t)taken > t->got ? (uint64_t)taken - t->got : 0;
	return by_count > t->lost_said ? by_count : t->lost_said;
}

void sample_drain_locked(int count_lost)
{
	uint64_t lost = 0;
	int i;
	if (P.my.finished)
		return;
	for (i = 0; i < slots_hi(); i++) {
		struct pthr *t = &thr[i];
		int64_t taken;
		if (__atomic_load_n(&t->used, __ATOMIC_ACQUIRE) != 1)
			continue;
		/* (the count before the drain: what it took then has been read
		 * by the drain's end, or was dropped) */
		taken = count_lost ? slot_taken(t) : -1;
		drain_one(t);
		lost += count_lost ? slot_lost(t, taken) : 0;
	}
	if (count_lost)
		P.my.lost_live = lost * P.period;
}

/* ---- events ---- */

/* Close fd only if it still is the event we opened. */
static void close_ours(int fd, uint64_t id)
{
	if (still_ours(fd, id))
		sys_close(fd);
}

/* Free a slot's ring and event (drain_lock held), draining it first if
 * drain (the event stopped: nothing lands after the drain), and count
 * what it lost (not drained: what its ring holds is lost too). */
static void release_slot(struct pthr *t, int drain)
{
	if (__atomic_load_n(&t->used, __ATOMIC_ACQUIRE) != 1)
		return;
	if (drain)
		drain_one(t);
	P.my.lost += slot_lost(t, slot_taken(t)) * P.period;
	sys_munmap(t->ring, (RING_PAGES + 1) * page_size);
	close_ours(t->fd, t->id);
	__atomic_sub_fetch(&P.my.nfds, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&t->used, 0, __ATOMIC_RELEASE);
}

static void thread_gone(void *slot)
{
	struct pthr *t = slot;
	struct guard g = guard_enter();
	slow_lock(&P.drain_lock);
	/* (its faults from here to its end are not sampled: what it took
	 * is all read or lost when its ring is freed) */
	if (__atomic_load_n(&t->used, __ATOMIC_ACQUIRE) == 1)
		event_ctl(t, PERF_EVENT_IOC_DISABLE);
	release_slot(t, 1);
	slow_unlock(&P.drain_lock);
	guard_leave(g);
}

void sample_close_all(int drain)
{
	int i;
	for (i = 0; i < slots_hi(); i++)
		release_slot(&thr[i], drain);
	P.my.lost_live = 0; /* (all in lost now) */
	P.my.finished = 1;
}

int sample_fd_high(int fd)
{
	int lo = P.fd_cap * 3 < 1000 ? P.fd_cap * 3 : 1000, nfd;
	if (fd < 0 || lo <= fd)
		return fd;
	nfd = (int)sys_call(SYS_fcntl, fd, F_DUPFD_CLOEXEC, lo, 0, 0, 0); /* (raw: fcntl is a cancellation point) */
	if (nfd < 0)
		return fd;
	sys_close(fd);
	return nfd;
}

static void thread_event(void);

void profile_thread_start(void)
{
	if (!profiling)
		return;
	thread_event();
	/* From now on the reader may start: its faults and its start's are
	 * counted as the shim's, inside the window (which opened with the
	 * event, if it did). */
	__atomic_store_n(&P.my.event_tried, 1, __ATOMIC_RELEASE);
}

static void thread_event(void)
{
	struct faults at = { 0, 0 };
	struct perf_event_attr a;
	int fd, i;
	uint64_t id = 0;
	void *ring;
	if (P.no_perf) {
		P.my.perf_ok = 0;
		P.my.perf_errno = EACCES;
		return;
	}
	if (!thr) {
		__atomic_add_fetch(&P.my.unsampled, 1, __ATOMIC_RELAXED);
		return;
	}
	if (__atomic_add_fetch(&P.my.nfds, 1, __ATOMIC_RELAXED) > P.fd_cap) {
		__atomic_sub_fetch(&P.my.nfds, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&P.my.unsampled, 1, __ATOMIC_RELAXED);
		return;
	}
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	a.sample_period = P.period;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CALLCHAIN;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC; /* the clock the map times are read with */
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.exclude_callchain_kernel = 1;
	a.sample_max_stack = DEPTH;
	fd = (int)sys_call(SYS_perf_event_open, (long)&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC, 0);
	if (fd < 0) {
		if (P.my.perf_ok != 1) {
			P.my.perf_ok = 0;
			P.my.perf_errno = errno;
		}
		goto unsampled;
	}
	if (!__atomic_load_n(&P.my.window_open, __ATOMIC_ACQUIRE))
		os_faults_self(&at); /* before this thread touches anything of ours */
	fd = sample_fd_high(fd);
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
			while (hi < i + 1 && !__atomic_compare_exchange_n(&P.my.thr_hi, &hi, i + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				;
			thr[i].fd = fd;
			thr[i].id = id;
			thr[i].ring = ring;
			thr[i].got = thr[i].lost_said = 0;
			__atomic_store_n(&thr[i].used, 1, __ATOMIC_RELEASE);
			P.my.perf_ok = 1;
			if (!__atomic_load_n(&P.my.window_open, __ATOMIC_ACQUIRE) &&
			    !__atomic_exchange_n(&P.my.window_open, 1, __ATOMIC_ACQ_REL))
				P.my.win0 = at;
			if (P.thr_key_ok)
				pthread_setspecific(P.thr_key, &thr[i]); /* freed when the thread exits */
			return;
		}
	}
	sys_munmap(ring, (RING_PAGES + 1) * page_size);
	sys_close(fd);
unsampled:
	__atomic_sub_fetch(&P.my.nfds, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&P.my.unsampled, 1, __ATOMIC_RELAXED);
}

/* ---- the reader thread (its rounds are profile.c's) ---- */

void sample_reader_count(void)
{
	struct faults f;
	os_faults_thread(&f);
	P.my.reader_faults = f.minor + f.major;
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

void sample_start_reader(void *(*fn)(void *), uint32_t *word)
{
	struct pthr *me;
	struct faults f0, f1;
	int paused;
	/* Starting it is the shim's work, not the program's: this thread's
	 * event pauses, and the faults are measured instead. */
	me = P.thr_key_ok ? pthread_getspecific(P.thr_key) : NULL;
	paused = me && __atomic_load_n(&me->used, __ATOMIC_ACQUIRE) == 1 && event_ctl(me, PERF_EVENT_IOC_DISABLE);
	os_faults_thread(&f0);
	if (glue_spawn(fn, (void *)(uintptr_t)P.my.pid, 128 << 10, word) != 0)
		__atomic_store_n(&P.my.reader_running, 0, __ATOMIC_RELEASE);
	os_faults_thread(&f1);
	if (paused)
		event_ctl(me, PERF_EVENT_IOC_ENABLE);
	__atomic_add_fetch(&P.my.own_measured, (f1.minor - f0.minor) + (f1.major - f0.major), __ATOMIC_RELAXED);
}

void sample_counts(struct profile_counts *c)
{
	struct faults now;
	os_faults_self(&now);
	c->minor = now.minor - P.my.win0.minor;
	c->major = now.major - P.my.win0.major;
	c->shim_faults = __atomic_load_n(&P.my.own_measured, __ATOMIC_RELAXED) + P.my.reader_faults;
}

void sample_stop_all(struct profile_counts *c)
{
	int i;
	for (i = 0; i < slots_hi(); i++)
		if (__atomic_load_n(&thr[i].used, __ATOMIC_ACQUIRE) == 1)
			event_ctl(&thr[i], PERF_EVENT_IOC_DISABLE);
	sample_counts(c);
}

void sample_fork_child_events(void)
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
}

void sample_fork_child(void)
{
	/* Fresh zero pages, without touching them (a memset would fault in
	 * every page of the tables, the parent's untouched ones too). */
	sys_madvise(P.ips, PAGE_UP(IPS * sizeof *P.ips), MADV_DONTNEED);
	sys_madvise(P.stacks, PAGE_UP(STACKS * sizeof *P.stacks), MADV_DONTNEED);
	sys_madvise(P.others, PAGE_UP(OTHERS * sizeof *P.others), MADV_DONTNEED);
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


static void read_maps(void)
{
	/* (Its descriptor moved high at once: a snapshot runs beside the
	 * program, which may be opening files and expecting the lowest
	 * number.) */
	int fd = sample_fd_high(sys_open("/proc/self/maps", O_RDONLY | O_CLOEXEC | O_NOCTTY, 0));
	long n = fd < 0 ? -1 : os_read_fd(fd, mb, MB);
	char *line = mb;
	if (fd >= 0)
		sys_close(fd);
	P.nmm = 0;
	while (n > 0 && *line && P.nmm < MAPS) {
		char *nl = strchr(line, '\n'), *p;
		struct mapping *m = &mm[P.nmm];
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
		P.nmm++;
		if (!nl)
			break;
		line = nl + 1;
	}
}

/* The executable file mappings: the tool names code addresses with them. */
static void write_objects(struct sbuf *sb)
{
	int i;
	for (i = 0; i < P.nmm; i++) {
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
		if (!P.others[i].n)
			continue;
		for (j = 0; j < P.nmm; j++) {
			if (P.others[i].first >= mm[j].lo && P.others[i].first < mm[j].hi) {
				const char *p = mm[j].path;
				label = !p ? "[anon]" : (*p == '/' && strrchr(p, '/')) ? strrchr(p, '/') + 1 : p;
				break;
			}
		}
		sb_str(sb, "other\t");
		profile_tab_name(sb, label);
		profile_tab_u64(sb, P.others[i].n);
		sb_chr(sb, '\n');
	}
}

void sample_write(struct sbuf *sb, struct profile_counts *c)
{
	int i;
	sb_str(sb, "perf\t");
	if (P.my.perf_ok == 1) {
		sb_str(sb, "ok\t-");
	} else {
		sb_str(sb, "refused\t");
		sb_str(sb, P.my.perf_errno == EACCES || P.my.perf_errno == EPERM
		               ? "perf_event_open not permitted (kernel.perf_event_paranoid, seccomp or a container)"
		               : P.my.perf_errno == ENOSYS ? "perf_event_open not available (no perf events in this kernel)"
		               : P.my.perf_errno == ENOENT ? "no software page-fault event"
		               : P.my.perf_errno == EMFILE ? "no file descriptor left for the fault event"
		                                      : "perf_event_open failed");
		sb_str(sb, " (errno ");
		sb_u64(sb, (uint64_t)P.my.perf_errno);
		sb_chr(sb, ')');
	}
	sb_chr(sb, '\n');
	c->period = P.period;
	c->sampled = P.my.samples;
	c->lost = P.my.lost + P.my.lost_live;
	c->unattributed = P.my.unattributed;
	c->in_shim = P.my.in_shim;
	c->shim_faults += P.my.in_shim;
	c->unsampled_threads = P.my.unsampled;
	c->dropped_code = P.my.dropped_ips;
	c->dropped_stacks = P.my.dropped_stacks;
	c->dropped_other = P.my.dropped_others;
	P.nmm = 0;
	if (mm)
		read_maps();
	write_objects(sb);
	for (i = 0; i < IPS; i++) {
		if (!P.ips[i].n)
			continue;
		sb_str(sb, "code");
		profile_tab_hex(sb, P.ips[i].ip);
		profile_tab_u64(sb, P.ips[i].n);
		sb_chr(sb, '\n');
	}
	for (i = 0; i < STACKS; i++) {
		uint32_t k;
		if (!P.stacks[i].n)
			continue;
		sb_str(sb, "stack");
		profile_tab_u64(sb, P.stacks[i].n);
		sb_chr(sb, '\t');
		for (k = 0; k < P.stacks[i].depth; k++) { /* innermost first */
			if (k)
				sb_chr(sb, ',');
			sb_hex(sb, P.stacks[i].ip[k]);
		}
		sb_chr(sb, '\n');
	}
	others_by_mapping(sb);
}
