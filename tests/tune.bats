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

# tune_faults OUT CMD...: tune CMD ranked by faults (no timings), one pair
# per candidate, the policy to OUT.policy and the JSON table to OUT.json
tune_faults() {
	local out=$1
	shift
	run --separate-stderr "$PF" tune --rank faults -n 1 --json -o "$out.policy" -- "$@"
	echo "status $status"
	echo "stderr: $stderr"
	echo "$output" >"$out.json"
	[ -f "$out.policy" ] && cat "$out.policy"
	return 0
}

# checked POLICY: prefault check's lines for it (fails if it does not pass)
checked() {
	run --separate-stderr "$PF" check "$1"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "tune, known answer: dense plus sparse gets a rule for the dense site only" {
	needs_no_tsan
	needs_plain_runtime
	f="$BATS_TEST_TMPDIR/ds"
	tune_faults "$f" "$PROBE" densesparse
	[ "$status" -eq 0 ]
	checked "$f.policy"
	[ "$(grep -c -- '->' <<<"$output")" -eq 1 ]
	grep -q 'size=4M .*caller=pfprobe -> populate' <<<"$output"
	# the sparse site is heavy enough to weigh, but nothing is tried on it
	[ "$(jget "$f.json" "[s['candidates'] for s in d['sites'] if 'site_thin' in s['site']][0]")" = "[]" ]
	[ "$(jget "$f.json" "[t for t in d['tried'] if 'site_thin' in t['site']]")" = "[]" ]
	# the fault cut behind it, in the program's own count
	[ "$(jget "$f.json" "d['confirm']['faults_in_program']['with']['median'] < d['confirm']['faults_in_program']['without']['median'] / 2")" = True ]
	grep -q '^# measured (1 pair) against no rule for this site' "$f.policy"
	grep -q '^# against no rule for this site: faults in the program [0-9]* -> [0-9]* ([0-9]*% fewer),$' "$f.policy"
	grep -q '^# peak RSS .* MiB (.* MiB)$' "$f.policy"
}

@test "tune without fault sampling: sites weighed by pages touched, the same answer, no background" {
	needs_no_tsan
	needs_plain_runtime
	f="$BATS_TEST_TMPDIR/noperf"
	PREFAULT_TEST_NO_PERF=1 tune_faults "$f" "$PROBE" densesparse
	[ "$status" -eq 0 ]
	checked "$f.policy"
	[ "$(grep -c -- '->' <<<"$output")" -eq 1 ]
	grep -q 'size=4M .*-> populate' <<<"$output"
	grep -q 'pages touched' "$f.policy"
	[ "$(jget "$f.json" "any(s['works_before_touching'] for s in d['sites'])")" = False ]
}

@test "tune, known answer: an mmap/touch/munmap churn gets recycle" {
	needs_no_tsan
	needs_plain_runtime
	f="$BATS_TEST_TMPDIR/churn"
	tune_faults "$f" "$PROBE" churn 128 1M
	[ "$status" -eq 0 ]
	checked "$f.policy"
	[ "$(grep -c -- '->' <<<"$output")" -eq 1 ]
	grep -q 'size=1M map=anon,private prot=rw caller=pfprobe -> recycle' <<<"$output"
	[ "$(jget "$f.json" "[t['verdict'] for t in d['tried'] if t['candidate'] == 'recycle'][0]")" = kept ]
}

@test "tune, known answer: a compute-only program gets no rule, said plainly" {
	f="$BATS_TEST_TMPDIR/burn"
	run --separate-stderr "$PF" tune --rank faults -n 1 -o "$f.policy" -- "$PROBE" burn 100
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q '^nothing helped: no mapping site takes enough of the faults; wrote a policy with no rules$' <<<"$output"
	checked "$f.policy"
	[ "${lines[1]}" = "$f.policy: no rules (observe only)" ]
	grep -q '^# Nothing helped' "$f.policy"
}

@test "tune, known answer: mixed sites, and background tried only where the program works before touching" {
	needs_no_tsan
	needs_plain_runtime
	f="$BATS_TEST_TMPDIR/mixed"
	tune_faults "$f" "$PROBE" mixed
	[ "$status" -eq 0 ]
	checked "$f.policy"
	grep -q 'size=1M .*-> recycle' <<<"$output"
	grep -q 'size=4M .*-> populate' <<<"$output"
	! grep -q 'size=8M' <<<"$output" || false
	f="$BATS_TEST_TMPDIR/later"
	tune_faults "$f" "$PROBE" worklater 8 30
	[ "$status" -eq 0 ]
	checked "$f.policy"
	[ "$(jget "$f.json" "d['profile']['faults'] > 8000")" = True ]
	"$PF" profile -o "$BATS_TEST_TMPDIR/perf.json" -- true >/dev/null 2>&1
	perf=$(jget "$BATS_TEST_TMPDIR/perf.json" "d['perf']")
	[ "$perf" = ok ] || skip "perf_event_open refused here: no timing per site, so no background candidates"
	# the site worked on 30 ms after its map: background and background hugepage tried
	[ "$(jget "$f.json" "sorted(t['candidate'] for t in d['tried'] if 'site_later' in t['site'] and 'background' in t['candidate'])")" = "['background', 'background hugepage']" ]
	# the site touched straight after its map: never
	[ "$(jget "$f.json" "[s['works_before_touching'] for s in d['sites'] if 'map_touch' in s['site']][0]")" = False ]
	[ "$(jget "$f.json" "[t['candidate'] for t in d['tried'] if 'map_touch' in t['site'] and 'background' in t['candidate']]")" = "[]" ]
	# and each rule it kept cut faults
	[ "$(jget "$f.json" "all(t['faults_in_program']['after']['median'] < t['faults_in_program']['before']['median'] for t in d['tried'] if t['verdict'] == 'kept')")" = True ]
}

@test "tune: a failing program stops tune with its exit status and its stderr, and writes no policy" {
	run --separate-stderr "$PF" tune --rank faults -n 1 -o "$BATS_TEST_TMPDIR/f.policy" -- "$PROBE" fail 3
	echo "stderr: $stderr"
	[ "$status" -eq 3 ]
	grep -q 'prefault tune: the program failed under the profiler (run 1): exit status 3' <<<"$stderr"
	grep -q 'failing on purpose' <<<"$stderr"
	[ ! -e "$BATS_TEST_TMPDIR/f.policy" ]
	# failing only later, in a trial: stopped there too
	prog='n=$(cat "$0" 2>/dev/null | wc -l); echo run >>"$0"; [ "$n" -lt 3 ] || { echo "boom-$n" >&2; exit 4; }; exec "$@"'
	run --separate-stderr "$PF" tune --rank faults -n 1 -o "$BATS_TEST_TMPDIR/g.policy" -- \
		sh -c "$prog" "$BATS_TEST_TMPDIR/count" "$PROBE" mixed
	echo "stderr: $stderr"
	[ "$status" -eq 4 ]
	grep -q 'the program failed .* (run [0-9]*): exit status 4' <<<"$stderr"
	grep -q 'boom-3' <<<"$stderr"
	[ ! -e "$BATS_TEST_TMPDIR/g.policy" ]
}

@test "tune -t bounds the whole run and keeps what was done" {
	needs_no_tsan
	f="$BATS_TEST_TMPDIR/count"
	# each run takes half a second or more; unbounded, this tune runs 12 times
	prog='echo run >>"$0"; "$@" >/dev/null; sleep 0.5'
	run --separate-stderr "$PF" tune --rank faults -n 1 -t 3 -o "$BATS_TEST_TMPDIR/t.policy" -- \
		sh -c "$prog" "$f" "$PROBE" mixed
	echo "status $status; stderr: $stderr"
	echo "$output"
	runs=$(wc -l <"$f")
	echo "runs: $runs"
	[ "$status" -eq 0 ]
	# no run starts that would end after 3 s: at most 3 / 0.5 of them, and one the estimate let through
	[ "$runs" -le 7 ]
	grep -q 'time budget (-t 3)' <<<"$stderr"
	grep -q '^stopped early (time budget): kept what was done$' <<<"$output"
	checked "$BATS_TEST_TMPDIR/t.policy"
	grep -q '^# Stopped early (time budget)' "$BATS_TEST_TMPDIR/t.policy"
}

@test "tune: Ctrl-C writes the best policy found so far" {
	needs_no_tsan
	needs_plain_runtime
	f="$BATS_TEST_TMPDIR/count"
	# The sixth run (profile 1, recycle 2-3, populate 4-5, the 4M site's
	# populate 6-7) waits for the interrupt, which comes to tune as a Ctrl-C
	# would (from outside the program: a signal the program sends its parent
	# is for tune's caller).
	prog='n=$(wc -l <"$0"); echo run >>"$0"; "$@" >/dev/null; [ "$n" -ne 5 ] || { : >"$0.ready"; exec sleep 30; }'
	: >"$f"
	env --default-signal=INT "$PF" tune --rank faults -n 1 -o "$BATS_TEST_TMPDIR/c.policy" -- \
		sh -c "$prog" "$f" "$PROBE" mixed >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" &
	tool=$!
	for i in $(seq 600); do [ -e "$f.ready" ] && break; sleep 0.05; done
	kill -INT "$tool"
	status=0
	wait "$tool" || status=$?
	output=$(cat "$BATS_TEST_TMPDIR/out")
	stderr=$(cat "$BATS_TEST_TMPDIR/err")
	echo "status $status; stderr: $stderr"
	echo "$output"
	[ "$status" -eq 130 ]
	[ "$(wc -l <"$f")" -eq 6 ]
	grep -q 'interrupted (signal 2, Interrupt)' <<<"$stderr"
	checked "$BATS_TEST_TMPDIR/c.policy"
	# what was kept before it: recycle for the churning site, for the child pfprobe
	grep -q 'size=1M .*program=pfprobe -> recycle' <<<"$output"
	! grep -q 'size=4M' <<<"$output" || false
	grep -q '^# Stopped early (interrupted)' "$BATS_TEST_TMPDIR/c.policy"
}

@test "tune by time: every candidate tried, a table, JSON with the pairs, and a policy that passes check" {
	needs_no_tsan
	needs_plain_runtime
	f="$BATS_TEST_TMPDIR/time"
	run --separate-stderr "$PF" tune -n 3 --json -o "$f.policy" -- "$PROBE" densesparse
	echo "stderr: $stderr"
	[ "$status" -eq 0 ]
	echo "$output" >"$f.json"
	cat "$f.policy"
	checked "$f.policy"
	! grep -q 'size=8M' <<<"$output" || false
	[ "$(jget "$f.json" "d['rank']")" = time ]
	[ "$(jget "$f.json" "len(d['tried'])")" -eq 2 ]
	[ "$(jget "$f.json" "all(t['rounds'] == 3 and len(t['pairs']) == 3 for t in d['tried'])")" = True ]
	jget "$f.json" "[t['verdict'] for t in d['tried']]" | grep -Eq "^\['(kept|rejected|replaced)', '(kept|rejected)'\]$"
	# the confirmation ran the three sides; the rules kept (if any) cut faults
	[ "$(jget "$f.json" "d['rules'] == 0 or d['confirm']['rounds'] == 3")" = True ]
	[ "$(jget "$f.json" "all(t['faults_in_program']['after']['median'] < t['faults_in_program']['before']['median'] for t in d['tried'] if t['verdict'] == 'kept' and t['candidate'] == 'populate')")" = True ]
	# the table
	run --separate-stderr "$PF" tune -n 3 -o "$f.policy" -- "$PROBE" burn 50
	echo "$output"
	grep -q '^prefault tune: .*ranked by time' <<<"$output"
	grep -q '^policy: ' <<<"$output"
}

@test "tune: progress on stderr only when it is a terminal" {
	needs_no_tsan
	run --separate-stderr "$PF" tune --rank faults -n 1 -o "$BATS_TEST_TMPDIR/p.policy" -- "$PROBE" churn 16 1M
	echo "stderr: $stderr"
	[ "$status" -eq 0 ]
	[ "$(wc -l <<<"$stderr")" -eq 1 ]
	grep -q '^prefault tune: .* program output discarded$' <<<"$stderr"
	run on_tty "$PF" tune --rank faults -n 1 -o "$BATS_TEST_TMPDIR/p.policy" -- "$PROBE" churn 16 1M
	echo "$output" | cat -v
	[ "$status" -eq 0 ]
	grep -q 'prefault tune: [0-9]*s spent; profiling the program once' <<<"$output"
	grep -q 'prefault tune: [0-9]*s spent, about [0-9]*s left; candidate 1 of [0-9]*, recycle for pfprobe map_touch mmap 1.0 MiB; pair 1 of 1, candidate' <<<"$output"
	grep -q 'prefault tune: [0-9]*s spent, about [0-9]*s left; confirming the combined policy; round 1 of 1, tuned policy' <<<"$output"
}

@test "tune: a program the shim cannot load into is said plainly" {
	file -L /sbin/ldconfig 2>/dev/null | grep -q 'static' || skip "no static /sbin/ldconfig here"
	run --separate-stderr "$PF" tune --rank faults -n 1 -o "$BATS_TEST_TMPDIR/s.policy" -- /sbin/ldconfig -p
	echo "stderr: $stderr"
	[ "$status" -eq 1 ]
	grep -q 'no profile was written: it is statically linked (checked' <<<"$stderr"
}

@test "tune usage errors exit 2 and start nothing" {
	for args in "-n 2" "--rank sometimes" "-t 0" "-t x" "-n 0 --rank faults" "--bogus"; do
		run --separate-stderr "$PF" tune $args -o "$BATS_TEST_TMPDIR/u.policy" -- touch "$BATS_TEST_TMPDIR/started"
		echo "$args: $status $stderr"
		[ "$status" -eq 2 ]
	done
	run --separate-stderr "$PF" tune
	[ "$status" -eq 2 ]
	run --separate-stderr "$PF" tune -o /no/such/dir/x.policy -- touch "$BATS_TEST_TMPDIR/started"
	[ "$status" -eq 2 ]
	grep -q 'cannot write /no/such/dir/x.policy' <<<"$stderr"
	[ ! -e "$BATS_TEST_TMPDIR/started" ]
	[ ! -e "$BATS_TEST_TMPDIR/u.policy" ]
}

# Finding: tune -t only decided whether to start a run: tune -t 3 on a 20 s program took
# 20 s, and a program that never exits hung tune whatever -t said.
@test "tune -t stops a run still going at the deadline, with its tree, and keeps what was found (issue 22 #21)" {
	needs_no_tsan # (its interceptors make the mmap calls: the site is named after them)
	# the profile runs at once; every later run hangs
	m="$BATS_TEST_TMPDIR/marker"
	run --separate-stderr timeout 30 "$PF" tune -t 3 --rank faults -n 1 -o "$BATS_TEST_TMPDIR/t.policy" -- \
		sh -c 'if [ -e "$1" ]; then sleep 61.25; fi; : >"$1"; exec "$2" alloc mmap 64M' sh "$m" "$PROBE"
	echo "status $status, output: $output, stderr: $stderr"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"the time budget (-t 3) ran out during candidate 1 of "* ]]
	grep -q '^stopped early (time budget)' <<<"$output"
	grep -Eq 'pfprobe[+ ][^ ]* ?mmap 64.0 MiB' <<<"$output" # what the profile found (the site, by name or offset)
	checked "$BATS_TEST_TMPDIR/t.policy"
	! pgrep -f 'sleep 61.25' || false
	# a program that never ends: stopped while profiling
	run --separate-stderr timeout 30 "$PF" tune -t 1 --rank faults -n 1 -o "$BATS_TEST_TMPDIR/u.policy" -- sleep 61.5
	echo "status $status, output: $output, stderr: $stderr"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"ran out while profiling: the program was stopped, nothing found yet"* ]]
	checked "$BATS_TEST_TMPDIR/u.policy"
	! pgrep -f 'sleep 61.5' || false
}

# Minor finding of issue 22: tune -o /dev/full printed "cannot write", then "wrote a
# policy", and exited 1.  The audit found profile's -o, --svg and --folded failing there
# silently (exit 1, nothing said).
@test "an output that cannot be written is said, never claimed written: tune -o, profile -o/--svg/--folded/--suggest (issue 22 minor)" {
	run --separate-stderr "$PF" tune --rank faults -n 1 -o /dev/full -- true
	echo "status $status, output: $output, stderr: $stderr"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"prefault tune: cannot write /dev/full: No space left on device"* ]]
	[[ "$output" != *wrote* ]]
	grep -q '^policy: /dev/full (0 rules): not written$' <<<"$output"
	for o in -o --svg --folded --suggest; do
		run --separate-stderr "$PF" profile "$o" /dev/full -- true
		echo "$o: status $status, stderr: $stderr"
		[ "$status" -eq 1 ]
		[[ "$stderr" == *"prefault profile: cannot write /dev/full: No space left on device"* ]]
		[[ "$stderr" != *"wrote /dev/full"* ]]
	done
}
