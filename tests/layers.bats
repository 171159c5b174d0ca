#!/usr/bin/env bats
# The code's shape: every module calls and includes only modules below it
# (shim/README draws the layers; the order is SHIM_SRC and CLI_SRC's).
load helpers

@test "shim and tool modules only call and include downward: no circles" {
	# (a sanitizer build starts helper threads through the sanitizer's
	# interceptor, which lands in our own pthread_create on purpose)
	[ -z "${PREFAULT_SANITIZER:-}" ] || skip "the shape is checked on the plain build"
	run --separate-stderr sh "$BATS_TEST_DIRNAME/layers.sh" "$B"
	echo "$output"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	# and it looked at every module of both trees, as the Makefile lists them
	count() { sed -n "/^$1 :=/,/[^\\]\$/p" "$BATS_TEST_DIRNAME/../Makefile" | tr ' \\' '\n\n' | grep -c '\.c$'; }
	shim=$(count SHIM_SRC) tools=$(count CLI_SRC)
	[ "$shim" -ge 20 ] && [ "$tools" -ge 20 ]
	grep -q "^layers.sh: shim: $shim modules, [0-9]* edges" <<<"$output"
	grep -q "^layers.sh: tools: $tools modules, [0-9]* edges" <<<"$output"
	# and found edges: a shim with no calls between its modules was not looked at
	[ "$(sed -n 's/^layers.sh: shim: [0-9]* modules, \([0-9]*\) edges.*/\1/p' <<<"$output")" -ge 100 ]
}
