/* cli_bench.c: `prefault bench [-r ROUNDS] [SIZE]`: the seeds' measurement,
 * on this machine.
 *
 * For a SIZE buffer (512M by default), each way of getting memory ready:
 * first touch, MAP_POPULATE, MADV_POPULATE_WRITE, mlock, huge pages,
 * populate on two threads, huge pages on two threads; then a retouch of
 * memory already mapped (the floor).  For each: the preparation (the mmap
 * call and the prefault), the first write pass over every page, both per
 * 4 KiB page, the factor over first touch, and the minor faults taken.
 * Phases run in rotating order each round, each twice with the second
 * measured; medians of the rounds.  This runs without the shim: it measures
 * the kernel (and the machine).  The rows without huge pages get small
 * pages even where THP is "always" (RHEL's default), which would otherwise
 * give every row huge pages: PR_SET_THP_DISABLE for those phases.
 */
#include "cli.h"
#include "fmt.h"
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define HUGE cli_hpage_size() /* (the kernel's, read once) */

enum { P_FIRST, P_MAPPOP, P_MADV, P_MLOCK, P_HUGE, P_THREADS, P_HUGE_THREADS, P_RETOUCH, P_COUNT };
static const char *const pname[P_COUNT] = { "first touch", "MAP_POPULATE", "MADV_POPULATE_WRITE", "mlock",
                                            "huge pages (MADV_HUGEPAGE + populate)", "populate, 2 threads",
                                            "huge pages, 2 threads", "retouch (already mapped)" };
static const char *const pkey[P_COUNT] = { "first_touch", "map_populate", "madv_populate_write", "mlock", "hugepage",
                                           "populate_threads", "hugepage_threads", "retouch" };

struct res {
	double prep, pass, total; /* ns per 4 KiB page */
	long faults;
	int ok;
};

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static long faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}

