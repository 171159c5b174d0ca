#!/usr/bin/env bats
# Hangs (issue 22, class A): the shim's code must never stop the program,
# whatever thread runs it: one with a pending or asynchronous cancellation,
# a signal handler that interrupted the shim, or a fork child whose parent
# was between two steps.  Each finding is a small program of
# tests/probes/hostile3/, run without the shim and with it.
load helpers

H3="$B/probes/h3"

pop_policy() {
	policy pop <<-'EOF'
	[rule blocks]
	call = malloc
	size = >=1M
	action = populate
	[rule maps]
	call = mmap
	size = >=1M
	action = populate
	EOF
}

@test "a thread that cancels itself and calls exit(3): the process exits 3 and the report arrives (issue 22 #1)" {
	run -3 timeout 10 "$H3/cancelexit"
	# with no policy, the report on stderr as usual
	run --separate-stderr timeout 10 env LD_PRELOAD="$SHIM_LD" "$H3/cancelexit"
	echo "status $status; $stderr"
	[ "$status" -eq 3 ]
	[[ "$stderr" == "prefault: cancelexit["* ]]
	# and under prefault run
	run --separate-stderr timeout 10 "$PF" run -- "$H3/cancelexit"
	[ "$status" -eq 3 ]
	[[ "$stderr" == "prefault: cancelexit["* ]]
}

@test "malloc with a cancellation pending returns, and threads in asynchronous cancellation leave no lock held (issue 22 #2)" {
	plain=$(timeout 30 "$H3/cancelmalloc")
	# ASan cannot follow an asynchronous cancellation: the frames of
	# instrumented code (the shim's wrappers) the cancelled thread was in
	# stay poisoned, and at the thread's end its runtime, before it clears
	# the stack's shadow, reports its own sigaltstack call on that stack
	# (google/sanitizers#1399; an ASan-built program alone does it too).
	# Without its alternate signal stack it has no such call; the shim's
	# locks are still tested.
	local asan="${ASAN_OPTIONS:-}"
	[ "${PREFAULT_SANITIZER:-}" != address ] || asan="${asan:+$asan:}use_sigaltstack=0"
	run --separate-stderr timeout 30 env ${asan:+ASAN_OPTIONS="$asan"} LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$(pop_policy)" PREFAULT_REPORT=none "$H3/cancelmalloc"
	echo "without: $plain"
	echo "with:    $output (status $status)"
	[ "$status" -eq 0 ]
	[ "$output" = "$plain" ]
	[[ "$output" == *"malloc returned a block"*"second malloc ok"*"async cancellations: 20" ]]
}

@test "a cancellation already on its way when the shim turns cancellation off never acts inside the shim (glibc 2.36; CI's TSan hang)" {
	# cancelinflight's own pthread_setcancelstate sends the thread SIGCANCEL
	# right after each disable, as a signal sent while the state was
	# enabled would land; glibc up to 2.36 then cancels with the state
	# disabled unless the type is deferred too (20 of 20 before the fix).
	run timeout 30 "$H3/cancelinflight"
	[ "$status" -eq 0 ]
	[[ "$output" == "disables in map 0 count 0, cancelled while disabled 0; first mappings present 20, children's own status 20, SIGCANCEL left blocked 0 of 20; threads cancelled 0 of 60" ]]
	local asan="${ASAN_OPTIONS:-}"
	[ "${PREFAULT_SANITIZER:-}" != address ] || asan="${asan:+$asan:}use_sigaltstack=0"
	run --separate-stderr timeout 30 env ${asan:+ASAN_OPTIONS="$asan"} LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$(pop_policy)" PREFAULT_REPORT=none "$H3/cancelinflight"
	echo "status $status: $output"
	[ "$status" -eq 0 ]
	# the shim turned cancellation off around its locks in mmap and in a
	# thread's first count (the test can fail), and no cancellation acted
	# while it was off; it acted after the real mmap, whose mapping is
	# there as without the shim (none before: hostile review of d74664f);
	# a fork from such a thread leaves its child alone (0 of 20 exited with
	# their own status before) and SIGCANCEL unblocked
	[[ "$output" == "disables in map 1 count 1, cancelled while disabled 0; first mappings present 20, children's own status 20, SIGCANCEL left blocked 0 of 20; threads cancelled "*" of 60" ]]
}

