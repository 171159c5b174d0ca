/* prefault.c: the command-line tool's entry point: dispatch and usage. */
#include "cli.h"
#include "child.h"
#include <stdio.h>
#include <string.h>

void usage(FILE *out)
{
	fprintf(out,
	        "usage: prefault COMMAND [ARGS]\n"
	        "\n"
	        "  run [-p POLICY] [-o REPORT] -- CMD [ARGS...]\n"
	        "        run CMD with the shim preloaded, and print its report once it exits;\n"
	        "        POLICY is a file or a shipped policy name; REPORT is stderr (ours, the\n"
	        "        default), none, or a path (%%p pid, %%e program; a .json path gives\n"
	        "        JSON).  Exit status is CMD's (128+N if signal N killed it).\n"
	        "  check POLICY...\n"
	        "        check policies: one line per rule, or FILE:LINE: what is wrong (exit 2)\n"
	        "  profile [-o FILE.json] [--suggest POLICY] [--svg FILE.svg] [--folded FILE] [--period N] -- CMD...\n"
	        "        where CMD's faults come from: mapping sites, touched share, the code\n"
	        "        taking them; optionally a suggested policy.  Exit status is CMD's.\n"
	        "  trial [-n RUNS] -p POLICY [--observe] [--json] -- CMD [ARGS...]\n"
	        "        does the policy help?  CMD without and with it (and in observe mode),\n"
	        "        alternating; medians, spreads, ratios and a verdict (faster, slower,\n"
	        "        no effect, inconclusive)\n"
	        "  tune [-n PAIRS] [-t SECONDS] [-o POLICY] [--json] [--rank time|faults] -- CMD...\n"
	        "        what makes CMD faster?  Profiles it, trials each candidate rule against\n"
	        "        the best so far, keeps what is faster with fewer faults, and writes the\n"
	        "        policy (tune.policy) with the evidence beside each rule\n"
	        "  bench [-r ROUNDS] [--json] [SIZE]\n"
	        "        first touch, MAP_POPULATE, MADV_POPULATE_WRITE, mlock, huge pages and\n"
	        "        threads on a SIZE buffer (512M), per page and as factors\n"
	        "  --help, --version\n"
	        "\n"
	        "Shipped policies: ");
	list_shipped(out);
	fprintf(out, "\n");
}

int main(int argc, char **argv)
{
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
	if (!strcmp(argv[1], "run"))
		child_exit(cmd_run(argc - 1, argv + 1));
	if (!strcmp(argv[1], "check"))
		return cmd_check(argc - 1, argv + 1);
	if (!strcmp(argv[1], "profile"))
		child_exit(cmd_profile(argc - 1, argv + 1));
	if (!strcmp(argv[1], "trial"))
		return cmd_trial(argc - 1, argv + 1);
	if (!strcmp(argv[1], "tune"))
		return cmd_tune(argc - 1, argv + 1);
	if (!strcmp(argv[1], "bench"))
		return cmd_bench(argc - 1, argv + 1);
	fprintf(stderr, "prefault: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
