#!/usr/bin/env bats
# prefault profile: sites, touched bytes, sampled faults, suggestions.
load helpers

profile() { # OUT.json CMD...: profile CMD, writing JSON, SVG, folded and a policy next to OUT
	local out=$1
	shift
	run --separate-stderr "$PF" profile -o "$out" --svg "${out%.json}.svg" --folded "${out%.json}.folded" \
		--suggest "${out%.json}.policy" -- "$@"
}

site() { # FILE SIZE FIELD: a field of the site of that size
	jget "$1" "[s for s in d['sites'] if s['size'] == $2][0]['$3']"
}

perf_works() { [ "$(jget "$1" "d['perf']")" = ok ]; }

@test "sites: bytes and touched bytes go to the right site, which is named" {
	needs_no_tsan
	profile "$BATS_TEST_TMPDIR/p.json" "$PROBE" mixed
	[ "$status" -eq 0 ]
	f="$BATS_TEST_TMPDIR/p.json"
	# dense: 8 x 4 MiB, all written
	[ "$(site "$f" 4194304 maps)" -eq 8 ]
	[ "$(site "$f" 4194304 bytes)" -eq $((32 << 20)) ]
	[ "$(site "$f" 4194304 touched_bytes)" -ge $((31 << 20)) ]
	[ "$(site "$f" 4194304 symbol)" = map_touch ]
	[ "$(site "$f" 4194304 caller)" = pfprobe ]
	# sparse: 8 x 8 MiB, one page each
	[ "$(site "$f" 8388608 bytes)" -eq $((64 << 20)) ]
	[ "$(site "$f" 8388608 touched_bytes)" -le $((1 << 20)) ]
	[ "$(site "$f" 8388608 symbol)" = site_sparse ]
	# churn: 64 x 1 MiB mapped and unmapped, touched counted at unmap
	[ "$(site "$f" 1048576 maps)" -eq 64 ]
	[ "$(site "$f" 1048576 unmaps)" -eq 64 ]
	[ "$(site "$f" 1048576 touched_bytes)" -ge $((63 << 20)) ]
	# the table, heaviest first, on stderr
	grep -q 'Mapping sites, heaviest first' <<<"$stderr"
}

@test "sampled faults are charged to the site holding the address and to the code that took them" {
	needs_no_tsan
	profile "$BATS_TEST_TMPDIR/p.json" "$PROBE" mixed
	f="$BATS_TEST_TMPDIR/p.json"
	perf_works "$f" || skip "perf_event_open refused here: $(jget "$f" "d['perf']")"
	[ "$(site "$f" 4194304 faults)" -ge 8000 ]
	[ "$(site "$f" 1048576 faults)" -ge 16000 ]
	[ "$(site "$f" 8388608 faults)" -le 16 ]
	[ "$(jget "$f" "[c['faults'] for c in d['code'] if c['symbol']=='map_touch'][0]")" -ge 24000 ]
	grep -q '^map_touch [0-9]*$' "$BATS_TEST_TMPDIR/p.folded" || grep -q ';map_touch [0-9]*$' "$BATS_TEST_TMPDIR/p.folded"
}

@test "the suggested policy: populate the dense site, recycle the churning one, leave the sparse one alone" {
	needs_no_tsan
	needs_plain_runtime
	profile "$BATS_TEST_TMPDIR/p.json" "$PROBE" mixed
	pol="$BATS_TEST_TMPDIR/p.policy"
	run --separate-stderr "$PF" check "$pol"
	[ "$status" -eq 0 ]
	echo "$output"
	grep -q 'size=4M .*-> populate' <<<"$output"
	grep -q 'size=1M .*-> recycle' <<<"$output"
	! grep -q 'size=8M' <<<"$output"
	# and it works: fewer faults left in the program, and peak RSS no higher
	run --separate-stderr "$PROBE" mixed
	plain_hwm=$(kv vmhwm_kb "$output")
	REPORT="$BATS_TEST_TMPDIR/plain.json" run --separate-stderr shimmed "" "$PROBE" mixed
	REPORT="$BATS_TEST_TMPDIR/with.json" run --separate-stderr shimmed "$pol" "$PROBE" mixed
	with_hwm=$(kv vmhwm_kb "$output")
	before=$(jget "$BATS_TEST_TMPDIR/plain.json" "d['faults']['in_program']")
	after=$(jget "$BATS_TEST_TMPDIR/with.json" "d['faults']['in_program']")
	echo "faults in the program: $before -> $after; peak RSS $plain_hwm -> $with_hwm kB"
	[ "$after" -lt $((before / 4)) ]
	[ "$with_hwm" -le $((plain_hwm + 4096)) ]
}

