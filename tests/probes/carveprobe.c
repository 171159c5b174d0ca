/* carveprobe: what a program can see of a slice carved from a reserve
 * (tests/carve.bats).
 *
 *   own SIZE        maps slices of SIZE and treats each as a mapping of its
 *                   own: userfaultfd (missing mode) on a slice whose
 *                   neighbour was touched, MADV_DONTNEED, mprotect, fork,
 *                   mremap, munmap (whole and in part), mseal.  Prints one
 *                   line per step on stdout, the same with and without the
 *                   shim; on stderr, where the first two slices lie
 *                   (carved=1: on a huge page boundary, side by side).
 *   zero N SIZE R   R rounds: map N slices, count the bytes that do not read
 *                   zero, fill them (densely, sparsely, one byte), unmap them
 *                   (in order, in reverse, every other first).  Prints
 *                   nonzero= and faults=.
 *   moved SIZE HOW  maps a slice of SIZE (after one, so that it is not a
 *                   reserve's first), writes it, (HOW advised: advises it
 *                   MADV_HUGEPAGE itself), moves and grows it to 64 MiB
 *                   by mremap and writes a byte every huge page of what it
 *                   gained; prints whether huge pages back it (huge=), then
 *                   MADV_COLLAPSE of a huge page of it (collapse=) and
 *                   huge= again.  The same with and without the shim.
 *   advised SIZE [N] maps SIZE on a huge page boundary, advised MADV_HUGEPAGE,
 *                   and N (8) slices of 1 MiB as they come (arenas), touches
 *                   them all and exits with them mapped; merged=1 when the
 *                   last slice lies in one mapping with the advised one
 *                   (/proc/self/maps: reserves merge with their neighbours).
 *   held N SIZE     maps N slices of SIZE, writes a byte of each and holds
 *                   them all; prints how many mappings the process has then
 *                   (vmas=, the lines of /proc/self/maps), and first whether
 *                   the kernel places a mapping of 4 MiB on a 2 MiB boundary
 *                   itself (kernel_aligns=1: Linux 6.7+).
 *
 * Sizes take K, M, G suffixes.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "probe.h"

#ifndef SYS_mseal
#define SYS_mseal 462
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static size_t pg, len;

static char *map(void)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

/* Bytes of [p, p+n) that are not c. */
static size_t not_c(const char *p, size_t n, char c)
{
	size_t i, bad = 0;
	for (i = 0; i < n; i++)
		bad += p[i] != c;
	return bad;
}

/* What mincore says of [p, p+n): 0, or the errno. */
static int mincore_err(void *p, size_t n)
{
	unsigned char v[4096];
	return mincore(p, n < 4096 * pg ? n : 4096 * pg, v) == 0 ? 0 : errno;
}

/* The signal a child died of after f(p), or 0. */
static int child_signal(void (*f)(char *), char *p)
{
	pid_t c = fork();
	int st;
	if (c == 0) {
		f(p);
		_exit(0);
	}
	waitpid(c, &st, 0);
	return WIFSIGNALED(st) ? WTERMSIG(st) : 0;
}

static void write_first(char *p) { p[0] = 1; }

/* userfaultfd, missing mode, on [p, p+len): touch the first byte and count
 * the faults the handler saw (it answers each with a zero page). */
static int uffd_fd;
static long uffd_seen;

static void *uffd_handler(void *arg)
{
	struct pollfd pfd = { uffd_fd, POLLIN, 0 };
	(void)arg;
	while (poll(&pfd, 1, 500) == 1) {
		struct uffd_msg m;
		struct uffdio_zeropage z;
		if (read(uffd_fd, &m, sizeof m) != sizeof m) {
			if (errno == EAGAIN)
				continue;
			break;
		}
		if (m.event != UFFD_EVENT_PAGEFAULT)
			break;
		uffd_seen++;
		z.range.start = m.arg.pagefault.address & ~(uint64_t)(pg - 1);
		z.range.len = pg;
		z.mode = 0;
		ioctl(uffd_fd, UFFDIO_ZEROPAGE, &z);
	}
	return NULL;
}

static void step_uffd(char *p)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	pthread_t t;
	uffd_fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd_fd < 0 || ioctl(uffd_fd, UFFDIO_API, &api) != 0) {
		printf("uffd unavailable\n");
		return;
	}
	reg.range.start = (uintptr_t)p;
	reg.range.len = len;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd_fd, UFFDIO_REGISTER, &reg) != 0) {
		printf("uffd register errno=%d\n", errno);
		return;
	}
	pthread_create(&t, NULL, uffd_handler, NULL);
	p[0] = 1; /* the program's first touch: a missing fault, if nothing is there */
	pthread_join(t, NULL);
	ioctl(uffd_fd, UFFDIO_UNREGISTER, &reg.range);
	close(uffd_fd);
	printf("uffd faults=%ld first=%d\n", uffd_seen, p[0]);
}

