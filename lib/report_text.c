/* report_text.c: see report_text.h.  The one place the report's text is
 * made: the tool's copy of it, line for line, is gone. */
#include "report_text.h"
#include "sbuf.h"
#include <string.h>

void figs_rule_add(struct figs_rule *a, const struct figs_rule *b)
{
	int k;
#define PF_ADD(field, path, kind, scope)                                                     \
	if ((kind) == FK_MAX)                                                                \
		a->field = b->field > a->field ? b->field : a->field;                        \
	else                                                                                 \
		a->field += b->field;
	PF_RULE_FIGS(PF_ADD)
#undef PF_ADD
	for (k = 0; k < SIZE_CLASSES; k++) {
		a->sizes.maps[k] += b->sizes.maps[k];
		a->sizes.bytes[k] += b->sizes.bytes[k];
	}
}

static void secs(struct sbuf *sb, uint64_t ns) { sb_fixed(sb, ns / 1000000, 3); }

void rt_budget(struct sbuf *sb, const char *policy, uint64_t peak, uint64_t limit, const char *suffix)
{
	sb_str(sb, "prefault:   policy ");
	sb_text(sb, policy);
	sb_str(sb, "; budget peak ");
	sb_size_human(sb, peak);
	if (limit == FIGS_LIMIT_UNKNOWN)
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

/* "prefault work: N system calls (the three commonest kinds)". */
void rt_ledger(struct sbuf *sb, const struct figs_proc *p)
{
	int shown[3] = { -1, -1, -1 }, i, k;
	if (!p->has_ledger)
		return;
	sb_str(sb, "prefault:   prefault work: ");
	sb_u64(sb, p->sc_total);
	sb_str(sb, " system calls");
	for (i = 0; i < 3; i++)
		for (k = 0; k < p->nsc; k++)
			if (p->sc[k] && (i == 0 || k != shown[0]) && (i < 2 || k != shown[1]) &&
			    (shown[i] < 0 || p->sc[k] > p->sc[shown[i]]))
				shown[i] = k;
	for (i = 0; i < 3 && shown[i] >= 0; i++) {
		sb_str(sb, i ? ", " : " (");
		sb_text(sb, p->sc_name[shown[i]]);
		sb_chr(sb, ' ');
		sb_u64(sb, p->sc[shown[i]]);
	}
	sb_str(sb, i ? ")\n" : "\n");
}

static void skips(struct sbuf *sb, const struct figs_rule *r)
{
	static const char *const names[] = { "budget", "failed", "table_full", "queue_full" };
	const uint64_t v[] = { r->skip_budget, r->skip_failed, r->skip_table, r->skip_queue };
	int k, first = 1;
	if (!r->skipped)
		return;
	sb_str(sb, "; skipped ");
	sb_u64(sb, r->skipped);
	sb_str(sb, " (");
	for (k = 0; k < 4; k++) {
		if (!v[k])
			continue;
		if (!first)
			sb_str(sb, ", ");
		sb_str(sb, names[k]);
		sb_chr(sb, ' ');
		sb_u64(sb, v[k]);
		first = 0;
	}
	sb_chr(sb, ')');
}

void rt_rule(struct sbuf *sb, const char *name, const char *suffix, const struct figs_rule *r)
{
	sb_str(sb, "prefault:   rule ");
	sb_text(sb, name);
	sb_str(sb, suffix);
	sb_str(sb, ": ");
	sb_u64(sb, r->matched);
	sb_str(sb, " matched, ");
	sb_size_human(sb, r->bytes);
	if (r->prefaulted_bytes || r->ns) {
		sb_str(sb, "; prefaulted ");
		sb_size_human(sb, r->prefaulted_bytes);
		/* (a background rule: the workers' time is not the program's) */
		sb_str(sb, r->queued_bytes ? ", " : " in ");
		secs(sb, r->ns);
		sb_str(sb, r->queued_bytes ? " s on the program's threads (" : " s (");
		sb_u64(sb, r->faults);
		sb_str(sb, " faults)");
	}
	if (r->queued_bytes) {
		sb_str(sb, "; background ");
		sb_size_human(sb, r->background_bytes);
		sb_str(sb, " of ");
		sb_size_human(sb, r->queued_bytes);
		sb_str(sb, " (program first to ");
		sb_size_human(sb, r->program_first_bytes);
		if (r->leaps) {
			sb_str(sb, ", leaps ");
			sb_u64(sb, r->leaps);
		}
		sb_str(sb, ", faults taken twice at most ");
		sb_u64(sb, r->twice_max);
		if (r->cancelled_bytes) {
			sb_str(sb, ", cancelled ");
			sb_size_human(sb, r->cancelled_bytes);
		}
		if (r->left_bytes) {
			sb_str(sb, ", left ");
			sb_size_human(sb, r->left_bytes);
		}
		sb_chr(sb, ')');
	}
	if (r->recycle_kept || r->recycle_reused) {
		sb_str(sb, "; recycled ");
		sb_u64(sb, r->recycle_reused);
		sb_str(sb, " (");
		sb_size_human(sb, r->recycle_reused_bytes);
		sb_str(sb, ", zeroing ");
		secs(sb, r->recycle_zero_ns);
		sb_str(sb, " s, cache peak ");
		sb_size_human(sb, r->recycle_peak_bytes);
		sb_chr(sb, ')');
	}
	if (r->carve_reserves || r->carve_uncarved) {
		sb_str(sb, "; carved ");
		sb_u64(sb, r->carve_fresh);
		sb_str(sb, " from ");
		sb_u64(sb, r->carve_reserves);
		sb_str(sb, r->carve_reserves == 1 ? " reserve (" : " reserves (");
		sb_size_human(sb, r->carve_reserved_bytes);
		sb_str(sb, "; at exit ");
		sb_size_human(sb, r->carve_resident_bytes);
		sb_str(sb, " resident, ");
		sb_size_human(sb, r->carve_huge_bytes);
		sb_str(sb, " in huge pages");
		if (r->carve_uncarved) {
			sb_str(sb, "; not carved ");
			sb_u64(sb, r->carve_uncarved);
		}
		sb_chr(sb, ')');
	}
	if (r->huge_bytes) {
		sb_str(sb, "; huge pages ");
		sb_size_human(sb, r->huge_bytes);
	}
	if (r->small_fallbacks) {
		sb_str(sb, "; small pages instead of huge ");
		sb_u64(sb, r->small_fallbacks);
		sb_str(sb, " times");
	}
	skips(sb, r);
	sb_chr(sb, '\n');
}

void rt_unmatched(struct sbuf *sb, const struct figs_proc *p)
{
	const struct figs_rule *m = &p->unmatched[0], *a = &p->unmatched[1];
	sb_str(sb, "prefault:   unmatched: ");
	sb_u64(sb, m->matched);
	sb_str(sb, " mmap (");
	sb_size_human(sb, m->bytes);
	if (p->malloc_from == FIGS_NOT_COUNTED) {
		sb_str(sb, "); malloc family not counted (no rule or profile watches it)\n");
		return;
	}
	sb_str(sb, "), ");
	sb_u64(sb, a->matched);
	if (!p->malloc_from) { /* (an older shim counted every call) */
		sb_str(sb, " malloc (");
		sb_size_human(sb, a->bytes);
		sb_str(sb, ")\n");
		return;
	}
	sb_str(sb, " malloc blocks of ");
	sb_size_human(sb, p->malloc_from);
	sb_str(sb, " or more (");
	sb_size_human(sb, a->bytes);
	sb_str(sb, "; smaller ones not counted)\n");
}

void rt_note(struct sbuf *sb, const char *text)
{
	sb_str(sb, "prefault:   note: ");
	sb_text(sb, text);
	sb_chr(sb, '\n');
}

void rt_process(struct sbuf *sb, const struct figs_proc *p)
{
	uint64_t total = p->minor + p->major;
	int i;
	sb_str(sb, "prefault: ");
	sb_text(sb, p->program);
	sb_chr(sb, '[');
	sb_u64(sb, p->pid);
	sb_str(sb, "] ");
	secs(sb, p->wall_ns);
	sb_str(sb, " s, ");
	sb_u64(sb, total);
	sb_str(sb, " faults (");
	sb_u64(sb, p->major);
	sb_str(sb, " major): ");
	sb_u64(sb, p->in_program);
	sb_str(sb, " in the program, ");
	sb_u64(sb, p->in_prefault);
	sb_str(sb, " in prefault work\n");
	if (p->policy)
		rt_budget(sb, p->policy, p->budget_peak, p->budget_limit, "");
	rt_ledger(sb, p);
	for (i = 0; i < p->nrules; i++)
		rt_rule(sb, p->rule_name[i], "", &p->rules[i]);
	rt_unmatched(sb, p);
	for (i = 0; i < p->nnotes; i++)
		rt_note(sb, p->note[i]);
}
