/* report.c: see report.h.  The figures are gathered once into the plain
 * numbers of figs.h; the text is report_text.c's, the JSON written here from
 * the same description (figs.h), which the tool reads back. */
#include "report.h"
#include "carve.h"
#include "auto.h"
#include "defs.h"
#include "recycle.h"
#include "regions.h"
#include "report_text.h"
#include "sbuf.h"
#include "stats.h"
#include "worker.h"
#include <errno.h>
#include <string.h>

/* What the report prints: the globals plus every live thread's block, and
 * the formatting buffer.  Static, not on the stack: exit may run on a small
 * thread stack (only one thread writes the report). */
static struct stats snap;
static struct figs_proc figs;
static const char *rule_names[POL_MAX_RULES];
static struct figs_auto autos[FIGS_MAX_AUTO];
static char buf[4 << 10];

/* Is entry e counted?  The malloc family only from stats_malloc_from. */
static int counted(int e)
{
	return e < E_malloc || e > E_pvalloc || stats_malloc_from != UINT64_MAX;
}

/* What report_write prints: the counters, and what is worked out at exit
 * (what is still queued, what the caches hold, the skips' total). */
static void gather(const struct proc_info *pi, const struct policy *pol, int may_wait)
{
	struct faults now;
	uint64_t total;
	int i, k;
	stats_snapshot(&snap, may_wait);
	os_faults_self(&now);
	memset(&figs, 0, sizeof figs);
	figs.program = pi->program;
	figs.exe = pi->exe;
	figs.policy = pi->policy_path;
	figs.pid = (uint64_t)pi->pid;
	figs.ppid = (uint64_t)pi->ppid;
	figs.wall_ns = os_now_ns() - pi->t0;
	figs.minor = now.minor - pi->f0.minor;
	figs.major = now.major - pi->f0.major;
	figs.at_start = pi->f0.minor + pi->f0.major;
	figs.in_prefault = snap.pf_minor + snap.pf_major;
	total = figs.minor + figs.major;
	figs.in_program = total > figs.in_prefault ? total - figs.in_prefault : 0;
	/* (a limit never needed is never worked out: a dozen file reads) */
	figs.budget_limit = budget_known() ? budget_limit() : FIGS_LIMIT_UNKNOWN;
	figs.budget_used = budget_used();
	figs.budget_peak = budget_peak();
	figs.malloc_from = stats_malloc_from == UINT64_MAX ? FIGS_NOT_COUNTED : stats_malloc_from;
	figs.nrules = pol ? pol->nrules : 0;
	for (i = 0; i < figs.nrules; i++) {
		struct figs_rule *r = &snap.rules[i];
		rule_names[i] = pol->rules[i].name;
		r->left_bytes = worker_left_bytes(i, may_wait);
		r->cache_bytes = recycle_kept_bytes(i);
	}
	carve_report(snap.rules); /* (smaps, read now: at exit only) */
	figs.rule_name = rule_names;
	figs.rules = snap.rules;
	for (i = 0; i < figs.nrules + 2; i++) {
		struct figs_rule *r = i < figs.nrules ? &snap.rules[i] : &snap.unmatched[i - figs.nrules];
		r->skipped = r->skip_budget + r->skip_failed + r->skip_table + r->skip_queue;
	}
	figs.unmatched[0] = snap.unmatched[0];
	figs.unmatched[1] = snap.unmatched[1];
	for (i = 0; i < N_COUNT; i++)
		if (snap.notes & (1ull << i))
			figs.note[figs.nnotes++] = note_texts[i];
	auto_figs(&figs, autos, FIGS_MAX_AUTO);
	/* Last: all but the report's own writes are in the ledger. */
	figs.has_ledger = 1;
	figs.nsc = SC_COUNT;
	for (k = 0; k < SC_COUNT; k++) {
		figs.sc_name[k] = sc_names[k];
		figs.sc[k] = sc_count((enum sc)k);
		figs.sc_total += figs.sc[k];
	}
}

