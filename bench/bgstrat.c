/* bgstrat: prototype background-prefault worker strategies (issue 11).
 *
 * Standalone: no shim.  The program side maps a buffer, optionally burns W ms
 * of CPU ("other work"), then writes one byte per page front to back.  Worker
 * threads (parked before the clock starts, as the shim's are after their
 * first job) are handed the mapping right after mmap, as the shim's
 * `action = background` does, and populate it in chunks with
 * MADV_POPULATE_WRITE, never storing into it.  How they pick chunks is the
 * strategy:
 *
 *   none     no worker (the program alone)
 *   trail    the shim's today: chunks front to back, no decisions
 *   skip     mincore each chunk first; anything resident: the program is
 *            there, leave that chunk to it and take the next
 *   stride   overtaken (resident pages at the cursor): leap 2, 4, 8... chunks
 *            until a chunk with nothing resident; leapt chunks go to the program
 *   farend   overtaken: work from the far end backwards, mincore before each
 *            chunk, and stop when the next chunk down, or the one below it,
 *            has anything resident: worker and program meet once
 *   leap     overtaken: find the program's frontier (first chunk with nothing
 *            resident), leave a gap in front of it worth GAP_T worker chunk
 *            times at the program's measured first-touch speed, go on from there
 *   leapfar  leap on the first overtake; overtaken again (the program is
 *            faster than the worker on populated pages), farend
 *   farsig   farend, and also turn to the far end when other threads took
 *            many faults while we populated a chunk (SIG_DIV: a quarter of a
 *            chunk's pages, or one huge page): a program behind us on
 *            populated pages takes none, so it is at or past our cursor,
 *            faulting, maybe on the very chunk we took (a fault in flight
 *            shows nothing resident to mincore).  Turning needlessly costs
 *            nothing: going down we stop only where the program really is.
 *            Only when no other worker populated meanwhile (with several,
 *            it is mostly farend).
 *
 * With N workers all share one job under one lock: the unclaimed chunks are
 * [lo, hi); front claims take lo, back claims take hi - 1, so nothing is
 * claimed twice and whatever is not claimed is counted as left to the program.
 * -v checks that: each chunk is populated or left exactly once.
 *
 *   bgstrat [-s STRAT] [-w WORKERS] [-m MIB] [-W MS] [-c KIB] [-H] [-S K] [-I] [-v]
 *     -W MS   other work before the pass; -1: wait until the workers are done
 *             (fill time), then the pass
 *     -H      MADV_HUGEPAGE on a 2 MiB-aligned mapping
 *     -S K    emulate a worker K times slower (see populate())
 *     -I      workers run under SCHED_IDLE: they take only CPU time nobody
 *             else wants, so they never delay the program's own threads
 *
 * Prints one line of key=value: see the printf at the end of main().  Fault
 * units are 4 KiB pages, or 2 MiB pages with -H (one fault maps one).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum { NONE, TRAIL, SKIP, STRIDE, FAREND, LEAP, LEAPFAR, FARSIG, NSTRAT };
static const char *names[NSTRAT] = {"none", "trail", "skip", "stride", "farend", "leap", "leapfar", "farsig"};

#define MAXW 16
#define GAP_T 2.0 /* gap ahead of the frontier, in worker chunk times */
#define SIG_DIV 4 /* farsig: others' faults during a chunk, in chunk pages / SIG_DIV */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static long faults(int who)
{
	struct rusage ru;
	getrusage(who, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}

static size_t pg, chunk, cpages, nchunks, unitpages;
static char *base;
static int strat, nworkers, verify;
static double slow;
static int idle_prio;

/* The job.  Everything below the lock comment is guarded by `lock`. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER, idle = PTHREAD_COND_INITIALIZER;
static int gen, active, stop, quit;
static size_t lo, hi;
static int back, overtakes, signalled;
static size_t stride_n;
static double tc_ns;           /* worker time per fresh chunk (EWMA) */
static double vf;              /* program first-touch speed, pages per ns (0: unknown) */
static double fs_t;            /* last frontier sample: time and page */
static size_t fs_p;
static size_t n_pop, n_skip, n_leapt, n_left;
static double t_fill;          /* when the last chunk was finished (0: never) */
static unsigned char *owner;   /* -v: 1 populated, 2 left to the program */

static _Atomic long wpub;      /* workers' faults, published after each chunk */
static _Atomic int inflight;   /* workers inside a populate */

struct wstat {
	long faults;           /* in madvise calls */
	long first_pages;      /* resident before we populated: the program's */
	long est_brief;        /* sum over chunks of min(own, others) */
	long est_gated;        /* the same where the program was seen in the chunk (see worker) */
	long errors;
	unsigned char vec[4096];
} ws[MAXW];

static void mark(size_t c, int how)
{
	if (!verify)
		return;
	if (owner[c]) {
		fprintf(stderr, "bgstrat: chunk %zu claimed twice\n", c);
		abort();
	}
	owner[c] = (unsigned char)how;
}

/* Resident 4 KiB pages in chunk c (pages beyond the mapping count as none). */
static size_t resident(size_t c, unsigned char *vec)
{
	size_t n = 0, i;
	if (c >= nchunks)
		return 0;
	if (mincore(base + c * chunk, chunk, vec) != 0)
		return 0;
	for (i = 0; i < cpages; i++)
		n += vec[i] & 1;
	return n;
}

static void leave(size_t a, size_t b, size_t *counter)
{
	size_t c;
	for (c = a; c < b; c++)
		mark(c, 2);
	*counter += b - a;
}

/* Overtaken at chunk c (resident pages there): the first chunk from c on
 * with nothing resident, sampling the program's first-touch speed. */
static size_t frontier(size_t c, unsigned char *vec)
{
	size_t f = c, r = 0, p;
	double t = now();
	while (f < hi && (r = resident(f, vec)) == cpages)
		f++;
	p = f * cpages + (f < hi ? r : 0);
	if (fs_t > 0 && p > fs_p && t > fs_t) {
		double v = (double)(p - fs_p) / (t - fs_t);
		vf = vf > 0 ? 0.5 * vf + 0.5 * v : v;
	}
	fs_t = t;
	fs_p = p;
	return f < hi && r ? f + 1 : f; /* a partly written chunk is the program's */
}

static void go_back(void)
{
	back = 1;
}

/* The next chunk to populate, or -1.  Called with the lock held. */
static long claim(unsigned char *vec)
{
	size_t r;
	if (stop)
		return -1;
	for (;;) {
		if (lo >= hi)
			return -1;
		if (back) {
			/* farend: the next chunk down is ours unless the program
			 * is in it or in the one below (it would arrive while we
			 * populate). */
			size_t c = hi - 1;
			if (resident(c, vec) || (c > lo && resident(c - 1, vec))) {
				leave(lo, hi, &n_left);
				lo = hi;
				return -1;
			}
			hi--;
			return (long)c;
		}
		if (strat == TRAIL)
			return (long)lo++;
		if (strat == FARSIG && signalled) {
			overtakes++;
			go_back();
			continue;
		}
		r = resident(lo, vec);
		if (!r) {
			stride_n = 0;
			return (long)lo++;
		}
		/* overtaken at lo */
		overtakes++;
		switch (strat) {
		case SKIP:
			leave(lo, lo + 1, &n_skip);
			lo++;
			break;
		case STRIDE: {
			size_t s = stride_n ? stride_n * 2 : 2, e = lo + s < hi ? lo + s : hi;
			stride_n = s;
			leave(lo, e, &n_leapt);
			lo = e;
			break;
		}
		case FAREND:
		case FARSIG:
			leave(lo, lo + 1, &n_skip);
			lo++;
			go_back();
			break;
		case LEAPFAR:
			if (overtakes > 1) {
				leave(lo, lo + 1, &n_skip);
				lo++;
				go_back();
				break;
			}
			/* fall through */
		case LEAP: {
			size_t f = frontier(lo, vec), gap = 2, e;
			if (vf > 0 && tc_ns > 0)
				gap = (size_t)(vf * tc_ns * GAP_T / (double)cpages) + 2;
			leave(lo, f, &n_skip);
			lo = f;
			e = lo + gap < hi ? lo + gap : hi;
			leave(lo, e, &n_leapt);
			lo = e;
			break;
		}
		}
	}
}

/* MADV_POPULATE_WRITE over [p, p + n).  With -S K (K > 1) the worker is
 * made K times slower, to emulate a machine where populate costs more than
 * the program's write to a populated page (bare metal: about 250 ns against
 * 30 ns; here the reverse): 64 KiB pieces, each followed by a sleep of K - 1
 * times what it took. */
static int populate(char *p, size_t n)
{
	size_t piece = 64 << 10, off;
	if (slow <= 1)
		return madvise(p, n, MADV_POPULATE_WRITE);
	for (off = 0; off < n; off += piece) {
		size_t len = n - off < piece ? n - off : piece;
		double t = now(), d;
		struct timespec ts;
		if (madvise(p + off, len, MADV_POPULATE_WRITE) != 0)
			return -1;
		d = (now() - t) * (slow - 1);
		ts.tv_sec = (time_t)(d / 1e9);
		ts.tv_nsec = (long)(d - ts.tv_sec * 1e9);
		nanosleep(&ts, NULL);
	}
	return 0;
}

static void *worker(void *arg)
{
	int w = (int)(intptr_t)arg, seen_gen = 0, seen_prev = 0;
	struct wstat *st = &ws[w];
	volatile char stackwarm[64 << 10];
	memset((char *)stackwarm, 0, sizeof stackwarm); /* no stack faults once timed */
	if (idle_prio) {
		struct sched_param sp = {0};
		if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp) != 0)
			fprintf(stderr, "bgstrat: SCHED_IDLE refused\n");
	}
	memset(st->vec, 0, sizeof st->vec);
	for (;;) {
		pthread_mutex_lock(&lock);
		while (gen == seen_gen && !quit)
			pthread_cond_wait(&wake, &lock);
		if (quit) {
			pthread_mutex_unlock(&lock);
			return NULL;
		}
		seen_gen = gen;
		seen_prev = 0;
		pthread_mutex_unlock(&lock);
		for (;;) {
			long c, fw0, fw1, fs0, fs1, p0, p1, own, others, others2, fresh, est;
			int nextfree, seen, busy;
			size_t r0;
			double t0, t1;
			int rc;
			fw0 = faults(RUSAGE_THREAD);
			fs0 = faults(RUSAGE_SELF);
			p0 = atomic_load(&wpub);
			pthread_mutex_lock(&lock);
			c = claim(st->vec);
			if (c >= 0) {
				n_pop++;
				mark((size_t)c, 1);
			}
			pthread_mutex_unlock(&lock);
			if (c < 0)
				break;
			r0 = resident((size_t)c, st->vec);
			busy = atomic_fetch_add(&inflight, 1);
			t0 = now();
			rc = populate(base + (size_t)c * chunk, chunk);
			t1 = now();
			busy += atomic_fetch_sub(&inflight, 1) - 1;
			fw1 = faults(RUSAGE_THREAD);
			fs1 = faults(RUSAGE_SELF);
			p1 = atomic_load(&wpub);
			own = fw1 - fw0;
			atomic_fetch_add(&wpub, own);
			others = fs1 - fs0 - own;
			others2 = others - (p1 - p0);
			if (others2 < 0)
				others2 = 0;
			/* pages that became resident in this chunk meanwhile, in fault units */
			fresh = rc == 0 ? (long)((cpages - r0 + unitpages - 1) / unitpages) : 0;
			st->faults += own;
			st->first_pages += (long)r0;
			st->errors += rc != 0;
			/* the brief's estimate: min(own, everyone else's) */
			st->est_brief += own < others ? own : others;
			/* gated: only where the program was seen in this chunk or this
			 * worker's previous one (resident before us, or pages we did not
			 * fault), or in the unclaimed chunk after ours; others less the
			 * other workers' published faults; no more than own + others -
			 * fresh */
			pthread_mutex_lock(&lock);
			nextfree = !back && (size_t)c + 1 >= lo && (size_t)c + 1 < hi;
			/* only when no other worker was populating meanwhile: their
			 * faults are published after each chunk, not during it */
			if (strat == FARSIG && !back && !busy && p1 == p0 &&
			    others2 >= (long)(unitpages > 1 ? 1 : cpages / SIG_DIV))
				signalled = 1;
			pthread_mutex_unlock(&lock);
			seen = r0 > 0 || own < fresh;
			if (seen || seen_prev || (nextfree && resident((size_t)c + 1, st->vec))) {
				est = own < others2 ? own : others2;
				if (own + others2 - fresh < est)
					est = own + others2 - fresh;
				st->est_gated += est > 0 ? est : 0;
			}
			seen_prev = seen;
			if (r0 == 0 && rc == 0) {
				pthread_mutex_lock(&lock);
				tc_ns = tc_ns > 0 ? 0.8 * tc_ns + 0.2 * (t1 - t0) : t1 - t0;
				pthread_mutex_unlock(&lock);
			}
		}
		pthread_mutex_lock(&lock);
		if (!stop && lo >= hi && t_fill == 0 && active == 1)
			t_fill = now();
		if (--active == 0)
			pthread_cond_broadcast(&idle);
		pthread_mutex_unlock(&lock);
	}
}

