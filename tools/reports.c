/* reports.c: see reports.h.  The text follows shim/report.c (write_text and
 * text_rule) line for line, so a report printed by the tool reads as one
 * the shim wrote itself. */
#include "reports.h"
#include "sbuf.h"
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

/* /dev/shm, if it is a tmpfs we may make a directory in: a report file made
 * there cost a process 0.5 to 2 ms less than one on ext4 here (inode and
 * journal), and every process of a tree writes one. */
static int shm_ok(void)
{
	struct statfs sf;
	struct stat st;
	return statfs("/dev/shm", &sf) == 0 && sf.f_type == TMPFS_MAGIC && stat("/dev/shm", &st) == 0 &&
	       S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) && access("/dev/shm", W_OK | X_OK) == 0;
}

char *scratch_dir(const char *what, int in_memory)
{
	const char *base = getenv("TMPDIR");
	size_t n;
	char *d;
	if (!base || base[0] != '/')
		base = in_memory && shm_ok() ? "/dev/shm" : "/tmp";
	n = strlen(base) + strlen(what) + 32;
	d = malloc(n);
	if (!d)
		return NULL;
	snprintf(d, n, "%s/prefault-%s.XXXXXX", base, what);
	if (!mkdtemp(d)) { /* mode 0700 */
		int e = errno;
		if (!strcmp(base, "/dev/shm")) { /* full, say: the disk will do */
			free(d);
			return scratch_dir(what, 0);
		}
		free(d);
		errno = e;
		return NULL;
	}
	return d;
}

char *scratch_template(const char *dir, const char *file)
{
	size_t n = strlen(dir), k = 0, i;
	char *t = malloc(2 * n + strlen(file) + 2);
	if (!t)
		return NULL;
	for (i = 0; i < n; i++) { /* the shim reads %p, %e and %% in it */
		t[k++] = dir[i];
		if (dir[i] == '%')
			t[k++] = '%';
	}
	t[k++] = '/';
	strcpy(t + k, file);
	return t;
}

void scratch_clean(const char *dir, int rm_dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char *p;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (asprintf(&p, "%s/%s", dir, e->d_name) >= 0) {
			unlink(p);
			free(p);
		}
	}
	if (d)
		closedir(d);
	if (rm_dir)
		rmdir(dir);
}

static int cmp_pid(const void *a, const void *b)
{
	uint64_t x = json_u64(json_get(*(struct json *const *)a, "pid"), 0);
	uint64_t y = json_u64(json_get(*(struct json *const *)b, "pid"), 0);
	return x < y ? -1 : x > y;
}

int reports_load(const char *dir, struct report_set *rs)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int cap = 0;
	memset(rs, 0, sizeof *rs);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		char *p, err[200];
		struct json *j;
		if (n < 6 || strcmp(e->d_name + n - 5, ".json"))
			continue;
		if (asprintf(&p, "%s/%s", dir, e->d_name) < 0)
			continue;
		j = json_parse_file(p, err, sizeof err);
		free(p);
		if (!j || j->type != JSON_OBJECT || !json_get(j, "faults")) {
			json_free(j);
			rs->unreadable++;
			continue;
		}
		if (rs->n == cap) {
			struct json **g = realloc(rs->docs, (size_t)(cap ? cap * 2 : 16) * sizeof *g);
			if (!g) {
				json_free(j);
				break;
			}
			rs->docs = g;
			cap = cap ? cap * 2 : 16;
		}
		rs->docs[rs->n++] = j;
	}
	closedir(d);
	if (rs->n > 1)
		qsort(rs->docs, (size_t)rs->n, sizeof rs->docs[0], cmp_pid);
	return 0;
}

void reports_free(struct report_set *rs)
{
	int i;
	for (i = 0; i < rs->n; i++)
		json_free(rs->docs[i]);
	free(rs->docs);
	memset(rs, 0, sizeof *rs);
}

uint64_t report_in_prefault(const struct json *doc)
{
	return json_u64(json_path(doc, "faults.in_prefault"), 0);
}

/* ---- one rule's figures, read from a report and summed over several ---- */

