/* prefault.c: the command-line tool's entry point: the table of commands
 * (git's commands[]), which drives dispatch, `prefault --help` and each
 * command's usage line (options.c). */
#include "cli.h"
#include "child.h"
#include "fmt.h"
#include <stdio.h>
#include <string.h>

static const struct command commands[] = {
	{ "run", cmd_run, "[-p POLICY] [-o REPORT] [--auto [--auto-budget B]] [--report REPORT] -- CMD [ARGS...]",
	  "run CMD with the shim preloaded, and print its report once it exits;\n"
	  "POLICY is a shipped policy's name, or a path (./my.policy); REPORT is\n"
	  "stderr (ours, the default), none, or a path (%p pid, %e program; a\n"
	  ".json path gives JSON).  --auto: no policy, the shim learns per call\n"
	  "site while CMD runs (B: what RSS may have over CMD's own peak, 10%,256M\n"
	  "by default); with --auto, -o writes what it learned as a policy file.\n"
	  "Exit status is CMD's (128+N if signal N killed it).",
	  CMD_PROGRAM | CMD_PROGRAM_STATUS },
	{ "check", cmd_check, "POLICY...",
	  "check policies: one line per rule, or FILE:LINE: what is wrong (exit 2)",
	  0 },
	{ "profile", cmd_profile,
	  "[-o FILE.json] [--suggest POLICY] [--svg FILE.svg] [--folded FILE] [--period N] -- CMD [ARGS...]",
	  "where CMD's faults come from: mapping sites, touched share, the code\n"
	  "taking them; optionally a suggested policy.  Exit status is CMD's.",
	  CMD_PROGRAM | CMD_PROGRAM_STATUS },
	{ "trial", cmd_trial, "[-n RUNS] -p POLICY [--observe] [--json] -- CMD [ARGS...]",
	  "does the policy help?  CMD without and with it (and in observe mode),\n"
	  "alternating; medians, spreads, ratios and a verdict (faster, slower,\n"
	  "no effect, inconclusive)",
	  CMD_PROGRAM },
	{ "tune", cmd_tune, "[-n PAIRS] [-t SECONDS] [-o POLICY] [--json] [--rank time|faults] -- CMD [ARGS...]",
	  "what makes CMD faster?  Profiles it, trials each candidate rule against\n"
	  "the best so far, keeps what is faster with fewer faults, and writes the\n"
	  "policy (tune.policy) with the evidence beside each rule",
	  CMD_PROGRAM },
	{ "bench", cmd_bench, "[-r ROUNDS] [--json] [SIZE]",
	  "first touch, MAP_POPULATE, MADV_POPULATE_WRITE, mlock, huge pages and\n"
	  "threads on a SIZE buffer (512M), per page and as factors",
	  0 },
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *out)
{
	size_t i;
	fprintf(out, "usage: prefault COMMAND [ARGS]\n\n");
	for (i = 0; i < NCOMMANDS; i++) {
		const char *h = commands[i].help;
		fprintf(out, "  %s %s\n", commands[i].name, commands[i].synopsis);
		while (*h) { /* each line of the help, indented */
			size_t n = strcspn(h, "\n");
			fprintf(out, "        %.*s\n", (int)n, h);
			h += n + (h[n] == '\n');
		}
	}
	fprintf(out, "  --help, --version\n\nShipped policies: ");
	list_shipped(out);
	fprintf(out, "\n");
}

int main(int argc, char **argv)
{
	size_t i;
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("prefault %s\n", PF_VERSION);
		return 0;
	}
	for (i = 0; i < NCOMMANDS; i++) {
		const struct command *c = &commands[i];
		int rc;
		if (strcmp(argv[1], c->name))
			continue;
		rc = c->fn(c, argc - 1, argv + 1);
		shim_alias_remove(); /* (before child_exit, which may die of a signal) */
		if (c->flags & CMD_PROGRAM_STATUS)
			child_exit(rc);
		return rc;
	}
	fprintf(stderr, "prefault: unknown command '%s'\n\n", tty_str(argv[1]));
	usage(stderr);
	return EXIT_USAGE;
}
