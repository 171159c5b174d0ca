/* reports.c: see reports.h.  The text follows shim/report.c (write_text and
 * text_rule) line for line, so a report printed by the tool reads as one
 * the shim wrote itself. */
#include "reports.h"
#include "cli.h"
#include "policy.h"
#include "report_text.h"
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

/* ---- a report's figures, read back through figs.h's description ---- */

static uint64_t num(const struct json *j, const char *path) { return json_u64(json_path(j, path), 0); }

/* A figure of the given kind: seconds come back as nanoseconds. */
static uint64_t fig(const struct json *j, const char *path, int kind)
{
	const struct json *v = json_path(j, path);
	return kind == FK_NS ? json_fixed(v, 9, 0) : json_u64(v, 0);
}

static void rule_read(struct figs_rule *r, const struct json *j)
{
	const struct json *s;
	memset(r, 0, sizeof *r);
	if (!j || j->type != JSON_OBJECT)
		return;
#define PF_READ_FIG(field, path, kind, scope) r->field = fig(j, path, kind);
	PF_RULE_FIGS(PF_READ_FIG)
#undef PF_READ_FIG
	for (s = json_get(j, "sizes") ? json_get(j, "sizes")->child : NULL; s; s = s->next) {
		uint64_t size = num(s, "size");
		int k = size ? 63 - __builtin_clzll(size) : 0;
		r->sizes.maps[k] += num(s, "maps");
		r->sizes.bytes[k] += num(s, "bytes");
	}
}

/* The learner's part (PREFAULT_POLICY=auto), if the report has one; its
 * sites go into a static array (one report's at a time). */
static void auto_read(struct figs_proc *p, const struct json *a)
{
	static struct figs_auto sites[FIGS_MAX_AUTO];
	const struct json *s;
	if (!a || a->type != JSON_OBJECT)
		return;
	p->auto_on = 1;
#define PF_READ_AUTO_PROC(field, path, kind) p->field = fig(a, path, kind);
	PF_AUTO_PROC_FIGS(PF_READ_AUTO_PROC)
#undef PF_READ_AUTO_PROC
	for (s = json_get(a, "sites") ? json_get(a, "sites")->child : NULL; s && p->nauto < FIGS_MAX_AUTO; s = s->next) {
		struct figs_auto *f = &sites[p->nauto++];
		f->object = json_str(json_get(s, "caller"), "?");
#define PF_READ_AUTO(field, path, kind) f->field = fig(s, path, kind);
		PF_AUTO_FIGS(PF_READ_AUTO)
#undef PF_READ_AUTO
	}
	p->autos = sites;
}

/* One report, as the shim had it: p's rules and names point into the arrays
 * given (POL_MAX_RULES each), its strings into the document. */
static void proc_read(struct figs_proc *p, struct figs_rule *rules, const char **names, const struct json *d)
{
	const struct json *m;
	memset(p, 0, sizeof *p);
	p->program = json_str(json_get(d, "program"), "?");
	p->exe = json_str(json_get(d, "exe"), "");
	p->policy = json_str(json_get(d, "policy"), NULL);
#define PF_READ_PROC(field, path, kind) p->field = fig(d, path, kind);
	PF_PROC_FIGS(PF_READ_PROC)
#undef PF_READ_PROC
	m = json_path(d, "budget.limit");
	p->budget_limit = !m || m->type == JSON_NULL ? FIGS_LIMIT_UNKNOWN : json_u64(m, 0);
	/* malloc_counted_from: absent (an older shim counted every call), null
	 * (not counted), or the least block counted */
	m = json_get(d, "malloc_counted_from");
	p->malloc_from = !m ? 0 : m->type != JSON_NUMBER ? FIGS_NOT_COUNTED : json_u64(m, 0);
	m = json_path(d, "shim.syscalls");
	if (m && m->type == JSON_OBJECT) {
		p->has_ledger = 1;
		for (m = m->child; m; m = m->next) {
			if (!strcmp(m->key, "total"))
				p->sc_total = json_u64(m, 0);
			else if (p->nsc < FIGS_MAX_KINDS) {
				p->sc_name[p->nsc] = m->key;
				p->sc[p->nsc++] = json_u64(m, 0);
			}
		}
	}
	for (m = json_get(d, "rules") ? json_get(d, "rules")->child : NULL; m && p->nrules < POL_MAX_RULES; m = m->next) {
		names[p->nrules] = json_str(json_get(m, "name"), "?");
		rule_read(&rules[p->nrules++], m);
	}
	p->rule_name = names;
	p->rules = rules;
	rule_read(&p->unmatched[0], json_path(d, "unmatched.mmap"));
	rule_read(&p->unmatched[1], json_path(d, "unmatched.malloc"));
	for (m = json_get(d, "notes") ? json_get(d, "notes")->child : NULL; m && p->nnotes < FIGS_MAX_NOTES; m = m->next)
		if (json_str(m, NULL))
			p->note[p->nnotes++] = json_str(m, NULL);
	auto_read(p, json_get(d, "auto"));
}