#define MAX_SKIP 8

struct rstat {
	const char *name;
	uint64_t matched, bytes, prefaulted, us, faults;
	uint64_t queued, populated, program_first, cancelled, left;
	uint64_t leaps, twice_max; /* newer shims; has_twice: reported */
	int has_twice;
	uint64_t kept, recycled, reused_bytes, zero_us, cache_peak;
	uint64_t huge, small_fallbacks;
	int nskip;
	const char *skip_name[MAX_SKIP];
	uint64_t skip[MAX_SKIP];
};

static uint64_t num(const struct json *j, const char *path) { return json_u64(json_path(j, path), 0); }

static void rule_add(struct rstat *s, const struct json *r)
{
	const struct json *m;
	s->matched += num(r, "matched");
	s->bytes += num(r, "bytes");
	s->prefaulted += num(r, "prefaulted_bytes");
	s->us += json_fixed(json_get(r, "seconds"), 6, 0);
	s->faults += num(r, "faults");
	s->queued += num(r, "background.queued_bytes");
	s->populated += num(r, "background.populated_bytes");
	s->program_first += num(r, "background.program_first_bytes");
	s->cancelled += num(r, "background.cancelled_bytes");
	s->left += num(r, "background.left_bytes");
	s->leaps += num(r, "background.leaps");
	if (json_path(r, "background.twice_faults_max")) {
		s->has_twice = 1;
		if (num(r, "background.twice_faults_max") > s->twice_max)
			s->twice_max = num(r, "background.twice_faults_max");
	}
	s->kept += num(r, "recycle.kept");
	s->recycled += num(r, "recycle.recycled");
	s->reused_bytes += num(r, "recycle.bytes_reused");
	s->zero_us += json_fixed(json_path(r, "recycle.zeroing_s"), 6, 0);
	s->cache_peak += num(r, "recycle.cache_peak_bytes");
	s->huge += num(r, "huge_bytes");
	s->small_fallbacks += num(r, "small_fallbacks");
	for (m = json_get(r, "skipped_by") ? json_get(r, "skipped_by")->child : NULL; m; m = m->next) {
		int k;
		for (k = 0; k < s->nskip && strcmp(s->skip_name[k], m->key); k++)
			;
		if (k == s->nskip) {
			if (k == MAX_SKIP)
				continue;
			s->skip_name[s->nskip++] = m->key;
		}
		s->skip[k] += json_u64(m, 0);
	}
}

static void secs_ms(struct sbuf *sb, uint64_t us) { sb_fixed(sb, us / 1000, 3); }

