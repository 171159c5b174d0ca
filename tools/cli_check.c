/* cli_check.c: `prefault check POLICY...`: where the report goes and one
 * line per rule, or FILE:LINE: what is wrong for each bad file (exit 2). */
#include "cli.h"
#include "fmt.h"
#include "sbuf.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where the policy sends the report (unless PREFAULT_REPORT or run -o
 * says otherwise). */
static void print_report(const char *shown, const struct policy *pol)
{
	const char *r = pol->has_report ? pol->report : "stderr";
	if (!strcmp(r, "stderr") || !strcmp(r, "none") || r[0] == '/')
		printf("%s: report: %s%s\n", tty_str(shown), tty_str(r), pol->has_report ? "" : " (the default)");
	else
		printf("%s: report: %s (in the directory the program starts in)\n", tty_str(shown), tty_str(r));
}

int cmd_check(const struct command *self, int argc, char **argv)
{
	static struct policy pol;
	const struct opt none[] = { OPT_END };
	int i, n, bad = 0;
	if (opt_parse(self, argc, argv, none, &n) < 0)
		return EXIT_USAGE;
	if (n < 1) {
		command_usage(self, stderr);
		return EXIT_USAGE;
	}
	for (i = 1; i <= n; i++) {
		char *path = resolve_policy(argv[i]);
		const char *shown;
		int r;
		if (!path) {
			bad = 1;
			continue;
		}
		/* Name the file as the user did, unless it was a shipped name:
		 * then the file it stands for. */
		shown = strchr(argv[i], '/') ? argv[i] : path;
		r = load_policy_file(path, shown, &pol);
		if (r == 0) {
			int k;
			char line[2048];
			print_report(shown, &pol);
			if (pol.nrules == 0)
				printf("%s: no rules (observe only)\n", tty_str(shown));
			for (k = 0; k < pol.nrules; k++) {
				struct sbuf sb;
				sb_init(&sb, line, sizeof line, -1);
				policy_describe_rule(&sb, &pol, &pol.rules[k]);
				printf("%s: %s\n", tty_str(shown), tty_str(sb_cstr(&sb)));
			}
		} else {
			bad = 1;
		}
		free(path);
	}
	return bad ? EXIT_USAGE : 0;
}
