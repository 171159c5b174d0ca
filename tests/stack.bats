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

# Issue 14, findings 23 and 24: stack rules and the shim's own stack use
# must fit any stack the program gives its threads.
MMPROBE="$B/probes/mmprobe"

# A stack rule touched down into the PROT_NONE guard a program put under its own pthread_attr_setstack stack: SIGSEGV.
@test "a stack rule never touches a guard the program placed in its own stack (realtime, every action at once) (issue 14 #23)" {
	needs_no_tsan
	# SIZE GUARD: the whole region is the stack, its lowest GUARD bytes PROT_NONE
	shapes="256K:64K 192K:64K 512K:256K"
	for s in $shapes; do
		run --separate-stderr "$MMPROBE" ownstack "${s%:*}" "${s#*:}"
		[ "$status" -eq 0 ]
		[ "$(kv ran "$output")" -eq 1 ]
	done
	got=
	rt="$POLICIES/realtime.policy"
	if [ -n "$SAN_RT" ]; then # mlockall would lock a sanitizer's whole shadow: the rules alone
		rt="$BATS_TEST_TMPDIR/realtime.policy"
		grep -v '^mlockall' "$POLICIES/realtime.policy" >"$rt"
	fi
	for pol in "$rt" "$BATS_TEST_DIRNAME/aggressive.policy"; do
		for s in $shapes; do
			run --separate-stderr shimmed "$pol" "$MMPROBE" ownstack "${s%:*}" "${s#*:}"
			echo "$(basename "$pol") $s: status=$status $output"
			got="$got $status:$(kv ran "$output")"
		done
	done
	# exit status and whether the thread ran, per policy and stack shape
	[ "$got" = "$(printf ' 0:1%.0s' 1 2 3 4 5 6)" ]
}

# The first matching mmap on a thread with a 16 to 24 KiB stack crashed: the lazy budget set-up put a 16 KiB buffer on the stack.
@test "a thread with a 16, 20 or 24 KiB stack maps, allocates and exits through the shim (issue 14 #24)" {
	needs_own_malloc
	pol=$(policy small <<<$'[rule m]\ncall = mmap\nsize = 1M\naction = populate\n[rule b]\ncall = malloc\nsize = 1M\naction = populate')
	got=
	for st in 16K 20K 24K; do
		run --separate-stderr "$MMPROBE" smallstack "$st" 1M
		[ "$status" -eq 0 ]
		[ "$(kv thread_done "$output")" -eq 1 ]
		f="$BATS_TEST_TMPDIR/$st.json"
		REPORT="$f" run --separate-stderr shimmed "$pol" "$MMPROBE" smallstack "$st" 1M
		echo "$st: status=$status $output"
		got="$got $st:$status:$(kv thread_done "$output")"
		# the report was written, on that thread, with both requests matched
		if [ "$status" -eq 0 ]; then
			[ "$(rule_stat "$f" m matched)" -eq 1 ]
			[ "$(rule_stat "$f" b matched)" -eq 1 ]
		fi
	done
	[ "$got" = " 16K:0:1 20K:0:1 24K:0:1" ]
}

# Under ulimit -s 16, sleep 0 crashed 8 times in 30 with the shim and no policy, never without it.
# The crash is the dynamic loader's own: mapping any preloaded library puts
# an array of its program headers on the stack, and with a random stack
# offset a 16 KiB stack sometimes has no room (an empty library crashes as
# often).  So this compares the shim with an empty preload, with address
# randomisation off so that each run is the same: at the largest environment
# with which an empty preload still starts, the shim must start, run and
# write its report too.  It found the shim's two extra program headers (now
# linked with -z noseparate-code) and nothing of its own code.
@test "under ulimit -s 16 the shim needs no more stack than an empty preload: start-up, run and report (issue 14 #24)" {
	needs_plain_runtime
	command -v setarch >/dev/null || skip "needs setarch"
	echo 'int x;' >"$BATS_TEST_TMPDIR/e.c"
	cc -shared -fPIC -o "$BATS_TEST_TMPDIR/libempty.so" "$BATS_TEST_TMPDIR/e.c"
	# starts LIB PAD [REPORT]: does sleep start under ulimit -s 16 with LIB preloaded?
	starts() {
		env -i PAD="$(head -c "$2" /dev/zero | tr '\0' x)" PREFAULT_REPORT="${3:-none}" setarch -R /bin/bash -c \
			'ulimit -s 16 && LD_PRELOAD="$0" exec /bin/sleep 0' "$1" 2>/dev/null
	}
	starts "$BATS_TEST_TMPDIR/libempty.so" 1000 || skip "nothing starts under ulimit -s 16 here"
	lo=1000 hi=16384
	while [ $((hi - lo)) -gt 16 ]; do # the empty preload's edge, to 16 bytes
		mid=$(((lo + hi) / 2))
		if starts "$BATS_TEST_TMPDIR/libempty.so" $mid; then lo=$mid; else hi=$mid; fi
	done
	echo "an empty preload starts with up to $lo bytes of environment"
	starts "$SHIM" $((lo - 16))
	starts "$SHIM" $((lo - 32)) "$BATS_TEST_TMPDIR/r.json"
	[ -s "$BATS_TEST_TMPDIR/r.json" ]
}
