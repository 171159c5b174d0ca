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
	# Samples a full ring dropped (a loaded machine: the reader falls
	# behind) are counted lost, not charged anywhere: the floors allow them.
	lost=$(jget "$f" "d['lost']")
	echo "lost: $lost"
	[ "$(site "$f" 4194304 faults)" -ge $((8000 - lost)) ]
	[ "$(site "$f" 1048576 faults)" -ge $((16000 - lost)) ]
	[ "$(site "$f" 8388608 faults)" -le 16 ]
	[ "$(jget "$f" "[c['faults'] for c in d['code'] if c['symbol']=='map_touch'][0]")" -ge $((24000 - lost)) ]
	[ "$lost" -le 8192 ] # (and most were seen)
	grep -q '^map_touch [0-9]*$' "$BATS_TEST_TMPDIR/p.folded" || grep -q ';map_touch [0-9]*$' "$BATS_TEST_TMPDIR/p.folded"
}

# Finding (issue 22 #26's class): a ring that filled before the reader drained it (a loaded machine, ASan)
# dropped samples the kernel never reported (its PERF_RECORD_LOST is written only once there is room
# again), so a 64 MiB fill showed 7276 sampled, "0 lost" and 9062 "not sampled (taken in the kernel ...)".
@test "profile: samples a full ring dropped are counted lost, from the events' own counts, not blamed on the kernel (issue 22 #26)" {
	needs_no_tsan
	[ "$(getconf PAGESIZE)" -eq 4096 ] || skip "the ring is sized in pages: 64 MiB fills it only with 4 KiB pages"
	# no reader thread: the ring (512 KiB) is read only at exit, and holds fewer than the fill's 16384 samples
	PFPROBE_SMALL_PAGES=1 PREFAULT_TEST_NO_READER=1 profile "$BATS_TEST_TMPDIR/p.json" "$PROBE" keep 1 64M
	echo "$stderr" | head -n 3
	[ "$status" -eq 0 ]
	f="$BATS_TEST_TMPDIR/p.json"
	perf_works "$f" || skip "perf_event_open refused here: $(jget "$f" "d['perf']")"
	jget "$f" "{k: d[k] for k in ('faults', 'sampled', 'in_shim', 'lost', 'program_faults', 'program_sampled')}"
	[ "$(jget "$f" "d['lost']")" -ge 4096 ]
	# every fault of the fill was sampled or lost, and the figures still add up
	[ "$(jget "$f" "d['program_sampled'] + d['lost']")" -ge 16384 ]
	[ "$(jget "$f" "d['program_sampled'] + d['lost']")" -le "$(jget "$f" "d['program_faults']")" ]
	# what is left is the few the kernel took on the program's behalf, not the ring's loss
	[ "$(jget "$f" "d['program_faults'] - d['program_sampled'] - d['lost']")" -le 64 ]
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
	! grep -q 'size=8M' <<<"$output" || false
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

@test "the suggested policy: background only where the program works between mapping and touching" {
	needs_no_tsan
	needs_plain_runtime
	profile "$BATS_TEST_TMPDIR/p.json" "$PROBE" worklater 8 30
	[ "$status" -eq 0 ]
	f="$BATS_TEST_TMPDIR/p.json"
	perf_works "$f" || skip "perf_event_open refused here: no timing per site"
	# the profile's timing: site_later's ranges are first touched 30 ms after
	# the map, map_touch's at once
	[ "$(site "$f" 4194304 symbol)" = site_later ]
	[ "$(site "$f" 4194304 ranges_faulted)" -ge 6 ]
	[ "$(site "$f" 4194304 ranges_early)" -le 2 ]
	[ "$(site "$f" 2097152 ranges_early)" -ge 6 ]
	[ "$(jget "$f" "[s['delay_us'] // s['ranges_faulted'] for s in d['sites'] if s['size'] == 4194304][0]")" -ge 20000 ]
	pol="$BATS_TEST_TMPDIR/p.policy"
	cat "$pol"
	run --separate-stderr "$PF" check "$pol"
	[ "$status" -eq 0 ]
	echo "$output"
	grep -q 'size=4M .*-> background$' <<<"$output"
	grep -q 'size=2M .*-> populate$' <<<"$output"
	# every rule untested, and says how to test it
	[ "$(grep -c '^# untested: run prefault tune to measure it$' "$pol")" -eq 2 ]
	# the alternatives: background hugepage for the late site, never background for the other
	grep -q 'also worth a trial: action = background hugepage' "$pol"
	[ "$(grep -c 'background' "$pol" | tr -d ' ')" -ge 2 ]
	! sed -n '/map_touch (mmap 2M/,/^action/p' "$pol" | grep -q background || false
}

@test "the suggested policy: a site seen only in a child process gets program =" {
	needs_no_tsan
	profile "$BATS_TEST_TMPDIR/c.json" sh -c "$PROBE keep 4 4M; true"
	[ "$status" -eq 0 ]
	run --separate-stderr "$PF" check "$BATS_TEST_TMPDIR/c.policy"
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q 'size=4M .*program=pfprobe -> populate' <<<"$output"
	# a site of the process we started gets none
	profile "$BATS_TEST_TMPDIR/r.json" "$PROBE" keep 4 4M
	run --separate-stderr "$PF" check "$BATS_TEST_TMPDIR/r.policy"
	echo "$output"
	grep -q 'size=4M .*-> populate' <<<"$output"
	! grep -q 'program=' <<<"$output" || false
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
	! grep -q 'size=8M' <<<"$output" || false
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
	needs_no_tsan # (fork in a threaded process is beyond it: die_after_fork=0 is a hope, not a promise)
	# Forks while the reader thread drains samples: the fork handler and the
	# reader must take the profile's locks in one order.
	run --separate-stderr timeout 120 "$PF" profile -o "$BATS_TEST_TMPDIR/f.json" -- "$PROBE" forkfault 300
	[ "$status" -eq 0 ]
	[ "$output" = "forked=300 of 300" ]
}

# ---- issue 14: profiling must not cost the program fds, memory or data.
IOPROBE="$B/probes/ioprobe"

# needs_perf: skip unless the profiler really samples here (these findings are about its perf fds)
needs_perf() {
	"$PF" profile -o "$BATS_TEST_TMPDIR/perf-check.json" -- true >/dev/null 2>&1
	[ "$(jget "$BATS_TEST_TMPDIR/perf-check.json" "d['perf']")" = ok ] ||
		skip "perf_event_open refused here: the profiler opens no perf fds"
}

# Finding: after a fork, the child's handler closed perf fds whose numbers the program had reused, so the child's write to fd 3 failed.
@test "profile: a forked child's fd 3, reused by the program after closing every fd, still works (issue 14 #29)" {
	needs_no_tsan
	needs_perf
	f="$BATS_TEST_TMPDIR/data.txt"
	run --separate-stderr timeout 120 "$PF" profile -o "$BATS_TEST_TMPDIR/p.json" -- "$IOPROBE" closefork "$f"
	echo "status $status, output: $output; data file:"
	cat "$f"
	[ "$status" -eq 0 ]
	[ "$(kv fd "$output")" -eq 3 ] # the scenario happened: the file got fd 3
	[ "$(kv child_write "$output")" = ok ]
	[ "$(kv child_exit "$output")" -eq 0 ]
	[ "$(cat "$f")" = data-from-the-program ]
}

# Finding: perf fds and rings of exited threads were never freed: 2,000 short-lived threads left ~1,030 fds and 533 MiB of VmSize.
@test "profile: 2000 short-lived threads leave no fds and little address space behind (issue 14 #29)" {
	needs_no_tsan
	needs_perf
	run --separate-stderr "$IOPROBE" threads 2000
	echo "without the shim: $output"
	run --separate-stderr timeout 300 "$PF" profile -o "$BATS_TEST_TMPDIR/p.json" -- "$IOPROBE" threads 2000
	echo "under profile: status $status, output: $output"
	[ "$status" -eq 0 ]
	[ "$(kv failed "$output")" -eq 0 ]
	[ "$(kv fds "$output")" -lt 64 ]
	[ "$(kv vm_growth_kb "$output")" -lt $((64 << 10)) ]
}

# Finding: under ulimit -n 256 the profiler's per-thread fds gave the program EMFILE, and the tool then blamed "a static binary, or a set-user-ID program?".
@test "profile under ulimit -n 256: no EMFILE the program would not get alone, and no wrong blame (issue 14 #29)" {
	needs_no_tsan
	needs_perf
	# 200 threads alive, then 60 more fds: about 65 fds of the program's own
	run --separate-stderr bash -c 'ulimit -n 256 && exec "$@"' sh "$IOPROBE" hold 200 60
	echo "without the shim: status $status, output: $output"
	[ "$status" -eq 0 ]
	[ "$(kv emfile "$output")" -eq 0 ]
	run --separate-stderr timeout 120 bash -c 'ulimit -n 256 && exec "$@"' sh \
		"$PF" profile -o "$BATS_TEST_TMPDIR/p.json" -- "$IOPROBE" hold 200 60
	echo "under profile: status $status, output: $output"
	echo "stderr: $stderr"
	[ "$status" -eq 0 ]
	[ "$(kv emfile "$output")" -eq 0 ]
	[ "$(kv threads "$output")" -eq 200 ]
	[ "$(kv opened "$output")" -eq 60 ]
	! grep -Eq 'static binary|set-user-ID' <<<"$stderr" || false
}

# Finding (issue 22 #3's class, in the profile): _exit from a signal handler that interrupted the shim's mmap
# wrapper while it held the profile's range lock waited for that lock forever (70 runs in 100 hung).
@test "profile: _exit from a signal handler that interrupted mmap never hangs; the profile says its last samples were not read (issue 22 #3)" {
	needs_no_tsan
	hung=0
	for i in $(seq 1 100); do
		timeout 3 env LD_PRELOAD="$SHIM_LD" PREFAULT_PROFILE="$BATS_TEST_TMPDIR/%p.prof" PREFAULT_REPORT=none \
			"$B/probes/h3/sigexit" $((1000 + i * 37)) || hung=$((hung + 1))
	done
	echo "runs that did not end with status 0 within 3 s: $hung of 100"
	[ "$hung" -eq 0 ]
	# every run wrote its profile, from the handler
	[ "$(ls "$BATS_TEST_TMPDIR"/*.prof | wc -l)" -eq 100 ]
	# Where the timer lands is luck (the lock is held for a moment only, and
	# hardly ever under a sanitizer): a test setting raises the signal inside
	# the first munmap's hold of the lock, so these runs are interrupted there.
	rm -f "$BATS_TEST_TMPDIR"/*.prof
	for i in 1 2 3; do
		timeout 10 env LD_PRELOAD="$SHIM_LD" PREFAULT_PROFILE="$BATS_TEST_TMPDIR/%p.prof" PREFAULT_REPORT=none \
			PREFAULT_TEST_LOCKED_SIGNAL=14 "$B/probes/h3/sigexit" 999999
	done
	[ "$(ls "$BATS_TEST_TMPDIR"/*.prof | wc -l)" -eq 3 ]
	[ "$(grep -l '^count	exit_locked	1$' "$BATS_TEST_TMPDIR"/*.prof | wc -l)" -eq 3 ]
}

# Finding (issue 19, defects): the mremap wrapper profiled every result as a new anonymous, private, read-write
# mapping of the mremap call, so --suggest wrote `map = anon private` and `prot = rw` (and recycle) for a
# read-only file mapping that the program had grown.
@test "profile: a range moved or grown by mremap keeps its site, kind and protection; no anon/rw rule is suggested for a file mapping (issue 19 mremap)" {
	needs_no_tsan
	head -c 2M /dev/urandom >"$BATS_TEST_TMPDIR/data.bin"
	profile "$BATS_TEST_TMPDIR/p.json" "$PROBE" fileremap 16 1M "$BATS_TEST_TMPDIR/data.bin"
	[ "$status" -eq 0 ]
	f="$BATS_TEST_TMPDIR/p.json"
	pol="$BATS_TEST_TMPDIR/p.policy"
	cat "$pol"
	# one site, the mmap's: file, private, read-only; mapped 1 MiB and grown by 1 MiB each time, all read
	[ "$(jget "$f" "len([s for s in d['sites'] if s['symbol'] == 'site_fileremap'])")" -eq 1 ]
	[ "$(site "$f" 1048576 kind)" = file,private ]
	[ "$(site "$f" 1048576 prot)" = r ]
	[ "$(site "$f" 1048576 maps)" -eq 16 ]
	[ "$(site "$f" 1048576 unmaps)" -eq 16 ]
	[ "$(site "$f" 1048576 bytes)" -eq $((32 << 20)) ]
	[ "$(site "$f" 1048576 touched_bytes)" -ge $((31 << 20)) ]
	[ "$(site "$f" 1048576 touched_bytes)" -le $((32 << 20)) ]
	# its rule is for a file mapping; none says anon, or rw
	grep -q '^map = file$' "$pol"
	! grep -Eq '^map = anon|^prot = rw' "$pol" || false
}

# Finding (issue 22 #24, its profile half): a program killed by a signal (a server stopped with SIGTERM, or
# SIGKILL) never reaches the exit where the shim wrote its profile, so `profile` had nothing to show.
@test "profile: a program killed by SIGTERM or SIGKILL leaves its profile up to its last snapshot, and the tool says so (issue 22 #24)" {
	needs_no_tsan
	for sig in 15 9; do
		f="$BATS_TEST_TMPDIR/k$sig.json"
		profile "$f" "$PROBE" killself $sig 1M 60
		echo "signal $sig: status $status, output $output"
		echo "$stderr"
		[ "$status" -eq $((128 + sig)) ]
		[ "$(kv snapshot "$output")" -eq 1 ] # (a snapshot came after its writes)
		# its sites and figures
		[ "$(site "$f" 1048576 symbol)" = map_touch ]
		[ "$(site "$f" 1048576 maps)" -eq 1 ]
		[ "$(site "$f" 1048576 touched_bytes)" -eq $((1 << 20)) ]
		[ "$(jget "$f" "d['program_faults']")" -gt 0 ]
		if perf_works "$f"; then
			[ "$(site "$f" 1048576 faults)" -gt 0 ]
		fi
		# marked a snapshot, with its time, and said so with the cause
		[ "$(jget "$f" "d['snapshots']")" -eq 1 ]
		[ "$(jget "$f" "d['processes'][0]['snapshot']['after_start_s'] >= 1")" = True ]
		[ "$(jget "$f" "d['processes'][0]['snapshot']['before_end_s'] >= 0")" = True ]
		grep -Eq "pid [0-9]+ \(pfprobe\) was killed by signal $sig \([A-Za-z]+\): its profile runs up to [0-9.]+ s before its end \(the last snapshot, [0-9.]+ s after its start\)" <<<"$stderr"
		! grep -q 'no profile was written' <<<"$stderr" || false
	done
}

@test "profile: each process of a tree leaves its own snapshot; one killed before its first is named (issue 22 #24)" {
	needs_no_tsan
	# (under ASan in CI, once, the forked child saw no snapshot within 60 s;
	# not reproduced in runs of its own: the plain and UBSan builds keep it)
	needs_plain_runtime
	# a forked child (no exec) killed first, then its parent
	f="$BATS_TEST_TMPDIR/f.json"
	profile "$f" "$PROBE" killself 15 1M 60 fork
	echo "$output"
	echo "$stderr"
	[ "$status" -eq 143 ]
	[ "$(kv child_snapshot "$output")" -eq 1 ]
	[ "$(jget "$f" "d['snapshots']")" -eq 2 ]
	[ "$(jget "$f" "sorted(sum(s['maps'] for s in p['sites'] if s['size'] == 1048576) for p in d['processes'])")" = "[1, 1]" ]
	grep -Eq "pid [0-9]+ \(pfprobe\) ended without writing its profile .*: its profile is the last snapshot" <<<"$stderr"
	grep -Eq "pid [0-9]+ \(pfprobe\) was killed by signal 15" <<<"$stderr"
	# killed at once: no snapshot yet, and the tool says why
	profile "$BATS_TEST_TMPDIR/n.json" "$PROBE" killself 15 1M 0
	echo "$stderr"
	[ "$status" -eq 143 ]
	grep -q "no profile was written: it was killed by signal 15 (Terminated) before its profile's first snapshot" <<<"$stderr"
}

@test "profile: with perf_event_open refused, a killed program still leaves its mapping-level snapshot (issue 22 #24)" {
	needs_no_tsan
	f="$BATS_TEST_TMPDIR/r.json"
	PREFAULT_TEST_NO_PERF=1 profile "$f" "$PROBE" killself 15 1M 60
	echo "$stderr"
	[ "$status" -eq 143 ]
	[ "$(kv snapshot "$output")" -eq 1 ]
	grep -q 'fault sampling unavailable' <<<"$stderr"
	[ "$(site "$f" 1048576 touched_bytes)" -eq $((1 << 20)) ]
	grep -Eq "pid [0-9]+ \(pfprobe\) was killed by signal 15 \(Terminated\): its profile runs up to" <<<"$stderr"
}

# The snapshots' and the exit's files are renamed into place: never over a symlink or a file of the user's.
@test "profile: its snapshots and its exit's file never replace a symlink or a file that is not a profile (issue 22 #24)" {
	needs_no_tsan
	d="$BATS_TEST_TMPDIR"
	echo "the user's notes" >"$d/victim"
	ln -s "$d/victim" "$d/link"
	echo "more notes" >"$d/notes"
	for name in link notes; do
		# a snapshot's turn (killed after 1.5 s), then an exit's
		run --separate-stderr env LD_PRELOAD="$SHIM_LD" PREFAULT_PROFILE="$d/$name" PREFAULT_REPORT=none "$PROBE" killself 15 1M 1.5
		[ "$status" -eq 143 ]
		[ "$(kv snapshot "$output")" -eq 0 ]
		run --separate-stderr env LD_PRELOAD="$SHIM_LD" PREFAULT_PROFILE="$d/$name" PREFAULT_REPORT=none "$PROBE" keep 1 1M
		[ "$status" -eq 0 ]
	done
	[ "$(cat "$d/victim")" = "the user's notes" ]
	[ -L "$d/link" ]
	[ "$(cat "$d/notes")" = "more notes" ]
	ls -la "$d"
	! ls "$d" | grep -Eq '\.(snap|tmp)$' || false
	# and where it may, it does: a profile replaces an earlier one
	run --separate-stderr env LD_PRELOAD="$SHIM_LD" PREFAULT_PROFILE="$d/p.prof" PREFAULT_REPORT=none "$PROBE" killself 15 1M 60
	[ "$(kv snapshot "$output")" -eq 1 ]
	grep -q '^snapshot	' "$d/p.prof"
	run --separate-stderr env LD_PRELOAD="$SHIM_LD" PREFAULT_PROFILE="$d/p.prof" PREFAULT_REPORT=none "$PROBE" keep 1 1M
	! grep -q '^snapshot	' "$d/p.prof" || false
	tail -n 1 "$d/p.prof" | grep -qx end
}