/* As shim/report.c text_rule. */
static void text_rule(struct sbuf *sb, const struct rstat *rs, const char *suffix)
{
	uint64_t sk = 0;
	int k;
	for (k = 0; k < rs->nskip; k++)
		sk += rs->skip[k];
	sb_str(sb, "prefault:   rule ");
	sb_text(sb, rs->name);
	sb_str(sb, suffix);
	sb_str(sb, ": ");
	sb_u64(sb, rs->matched);
	sb_str(sb, " matched, ");
	sb_size_human(sb, rs->bytes);
	if (rs->prefaulted || rs->us) {
		sb_str(sb, "; prefaulted ");
		sb_size_human(sb, rs->prefaulted);
		/* (a background rule: the workers' time is not the program's) */
		sb_str(sb, rs->queued ? ", " : " in ");
		secs_ms(sb, rs->us);
		sb_str(sb, rs->queued ? " s on the program's threads (" : " s (");
		sb_u64(sb, rs->faults);
		sb_str(sb, " faults)");
	}
	if (rs->queued) {
		sb_str(sb, "; background ");
		sb_size_human(sb, rs->populated);
		sb_str(sb, " of ");
		sb_size_human(sb, rs->queued);
		sb_str(sb, " (program first to ");
		sb_size_human(sb, rs->program_first);
		if (rs->leaps) {
			sb_str(sb, ", leaps ");
			sb_u64(sb, rs->leaps);
		}
		if (rs->has_twice) {
			sb_str(sb, ", faults taken twice at most ");
			sb_u64(sb, rs->twice_max);
		}
		if (rs->cancelled) {
			sb_str(sb, ", cancelled ");
			sb_size_human(sb, rs->cancelled);
		}
		if (rs->left) {
			sb_str(sb, ", left ");
			sb_size_human(sb, rs->left);
		}
		sb_chr(sb, ')');
	}
	if (rs->kept || rs->recycled) {
		sb_str(sb, "; recycled ");
		sb_u64(sb, rs->recycled);
		sb_str(sb, " (");
		sb_size_human(sb, rs->reused_bytes);
		sb_str(sb, ", zeroing ");
		secs_ms(sb, rs->zero_us);
		sb_str(sb, " s, cache peak ");
		sb_size_human(sb, rs->cache_peak);
		sb_chr(sb, ')');
	}
	if (rs->huge) {
		sb_str(sb, "; huge pages ");
		sb_size_human(sb, rs->huge);
	}
	if (rs->small_fallbacks) {
		sb_str(sb, "; small pages instead of huge ");
		sb_u64(sb, rs->small_fallbacks);
		sb_str(sb, " times");
	}
	if (sk) {
		int first = 1;
		sb_str(sb, "; skipped ");
		sb_u64(sb, sk);
		sb_str(sb, " (");
		for (k = 0; k < rs->nskip; k++) {
			if (!rs->skip[k])
				continue;
			if (!first)
				sb_str(sb, ", ");
			sb_text(sb, rs->skip_name[k]);
			sb_chr(sb, ' ');
			sb_u64(sb, rs->skip[k]);
			first = 0;
		}
		sb_chr(sb, ')');
	}
	sb_chr(sb, '\n');
}

/* A limit the shim never worked out is null in its JSON (nothing needed it). */
#define LIMIT_UNKNOWN (UINT64_MAX - 1)
static uint64_t limit_of(const struct json *d)
{
	const struct json *l = json_path(d, "budget.limit");
	return !l || l->type == JSON_NULL ? LIMIT_UNKNOWN : json_u64(l, 0);
}

static void budget_line(struct sbuf *sb, const char *policy, uint64_t peak, uint64_t limit, const char *suffix)
{
	sb_str(sb, "prefault:   policy ");
	sb_text(sb, policy);
	sb_str(sb, "; budget peak ");
	sb_size_human(sb, peak);
	if (limit == LIMIT_UNKNOWN)
		sb_str(sb, " (no limit worked out: nothing needed one)");
	else if (limit == UINT64_MAX)
		sb_str(sb, " of unlimited");
	else {
		sb_str(sb, " of ");
		sb_size_human(sb, limit);
	}
	sb_str(sb, suffix);
	sb_chr(sb, '\n');
}

/* The malloc family's threshold: no member (an older shim: every call
 * counted), null (not counted at all), or the least size counted. */
enum { MALLOC_ALL, MALLOC_NONE, MALLOC_FROM };

static int malloc_counting(const struct json *d, uint64_t *from)
{
	const struct json *m = json_get(d, "malloc_counted_from");
	if (!m)
		return MALLOC_ALL;
	if (m->type != JSON_NUMBER)
		return MALLOC_NONE;
	*from = json_u64(m, 0);
	return MALLOC_FROM;
}

/* As shim/report.c's unmatched line. */
static void unmatched_line(struct sbuf *sb, uint64_t nm, uint64_t bm, uint64_t na, uint64_t ba, int counting,
                           uint64_t from)
{
	sb_str(sb, "prefault:   unmatched: ");
	sb_u64(sb, nm);
	sb_str(sb, " mmap (");
	sb_size_human(sb, bm);
	if (counting == MALLOC_NONE) {
		sb_str(sb, "); malloc family not counted (no rule or profile watches it)\n");
		return;
	}
	sb_str(sb, "), ");
	sb_u64(sb, na);
	if (counting == MALLOC_FROM) {
		sb_str(sb, " malloc blocks of ");
		sb_size_human(sb, from);
		sb_str(sb, " or more (");
		sb_size_human(sb, ba);
		sb_str(sb, "; smaller ones not counted)\n");
		return;
	}
	sb_str(sb, " malloc (");
	sb_size_human(sb, ba);
	sb_str(sb, ")\n");
}