@test "_exit from a signal handler that interrupted munmap under a background rule never hangs (issue 22 #3)" {
	pol=$(policy bg <<<$'[rule bg]\ncall = mmap\nsize = >=1M\naction = background')
	# (one run in 30 to 50 hung before: 200 runs find it nearly always)
	hung=0
	for i in $(seq 1 200); do
		timeout 3 env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$pol" PREFAULT_REPORT="$BATS_TEST_TMPDIR/r.%p.json" \
			"$H3/sigexit" $((1000 + i * 37)) || hung=$((hung + 1))
	done
	echo "runs that did not end with status 0 within 3 s: $hung of 200"
	[ "$hung" -eq 0 ]
	# (and the report was written from the handler)
	[ "$(ls "$BATS_TEST_TMPDIR"/r.*.json | wc -l)" -eq 200 ]
}

# A thread's counts lived in its TLS, listed for the report and unlisted by
# a key destructor; a thread whose first call came after that destructor
# could run stayed listed, and the next thread on its stack listed the same
# block again: a cycle the report at exit never left (no policy at all), or
# a stack unmapped meanwhile read (a crash: a program whose SIGALRM handler
# maps, 1 run in 8 under --auto).
@test "a thread whose first mmap comes after its destructors ran, and threads on its stack after it: the program ends and the report counts every call" {
	needs_no_tsan # (TSan ends a thread's state in the same last round: instrumented code after it crashes in TSan)
	run timeout 10 "$H3/latethread" 20
	[ "$status" -eq 0 ]
	want=$(kv maps "$output")
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr timeout 10 env LD_PRELOAD="$SHIM_LD" \
		PREFAULT_REPORT="$BATS_TEST_TMPDIR/r.json" "$H3/latethread" 20
	echo "status $status; maps $(kv maps "$output") (without the shim $want)"
	[ "$status" -eq 0 ]
	[ "$(kv maps "$output")" -eq "$want" ]
	[ "$(jget "$BATS_TEST_TMPDIR/r.json" "d['calls']['munmap']")" -eq "$want" ]
	# (ASan's runtime maps once through the shim itself)
	[ -n "$SAN_RT" ] || [ "$(jget "$BATS_TEST_TMPDIR/r.json" "d['calls']['mmap']")" -eq "$want" ]
}

# The destructor that folds a thread's counts took their lock with no guard:
# a handler that forked there (a crash or diagnostic handler) waited in the
# fork's handlers for the lock its own thread held: 8 runs of 8 (helper-32).
# Under every action, a stack rule's start in each thread asked glibc for
# the thread's stack (pthread_getattr_np), which mallocs there: at its exit
# the thread freed, and a handler's fork that interrupted it waited on
# malloc's lock in glibc's fork (4 runs of 4 before).
@test "a signal handler that forks while its thread exits: the program ends, with no policy, under --auto and every action" {
	needs_no_tsan # (TSan ends a thread's state in its last destructor round: the handler's fork runs instrumented code after it, and stalls in TSan's atomics)
	run timeout 30 "$H3/exitsig" fork 3000 20000
	[ "$status" -eq 0 ]
	for pol in "" auto "$BATS_TEST_DIRNAME/aggressive.policy"; do
		run --separate-stderr timeout 30 env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$pol" PREFAULT_REPORT=none \
			"$H3/exitsig" fork 3000 20000
		echo "policy ${pol:-none}: status $status, $output"
		[ "$status" -eq 0 ]
		[ "$(kv forks "$output")" -gt 0 ]
	done
}

@test "fork while another thread works out the budget: every child goes on (issue 22 #4)" {
	run timeout 120 env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$(pop_policy)" PREFAULT_REPORT=none "$H3/forkbudget" 250
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "finished 250 of 250" ]
}