static void wait_idle(void)
{
	pthread_mutex_lock(&lock);
	while (active)
		pthread_cond_wait(&idle, &lock);
	pthread_mutex_unlock(&lock);
}

/* Hand [base, base + nchunks * chunk) to the workers; wait for them if asked. */
static void start_job(int wait)
{
	if (!nworkers)
		return;
	pthread_mutex_lock(&lock);
	lo = 0;
	hi = nchunks;
	active = nworkers;
	gen++;
	pthread_cond_broadcast(&wake);
	pthread_mutex_unlock(&lock);
	if (wait)
		wait_idle();
}

static void usage(void)
{
	fprintf(stderr, "usage: bgstrat [-s none|trail|skip|stride|farend|leap|leapfar|farsig] [-w N] [-m MIB] [-W MS] [-c KIB] [-H] [-S K] [-I] [-v]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	size_t mib = 1024, size, i, units;
	double work = 0, t0, t1, t2, t3;
	int huge = 0, opt, w;
	long fself0, fself1, floop, fworkers = 0, first = 0, eb = 0, et = 0, errs = 0;
	pthread_t tid[MAXW];
	volatile unsigned long x = 0;
	char *raw;

	pg = (size_t)sysconf(_SC_PAGESIZE);
	chunk = 2 << 20;
	strat = TRAIL;
	nworkers = 1;
	while ((opt = getopt(argc, argv, "s:w:m:W:c:HvS:I")) != -1) {
		switch (opt) {
		case 's':
			for (strat = 0; strat < NSTRAT && strcmp(names[strat], optarg); strat++)
				;
			if (strat == NSTRAT)
				usage();
			break;
		case 'w': nworkers = atoi(optarg); break;
		case 'm': mib = (size_t)atol(optarg); break;
		case 'W': work = atof(optarg); break;
		case 'c': chunk = (size_t)atol(optarg) << 10; break;
		case 'H': huge = 1; break;
		case 'v': verify = 1; break;
		case 'S': slow = atof(optarg); break;
		case 'I': idle_prio = 1; break;
		default: usage();
		}
	}
	if (strat == NONE)
		nworkers = 0;
	if (nworkers < 0 || nworkers > MAXW || chunk < pg || chunk % pg || chunk / pg > sizeof ws[0].vec)
		usage();
	size = mib << 20;
	cpages = chunk / pg;
	nchunks = (size + chunk - 1) / chunk;
	unitpages = huge ? (2u << 20) / pg : 1;
	units = size / (pg * unitpages);
	if (verify && !(owner = calloc(nchunks, 1)))
		return 1;

	for (w = 0; w < nworkers; w++)
		if (pthread_create(&tid[w], NULL, worker, (void *)(intptr_t)w) != 0)
			return 1;
	/* A warm-up job on a small mapping: every code path of the workers and
	 * of this thread has run once before the counters start. */
	base = mmap(NULL, 2 * chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return 1;
	nchunks = 2;
	start_job(1);
	for (i = 0; i < 2 * chunk; i += pg)
		((volatile char *)base)[i] = 1;
	munmap(base, 2 * chunk);
	stop = 0;
	t_fill = 0;
	n_pop = n_skip = n_leapt = n_left = 0;
	back = overtakes = signalled = 0;
	stride_n = 0;
	tc_ns = vf = fs_t = 0;
	fs_p = 0;
	for (w = 0; w < nworkers; w++)
		ws[w].faults = ws[w].first_pages = ws[w].est_brief = ws[w].est_gated = ws[w].errors = 0;
	nchunks = (size + chunk - 1) / chunk;
	if (verify)
		memset(owner, 0, nchunks);
	floop = faults(RUSAGE_THREAD);
	t0 = now();

	fself0 = faults(RUSAGE_SELF);
	t0 = now();
	if (huge) {
		/* 2 MiB-aligned, as the shim's hugepage action maps it */
		size_t al = 2u << 20;
		raw = mmap(NULL, size + al, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (raw == MAP_FAILED)
			return 1;
		base = (char *)(((uintptr_t)raw + al - 1) & ~(uintptr_t)(al - 1));
		if (base > raw)
			munmap(raw, (size_t)(base - raw));
		munmap(base + size, (size_t)(raw + al - base));
		madvise(base, size, MADV_HUGEPAGE);
	} else {
		base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (base == MAP_FAILED)
			return 1;
	}
	start_job(0);
	t1 = now();
	if (work < 0)
		wait_idle();
	while (now() < t1 + work * 1e6)
		for (i = 0; i < 1000; i++)
			x += i * x + 1;
	floop = faults(RUSAGE_THREAD);
	t2 = now();
	for (i = 0; i < size; i += pg)
		((volatile char *)base)[i] = 1;
	t3 = now();
	floop = faults(RUSAGE_THREAD) - floop;

	pthread_mutex_lock(&lock);
	stop = 1;
	while (active)
		pthread_cond_wait(&idle, &lock);
	quit = 1;
	pthread_cond_broadcast(&wake);
	pthread_mutex_unlock(&lock);
	fself1 = faults(RUSAGE_SELF);
	for (w = 0; w < nworkers; w++) {
		pthread_join(tid[w], NULL);
		fworkers += ws[w].faults;
		first += ws[w].first_pages;
		eb += ws[w].est_brief;
		et += ws[w].est_gated;
		errs += ws[w].errors;
	}
	if (verify && nworkers) {
		size_t c, pop = 0, left = 0;
		/* after the stop, chunks never claimed were left too */
		for (c = lo; c < hi; c++)
			mark(c, 2);
		for (c = 0; c < nchunks; c++) {
			if (!owner[c]) {
				fprintf(stderr, "bgstrat: chunk %zu neither populated nor left\n", c);
				return 1;
			}
			pop += owner[c] == 1;
			left += owner[c] == 2;
		}
		if (pop != n_pop) {
			fprintf(stderr, "bgstrat: %zu chunks marked populated, %zu counted\n", pop, n_pop);
			return 1;
		}
		fprintf(stderr, "bgstrat: verified %zu chunks: %zu populated, %zu left, no gap, no overlap\n",
			nchunks, pop, left);
	}
	printf("idle=%d strat=%s workers=%d huge=%d chunk_kib=%zu work_ms=%g units=%zu loop_faults=%ld worker_faults=%ld"
	       " total_faults=%ld extra=%ld est_brief=%ld est_gated=%ld wall_ms=%.1f pass_ms=%.1f fill_ms=%.1f"
	       " pop_chunks=%zu skip_chunks=%zu leapt_chunks=%zu left_chunks=%zu first_pages=%ld overtakes=%d"
	       " errors=%ld\n",
	       idle_prio, names[strat], nworkers, huge, chunk >> 10, work, units, floop, fworkers, fself1 - fself0,
	       fself1 - fself0 - (long)units, eb, et, (t3 - t0) / 1e6, (t3 - t2) / 1e6,
	       t_fill > 0 ? (t_fill - t1) / 1e6 : -1.0, n_pop, n_skip, n_leapt, n_left + (hi - lo), first,
	       overtakes, errs);
	return 0;
}