/* ---- JSON ---- */

static void json_kv(struct sbuf *sb, const char *k, uint64_t v, int comma)
{
	if (comma)
		sb_chr(sb, ',');
	sb_chr(sb, '"');
	sb_str(sb, k);
	sb_str(sb, "\":");
	sb_u64(sb, v);
}

static void json_sizes(struct sbuf *sb, const struct hist *h)
{
	int k, first = 1;
	sb_str(sb, "\"sizes\":[");
	for (k = 0; k < SIZE_CLASSES; k++) {
		uint64_t m = st_get(&h->maps[k]);
		if (!m)
			continue;
		sb_str(sb, first ? "{\"size\":" : ",{\"size\":");
		sb_u64(sb, 1ull << k);
		sb_str(sb, ",\"maps\":");
		sb_u64(sb, m);
		sb_str(sb, ",\"bytes\":");
		sb_u64(sb, st_get(&h->bytes[k]));
		sb_chr(sb, '}');
		first = 0;
	}
	sb_chr(sb, ']');
}

/* A rule's figures, or (is_rule 0) the unmatched requests'. */
static void json_rule(struct sbuf *sb, const char *name, const struct figs_rule *r, int is_rule)
{
	struct sb_jw w = { sb, NULL, 0, 0 };
	sb_str(sb, "{\"name\":");
	sb_json_str(sb, name);
#define PF_JSON_FIG(field, path, kind, scope)                                                \
	if ((scope) == FS_ALL || is_rule) {                                                  \
		sb_jw_key(&w, path);                                                         \
		if ((kind) == FK_NS)                                                         \
			sb_secs(sb, r->field);                                               \
		else                                                                         \
			sb_u64(sb, r->field);                                                \
	}
	PF_RULE_FIGS(PF_JSON_FIG)
#undef PF_JSON_FIG
	sb_jw_close(&w);
	sb_chr(sb, ',');
	json_sizes(sb, &r->sizes);
	sb_chr(sb, '}');
}

/* The learner's part: "auto":{"budget":{...},"sites_seen":N,"sites":[...]}. */
static void json_auto(struct sbuf *sb, const struct figs_proc *p)
{
	struct sb_jw w = { sb, NULL, 0, 1 };
	int i;
	sb_str(sb, ",\"auto\":{");
#define PF_JSON_AUTO_PROC(field, path, kind)                                                 \
	sb_jw_key(&w, path);                                                                    \
	sb_u64(sb, p->field);
	PF_AUTO_PROC_FIGS(PF_JSON_AUTO_PROC)
#undef PF_JSON_AUTO_PROC
	sb_jw_close(&w);
	sb_str(sb, ",\"sites\":[");
	for (i = 0; i < p->nauto; i++) {
		const struct figs_auto *a = &p->autos[i];
		struct sb_jw v = { sb, NULL, 0, 0 };
		sb_str(sb, i ? ",{\"caller\":" : "{\"caller\":");
		sb_json_str(sb, a->object);
#define PF_JSON_AUTO(field, path, kind)                                                      \
	sb_jw_key(&v, path);                                                                    \
	if ((kind) == FK_NS)                                                                 \
		sb_secs(sb, a->field);                                                       \
	else                                                                                 \
		sb_u64(sb, a->field);
		PF_AUTO_FIGS(PF_JSON_AUTO)
#undef PF_JSON_AUTO
		sb_jw_close(&v);
		sb_chr(sb, '}');
	}
	sb_str(sb, "]}");
}