/* The cost ledger: system calls of the shim's own, by kind, summed over the
 * reports added (shim.syscalls; reports of an older shim have none). */
#define MAX_SC 64
struct ledger {
	int has, n;
	uint64_t total;
	const char *name[MAX_SC];
	uint64_t count[MAX_SC];
};

static void ledger_add(struct ledger *l, const struct json *d)
{
	const struct json *m = json_path(d, "shim.syscalls");
	if (!m || m->type != JSON_OBJECT)
		return;
	l->has = 1;
	for (m = m->child; m; m = m->next) {
		int k;
		if (!strcmp(m->key, "total")) {
			l->total += json_u64(m, 0);
			continue;
		}
		for (k = 0; k < l->n && strcmp(l->name[k], m->key); k++)
			;
		if (k == l->n) {
			if (k == MAX_SC)
				continue;
			l->name[l->n++] = m->key;
		}
		l->count[k] += json_u64(m, 0);
	}
}

/* As shim/report.c text_ledger: the total and the three commonest kinds. */
static void ledger_line(struct sbuf *sb, const struct ledger *l)
{
	int shown[3] = { -1, -1, -1 }, i, k;
	if (!l->has)
		return;
	sb_str(sb, "prefault:   prefault work: ");
	sb_u64(sb, l->total);
	sb_str(sb, " system calls");
	for (i = 0; i < 3; i++)
		for (k = 0; k < l->n; k++)
			if (l->count[k] && (i == 0 || k != shown[0]) && (i < 2 || k != shown[1]) &&
			    (shown[i] < 0 || l->count[k] > l->count[shown[i]]))
				shown[i] = k;
	for (i = 0; i < 3 && shown[i] >= 0; i++) {
		sb_str(sb, i ? ", " : " (");
		sb_str(sb, l->name[shown[i]]);
		sb_chr(sb, ' ');
		sb_u64(sb, l->count[shown[i]]);
	}
	sb_str(sb, i ? ")\n" : "\n");
}

static void note_line(struct sbuf *sb, const char *text)
{
	sb_str(sb, "prefault:   note: ");
	sb_text(sb, text);
	sb_chr(sb, '\n');
}

/* As shim/report.c write_text. */
static void print_one(struct sbuf *sb, const struct json *d)
{
	const struct json *r, *policy = json_get(d, "policy");
	uint64_t minor = num(d, "faults.minor"), major = num(d, "faults.major");
	sb_str(sb, "prefault: ");
	sb_text(sb, json_str(json_get(d, "program"), "?"));
	sb_chr(sb, '[');
	sb_u64(sb, num(d, "pid"));
	sb_str(sb, "] ");
	sb_fixed(sb, json_fixed(json_get(d, "wall_s"), 3, 0), 3);
	sb_str(sb, " s, ");
	sb_u64(sb, minor + major);
	sb_str(sb, " faults (");
	sb_u64(sb, major);
	sb_str(sb, " major): ");
	sb_u64(sb, num(d, "faults.in_program"));
	sb_str(sb, " in the program, ");
	sb_u64(sb, num(d, "faults.in_prefault"));
	sb_str(sb, " in prefault work\n");
	if (json_str(policy, NULL))
		budget_line(sb, json_str(policy, NULL), num(d, "budget.peak"), limit_of(d), "");
	{
		struct ledger l;
		memset(&l, 0, sizeof l);
		ledger_add(&l, d);
		ledger_line(sb, &l);
	}
	for (r = json_get(d, "rules") ? json_get(d, "rules")->child : NULL; r; r = r->next) {
		struct rstat s;
		memset(&s, 0, sizeof s);
		s.name = json_str(json_get(r, "name"), "?");
		rule_add(&s, r);
		text_rule(sb, &s, "");
	}
	{
		uint64_t from = 0;
		int counting = malloc_counting(d, &from);
		unmatched_line(sb, num(d, "unmatched.mmap.matched"), num(d, "unmatched.mmap.bytes"),
		               num(d, "unmatched.malloc.matched"), num(d, "unmatched.malloc.bytes"), counting, from);
	}
	for (r = json_get(d, "notes") ? json_get(d, "notes")->child : NULL; r; r = r->next)
		if (json_str(r, NULL))
			note_line(sb, json_str(r, NULL));
}

