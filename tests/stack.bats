#!/usr/bin/env bats
# Thread stacks: call = stack rules.
load helpers

@test "a new thread's first deep call is fault-free under a stack rule" {
	needs_no_tsan
	run --separate-stderr "$PROBE" stack 200
	[ "$(kv faults "$output")" -ge 40 ]
	pol=$(policy s <<<$'[rule s]\ncall = stack\ndepth = 256K\naction = populate')
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed "$pol" "$PROBE" stack 200
	[ "$(kv faults "$output")" -le 2 ]
	[ "$(rule_stat "$BATS_TEST_TMPDIR/r.json" s matched)" -ge 1 ]
}

@test "the main thread's stack is prefaulted at start-up" {
	needs_no_tsan
	run --separate-stderr "$PROBE" stackmain 1000
	[ "$(kv faults "$output")" -ge 200 ]
	pol=$(policy s <<<$'[rule s]\ncall = stack\ndepth = 2M\naction = populate')
	run --separate-stderr shimmed "$pol" "$PROBE" stackmain 1000
	[ "$(kv faults "$output")" -le 2 ]
}

@test "a stack rule for another program, or action none, leaves stacks alone" {
	needs_no_tsan
	pol=$(policy s <<<$'[rule s]\ncall = stack\ndepth = 256K\nprogram = not-this-one\naction = populate')
	run --separate-stderr shimmed "$pol" "$PROBE" stack 200
	[ "$(kv faults "$output")" -ge 40 ]
	pol=$(policy n <<<$'[rule s]\ncall = stack\ndepth = 256K\naction = none')
	run --separate-stderr shimmed "$pol" "$PROBE" stack 200
	[ "$(kv faults "$output")" -ge 40 ]
}

@test "depth is clamped to the stack: a huge depth on a small stack does not crash" {
	needs_no_tsan
	pol=$(policy s <<<$'[rule s]\ncall = stack\ndepth = 1G\naction = populate')
	run --separate-stderr shimmed "$pol" "$PROBE" stack 100
	[ "$status" -eq 0 ]
	[ "$(kv faults "$output")" -le 2 ]
}
