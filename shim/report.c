/* report.c: see report.h. */
#include "report.h"
#include "defs.h"
#include "recycle.h"
#include "regions.h"
#include "sbuf.h"
#include "stats.h"
#include "worker.h"
#include <errno.h>
#include <string.h>

/* What the report prints: the globals plus every live thread's block, and
 * the formatting buffer.  Static, not on the stack: exit may run on a small
 * thread stack (only one thread writes the report). */
static struct stats snap;
static uint64_t sc[SC_COUNT]; /* the ledger, read once per report */
static int waits;              /* may wait for a lock (report.h) */
static char buf[4 << 10];

static void read_ledger(void)
{
	int k;
	for (k = 0; k < SC_COUNT; k++)
		sc[k] = sc_count((enum sc)k);
}

static uint64_t ledger_total(void)
{
	uint64_t n = 0;
	int k;
	for (k = 0; k < SC_COUNT; k++)
		n += sc[k];
	return n;
}

/* Is entry e counted?  The malloc family only from stats_malloc_from. */
static int counted(int e)
{
	return e < E_malloc || e > E_pvalloc || stats_malloc_from != UINT64_MAX;
}

static uint64_t sum_skipped(const struct rule_stats *rs)
{
	uint64_t n = 0;
	int k;
	for (k = 0; k < SK_COUNT; k++)
		n += st_get(&rs->skipped[k]);
	return n;
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

static void json_kv(struct sbuf *sb, const char *k, uint64_t v, int comma)
{
	if (comma)
		sb_chr(sb, ',');
	sb_chr(sb, '"');
	sb_str(sb, k);
	sb_str(sb, "\":");
	sb_u64(sb, v);
}

static void json_rule(struct sbuf *sb, const char *name, const struct rule_stats *rs, int rule)
{
	int k;
	sb_str(sb, "{\"name\":");
	sb_json_str(sb, name);
	json_kv(sb, "matched", st_get(&rs->matched), 1);
	json_kv(sb, "bytes", st_get(&rs->bytes), 1);
	json_kv(sb, "prefaulted_bytes", st_get(&rs->prefaulted_bytes), 1);
	sb_str(sb, ",\"seconds\":");
	sb_secs(sb, st_get(&rs->ns));
	json_kv(sb, "faults", st_get(&rs->faults), 1);
	json_kv(sb, "skipped", sum_skipped(rs), 1);
	sb_str(sb, ",\"skipped_by\":{");
	for (k = 0; k < SK_COUNT; k++)
		json_kv(sb, skip_names[k], st_get(&rs->skipped[k]), k > 0);
	sb_str(sb, "}");
	if (rule >= 0) {
		sb_str(sb, ",\"background\":{");
		json_kv(sb, "queued_bytes", rs->queued_bytes, 0);
		json_kv(sb, "populated_bytes", rs->background_bytes, 1);
		json_kv(sb, "program_first_bytes", rs->program_first_bytes, 1);
		json_kv(sb, "cancelled_bytes", rs->cancelled_bytes, 1);
		json_kv(sb, "left_bytes", worker_left_bytes(rule, waits), 1);
		json_kv(sb, "leaps", rs->leaps, 1);
		json_kv(sb, "twice_faults_max", rs->twice_max, 1);
		sb_chr(sb, '}');
		json_kv(sb, "huge_bytes", rs->huge_bytes, 1);
		json_kv(sb, "small_fallbacks", rs->small_fallbacks, 1);
		sb_str(sb, ",\"recycle\":{");
		json_kv(sb, "kept", rs->recycle_kept, 0);
		json_kv(sb, "recycled", rs->recycle_reused, 1);
		json_kv(sb, "bytes_reused", rs->recycle_reused_bytes, 1);
		json_kv(sb, "zeroed_bytes", rs->recycle_zeroed_bytes, 1);
		sb_str(sb, ",\"zeroing_s\":");
		sb_secs(sb, rs->recycle_zero_ns);
		json_kv(sb, "cache_peak_bytes", rs->recycle_peak_bytes, 1);
		json_kv(sb, "cache_bytes", recycle_kept_bytes(rule), 1);
		json_kv(sb, "dropped", rs->recycle_dropped, 1);
		sb_chr(sb, '}');
	}
	sb_chr(sb, ',');
	json_sizes(sb, &rs->sizes);
	sb_chr(sb, '}');
}

static void write_json(struct sbuf *sb, const struct proc_info *pi, const struct policy *pol,
                       const struct faults *f, uint64_t in_pf, uint64_t wall)
{
	int i, first;
	uint64_t total = f->minor + f->major;
	sb_str(sb, "{\"prefault\":\"" PF_VERSION "\",\"program\":");
	sb_json_str(sb, pi->program);
	sb_str(sb, ",\"exe\":");
	sb_json_str(sb, pi->exe);
	json_kv(sb, "pid", (uint64_t)pi->pid, 1);
	json_kv(sb, "ppid", (uint64_t)pi->ppid, 1);
	sb_str(sb, ",\"policy\":");
	if (pi->policy_path)
		sb_json_str(sb, pi->policy_path);
	else
		sb_str(sb, "null");
	sb_str(sb, ",\"wall_s\":");
	sb_secs(sb, wall);
	sb_str(sb, ",\"faults\":{");
	json_kv(sb, "minor", f->minor, 0);
	json_kv(sb, "major", f->major, 1);
	json_kv(sb, "in_prefault", in_pf, 1);
	json_kv(sb, "in_program", total > in_pf ? total - in_pf : 0, 1);
	sb_str(sb, "},\"shim\":{\"syscalls\":{");
	json_kv(sb, "total", ledger_total(), 0);
	for (i = 0; i < SC_COUNT; i++)
		json_kv(sb, sc_names[i], sc[i], 1);
	sb_str(sb, "}},\"budget\":{");
	if (budget_known()) /* (else null: working it out reads a dozen files) */
		json_kv(sb, "limit", budget_limit(), 0);
	else
		sb_str(sb, "\"limit\":null");
	json_kv(sb, "used", budget_used(), 1);
	json_kv(sb, "peak", budget_peak(), 1);
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
	if (stats_malloc_from == UINT64_MAX)
		sb_str(sb, "null");
	else
		sb_u64(sb, stats_malloc_from);
	sb_str(sb, ",\"rules\":[");
	for (i = 0; pol && i < pol->nrules; i++) {
		if (i)
			sb_chr(sb, ',');
		json_rule(sb, pol->rules[i].name, &snap.rules[i], i);
	}
	sb_str(sb, "],\"unmatched\":{\"mmap\":");
	json_rule(sb, "mmap", &snap.unmatched[0], -1);
	sb_str(sb, ",\"malloc\":");
	if (stats_malloc_from == UINT64_MAX)
		sb_str(sb, "null");
	else
		json_rule(sb, "malloc", &snap.unmatched[1], -1);
	sb_str(sb, "},\"notes\":[");
	for (i = 0, first = 1; i < N_COUNT; i++) {
		if (!(snap.notes & (1ull << i)))
			continue;
		if (!first)
			sb_chr(sb, ',');
		sb_json_str(sb, note_texts[i]);
		first = 0;
	}
	sb_str(sb, "]}\n");
}

static void text_rule(struct sbuf *sb, const char *name, const struct rule_stats *rs, int rule)
{
	uint64_t sk = sum_skipped(rs), left = worker_left_bytes(rule, waits);
	sb_str(sb, "prefault:   rule ");
	sb_text(sb, name);
	sb_str(sb, ": ");
	sb_u64(sb, st_get(&rs->matched));
	sb_str(sb, " matched, ");
	sb_size_human(sb, st_get(&rs->bytes));
	if (st_get(&rs->prefaulted_bytes) || st_get(&rs->ns)) {
		sb_str(sb, "; prefaulted ");
		sb_size_human(sb, st_get(&rs->prefaulted_bytes));
		/* (a background rule: the workers' time is not the program's) */
		sb_str(sb, rs->queued_bytes ? ", " : " in ");
		sb_fixed(sb, st_get(&rs->ns) / 1000000, 3);
		sb_str(sb, rs->queued_bytes ? " s on the program's threads (" : " s (");
		sb_u64(sb, st_get(&rs->faults));
		sb_str(sb, " faults)");
	}
	if (rs->queued_bytes) {
		sb_str(sb, "; background ");
		sb_size_human(sb, rs->background_bytes);
		sb_str(sb, " of ");
		sb_size_human(sb, rs->queued_bytes);
		sb_str(sb, " (program first to ");
		sb_size_human(sb, rs->program_first_bytes);
		if (rs->leaps) {
			sb_str(sb, ", leaps ");
			sb_u64(sb, rs->leaps);
		}
		sb_str(sb, ", faults taken twice at most ");
		sb_u64(sb, rs->twice_max);
		if (rs->cancelled_bytes) {
			sb_str(sb, ", cancelled ");
			sb_size_human(sb, rs->cancelled_bytes);
		}
		if (left) {
			sb_str(sb, ", left ");
			sb_size_human(sb, left);
		}
		sb_chr(sb, ')');
	}
	if (rs->recycle_kept || rs->recycle_reused) {
		sb_str(sb, "; recycled ");
		sb_u64(sb, rs->recycle_reused);
		sb_str(sb, " (");
		sb_size_human(sb, rs->recycle_reused_bytes);
		sb_str(sb, ", zeroing ");
		sb_fixed(sb, rs->recycle_zero_ns / 1000000, 3);
		sb_str(sb, " s, cache peak ");
		sb_size_human(sb, rs->recycle_peak_bytes);
		sb_chr(sb, ')');
	}
	if (rs->huge_bytes) {
		sb_str(sb, "; huge pages ");
		sb_size_human(sb, rs->huge_bytes);
	}
	if (rs->small_fallbacks) {
		sb_str(sb, "; small pages instead of huge ");
		sb_u64(sb, rs->small_fallbacks);
		sb_str(sb, " times");
	}
	if (sk) {
		int k, first = 1;
		sb_str(sb, "; skipped ");
		sb_u64(sb, sk);
		sb_str(sb, " (");
		for (k = 0; k < SK_COUNT; k++) {
			if (!st_get(&rs->skipped[k]))
				continue;
			if (!first)
				sb_str(sb, ", ");
			sb_str(sb, skip_names[k]);
			sb_chr(sb, ' ');
			sb_u64(sb, st_get(&rs->skipped[k]));
			first = 0;
		}
		sb_chr(sb, ')');
	}
	sb_chr(sb, '\n');
}

/* "prefault work: N system calls (the three commonest kinds)". */
static void text_ledger(struct sbuf *sb)
{
	int shown[3] = { -1, -1, -1 }, i, k;
	sb_str(sb, "prefault:   prefault work: ");
	sb_u64(sb, ledger_total());
	sb_str(sb, " system calls");
	for (i = 0; i < 3; i++)
		for (k = 0; k < SC_COUNT; k++)
			if (sc[k] && (i == 0 || k != shown[0]) && (i < 2 || k != shown[1]) &&
			    (shown[i] < 0 || sc[k] > sc[shown[i]]))
				shown[i] = k;
	for (i = 0; i < 3 && shown[i] >= 0; i++) {
		sb_str(sb, i ? ", " : " (");
		sb_str(sb, sc_names[shown[i]]);
		sb_chr(sb, ' ');
		sb_u64(sb, sc[shown[i]]);
	}
	sb_str(sb, i ? ")\n" : "\n");
}

static void write_text(struct sbuf *sb, const struct proc_info *pi, const struct policy *pol,
                       const struct faults *f, uint64_t in_pf, uint64_t wall)
{
	int i;
	uint64_t total = f->minor + f->major;
	sb_str(sb, "prefault: ");
	sb_text(sb, pi->program);
	sb_chr(sb, '[');
	sb_u64(sb, (uint64_t)pi->pid);
	sb_str(sb, "] ");
	sb_fixed(sb, wall / 1000000, 3);
	sb_str(sb, " s, ");
	sb_u64(sb, total);
	sb_str(sb, " faults (");
	sb_u64(sb, f->major);
	sb_str(sb, " major): ");
	sb_u64(sb, total > in_pf ? total - in_pf : 0);
	sb_str(sb, " in the program, ");
	sb_u64(sb, in_pf);
	sb_str(sb, " in prefault work\n");
	if (pi->policy_path) {
		sb_str(sb, "prefault:   policy ");
		sb_text(sb, pi->policy_path);
		sb_str(sb, "; budget peak ");
		sb_size_human(sb, budget_peak());
		if (!budget_known())
			sb_str(sb, " (no limit worked out: nothing needed one)");
		else if (budget_limit() == UINT64_MAX)
			sb_str(sb, " of unlimited");
		else {
			sb_str(sb, " of ");
			sb_size_human(sb, budget_limit());
		}
		sb_chr(sb, '\n');
	}
	text_ledger(sb);
	for (i = 0; pol && i < pol->nrules; i++)
		text_rule(sb, pol->rules[i].name, &snap.rules[i], i);
	sb_str(sb, "prefault:   unmatched: ");
	sb_u64(sb, st_get(&snap.unmatched[0].matched));
	sb_str(sb, " mmap (");
	sb_size_human(sb, st_get(&snap.unmatched[0].bytes));
	if (stats_malloc_from == UINT64_MAX) {
		sb_str(sb, "); malloc family not counted (no rule or profile watches it)\n");
	} else {
		sb_str(sb, "), ");
		sb_u64(sb, st_get(&snap.unmatched[1].matched));
		sb_str(sb, " malloc blocks of ");
		sb_size_human(sb, stats_malloc_from);
		sb_str(sb, " or more (");
		sb_size_human(sb, st_get(&snap.unmatched[1].bytes));
		sb_str(sb, "; smaller ones not counted)\n");
	}
	for (i = 0; i < N_COUNT; i++) {
		if (!(snap.notes & (1ull << i)))
			continue;
		sb_str(sb, "prefault:   note: ");
		sb_str(sb, note_texts[i]);
		sb_chr(sb, '\n');
	}
}

int report_write(int fd, int json, const struct proc_info *pi, const struct policy *pol, int may_wait)
{
	struct sbuf sb;
	struct faults now, f;
	uint64_t in_pf, wall = os_now_ns() - pi->t0;
	waits = may_wait;
	stats_snapshot(&snap, may_wait);
	in_pf = snap.pf_minor + snap.pf_major;
	os_faults_self(&now);
	read_ledger(); /* last: all but the report's own writes are in it */
	f.minor = now.minor - pi->f0.minor;
	f.major = now.major - pi->f0.major;
	sb_init(&sb, buf, sizeof buf, fd);
	if (json)
		write_json(&sb, pi, pol, &f, in_pf, wall);
	else
		write_text(&sb, pi, pol, &f, in_pf, wall);
	sb_flush(&sb);
	if (sb.failed) {
		errno = sb.err;
		return -1;
	}
	return 0;
}