static uint64_t total_faults(const struct json *d) { return num(d, "faults.minor") + num(d, "faults.major"); }

static int cmp_faults(const void *a, const void *b)
{
	uint64_t x = total_faults(*(struct json *const *)a), y = total_faults(*(struct json *const *)b);
	return x < y ? 1 : x > y ? -1 : 0;
}

#define TOP 5

/* A process tree: totals, the heaviest processes, rules summed by name. */
static void print_tree(struct sbuf *sb, const struct report_set *rs, pid_t root, const char *root_name, double wall_s)
{
	uint64_t minor = 0, major = 0, inprog = 0, inpf = 0, peak = 0, limit = LIMIT_UNKNOWN, l;
	uint64_t um[4] = { 0, 0, 0, 0 }, from = UINT64_MAX;
	int counting = MALLOC_NONE;
	const char *policy = NULL, *name = root_name;
	int i, k, nrules = 0, others = 0, nnotes = 0;
	struct rstat *rules = NULL;
	const char **notes = NULL;
	struct json **heavy = malloc((size_t)rs->n * sizeof *heavy);
	struct ledger ledger;
	memset(&ledger, 0, sizeof ledger);
	for (i = 0; i < rs->n; i++) {
		const struct json *d = rs->docs[i], *r;
		const char *pol = json_str(json_get(d, "policy"), NULL);
		ledger_add(&ledger, d);
		minor += num(d, "faults.minor");
		major += num(d, "faults.major");
		inprog += num(d, "faults.in_program");
		inpf += num(d, "faults.in_prefault");
		if ((pid_t)num(d, "pid") == root)
			name = json_str(json_get(d, "program"), name);
		if (pol) {
			if (!policy) {
				policy = pol;
			} else if (strcmp(policy, pol)) {
				others++;
			}
			if (num(d, "budget.peak") > peak)
				peak = num(d, "budget.peak");
			/* the largest limit any process worked out */
			l = limit_of(d);
			if (l != LIMIT_UNKNOWN && (limit == LIMIT_UNKNOWN || l > limit))
				limit = l;
		}
		um[0] += num(d, "unmatched.mmap.matched");
		um[1] += num(d, "unmatched.mmap.bytes");
		um[2] += num(d, "unmatched.malloc.matched");
		um[3] += num(d, "unmatched.malloc.bytes");
		{
			/* Counted anywhere: from the least threshold of any process. */
			uint64_t f = 0;
			int c = malloc_counting(d, &f);
			if (c == MALLOC_ALL || (c == MALLOC_FROM && counting == MALLOC_ALL))
				counting = MALLOC_ALL;
			else if (c == MALLOC_FROM) {
				counting = MALLOC_FROM;
				if (f < from)
					from = f;
			}
		}
		for (r = json_get(d, "rules") ? json_get(d, "rules")->child : NULL; r; r = r->next) {
			const char *rn = json_str(json_get(r, "name"), "?");
			for (k = 0; k < nrules && strcmp(rules[k].name, rn); k++)
				;
			if (k == nrules) {
				struct rstat *g = realloc(rules, (size_t)(nrules + 1) * sizeof *g);
				if (!g)
					continue;
				rules = g;
				memset(&rules[k], 0, sizeof rules[k]);
				rules[k].name = rn;
				nrules++;
			}
			rule_add(&rules[k], r);
		}
		for (r = json_get(d, "notes") ? json_get(d, "notes")->child : NULL; r; r = r->next) {
			const char *t = json_str(r, NULL), **g;
			if (!t)
				continue;
			for (k = 0; k < nnotes && strcmp(notes[k], t); k++)
				;
			if (k < nnotes || !(g = realloc(notes, (size_t)(nnotes + 1) * sizeof *g)))
				continue;
			notes = g;
			notes[nnotes++] = t;
		}
	}
	sb_str(sb, "prefault: ");
	sb_u64(sb, (uint64_t)rs->n);
	sb_str(sb, " processes (");
	sb_text(sb, name);
	sb_chr(sb, '[');
	sb_u64(sb, (uint64_t)root);
	sb_str(sb, "] and its descendants), ");
	sb_fixed(sb, (uint64_t)(wall_s * 1000), 3);
	sb_str(sb, " s, ");
	sb_u64(sb, minor + major);
	sb_str(sb, " faults (");
	sb_u64(sb, major);
	sb_str(sb, " major): ");
	sb_u64(sb, inprog);
	sb_str(sb, " in the program, ");
	sb_u64(sb, inpf);
	sb_str(sb, " in prefault work\n");
	if (policy)
		budget_line(sb, policy, peak, limit, others ? " (the most in one process; other policies too)" : " (the most in one process)");
	if (heavy) {
		memcpy(heavy, rs->docs, (size_t)rs->n * sizeof *heavy);
		qsort(heavy, (size_t)rs->n, sizeof *heavy, cmp_faults);
		sb_str(sb, "prefault:   heaviest processes:\n");
		for (i = 0; i < rs->n && i < TOP; i++) {
			sb_str(sb, "prefault:     ");
			sb_text(sb, json_str(json_get(heavy[i], "program"), "?"));
			sb_chr(sb, '[');
			sb_u64(sb, num(heavy[i], "pid"));
			sb_str(sb, "]: ");
			sb_u64(sb, total_faults(heavy[i]));
			sb_str(sb, " faults, ");
			sb_u64(sb, num(heavy[i], "faults.in_program"));
			sb_str(sb, " in the program\n");
		}
		free(heavy);
	}
	ledger_line(sb, &ledger);
	for (k = 0; k < nrules; k++)
		text_rule(sb, &rules[k], " (all processes)");
	unmatched_line(sb, um[0], um[1], um[2], um[3], counting, from);
	for (k = 0; k < nnotes; k++)
		note_line(sb, notes[k]);
	free(rules);
	free(notes);
}

