/* report_text.c: see report_text.h.  The one place the report's text is
 * made: the tool's copy of it, line for line, is gone. */
#include "report_text.h"
#include "policy.h"
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
		if (r->behind) { /* (the learner: a window queued behind the one out) */
			sb_str(sb, ", windows queued behind another ");
			sb_u64(sb, r->behind);
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
			if (r->carve_waited) {
				sb_str(sb, ", ");
				sb_u64(sb, r->carve_waited);
				sb_str(sb, " of them before the process reached carve_min_rss");
			}
		}
		sb_chr(sb, ')');
	}
	if (r->huge_bytes) {
		sb_str(sb, "; huge pages ");
		sb_size_human(sb, r->huge_bytes);
	}
	if (r->hc_checks) {
		sb_str(sb, "; hugepage_check ");
		sb_u64(sb, r->hc_checks);
		sb_str(sb, r->hc_checks == 1 ? " time: huge pages " : " times: huge pages ");
		sb_u64(sb, r->hc_huge_pages ? r->hc_huge_ns / r->hc_huge_pages : 0);
		sb_str(sb, " ns a page, small ");
		sb_u64(sb, r->hc_small_pages ? r->hc_small_ns / r->hc_small_pages : 0);
		sb_str(sb, ": huge kept ");
		sb_u64(sb, r->hc_huge_won);
		sb_str(sb, " of ");
		sb_u64(sb, r->hc_checks);
	}
	if (r->hc_unjudged) {
		sb_str(sb, "; huge pages taken back with no room to judge them ");
		sb_u64(sb, r->hc_unjudged);
		sb_str(sb, r->hc_unjudged == 1 ? " time" : " times");
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

void rt_actions(struct sbuf *sb, unsigned actions)
{
	const struct pol_action *a;
	int first = 1;
	for (a = pol_actions; a->word; a++) {
		if (!(actions & a->bit))
			continue;
		if (!first)
			sb_chr(sb, ' ');
		sb_str(sb, a->word);
		first = 0;
	}
}

/* 12.3%, from per mille */
static void permille(struct sbuf *sb, uint64_t pm)
{
	sb_fixed(sb, pm, 1);
	sb_chr(sb, '%');
}

/* "1.0 MiB", or "1.0 MiB to 1.8 MiB" where they differ as written. */
static void sizes(struct sbuf *sb, uint64_t lo, uint64_t hi)
{
	char a[32], b[32];
	struct sbuf sa, sb2;
	sb_init(&sa, a, sizeof a, -1);
	sb_init(&sb2, b, sizeof b, -1);
	sb_size_human(&sa, lo);
	sb_size_human(&sb2, hi);
	sb_str(sb, sb_cstr(&sa));
	if (strcmp(a, sb_cstr(&sb2))) {
		sb_str(sb, " to ");
		sb_str(sb, b);
	}
}

void rt_auto_site(struct sbuf *sb, const struct figs_auto *a)
{
	sb_text(sb, a->object);
	sb_chr(sb, '+');
	sb_hex(sb, a->offset);
	sb_str(sb, a->call == CALL_MMAP ? " mmap " : " malloc ");
	sizes(sb, a->size, a->size_max);
	sb_str(sb, ": ");
	if (a->rule) {
		rt_actions(sb, (unsigned)a->actions);
		sb_str(sb, ", from ");
		secs(sb, a->since_ns);
		sb_str(sb, " s: ");
	} else if (a->why == AW_SPARSE || a->why == AW_SCATTERED || a->why == AW_UNTOUCHED) {
		sb_str(sb, "left alone: ");
	} else {
		sb_str(sb, "no rule left for it: ");
	}
	switch (a->why) {
	case AW_CHURN:
		sb_u64(sb, a->why_a);
		sb_str(sb, " unmaps of one size within ");
		sb_fixed(sb, a->why_b, 3);
		sb_str(sb, " ms (churn)");
		break;
	case AW_DENSE:
	case AW_LATE:
		sb_u64(sb, a->why_a);
		sb_str(sb, " mappings came back ");
		permille(sb, a->why_b);
		sb_str(sb, " touched (dense)");
		if (a->why == AW_LATE) {
			sb_str(sb, ", first touched ");
			sb_u64(sb, a->why_c);
			sb_str(sb, " ms after the map on average (late: background)");
		}
		break;
	case AW_FRONT:
		sb_str(sb, "the program filled the first ");
		sb_size_human(sb, a->why_a << 10);
		sb_str(sb, " from the front, first touched ");
		sb_u64(sb, a->why_b);
		sb_str(sb, a->why_b >= 5 ? " ms after the map (late)" : " ms after the map (at once)");
		break;
	case AW_SPARSE:
		sb_u64(sb, a->why_a);
		sb_str(sb, " mappings came back ");
		permille(sb, a->why_b);
		sb_str(sb, " touched (sparse: prefaulting would only spend memory)");
		break;
	case AW_SCATTERED:
		sb_u64(sb, a->why_a);
		sb_str(sb, " large mappings touched here and there, not filled from the front");
		break;
	case AW_UNTOUCHED:
		sb_str(sb, "a large mapping not touched in ");
		sb_u64(sb, a->why_a);
		sb_str(sb, " s");
		break;
	default:
		break;
	}
	if (a->rule) {
		sb_str(sb, "; ");
		sb_u64(sb, a->maps);
		sb_str(sb, " requests; program faults ");
		sb_u64(sb, a->before);
		sb_str(sb, " in the ");
		secs(sb, a->before_ns);
		sb_str(sb, " s before, ");
		sb_u64(sb, a->after);
		sb_str(sb, " in the ");
		secs(sb, a->after_ns);
		sb_str(sb, " s after; saved ");
		sb_u64(sb, a->saved);
		sb_str(sb, " faults; cost ");
		secs(sb, a->cost_ns);
		sb_str(sb, " s on the program's threads");
		if (a->held_peak) {
			sb_str(sb, ", held ");
			sb_size_human(sb, a->held_peak);
			sb_str(sb, " at most");
		}
	}
	if (a->off) {
		sb_str(sb, "; backed off at ");
		secs(sb, a->off_ns);
		sb_str(sb, " s: ");
		if (a->off == AO_SPARSE) {
			sb_str(sb, "a probe mapping came back ");
			permille(sb, a->off_a);
			sb_str(sb, " touched");
		} else if (a->off == AO_DROPPED) {
			sb_u64(sb, a->off_a);
			sb_str(sb, " of ");
			sb_u64(sb, a->off_b);
			sb_str(sb, " regions unmapped were not kept (budget, cap or memory short)");
		} else {
			sb_str(sb, "only ");
			sb_u64(sb, a->off_a);
			sb_str(sb, " of ");
			sb_u64(sb, a->off_b);
			sb_str(sb, " kept regions were used again");
		}
	}
}

void rt_auto(struct sbuf *sb, const struct figs_proc *p)
{
	int i, acted = 0;
	for (i = 0; i < p->nauto; i++)
		acted += p->autos[i].rule != 0;
	sb_str(sb, "prefault:   auto: acted on ");
	sb_u64(sb, (uint64_t)acted);
	sb_str(sb, " of ");
	sb_u64(sb, p->auto_sites);
	sb_str(sb, p->auto_sites == 1 ? " site; held " : " sites; held ");
	sb_size_human(sb, p->auto_held_peak);
	sb_str(sb, " at most; RSS over the program's own peak (");
	sb_size_human(sb, p->auto_program_peak);
	sb_str(sb, ") ");
	sb_size_human(sb, p->auto_over_peak);
	sb_str(sb, " at most, of a budget of ");
	sb_size_human(sb, p->auto_limit);
	sb_str(sb, " (the lesser of ");
	sb_u64(sb, p->auto_percent);
	sb_str(sb, "% of that peak and ");
	sb_size_human(sb, p->auto_cap);
	sb_str(sb, ", 2 MiB and a huge page at least");
	if (p->auto_hard) {
		sb_str(sb, "; hard: all it held and the shim's own memory (");
		sb_size_human(sb, p->auto_shim_own);
		sb_str(sb, ") counted, wherever RSS was");
	} else {
		sb_str(sb, "; soft: freed regions kept below that peak too");
	}
	sb_chr(sb, ')');
	if (p->auto_cut) {
		sb_str(sb, "; populating ahead of a buffer cut short by it ");
		sb_u64(sb, p->auto_cut);
		sb_str(sb, p->auto_cut == 1 ? " time" : " times");
		sb_str(sb, " (--auto-budget raises it)");
	}
	if (p->auto_guard_looks) {
		/* (soft: what it kept passed the extra, and the guard looked) */
		sb_str(sb, "; guarded: ");
		sb_u64(sb, p->auto_guard_looks);
		sb_str(sb, p->auto_guard_looks == 1 ? " look at RSS" : " looks at RSS");
	}
	sb_chr(sb, '\n');
	for (i = 0; i < p->nauto; i++) {
		sb_str(sb, "prefault:   auto: ");
		rt_auto_site(sb, &p->autos[i]);
		sb_chr(sb, '\n');
	}
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
	if (p->auto_on) /* (its budget is the learner's: below) */
		sb_str(sb, "prefault:   policy auto: no policy file, the shim learns per call site in this run\n");
	else if (p->policy)
		rt_budget(sb, p->policy, p->budget_peak, p->budget_limit, "");
	rt_ledger(sb, p);
	for (i = 0; i < p->nrules; i++)
		rt_rule(sb, p->rule_name[i], "", &p->rules[i]);
	rt_unmatched(sb, p);
	if (p->auto_on)
		rt_auto(sb, p);
	for (i = 0; i < p->nnotes; i++)
		rt_note(sb, p->note[i]);
}