@test "perf refused: said plainly, and the mapping-level figures are still there" {
	needs_no_tsan
	PREFAULT_TEST_NO_PERF=1 profile "$BATS_TEST_TMPDIR/p.json" "$PROBE" mixed
	[ "$status" -eq 0 ]
	f="$BATS_TEST_TMPDIR/p.json"
	grep -q 'fault sampling unavailable: perf_event_open not permitted' <<<"$stderr"
	[[ "$(jget "$f" "d['perf']")" == "perf_event_open not permitted"* ]]
	[ "$(site "$f" 4194304 touched_bytes)" -ge $((31 << 20)) ]
	[ "$(site "$f" 8388608 touched_bytes)" -le $((1 << 20)) ]
	# the suggestion still follows the touched share
	run --separate-stderr "$PF" check "$BATS_TEST_TMPDIR/p.policy"
	grep -q 'size=4M .*-> populate' <<<"$output"
	! grep -q 'size=8M' <<<"$output"
}

@test "JSON and SVG are well-formed; JSON has the documented fields" {
	needs_no_tsan
	profile "$BATS_TEST_TMPDIR/p.json" "$PROBE" mixed
	f="$BATS_TEST_TMPDIR/p.json"
	for k in caller call size maps bytes touched_bytes faults; do
		jget "$f" "d['sites'][0]['$k']" >/dev/null
	done
	for k in symbol object faults; do
		jget "$f" "d['code'][0]['$k']" >/dev/null
	done
	"$PY" -c 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); assert d.documentElement.tagName == "svg"; assert len(d.getElementsByTagName("rect")) >= 6' "$BATS_TEST_TMPDIR/p.svg"
	grep -q 'site_sparse' "$BATS_TEST_TMPDIR/p.svg"
}

@test "process trees: one profile per process and a merged view; the exit status is the program's" {
	profile "$BATS_TEST_TMPDIR/t.json" sh -c "$PROBE keep 2 4M; $PROBE keep 3 4M; exit 5"
	[ "$status" -eq 5 ]
	f="$BATS_TEST_TMPDIR/t.json"
	[ "$(jget "$f" "d['processes_count']")" -ge 3 ]
	[ "$(jget "$f" "sum(s['maps'] for s in d['sites'] if s['size'] == 4194304)")" -eq 5 ]
	[ "$(jget "$f" "sorted(sum(s['maps'] for s in p['sites'] if s['size'] == 4194304) for p in d['processes'])[-2:]")" = "[2, 3]" ]
}

@test "profile usage errors exit 2" {
	run --separate-stderr "$PF" profile
	[ "$status" -eq 2 ]
	run --separate-stderr "$PF" profile --period 0 -- true
	[ "$status" -eq 2 ]
	run --separate-stderr "$PF" profile --bogus -- true
	[ "$status" -eq 2 ]
}

@test "profiling a program that forks while faults are being drained does not deadlock" {
	# Forks while the reader thread drains samples: the fork handler and the
	# reader must take the profile's locks in one order.
	run --separate-stderr timeout 120 "$PF" profile -o "$BATS_TEST_TMPDIR/f.json" -- "$PROBE" forkfault 300
	[ "$status" -eq 0 ]
	[ "$output" = "forked=300 of 300" ]
}