static char *map_aligned(size_t size, int flags)
{
	char *p = mmap(NULL, size + HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0), *a;
	if (p == MAP_FAILED)
		return NULL;
	a = (char *)(((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	munmap(a + size, HUGE - (size_t)(a - p));
	return a;
}

struct slice {
	char *p;
	size_t n;
	int rc;
};

static void *populate_slice(void *arg)
{
	struct slice *s = arg;
	s->rc = madvise(s->p, s->n, MADV_POPULATE_WRITE);
	return NULL;
}

static int populate2(char *p, size_t size)
{
	pthread_t t;
	size_t half = (size / 2) & ~(HUGE - 1);
	struct slice s = { p + half, size - half, 0 };
	if (pthread_create(&t, NULL, populate_slice, &s) != 0)
		return madvise(p, size, MADV_POPULATE_WRITE);
	populate_slice(&(struct slice){ p, half, 0 });
	pthread_join(t, NULL);
	return s.rc;
}

static void pass(char *p, size_t size, size_t pg, char v)
{
	size_t i;
	for (i = 0; i < size; i += pg)
		((volatile char *)p)[i] = v;
}

static struct res phase(int ph, size_t size, size_t pg)
{
	struct res r = { 0, 0, 0, 0, 1 };
	double t0, t1, t2;
	long f0 = faults();
	char *p = NULL;
	double pages = (double)size / 4096;
	prctl(PR_SET_THP_DISABLE, ph != P_HUGE && ph != P_HUGE_THREADS, 0, 0, 0);
	t0 = now_ns();
	switch (ph) {
	case P_FIRST:
	case P_RETOUCH:
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		break;
	case P_MAPPOP:
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		break;
	case P_MADV:
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED && madvise(p, size, MADV_POPULATE_WRITE) != 0)
			r.ok = 0;
		break;
	case P_MLOCK:
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED && mlock(p, size) != 0)
			r.ok = 0;
		break;
	case P_HUGE:
	case P_HUGE_THREADS:
		p = map_aligned(size, 0);
		if (p && madvise(p, size, MADV_HUGEPAGE) != 0)
			r.ok = 0;
		if (p && (ph == P_HUGE ? madvise(p, size, MADV_POPULATE_WRITE) : populate2(p, size)) != 0)
			r.ok = 0;
		break;
	case P_THREADS:
		p = map_aligned(size, 0);
		if (p && madvise(p, size, MADV_NOHUGEPAGE) == 0 && populate2(p, size) != 0)
			r.ok = 0;
		break;
	}
	if (!p || p == MAP_FAILED) {
		r.ok = 0;
		return r;
	}
	t1 = now_ns();
	if (ph == P_RETOUCH) { /* first touch untimed, then the timed retouch */
		pass(p, size, pg, 1);
		f0 = faults();
		t0 = t1 = now_ns();
	}
	pass(p, size, pg, 2);
	t2 = now_ns();
	r.prep = (t1 - t0) / pages;
	r.pass = (t2 - t1) / pages;
	r.total = (t2 - t0) / pages;
	r.faults = faults() - f0;
	if (ph == P_MLOCK)
		munlock(p, size);
	munmap(p, size);
	return r;
}

/* ---- how much memory there is for the buffer ---- */

static uint64_t file_u64(const char *path, int *ok)
{
	FILE *f = fopen(path, "re");
	unsigned long long v = 0;
	*ok = f && fscanf(f, "%llu", &v) == 1;
	if (f)
		fclose(f);
	return v;
}

static uint64_t mem_available(void)
{
	char line[256];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/meminfo", "re");
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return (uint64_t)kb << 10;
}

/* This process's memory cgroup (v1's memory controller if there is one,
 * else v2's) as a directory of its mount: 0, or -1. */
static int cgroup_dir(char *dir, size_t cap, int *v1)
{
	char line[4096], rel[4096] = "", mnt[4096] = "", root[4096], fs[64], opts[1024];
	FILE *f = fopen("/proc/self/cgroup", "re");
	*v1 = 0;
	while (f && fgets(line, sizeof line, f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL, *t;
		if (!c2)
			continue;
		*c2++ = '\0';
		c2[strcspn(c2, "\n")] = '\0';
		for (t = strtok(c1 + 1, ","); t && strcmp(t, "memory"); t = strtok(NULL, ","))
			;
		if (t || (!strcmp(line, "0") && !*rel))
			snprintf(rel, sizeof rel, "%s", c2);
		if (t) {
			*v1 = 1;
			break;
		}
	}
	if (f)
		fclose(f);
	f = fopen("/proc/self/mountinfo", "re");
	while (*rel && f && fgets(line, sizeof line, f)) {
		const char *dash = strstr(line, " - ");
		if (!dash || sscanf(line, "%*s %*s %*s %4095s %4095s", root, mnt) != 2 ||
		    sscanf(dash, " - %63s %*s %1023s", fs, opts) != 2)
			continue;
		if (*v1 ? !strcmp(fs, "cgroup") && strstr(opts, "memory") : !strcmp(fs, "cgroup2")) {
			fclose(f);
			/* (the mount shows the hierarchy from its root down) */
			if (strcmp(root, "/") && !strncmp(rel, root, strlen(root)))
				memmove(rel, rel + strlen(root), strlen(rel + strlen(root)) + 1);
			return snprintf(dir, cap, "%s%s", mnt, rel) < (int)cap ? 0 : -1;
		}
	}
	if (f)
		fclose(f);
	return -1;
}

/* The least room (limit less usage) over our memory cgroup and those above
 * it, and that level's limit; UINT64_MAX if none is limited. */
static uint64_t cgroup_room(uint64_t *limit)
{
	char dir[4400], path[4500];
	uint64_t best = UINT64_MAX;
	int v1, ok, depth;
	*limit = UINT64_MAX;
	if (cgroup_dir(dir, sizeof dir, &v1) < 0)
		return best;
	for (depth = 0; depth < 16; depth++) {
		uint64_t max, cur;
		char *slash;
		snprintf(path, sizeof path, "%s/%s", dir, v1 ? "memory.limit_in_bytes" : "memory.max");
		max = file_u64(path, &ok);
		if (ok && max < (1ull << 62)) { /* ("max", or v1's huge "no limit", is none) */
			snprintf(path, sizeof path, "%s/%s", dir, v1 ? "memory.usage_in_bytes" : "memory.current");
			cur = file_u64(path, &ok);
			if (max - (cur < max ? cur : max) < best) {
				best = max - (cur < max ? cur : max);
				*limit = max;
			}
		}
		slash = strrchr(dir, '/');
		if (!slash || !strcmp(slash, "/"))
			break;
		*slash = '\0';
		snprintf(path, sizeof path, "%s/%s", dir, v1 ? "memory.limit_in_bytes" : "memory.max");
		if (access(path, F_OK) != 0)
			break; /* above the cgroup mount */
	}
	return best;
}

/* The buffer must fit in what the machine and the cgroup can give: else the
 * OOM killer ends the bench with no message, or, on a shared machine, someone
 * else's process.  0, or -1 with both figures said. */
static int room_for(uint64_t size)
{
	uint64_t need = size + HUGE + size / 256, avail = mem_available(), limit, room = cgroup_room(&limit);
	char a[32], b[32], c[32], n[32];
	if ((!avail || need <= avail) && need <= room)
		return 0;
	human_size(n, sizeof n, size);
	human_size(a, sizeof a, avail);
	if (room == UINT64_MAX) {
		fprintf(stderr, "prefault bench: a %s buffer does not fit: MemAvailable is %s; no cgroup memory limit\n", n,
		        a);
	} else {
		human_size(b, sizeof b, room);
		human_size(c, sizeof c, limit);
		fprintf(stderr, "prefault bench: a %s buffer does not fit: MemAvailable is %s, and the cgroup has %s left "
		        "under its limit of %s\n", n, a, b, c);
	}
	return -1;
}

int cmd_bench(const struct command *self, int argc, char **argv)
{
	uint64_t size = 512ull << 20;
	int rounds = 3, i, r, n, json = 0;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	static struct res res[P_COUNT][32];
	double prep[P_COUNT], pas[P_COUNT], tot[P_COUNT], flt[P_COUNT];
	int ok[P_COUNT];
	const struct opt opts[] = {
		OPT_I("-r", &rounds, "ROUNDS", 1, 31),
		OPT_F("--json", &json),
		OPT_END,
	};
	if (opt_parse(self, argc, argv, opts, &n) < 0)
		return EXIT_USAGE;
	for (i = 1; i <= n; i++) {
		const char *e = parse_size(argv[i], strlen(argv[i]), &size);
		if (e || size < (4u << 20) || size > (64ull << 30)) {
			fprintf(stderr, "prefault bench: bad size '%s'%s%s (from 4M to 64G, like 512M)\n", argv[i], e ? ": " : "",
			        e ? e : "");
			return EXIT_USAGE;
		}
	}
	size &= ~(uint64_t)(HUGE - 1);
	if (room_for(size) < 0)
		return EXIT_USAGE;
	for (r = 0; r < rounds; r++)
		for (i = 0; i < P_COUNT; i++) {
			int ph = (i + r) % P_COUNT; /* rotate, so drift hits every phase alike */
			/* Twice, the second measured: on a virtual machine that gives
			 * freed memory back to its host, the first use of memory costs
			 * the host's work too, and which phase paid it would depend on
			 * the order. */
			phase(ph, size, pg);
			res[ph][r] = phase(ph, size, pg);
		}
	for (i = 0; i < P_COUNT; i++) {
		double a[32], b[32], c[32], d[32];
		ok[i] = 1;
		for (r = 0; r < rounds; r++) {
			a[r] = res[i][r].prep;
			b[r] = res[i][r].pass;
			c[r] = res[i][r].total;
			d[r] = (double)res[i][r].faults;
			ok[i] &= res[i][r].ok;
		}
		prep[i] = spread_of(a, rounds).med;
		pas[i] = spread_of(b, rounds).med;
		tot[i] = spread_of(c, rounds).med;
		flt[i] = spread_of(d, rounds).med;
	}
	if (json) {
		printf("{\"size\":%llu,\"rounds\":%d,\"page_size\":%zu,\"phases\":[", (unsigned long long)size, rounds, pg);
		for (i = 0; i < P_COUNT; i++)
			printf("%s{\"phase\":\"%s\",\"ok\":%s,\"prepare_ns\":%.1f,\"pass_ns\":%.1f,\"total_ns\":%.1f,"
			       "\"factor\":%.2f,\"minor_faults\":%.0f}",
			       i ? "," : "", pkey[i], ok[i] ? "true" : "false", prep[i], pas[i], tot[i],
			       tot[i] > 0 ? tot[P_FIRST] / tot[i] : 0, flt[i]);
		printf("]}\n");
		return 0;
	}
	printf("prefault bench: %llu MiB, %d round%s (medians, each phase measured on its second run), ns per 4 KiB "
	       "page; page size here %zu\n",
	       (unsigned long long)(size >> 20), rounds, rounds == 1 ? "" : "s", pg);
	printf("%-40s %10s %10s %10s %8s %12s\n", "", "prepare", "write pass", "total", "factor", "minor faults");
	for (i = 0; i < P_COUNT; i++)
		printf("%-40s %10.1f %10.1f %10.1f %7.2fx %12.0f%s\n", pname[i], prep[i], pas[i], tot[i],
		       tot[i] > 0 ? tot[P_FIRST] / tot[i] : 0, flt[i], ok[i] ? "" : "  (failed: not available here)");
	printf("\nThe seeds measured (512 MiB): first touch 2674 ns, populate then touch 1729 ns (1.55x), retouch 31 ns.\n"
	       "The factor is first touch's total over the row's total: how much sooner the memory is ready.\n");
	return 0;
}
