/* profile_out.c: a merged profile as JSON, as folded stacks (flamegraph.pl
 * and speedscope read them), and as a self-contained SVG chart. */
#include "profile_data.h"
#include "fmt.h"
#include "sbuf.h"
#include <stdio.h>
#include <string.h>

/* The counters of a table (profile_format.h), keyed as sb_jw writes them,
 * after a member already written. */
#define JSON_COUNTS(f, TABLE, obj)                                                                                     \
	do {                                                                                                           \
		char jbuf_[4096];                                                                                      \
		const __typeof__(*(obj)) *o_ = (obj);                                                                  \
		struct sbuf jsb_;                                                                                      \
		struct sb_jw jw_ = { &jsb_, NULL, 0, 0 };                                                              \
		sb_init(&jsb_, jbuf_, sizeof jbuf_, -1);                                                               \
		TABLE(JSON_COUNT_ONE)                                                                                  \
		sb_jw_close(&jw_);                                                                                     \
		fputs(sb_cstr(&jsb_), f);                                                                              \
	} while (0)
#define JSON_COUNT_ONE(m, key, kind)                                                                                   \
	sb_jw_key(&jw_, key);                                                                                          \
	sb_u64(&jsb_, o_->m);

static void json_sites(FILE *f, const struct psite *s, size_t n)
{
	size_t i;
	fputc('[', f);
	for (i = 0; i < n; i++) {
		fprintf(f, "%s{\"caller\":", i ? "," : "");
		json_string(f, s[i].caller);
		fprintf(f, ",\"symbol\":");
		json_string(f, s[i].symbol);
		fprintf(f, ",\"call\":\"%s\",\"kind\":\"%s\",\"prot\":\"%s\",\"size\":%llu", s[i].call, s[i].kind,
		        s[i].prot, (unsigned long long)s[i].size_class);
		JSON_COUNTS(f, PROFILE_SITE_COUNTS, &s[i]);
		fputc('}', f);
	}
	fputc(']', f);
}

/* A count list: [{bkey: b, akey: a, "faults": n}, ...] (bkey only if given). */
static void json_counts(FILE *f, const struct pcount *c, size_t n, const char *akey, const char *bkey)
{
	size_t i;
	fputc('[', f);
	for (i = 0; i < n; i++) {
		fputs(i ? ",{" : "{", f);
		if (bkey) {
			fprintf(f, "\"%s\":", bkey);
			json_string(f, c[i].b);
			fputc(',', f);
		}
		fprintf(f, "\"%s\":", akey);
		json_string(f, c[i].a);
		fprintf(f, ",\"faults\":%llu}", (unsigned long long)c[i].n);
	}
	fputc(']', f);
}

static void json_common(FILE *f, const struct profile *p)
{
	fprintf(f, "\"perf\":");
	json_string(f, p->perf_ok ? "ok" : p->perf_why[0] ? p->perf_why : "refused");
	JSON_COUNTS(f, PROFILE_COUNTS, p);
	fprintf(f, ",\"program_faults\":%llu,\"program_sampled\":%llu,\"sites\":",
	        (unsigned long long)program_faults(p), (unsigned long long)program_sampled(p));
	json_sites(f, p->sites, p->nsites);
	fprintf(f, ",\"code\":");
	json_counts(f, p->code, p->ncode, "object", "symbol");
	fprintf(f, ",\"other\":");
	json_counts(f, p->other, p->nother, "where", NULL);
}

int write_profile_json(const char *path, const struct profile *m, const struct profile *procs, int n, char **cmd,
                       int status)
{
	FILE *f = open_output(path);
	int i;
	if (!f) {
		perror(path);
		return -1;
	}
	fprintf(f, "{\"command\":[");
	for (i = 0; cmd[i]; i++) {
		if (i)
			fputc(',', f);
		json_string(f, cmd[i]);
	}
	fprintf(f, "],\"exit_status\":%d,\"processes_count\":%d,\"snapshots\":%d,", status, n, m->snapshot);
	json_common(f, m);
	fprintf(f, ",\"processes\":[");
	for (i = 0; i < n; i++) {
		fprintf(f, "%s{\"pid\":%ld,\"ppid\":%ld,\"program\":", i ? "," : "", procs[i].pid, procs[i].ppid);
		json_string(f, procs[i].program);
		fprintf(f, ",\"exe\":");
		json_string(f, procs[i].exe);
		if (!procs[i].snapshot)
			fprintf(f, ",\"snapshot\":null");
		else if (procs[i].snap_before_end_ns < 0)
			fprintf(f, ",\"snapshot\":{\"after_start_s\":%.3f,\"before_end_s\":null}", (double)procs[i].snap_age_ns / 1e9);
		else
			fprintf(f, ",\"snapshot\":{\"after_start_s\":%.3f,\"before_end_s\":%.3f}", (double)procs[i].snap_age_ns / 1e9,
			        (double)procs[i].snap_before_end_ns / 1e9);
		fputc(',', f);
		json_common(f, &procs[i]);
		fputc('}', f);
	}
	fprintf(f, "]}\n");
	return close_output(f, path, "prefault profile");
}

int write_folded(const char *path, const struct profile *m)
{
	FILE *f = open_output(path);
	size_t i;
	if (!f) {
		perror(path);
		return -1;
	}
	for (i = 0; i < m->nstacks; i++)
		fprintf(f, "%s %llu\n", m->stacks[i].a, (unsigned long long)m->stacks[i].n);
	return close_output(f, path, "prefault profile");
}

static void xml(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if ((unsigned char)*s >= 0x20)
				fputc(*s, f);
		}
	}
}


