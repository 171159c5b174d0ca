/* fuzz_policy.c: libFuzzer target for the policy parser (make fuzz).
 *
 * Any input must either parse, with every invariant of the result holding,
 * or fail with a line number inside the input and a terminated message.
 * Each accepted rule is also described, as `prefault check` does.
 */
#include "policy.h"
#include "sbuf.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check(int ok)
{
	if (!ok)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct policy pol;
	struct pol_error err;
	int line = policy_parse((const char *)data, size, &pol, &err), i, k;
	size_t lines = 1, n;
	for (n = 0; n < size; n++)
		lines += data[n] == '\n';
	if (line) {
		check(line >= 1 && (size_t)line <= lines + 1);
		check(memchr(err.msg, '\0', sizeof err.msg) != NULL && err.msg[0] != '\0');
		return 0;
	}
	check(pol.nrules >= 0 && pol.nrules <= POL_MAX_RULES);
	check(pol.pool_len <= sizeof pol.pool);
	for (i = 0; i < pol.nrules; i++) {
		const struct pol_rule *r = &pol.rules[i];
		char buf[4096];
		struct sbuf sb;
		check(r->size_lo <= r->size_hi);
		check(r->actions != 0);
		check(r->calls != 0);
		check(r->ncaller <= POL_MAX_GLOBS && r->nprogram <= POL_MAX_GLOBS);
		check(memchr(r->name, '\0', sizeof r->name) != NULL && r->name[0]);
		for (k = 0; k < r->ncaller; k++)
			check(r->caller[k] < pol.pool_len && memchr(pol.pool + r->caller[k], '\0', pol.pool_len - r->caller[k]));
		for (k = 0; k < r->nprogram; k++)
			check(r->program[k] < pol.pool_len && memchr(pol.pool + r->program[k], '\0', pol.pool_len - r->program[k]));
		sb_init(&sb, buf, sizeof buf, -1);
		policy_describe_rule(&sb, &pol, r);
		sb_cstr(&sb);
		check(!sb.trunc);
	}
	check(!pol.has_report || memchr(pol.report, '\0', sizeof pol.report));
	return 0;
}