static void write_json(struct sbuf *sb, const struct figs_proc *p)
{
	int i;
	sb_str(sb, "{\"prefault\":\"" PF_VERSION "\",\"program\":");
	sb_json_str(sb, p->program);
	sb_str(sb, ",\"exe\":");
	sb_json_str(sb, p->exe);
	json_kv(sb, "pid", p->pid, 1);
	json_kv(sb, "ppid", p->ppid, 1);
	sb_str(sb, ",\"policy\":");
	if (p->policy)
		sb_json_str(sb, p->policy);
	else
		sb_str(sb, "null");
	sb_str(sb, ",\"wall_s\":");
	sb_secs(sb, p->wall_ns);
	sb_str(sb, ",\"faults\":{");
	json_kv(sb, "minor", p->minor, 0);
	json_kv(sb, "major", p->major, 1);
	json_kv(sb, "in_prefault", p->in_prefault, 1);
	json_kv(sb, "in_program", p->in_program, 1);
	json_kv(sb, "before_start", p->at_start, 1);
	sb_str(sb, "},\"shim\":{\"syscalls\":{");
	json_kv(sb, "total", p->sc_total, 0);
	for (i = 0; i < p->nsc; i++)
		json_kv(sb, p->sc_name[i], p->sc[i], 1);
	sb_str(sb, "}},\"budget\":{");
	if (p->budget_limit != FIGS_LIMIT_UNKNOWN) /* (else null: nothing needed it) */
		json_kv(sb, "limit", p->budget_limit, 0);
	else
		sb_str(sb, "\"limit\":null");
	json_kv(sb, "used", p->budget_used, 1);
	json_kv(sb, "peak", p->budget_peak, 1);
	sb_str(sb, "},\"calls\":{");
	for (i = 0; i < E_COUNT; i++) {
		if (counted(i)) {
			json_kv(sb, entry_names[i], st_get(&snap.calls[i]), i > 0);
		} else { /* not counted: null, never a zero that looks measured */
			sb_str(sb, i ? ",\"" : "\"");
			sb_str(sb, entry_names[i]);
			sb_str(sb, "\":null");
		}
	}
	sb_str(sb, "},\"malloc_counted_from\":");
	if (p->malloc_from == FIGS_NOT_COUNTED)
		sb_str(sb, "null");
	else
		sb_u64(sb, p->malloc_from);
	sb_str(sb, ",\"rules\":[");
	for (i = 0; i < p->nrules; i++) {
		if (i)
			sb_chr(sb, ',');
		json_rule(sb, p->rule_name[i], &p->rules[i], 1);
	}
	sb_str(sb, "],\"unmatched\":{\"mmap\":");
	json_rule(sb, "mmap", &p->unmatched[0], 0);
	sb_str(sb, ",\"malloc\":");
	if (p->malloc_from == FIGS_NOT_COUNTED)
		sb_str(sb, "null");
	else
		json_rule(sb, "malloc", &p->unmatched[1], 0);
	sb_str(sb, "},\"notes\":[");
	for (i = 0; i < p->nnotes; i++) {
		if (i)
			sb_chr(sb, ',');
		sb_json_str(sb, p->note[i]);
	}
	sb_chr(sb, ']');
	if (p->auto_on)
		json_auto(sb, p);
	sb_str(sb, "}\n");
}

long report_render(char *out, size_t cap, int json, const struct proc_info *pi, const struct policy *pol,
                   int may_wait)
{
	struct sbuf sb;
	gather(pi, pol, may_wait);
	sb_init(&sb, out, cap, -1);
	if (json)
		write_json(&sb, &figs);
	else
		rt_process(&sb, &figs);
	sb_cstr(&sb);
	return sb.trunc ? -1 : (long)strlen(out);
}

int report_write(int fd, int json, const struct proc_info *pi, const struct policy *pol, int may_wait)
{
	struct sbuf sb;
	gather(pi, pol, may_wait);
	sb_init(&sb, buf, sizeof buf, -1);
	sb_bind(&sb, fd, &glue_io);
	if (json)
		write_json(&sb, &figs);
	else
		rt_process(&sb, &figs);
	sb_flush(&sb);
	if (sb.failed) {
		errno = sb.err;
		return -1;
	}
	return 0;
}