void print_profile_counts(FILE *o, const struct profile *m, int nproc, const char *cmd)
{
	uint64_t prog = program_faults(m), sampled = program_sampled(m);
	fprintf(o, "\nprefault profile: %s [%d process%s], %llu faults (minor %llu, major %llu): %llu the program's, %llu "
	           "the shim's own\n",
	        cmd, nproc, nproc == 1 ? "" : "es", (unsigned long long)(m->minor + m->major), (unsigned long long)m->minor,
	        (unsigned long long)m->major, (unsigned long long)prog, (unsigned long long)m->shim_faults);
	if (!m->perf_ok) {
		fprintf(o, "  fault sampling unavailable: %s\n  (mapping-level figures below; faults per site and code are "
		           "unknown)\n",
		        m->perf_why);
		return;
	}
	fprintf(o, "  %llu of the program's sampled (every %llu%s), %llu lost", (unsigned long long)sampled,
	        (unsigned long long)m->period, m->period == 1 ? " fault" : " faults", (unsigned long long)m->lost);
	if (m->period == 1 && prog > sampled + m->lost)
		fprintf(o, "; %llu not sampled (taken in the kernel on its behalf, or in threads without a fault event)",
		        (unsigned long long)(prog - sampled - m->lost));
	fprintf(o, "\n");
	if (m->exit_locked)
		fprintf(o, "  %llu process%s left from a signal handler that interrupted the shim: the samples of %s last "
		           "moments were not read\n",
		        (unsigned long long)m->exit_locked, m->exit_locked == 1 ? "" : "es", m->exit_locked == 1 ? "its" : "their");
}

/* Two bars per site: its share of the sampled faults, and how much of what
 * it mapped the program touched.  Heaviest first, up to 16 sites. */
int write_svg(const char *path, const struct profile *m, char **cmd)
{
	FILE *f = open_output(path);
	size_t i, n = m->nsites < 16 ? m->nsites : 16;
	int w = 960, left = 360, barw = 260, row = 34, top = 70, h = top + (int)(n ? n : 1) * row + 50;
	uint64_t tot = program_sampled(m) ? program_sampled(m) : 1, maxf = 1;
	if (!f) {
		perror(path);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (m->sites[i].faults > maxf)
			maxf = m->sites[i].faults;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
	           "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">\n", w, h, w, h);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n<text x=\"12\" y=\"22\" font-size=\"15\" "
	           "font-weight=\"bold\">prefault profile: ");
	for (i = 0; cmd[i] && i < 6; i++) {
		xml(f, cmd[i]);
		fputc(' ', f);
	}
	fprintf(f, "</text>\n<text x=\"12\" y=\"40\" fill=\"#444\">%llu faults of the program (and %llu of the shim); ",
	        (unsigned long long)program_faults(m), (unsigned long long)m->shim_faults);
	if (m->perf_ok)
		fprintf(f, "%llu sampled. ", (unsigned long long)program_sampled(m));
	else
		fprintf(f, "fault sampling unavailable (mapping figures only). ");
	fprintf(f, "Orange: share of sampled faults. Blue: share of the mapped bytes the program touched.</text>\n");
	fprintf(f, "<text x=\"%d\" y=\"60\" fill=\"#444\">faults</text><text x=\"%d\" y=\"60\" fill=\"#444\">touched</text>\n",
	        left, left + barw + 40);
	for (i = 0; i < n; i++) {
		const struct psite *s = &m->sites[i];
		char lab[300], sz[32], mapped[32];
		int y = top + (int)i * row;
		double fw = (double)barw * (double)s->faults / (double)maxf;
		double tw = s->bytes ? (double)barw * (double)s->touched / (double)s->bytes : 0;
		site_label(lab, sizeof lab, s);
		human_size(sz, sizeof sz, s->size_min);
		human_size(mapped, sizeof mapped, s->bytes);
		fprintf(f, "<text x=\"12\" y=\"%d\">", y + 12);
		xml(f, lab);
		fprintf(f, "</text>\n<text x=\"12\" y=\"%d\" fill=\"#666\" font-size=\"10\">%s %s, %llu maps, %s mapped</text>\n",
		        y + 25, s->call, sz, (unsigned long long)s->maps, mapped);
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"14\" fill=\"#f0f0f0\"/>"
		           "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"14\" fill=\"#e8742a\"/>"
		           "<text x=\"%d\" y=\"%d\" font-size=\"10\">%.1f%%</text>\n",
		        left, y + 2, barw, left, y + 2, fw, left + barw + 2, y + 13, 100.0 * (double)s->faults / (double)tot);
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"14\" fill=\"#f0f0f0\"/>"
		           "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"14\" fill=\"#3b7dd8\"/>"
		           "<text x=\"%d\" y=\"%d\" font-size=\"10\">%.1f%%</text>\n",
		        left + barw + 40, y + 2, barw, left + barw + 40, y + 2, tw, left + 2 * barw + 42, y + 13,
		        s->bytes ? 100.0 * (double)s->touched / (double)s->bytes : 0.0);
	}
	if (!n)
		fprintf(f, "<text x=\"12\" y=\"%d\">no mapping sites were seen</text>\n", top + 12);
	fprintf(f, "<text x=\"12\" y=\"%d\" fill=\"#666\" font-size=\"10\">Faults outside these sites (heap, stacks, "
	           "libraries, glibc's own mmaps): %llu.</text>\n</svg>\n",
	        h - 20, (unsigned long long)m->unattributed);
	return close_output(f, path, "prefault profile");
}