int reports_has_pid(const struct report_set *rs, pid_t pid)
{
	int i;
	for (i = 0; i < rs->n; i++)
		if ((pid_t)num(rs->docs[i], "pid") == pid)
			return 1;
	return 0;
}

/* Faults the tree took that no report holds: said when there are enough of
 * them that the start-up before the shim in each process (tens to hundreds
 * of faults: exec, the loader) cannot be all there is. */
#define UNREPORTED_MIN 1000
static void unreported_line(struct sbuf *sb, const struct report_set *rs, uint64_t tree)
{
	uint64_t sum = 0, left;
	int i;
	for (i = 0; i < rs->n; i++)
		sum += total_faults(rs->docs[i]);
	left = tree > sum ? tree - sum : 0;
	if (left < UNREPORTED_MIN || left * 10 < tree)
		return;
	sb_str(sb, "prefault:   not in any report: ");
	sb_u64(sb, left);
	sb_str(sb, " of the tree's ");
	sb_u64(sb, tree);
	sb_str(sb, " faults (from wait4): processes that wrote no report (killed before it, or without the shim), "
	           "and start-up before the shim\n");
}

void reports_print(int fd, const struct report_set *rs, pid_t root, const char *root_name, double wall_s,
                   uint64_t tree_faults)
{
	char buf[4096];
	struct sbuf sb;
	sb_init(&sb, buf, sizeof buf, fd);
	if (rs->n == 1)
		print_one(&sb, rs->docs[0]);
	else if (rs->n > 1)
		print_tree(&sb, rs, root, root_name, wall_s);
	unreported_line(&sb, rs, tree_faults);
	if (rs->unreadable) {
		sb_str(&sb, rs->n ? "prefault:   note: " : "prefault: ");
		sb_u64(&sb, (uint64_t)rs->unreadable);
		sb_str(&sb, rs->unreadable == 1 ? " report was" : " reports were");
		sb_str(&sb, " incomplete (a process still exiting?) and not counted\n");
	}
	sb_flush(&sb);
}