static int cmd_own(void)
{
	char *a = map(), *b = map(), *c, *e, *e2, *f, *g, *h, *q;
	size_t hp = 0;
	pid_t k;
	int st;
	long r;
	{
		FILE *fp = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
		if (fp && fscanf(fp, "%zu", &hp) != 1)
			hp = 0;
		if (fp)
			fclose(fp);
	}
	fprintf(stderr, "carved=%d\n", hp && (uintptr_t)a % hp == 0 && b == a + len);
	/* 1. a touched first: with huge pages, b's pages may come with it */
	memset(a, 'a', len);
	step_uffd(b);
	memset(b, 'b', len);
	/* 2. MADV_DONTNEED on a: a reads zero, b is intact */
	r = madvise(a, len, MADV_DONTNEED);
	printf("dontneed rc=%ld a_nonzero=%zu b_intact=%d\n", r, not_c(a, len, 0), not_c(b, len, 'b') == 0);
	/* 3. mprotect b read-only: reads work, a write kills, a is writable */
	r = mprotect(b, len, PROT_READ);
	printf("mprotect rc=%ld b_readable=%d write_signal=%d a_writable=%d\n", r, not_c(b, len, 'b') == 0,
	       child_signal(write_first, b), (a[len - 1] = 'x') == 'x');
	munmap(b, len);
	/* 4. fork: the child sees the slice as it was and its writes stay its own */
	c = map();
	memset(c, 'c', len);
	k = fork();
	if (k == 0) {
		int ok = not_c(c, len, 'c') == 0;
		char *d;
		memset(c, 'C', len);
		munmap(c, len);
		d = map(); /* (may reuse c in the child: it must read zero) */
		_exit(ok && not_c(d, len, 0) == 0 ? 7 : 1);
	}
	waitpid(k, &st, 0);
	printf("fork child=%d parent_intact=%d\n", WEXITSTATUS(st), not_c(c, len, 'c') == 0);
	munmap(c, len);
	/* 5. mremap: moved and grown, then shrunk in place */
	e = map();
	memset(e, 'e', len);
	e2 = mremap(e, len, 2 * len, MREMAP_MAYMOVE);
	if (e2 == MAP_FAILED) {
		printf("mremap errno=%d\n", errno);
	} else {
		printf("mremap grown: kept=%d tail_zero=%d old_gone=%d\n", not_c(e2, len, 'e') == 0,
		       not_c(e2 + len, len, 0) == 0, e2 == e || mincore_err(e, len) == ENOMEM);
		q = mremap(e2, 2 * len, len / 2, 0);
		printf("mremap shrunk: same=%d kept=%d tail_errno=%d\n", q == e2, not_c(e2, len / 2, 'e') == 0,
		       mincore_err(e2 + len / 2, len / 2));
		munmap(e2, len / 2);
	}
	/* 6. munmap whole: to every call the range is unmapped */
	f = map();
	memset(f, 'f', len);
	r = munmap(f, len);
	printf("munmap rc=%ld mincore_errno=%d", r, mincore_err(f, len));
	printf(" mprotect_errno=%d", mprotect(f, len, PROT_READ) ? errno : 0);
	printf(" madvise_errno=%d", madvise(f, len, MADV_DONTNEED) ? errno : 0);
	q = mmap(f, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	printf(" noreplace_same=%d zero=%d\n", q == f, q != MAP_FAILED && not_c(q, len, 0) == 0);
	if (q != MAP_FAILED)
		munmap(q, len);
	/* 7. munmap in part: the rest stays, the part is gone */
	g = map();
	memset(g, 'g', len);
	r = munmap(g + len / 2, len / 2);
	printf("munmap half rc=%ld rest=%d gone_errno=%d", r, not_c(g, len / 2, 'g') == 0, mincore_err(g + len / 2, len / 2));
	r = munmap(g, len / 2);
	printf(" then rc=%ld errno=%d\n", r, mincore_err(g, len / 2));
	/* 8. mseal: the slice can no longer be unmapped */
	h = map();
	r = syscall(SYS_mseal, h, len, 0);
	if (r != 0) {
		printf("mseal errno=%d\n", errno);
	} else {
		r = munmap(h, len);
		printf("mseal munmap rc=%ld errno=%d\n", r, r ? errno : 0);
	}
	/* 9. the slice mapped after all that reads zero */
	q = map();
	printf("fresh zero=%d\n", not_c(q, len, 0) == 0);
	return 0;
}

static long faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static int cmd_zero(int n, int rounds)
{
	char **v = calloc((size_t)n, sizeof *v);
	size_t bad = 0, i, j;
	long f0 = faults();
	int r;
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < (size_t)n; i++) {
			v[i] = map();
			bad += not_c(v[i], len, 0);
			switch ((r + i) % 3) { /* densely, sparsely, one byte */
			case 0: memset(v[i], 0x5a, len); break;
			case 1: for (j = 0; j < len; j += 3 * pg) v[i][j] = 0x5a; break;
			default: v[i][len - 1] = 0x5a; break;
			}
		}
		for (i = 0; i < (size_t)n; i++) { /* in order, in reverse, the even ones first */
			size_t k = r % 3 == 0 ? i : r % 3 == 1 ? n - 1 - i : 2 * i < (size_t)n ? 2 * i : 2 * i - (size_t)n + 1 - (size_t)n % 2;
			munmap(v[k], len);
		}
	}
	printf("nonzero=%zu faults=%ld\n", bad, faults() - f0);
	return 0;
}

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

