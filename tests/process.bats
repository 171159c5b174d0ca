#!/usr/bin/env bats
# Process trees: fork, exec, vfork, _exit, threads.  One report per process,
# exit statuses kept.
load helpers

setup() {
	R="$BATS_TEST_TMPDIR/rep"
	mkdir -p "$R"
	POL=$(policy one <<<$'[rule one]\nsize = 1M\naction = populate')
}

reports() { ls "$R" | wc -l; }

@test "fork: one report per process, each counting only its own requests" {
	REPORT="$R/%p.json" run --separate-stderr shimmed "$POL" "$PROBE" fork 3
	[ "$status" -eq 0 ]
	[ "$(kv status_sum "$output")" -eq 6 ]
	[ "$(reports)" -eq 4 ]
	parent=$(for f in "$R"/*.json; do jget "$f" "d['ppid']"; done | sort | uniq -c | sort -rn | awk 'NR==1{print $2}')
	n=0
	for f in "$R"/*.json; do
		pid=$(jget "$f" "d['pid']")
		[ "$f" = "$R/$pid.json" ]
		if [ "$(jget "$f" "d['ppid']")" = "$parent" ] && [ "$(rule_stat "$f" one matched)" -eq 1 ]; then
			n=$((n + 1))
		fi
	done
	[ "$n" -eq 3 ] # three children mapped one 1 MiB region each
}

@test "exec: the replaced image writes no report; the new image reports from its own start" {
	REPORT="$R/%p-%e.json" run --separate-stderr shimmed "$POL" "$PROBE" exec /bin/sh -c 'exit 5'
	[ "$status" -eq 5 ]
	[ "$(reports)" -eq 1 ]
	f=$(ls "$R"/*.json)
	[ "$(jget "$R/$(basename "$f")" "d['program']")" = sh ]
	# the 1 MiB the probe mapped before exec is not in the shell's counts
	[ "$(rule_stat "$f" one matched)" -eq 0 ]
}

@test "a shell loop: every child reports, the loop's exit status is kept" {
	REPORT="$R/%p.json" run --separate-stderr shimmed "$POL" /bin/sh -c 'for i in 1 2 3; do /bin/true; done; exit 4'
	[ "$status" -eq 4 ]
	[ "$(reports)" -eq 4 ]
}

@test "_exit and _Exit still write the report; exit codes are kept" {
	for mode in _exit _Exit exit return; do
		rm -f "$R"/*
		REPORT="$R/r.json" run --separate-stderr shimmed "$POL" "$PROBE" exit "$mode" 9
		[ "$status" -eq 9 ]
		[ "$(rule_stat "$R/r.json" one matched)" -eq 1 ]
	done
}

@test "vfork: the child neither writes nor spoils the parent's report" {
	needs_no_tsan
	REPORT="$R/%p-%e.json" run --separate-stderr shimmed "$POL" "$PROBE" vfork
	[ "$status" -eq 0 ]
	[ "$(kv vfork_exit "$output")" -eq 7 ]
	[ "$(kv vfork_exec "$output")" -eq 0 ]
	ls "$R"
	[ "$(ls "$R" | grep -c pfprobe)" -eq 1 ]
	[ "$(ls "$R" | grep -c true)" -eq 1 ]
	[ "$(reports)" -eq 2 ]
	f=$(ls "$R"/*pfprobe.json)
	jget "$f" "d['program']"
}

@test "posix_spawn (via a shell pipeline and env) works under the shim" {
	REPORT="$R/%p.json" run --separate-stderr shimmed "$POL" /usr/bin/env sh -c 'echo hello | tr a-z A-Z'
	[ "$status" -eq 0 ]
	[ "$output" = HELLO ]
}

@test "threads: many threads mapping and allocating at once, every block populated" {
	needs_own_malloc
	pol=$(populate_all)
	REPORT="$R/r.json" run --separate-stderr shimmed "$pol" "$PROBE" threads 8 40 1M
	[ "$status" -eq 0 ]
	[ "$(kv bad "$output")" -eq 0 ]
	[ "$(rule_stat "$R/r.json" big matched)" -eq 320 ]
	[ "$(jget "$R/r.json" "d['budget']['used']")" -eq 0 ]
	# the same run without the shim shows what "bad" looks like
	run --separate-stderr "$PROBE" threads 8 40 1M
	[ "$(kv bad "$output")" -gt 0 ]
}

@test "threads that have exited still count in the report (their counts are folded in at thread exit)" {
	needs_own_malloc
	# A malloc rule from 64 KiB whose caller never matches: blocks from
	# 64 KiB are counted (as unmatched), smaller ones are not looked at.
	pol=$(policy m <<<$'[rule m]\ncall = malloc\nsize = >=64K\ncaller = no-such-object.so\naction = populate')
	REPORT="$R/r.json" run --separate-stderr shimmed "$pol" "$PROBE" threads 4 25 64K
	[ "$status" -eq 0 ]
	[ "$(jget "$R/r.json" "[s['maps'] for s in d['unmatched']['mmap']['sizes'] if s['size']==65536][0]")" -eq 50 ]
	[ "$(jget "$R/r.json" "d['calls']['munmap']")" -ge 50 ]
	[ "$(jget "$R/r.json" "[s['maps'] for s in d['unmatched']['malloc']['sizes'] if s['size']==65536][0]")" -ge 50 ]
	[ "$(jget "$R/r.json" "d['malloc_counted_from']")" -eq 65536 ]
}

@test "observe mode does not count the malloc family, and says so instead of printing zeros" {
	needs_own_malloc
	REPORT="$R/r.json" run --separate-stderr shimmed "" "$PROBE" threads 2 10 64K
	[ "$status" -eq 0 ]
	[ "$(jget "$R/r.json" "d['malloc_counted_from']")" = None ]
	[ "$(jget "$R/r.json" "d['calls']['malloc']")" = None ]
	[ "$(jget "$R/r.json" "d['unmatched']['malloc']")" = None ]
	[ "$(jget "$R/r.json" "d['calls']['mmap'] > 0")" = True ]
	REPORT=stderr run --separate-stderr shimmed "" "$PROBE" threads 2 10 64K
	grep -q 'malloc family not counted' <<<"$stderr"
}

@test "fork handlers of other libraries that allocate and map, registered before the shim's, do not deadlock" {
	# libstack, preloaded after the shim, registers its fork handlers first;
	# they run between the shim's prepare and child handlers.
	REPORT="$R/%p.json" run --separate-stderr timeout 30 env LD_PRELOAD="$SHIM_LD:$STACKLIB" PREFAULT_POLICY="$POL" \
		PREFAULT_REPORT="$R/%p.json" "$PROBE" fork 3
	[ "$status" -eq 0 ]
	[ "$(kv status_sum "$output")" -eq 6 ]
	[ "$(reports)" -eq 4 ]
}

@test "observe mode forwards the malloc family and nothing more: the allocator behind the shim sees the program's calls, once each" {
	needs_own_malloc
	COUNT="$B/probes/libcount.so"
	# counts N: what the allocator behind saw, without and with the shim in front
	counts() {
		COUNT_OUT="$R/plain" LD_PRELOAD="$COUNT" "$PROBE" free "$1" 64 >/dev/null
		COUNT_OUT="$R/shim" LD_PRELOAD="$SHIM:$COUNT" PREFAULT_REPORT="$R/r.json" "$PROBE" free "$1" 64 >/dev/null
		echo "$(kv count_malloc "$(cat "$R/plain")") $(kv count_malloc "$(cat "$R/shim")") $(kv count_free "$(cat "$R/plain")") $(kv count_free "$(cat "$R/shim")")"
	}
	read -r p1 s1 pf1 sf1 <<<"$(counts 1000)"
	read -r p2 s2 pf2 sf2 <<<"$(counts 21000)"
	echo "1000 blocks: $p1 without, $s1 with; 21000 blocks: $p2 without, $s2 with (frees $pf1 $sf1 $pf2 $sf2)"
	# the probe's 20000 more blocks reach the allocator as 20000 more calls
	[ $((p2 - p1)) -eq 20000 ]
	[ $((s2 - s1)) -eq 20000 ]
	[ $((sf2 - sf1)) -eq $((pf2 - pf1)) ]
	# the shim adds a fixed few of its own at start-up (pthread_atfork), none per call
	[ $((s1 - p1)) -eq $((s2 - p2)) ]
	[ $((s1 - p1)) -le 8 ]
	# and it looked at none of them
	[ "$(jget "$R/r.json" "d['malloc_counted_from']")" = None ]
}
