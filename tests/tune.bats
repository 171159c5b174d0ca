#!/usr/bin/env bats
# prefault tune: from a profile to a policy, proven on faults and RSS; and
# the decision rules on recorded pair data.
load helpers

@test "the decision rules of trial and tune, on recorded pair data (tests/unit/decide_test.c)" {
	[ -x "$B/unit/decide_test" ] || skip "no $B/unit/decide_test: make probes builds it"
	run --separate-stderr "$B/unit/decide_test"
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q '^[0-9]* cases, 0 failed$' <<<"$output"
	[ "$(grep -c '^ok ' <<<"$output")" -ge 20 ]
}
