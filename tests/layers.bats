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
	# and it looked at something: every module of both trees
	[[ "$output" == *"shim: 21 modules"* ]] || [[ "$output" == *"shim: "*" modules"* ]]
	[[ "$output" == *"tools: "*" modules"* ]]
}