void report_figs(const struct json *doc, struct figs_proc *p)
{
	static struct figs_rule rules[POL_MAX_RULES];
	static const char *names[POL_MAX_RULES];
	proc_read(p, rules, names, doc);
}

/* The shim's own text, from its JSON. */
static void print_one(struct sbuf *sb, const struct json *d)
{
	static struct figs_rule rules[POL_MAX_RULES];
	static const char *names[POL_MAX_RULES];
	struct figs_proc p;
	proc_read(&p, rules, names, d);
	rt_process(sb, &p);
}

static uint64_t total_faults(const struct json *d) { return num(d, "faults.minor") + num(d, "faults.major"); }

static int cmp_faults(const void *a, const void *b)
{
	uint64_t x = total_faults(*(struct json *const *)a), y = total_faults(*(struct json *const *)b);
	return x < y ? 1 : x > y ? -1 : 0;
}

#define TOP 5

/* A tree's figures: every process's added into t (rules by name, the
 * ledger by kind, notes once each).  t's arrays are malloc'd (free_tree). */
struct tree {
	struct figs_proc t;
	struct figs_rule *rules;
	const char **names;
	int others; /* processes under another policy than the first */
};

static void tree_add(struct tree *tr, const struct figs_proc *p)
{
	struct figs_proc *t = &tr->t;
	int i, k;
	t->minor += p->minor;
	t->major += p->major;
	t->in_program += p->in_program;
	t->in_prefault += p->in_prefault;
	if (p->policy) {
		if (!t->policy)
			t->policy = p->policy;
		else if (strcmp(t->policy, p->policy))
			tr->others++;
		if (p->budget_peak > t->budget_peak)
			t->budget_peak = p->budget_peak;
		/* the largest limit any process worked out */
		if (p->budget_limit != FIGS_LIMIT_UNKNOWN &&
		    (t->budget_limit == FIGS_LIMIT_UNKNOWN || p->budget_limit > t->budget_limit))
			t->budget_limit = p->budget_limit;
	}
	/* The malloc family counted anywhere: from the least threshold (0:
	 * every call, an older shim). */
	if (p->malloc_from != FIGS_NOT_COUNTED && (t->malloc_from == FIGS_NOT_COUNTED || p->malloc_from < t->malloc_from))
		t->malloc_from = p->malloc_from;
	if (p->has_ledger) {
		t->has_ledger = 1;
		t->sc_total += p->sc_total;
		for (i = 0; i < p->nsc; i++) {
			for (k = 0; k < t->nsc && strcmp(t->sc_name[k], p->sc_name[i]); k++)
				;
			if (k == t->nsc) {
				if (k == FIGS_MAX_KINDS)
					continue;
				t->sc_name[t->nsc++] = p->sc_name[i];
			}
			t->sc[k] += p->sc[i];
		}
	}
	for (i = 0; i < p->nrules; i++) {
		for (k = 0; k < t->nrules && strcmp(tr->names[k], p->rule_name[i]); k++)
			;
		if (k == t->nrules) {
			struct figs_rule *r = realloc(tr->rules, (size_t)(k + 1) * sizeof *r);
			const char **n = r ? realloc(tr->names, (size_t)(k + 1) * sizeof *n) : NULL;
			if (r)
				tr->rules = r;
			if (!n)
				continue;
			tr->names = n;
			memset(&tr->rules[k], 0, sizeof tr->rules[k]);
			tr->names[k] = p->rule_name[i];
			t->nrules++;
		}
		figs_rule_add(&tr->rules[k], &p->rules[i]);
	}
	figs_rule_add(&t->unmatched[0], &p->unmatched[0]);
	figs_rule_add(&t->unmatched[1], &p->unmatched[1]);
	for (i = 0; i < p->nnotes; i++) {
		for (k = 0; k < t->nnotes && strcmp(t->note[k], p->note[i]); k++)
			;
		if (k == t->nnotes && k < FIGS_MAX_NOTES)
			t->note[t->nnotes++] = p->note[i];
	}
	t->rules = tr->rules;
	t->rule_name = tr->names;
}

