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

@test "background, one worker and several: the program's writes racing them are never lost" {
	for w in 1 3; do
		REPORT="$BATS_TEST_TMPDIR/r$w.json" run --separate-stderr shimmed "$(bg_policy $w)" "$PROBE" race 20 32M
		echo "workers=$w: $output"
		[ "$status" -eq 0 ]
		[ "$(kv lost "$output")" -eq 0 ]
		[ "$(jget "$BATS_TEST_TMPDIR/r$w.json" "[r for r in d['rules'] if r['name']=='bg'][0]['background']['populated_bytes']")" -gt 0 ]
	done
}

# A worker busy on a first buffer (the decoy) reaches the second only after
# the program has written its front half: the worker must leave that half
# alone (mincore before each chunk, then from the far end down) and never
# populate what the program touched.  Worker-populated pages and the pages
# the program faulted may share one chunk at most: where they met.
@test "background: a worker the program has overtaken populates none of what the program touched" {
	pol=$(policy ahead <<<$'[global]\nworkers = 1\n[rule decoy]\nsize = 1G\naction = background\n[rule target]\nsize = 32M\naction = background')
	for strategy in leap trail; do
		REPORT="$BATS_TEST_TMPDIR/$strategy.json" PREFAULT_BG_STRATEGY=$strategy run --separate-stderr shimmed "$pol" "$PROBE" bgahead 1G 32M
		echo "$strategy: $output"
		[ "$status" -eq 0 ]
		f="$BATS_TEST_TMPDIR/$strategy.json"
		front=$(kv front_faults "$output")
		pop=$(jget "$f" "[r for r in d['rules'] if r['name']=='target'][0]['background']['populated_bytes'] // $(getconf PAGESIZE)")
		pages=$(((32 << 20) / $(getconf PAGESIZE)))
		echo "$strategy: the program faulted $front pages of the front half, the worker populated $pop, of $pages"
		[ "$front" -ge $((pages / 4)) ] # the program really got there first
		eval "overlap_$strategy=$((pop + front - pages))"
	done
	chunk=$(((2 << 20) / $(getconf PAGESIZE)))
	echo "overlap: leap $overlap_leap, trail $overlap_trail (one chunk is $chunk pages)"
	[ "$overlap_leap" -le "$chunk" ]
	# the old walk (kept for benchmarks) populated the program's half again: the test can fail
	[ "$overlap_trail" -gt "$chunk" ]
}

@test "background, two workers on one job: no gap and no overlap" {
	# (under TSan in CI, once, two chunks were never populated: a worker
	# going down took another worker's pages below its chunk for the
	# program's and left its chunk to the program: worker.c, program_near)
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed "$(bg_policy 2)" "$PROBE" bgfill 256M
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(kv resident "$output")" -eq "$(kv pages "$output")" ] # no gap: all of it, by the workers
	f="$BATS_TEST_TMPDIR/r.json"
	b="[r for r in d['rules'] if r['name']=='bg'][0]['background']"
	# no overlap: the chunks populated add up to the buffer exactly, none twice
	[ "$(jget "$f" "$b['populated_bytes']")" -eq $((256 << 20)) ]
	[ "$(jget "$f" "$b['program_first_bytes']")" -eq 0 ]
	[ "$(jget "$f" "d['faults']['in_prefault'] >= $(kv pages "$output") * 0.99")" = True ]
}