static size_t hpage(void)
{
	size_t hp = 2u << 20;
	FILE *fp = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
	if (fp && fscanf(fp, "%zu", &hp) != 1)
		hp = 2u << 20;
	if (fp)
		fclose(fp);
	return hp;
}

/* AnonHugePages of the mappings inside [a, b), in kB, from smaps. */
static long huge_kb(uintptr_t a, uintptr_t b)
{
	char line[512];
	unsigned long s = 0, e = 0;
	long kb = 0, v;
	FILE *fp = fopen("/proc/self/smaps", "r");
	if (!fp)
		return -1;
	while (fgets(line, sizeof line, fp)) {
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2)
			continue;
		if (sscanf(line, "AnonHugePages: %ld kB", &v) == 1 && s < b && e > a)
			kb += v;
	}
	fclose(fp);
	return kb;
}

static int cmd_moved(int advised)
{
	size_t big = 64u << 20, hp = hpage(), i;
	char *first = map(), *p = map(), *q, *h;
	memset(first, 1, len);
	memset(p, 2, len);
	if (advised && madvise(p, len, MADV_HUGEPAGE) != 0)
		return 1;
	if ((q = mremap(p, len, big, MREMAP_MAYMOVE)) == MAP_FAILED) {
		printf("moved=%s\n", strerror(errno));
		return 1;
	}
	printf("moved=ok intact=%d\n", not_c(q, len, 2) == 0);
	for (i = len; i < big; i += hp)
		q[i] = 3;
	printf("huge=%s\n", huge_kb((uintptr_t)q, (uintptr_t)q + big) > 0 ? "some" : "none");
	h = q + (hp - (uintptr_t)q % hp) % hp + hp; /* (a huge page of what it gained) */
	printf("collapse=%s\n", madvise(h, hp, MADV_COLLAPSE) == 0 ? "ok" : strerror(errno));
	printf("huge=%s\n", huge_kb((uintptr_t)q, (uintptr_t)q + big) > 0 ? "some" : "none");
	return 0;
}

int main(int argc, char **argv)
{
	pg = (size_t)sysconf(_SC_PAGESIZE);
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc >= 3 && !strcmp(argv[1], "own")) {
		len = parse_size(argv[2]);
		return cmd_own();
	}
	if (argc >= 5 && !strcmp(argv[1], "zero")) {
		len = parse_size(argv[3]);
		return cmd_zero(atoi(argv[2]), atoi(argv[4]));
	}
	if (argc >= 4 && !strcmp(argv[1], "moved")) {
		len = parse_size(argv[2]);
		return cmd_moved(!strcmp(argv[3], "advised"));
	}
	if (argc >= 4 && !strcmp(argv[1], "held")) {
		int n = atoi(argv[2]), k, vmas = 0, c;
		FILE *fp;
		char *p = mmap(NULL, 4u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		printf("kernel_aligns=%d\n", p != MAP_FAILED && (uintptr_t)p % (2u << 20) == 0);
		if (p != MAP_FAILED)
			munmap(p, 4u << 20);
		len = parse_size(argv[3]);
		for (k = 0; k < n; k++)
			*map() = 1;
		if (!(fp = fopen("/proc/self/maps", "r")))
			return 1;
		while ((c = getc(fp)) != EOF)
			vmas += c == '\n';
		fclose(fp);
		printf("vmas=%d\n", vmas);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "advised")) {
		size_t size = parse_size(argv[2]), hp = 2u << 20, k, n = argc >= 4 ? (size_t)atoi(argv[3]) : 8;
		unsigned long last = 0, lo, hi;
		char *p, line[512];
		int merged = 0;
		FILE *fp = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
		if (fp && fscanf(fp, "%zu", &hp) != 1)
			hp = 2u << 20;
		if (fp)
			fclose(fp);
		len = size + hp;
		p = map();
		p += (hp - (uintptr_t)p % hp) % hp;
		madvise(p, size, MADV_HUGEPAGE);
		memset(p, 1, size);
		len = 1u << 20;
		for (k = 0; k < n; k++) {
			char *q = map();
			memset(q, 1, len);
			last = (unsigned long)q;
		}
		if ((fp = fopen("/proc/self/maps", "r"))) {
			while (fgets(line, sizeof line, fp))
				if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && last >= lo && last < hi)
					merged = (unsigned long)p >= lo && (unsigned long)p < hi;
			fclose(fp);
		}
		printf("ok=1 merged=%d\n", merged);
		return 0;
	}
	fprintf(stderr, "usage: carveprobe own SIZE | zero N SIZE ROUNDS | advised SIZE\n");
	return 2;
}