/* A process tree: totals, the heaviest processes, rules summed by name. */
static void print_tree(struct sbuf *sb, const struct report_set *rs, pid_t root, const char *root_name, double wall_s)
{
	static struct figs_rule rules[POL_MAX_RULES];
	static const char *names[POL_MAX_RULES];
	struct figs_proc p;
	struct tree tr;
	const char *name = root_name;
	struct json **heavy = malloc((size_t)rs->n * sizeof *heavy);
	int i;
	memset(&tr, 0, sizeof tr);
	tr.t.budget_limit = FIGS_LIMIT_UNKNOWN;
	tr.t.malloc_from = FIGS_NOT_COUNTED;
	for (i = 0; i < rs->n; i++) {
		proc_read(&p, rules, names, rs->docs[i]);
		if ((pid_t)p.pid == root)
			name = json_str(json_get(rs->docs[i], "program"), name);
		tree_add(&tr, &p);
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
	sb_u64(sb, tr.t.minor + tr.t.major);
	sb_str(sb, " faults (");
	sb_u64(sb, tr.t.major);
	sb_str(sb, " major): ");
	sb_u64(sb, tr.t.in_program);
	sb_str(sb, " in the program, ");
	sb_u64(sb, tr.t.in_prefault);
	sb_str(sb, " in prefault work\n");
	if (tr.t.policy)
		rt_budget(sb, tr.t.policy, tr.t.budget_peak, tr.t.budget_limit,
		          tr.others ? " (the most in one process; other policies too)" : " (the most in one process)");
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
	rt_ledger(sb, &tr.t);
	for (i = 0; i < tr.t.nrules; i++)
		rt_rule(sb, tr.names[i], " (all processes)", &tr.rules[i]);
	rt_unmatched(sb, &tr.t);
	for (i = 0; i < rs->n; i++) { /* the learner's sites are each process's own */
		proc_read(&p, rules, names, rs->docs[i]);
		if (!p.auto_on || !p.nauto)
			continue;
		sb_str(sb, "prefault:   in ");
		sb_text(sb, p.program);
		sb_chr(sb, '[');
		sb_u64(sb, p.pid);
		sb_str(sb, "]:\n");
		rt_auto(sb, &p);
	}
	for (i = 0; i < tr.t.nnotes; i++)
		rt_note(sb, tr.t.note[i]);
	free(tr.rules);
	free(tr.names);
}

int reports_has_pid(const struct report_set *rs, pid_t pid)
{
	int i;
	for (i = 0; i < rs->n; i++)
		if ((pid_t)num(rs->docs[i], "pid") == pid)
			return 1;
	return 0;
}

/* Faults the tree took that no report holds (each report counts those of
 * its process before the shim started, too): said when there are more of
 * them than the few each process takes after writing its report, on its way
 * out (a few each; 200 and a hundredth of the tree's at least). */
#define UNREPORTED_MIN 200
static void unreported_line(struct sbuf *sb, const struct report_set *rs, uint64_t tree)
{
	uint64_t sum = 0, left;
	int i;
	/* (each report's own faults, and those its process took before the shim
	 * started in it: exec, the loader) */
	for (i = 0; i < rs->n; i++)
		sum += total_faults(rs->docs[i]) + num(rs->docs[i], "faults.before_start");
	left = tree > sum ? tree - sum : 0;
	if (left < UNREPORTED_MIN || left * 100 < tree)
		return;
	sb_str(sb, "prefault:   not in any report: ");
	sb_u64(sb, left);
	sb_str(sb, " of the tree's ");
	sb_u64(sb, tree);
	sb_str(sb, " faults (from wait4): processes that wrote no report (killed before it, or without the shim)\n");
}

void reports_print(int fd, const struct report_set *rs, pid_t root, const char *root_name, double wall_s,
                   uint64_t tree_faults)
{
	char buf[4096];
	struct sbuf sb;
	sb_init(&sb, buf, sizeof buf, -1);
	sb_bind(&sb, fd, &libc_io);
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
