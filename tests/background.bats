#!/usr/bin/env bats
# Background prefaulting and parallel populate: the program's data is never
# touched by the workers, and their faults are theirs.
load helpers

bg_policy() {
	policy bg <<-EOF
	[global]
	workers = ${1:-1}
	[rule bg]
	size = >=1M
	map = anon private
	action = background
	EOF
}

@test "background: mmap returns at once and the program's later loop takes no fault" {
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed "$(bg_policy)" "$PROBE" bgwork 64M 300
	echo "$output"
	[ "$(kv loop_faults "$output")" -lt 100 ]
	f="$BATS_TEST_TMPDIR/r.json"
	[ "$(jget "$f" "d['faults']['in_prefault']")" -ge 16000 ]
	[ "$(jget "$f" "[r for r in d['rules'] if r['name']=='bg'][0]['background']['populated_bytes']")" -eq $((64 << 20)) ]
	# without the shim the same loop faults on every page
	run --separate-stderr "$PROBE" bgwork 64M 0
	[ "$(kv loop_faults "$output")" -ge 16000 ]
}

@test "background: the program's writes racing the worker are never lost" {
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed "$(bg_policy 2)" "$PROBE" race 30 32M
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(kv lost "$output")" -eq 0 ]
	f="$BATS_TEST_TMPDIR/r.json"
	# both sides really touched the buffers: a race happened
	[ "$(jget "$f" "[r for r in d['rules'] if r['name']=='bg'][0]['background']['populated_bytes']")" -gt 0 ]
	[ "$(jget "$f" "[r for r in d['rules'] if r['name']=='bg'][0]['background']['program_first_bytes']")" -gt 0 ]
}

@test "background: munmap, mremap, mprotect and MAP_FIXED racing the worker" {
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed "$(bg_policy 2)" "$PROBE" unmaprace 80 16M
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(kv bad "$output")" -eq 0 ]
	f="$BATS_TEST_TMPDIR/r.json"
	[ "$(jget "$f" "[r for r in d['rules'] if r['name']=='bg'][0]['background']['cancelled_bytes']")" -gt 0 ]
	[ "$(jget "$f" "d['budget']['used']")" -eq 0 ]
}

@test "background: fork and exit while the worker is busy; the child starts its own" {
	REPORT="$BATS_TEST_TMPDIR/%p.json" run --separate-stderr timeout 60 env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$(bg_policy)" PREFAULT_REPORT="$BATS_TEST_TMPDIR/%p.json" "$PROBE" forkbusy 1G
	echo "$output"
	[ "$status" -eq 3 ]
	[ "$(kv child "$output")" -eq 7 ]
	[ "$(ls "$BATS_TEST_TMPDIR"/*.json | wc -l)" -eq 2 ]
	# the child's own mapping was queued for its own worker
	for f in "$BATS_TEST_TMPDIR"/*.json; do
		[ "$(jget "$f" "[r for r in d['rules'] if r['name']=='bg'][0]['background']['queued_bytes']")" -eq $((1 << 30)) ]
	done
}

@test "background workers write nothing into program memory (a read-only mapping stays zero and unfaulted for write)" {
	pol=$(policy bgro <<<$'[rule bg]\nsize = >=1M\naction = background')
	run --separate-stderr shimmed "$pol" "$PROBE" alloc mmap 8M prot=r
	[ "$status" -eq 0 ]
	[ "$(kv zero "$output")" -eq 1 ]
}

@test "threads = 2 populates in parallel: resident on return, helper faults counted in prefault" {
	pol=$(policy th <<<$'[rule big]\nsize = >=128M\naction = populate\nthreads = 2')
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed "$pol" "$PROBE" alloc mmap 256M
	[ "$(kv resident "$output")" -eq 65536 ]
	[ "$(kv touch_faults "$output")" -eq 0 ]
	[ "$(kv zero "$output")" -eq 1 ]
	f="$BATS_TEST_TMPDIR/r.json"
	# every page was faulted by the shim: the caller's half and the helper's
	[ "$(jget "$f" "d['faults']['in_prefault']")" -ge 65536 ]
	[ "$(jget "$f" "d['faults']['in_program']")" -lt 2000 ]
}

@test "exit never waits for queued work" {
	pol=$(policy big <<<$'[rule bg]\nsize = >=1G\naction = background')
	# vmlck maps 6 GiB and exits at once: the worker has barely started
	REPORT="$BATS_TEST_TMPDIR/q.json" run --separate-stderr timeout 60 env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$pol" \
		PREFAULT_REPORT="$BATS_TEST_TMPDIR/q.json" "$PROBE" vmlck 6G
	[ "$status" -eq 0 ]
	f="$BATS_TEST_TMPDIR/q.json"
	[ "$(jget "$f" "[r for r in d['rules'] if r['name']=='bg'][0]['background']['queued_bytes']")" -eq $((6 << 30)) ]
	[ "$(jget "$f" "[r for r in d['rules'] if r['name']=='bg'][0]['background']['left_bytes']")" -gt $((1 << 30)) ]
}
