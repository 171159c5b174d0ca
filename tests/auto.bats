#!/usr/bin/env bats
# The learner: `prefault run --auto` and PREFAULT_POLICY=auto (issue 21).
# No policy file: the shim decides per call site from what it measures in
# the run.  Effects, never timings: the program's faults (getrusage), what
# mmap hands back resident (mincore), peak RSS (VmHWM), the report's
# decisions and reasons, the learned policy.
load helpers

AP="$B/probes/autoprobe"

# jr FILE EXPR: an expression over the JSON report d (jget)
jr() { jget "$BATS_TEST_TMPDIR/$1" "$2"; }

@test "a churning probe: after warm-up the program's faults fall 10x or more, and the report names the site and why" {
	needs_no_tsan
	# (the shim's own memory counts against the extra, and a sanitizer
	# build's, 3.1 MiB under ASan, is more than this probe's 2 MiB: none
	# kept there, as the line says; raised so that the learning is tested)
	[ -z "${PREFAULT_SANITIZER:-}" ] || export PREFAULT_AUTO_BUDGET=100%
	plain=$(kv late_faults "$("$AP" churn 400 1M)")
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed auto "$AP" churn 400 1M
	[ "$status" -eq 0 ]
	learned=$(kv late_faults "$output")
	echo "faults over the second half: $plain without, $learned with the learner"
	[ "$plain" -ge $((200 * 256)) ]
	[ $((learned * 10)) -le "$plain" ]
	# the site, by caller and size, what was done, and why
	[ "$(jr r.json "[(s['call'], s['size'], s['actions'], s['why']['code']) for s in d['auto']['sites']]")" = "[(1, 1048576, 64, 1)]" ]
	REPORT="$BATS_TEST_TMPDIR/r.txt" shimmed auto "$AP" churn 400 1M >/dev/null
	cat "$BATS_TEST_TMPDIR/r.txt"
	grep -Eq '^prefault:   auto: autoprobe\+0x[0-9a-f]+ mmap 1\.0 MiB: recycle, from [0-9.]+ s: [0-9]+ unmaps of one size within [0-9.]+ ms \(churn\); .* saved [0-9]+ faults' \
		"$BATS_TEST_TMPDIR/r.txt"
}

@test "a sparse probe (64 MiB mapped, 1% touched, again and again): nothing populated, RSS does not grow" {
	needs_plain_runtime
	for how in vary same; do
		# (the baseline is the shim observing: its own code and tables, larger
		# in a sanitizer's build, are not what this measures)
		plain=$(shimmed "" "$AP" sparse 30 64M 100 $how)
		REPORT="$BATS_TEST_TMPDIR/$how.json" run --separate-stderr shimmed auto "$AP" sparse 30 64M 100 $how
		[ "$status" -eq 0 ]
		echo "$how: without $plain; with the learner $output"
		# nothing was populated or queued (with one length, the learner
		# recycles: a region comes back with only the pages the program had
		# touched resident, cleared)
		[ "$(jr $how.json "sum(r['prefaulted_bytes'] + r['background']['queued_bytes'] for r in d['rules'])")" -eq 0 ]
		[ "$how" = same ] || [ "$(kv populated "$output")" -eq 0 ]
		# peak RSS as when observing (the learner's own tables aside: 2 MiB)
		[ "$(kv vmhwm_kb "$output")" -le $(($(kv vmhwm_kb "$plain") + 2048)) ]
	done
	# and the learner looked, and said why it left the site alone
	[ "$(jr vary.json "[(s['why']['code'], s['actions']) for s in d['auto']['sites']]")" = "[(5, 0)]" ]
	REPORT="$BATS_TEST_TMPDIR/r.txt" shimmed auto "$AP" sparse 30 64M 100 vary >/dev/null
	grep -Eq '^prefault:   auto: autoprobe\+0x[0-9a-f]+ mmap 64\.0 MiB( to [0-9.]+ MiB)?: left alone: [0-9]+ mappings came back [0-9.]+% touched \(sparse' \
		"$BATS_TEST_TMPDIR/r.txt"
}

@test "back-off: a site that turned sparse after a dense start stops being populated, and the report says why" {
	needs_plain_runtime
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed auto "$AP" turn 20 80 8M
	[ "$status" -eq 0 ]
	echo "$output"
	# populated while dense (all but a probe among the last 8)...
	[ "$(kv dense_populated "$output")" -ge 6 ]
	# ... and not once the last 20 sparse ones came
	[ "$(kv late_populated "$output")" -eq 0 ]
	[ "$(jr r.json "[s['off']['code'] for s in d['auto']['sites'] if s['actions'] & 1]")" = "[1]" ]
	REPORT="$BATS_TEST_TMPDIR/r.txt" shimmed auto "$AP" turn 20 80 8M >/dev/null
	grep -Eq '^prefault:   auto: autoprobe\+0x[0-9a-f]+ mmap 8\.0 MiB( to [0-9.]+ MiB)?: [a-z ]*populate, from .*; backed off at [0-9.]+ s: a probe mapping came back [0-9.]+% touched$' \
		"$BATS_TEST_TMPDIR/r.txt"
}

# budget_sizes THREADS: the sizes probe with and without the learner; RSS
# over the program's peak within the budget (as the learner measured it,
# and with one thread as VmHWM says), and the limit the peak's.
budget_sizes() {
	plain=$(kv vmhwm_kb "$(shimmed "" "$AP" sizes 20 8 8M "$1")") # (observing: see the sparse probe)
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed auto "$AP" sizes 20 8 8M "$1"
	[ "$status" -eq 0 ]
	learned=$(kv vmhwm_kb "$output")
	limit=$(jr r.json "d['auto']['budget']['limit']")
	over=$(jr r.json "d['auto']['budget']['over_peak']")
	held=$(jr r.json "d['auto']['budget']['held_peak']")
	peak=$(jr r.json "d['auto']['budget']['program_peak']")
	echo "peak RSS $plain kB without, $learned kB with; held $held B at most, over the program's peak $over of $limit B (its peak $peak B)"
	# it kept regions (so it held something; whether one was reused before
	# the budget trimmed it depends on how fast the peak grew: under a loaded
	# machine none may be), and RSS stayed within the budget
	[ "$(jr r.json "sum(r['recycle']['kept'] for r in d['rules'])")" -gt 0 ]
	[ "$held" -gt 0 ]
	# (with threads, the learner's own figure can read a region over the
	# limit: a region taken or kept while RSS is read; VmHWM below is the
	# bound that holds)
	[ "$1" -gt 1 ] || [ "$over" -le "$limit" ]
	# the budget: the lesser of 10% of the program's peak and 256 MiB, never under 2 MiB
	[ "$limit" -eq $(( peak / 100 * 10 > 2097152 ? peak / 100 * 10 : 2097152 )) ]
	# and peak RSS grew by no more (the learner's own tables aside: 2 MiB)
	if [ "$1" -eq 1 ]; then
		[ $((learned * 1024)) -le $((plain * 1024 + limit + (2 << 20))) ]
	else
		# threads' peaks fall together in one run and not in another, by
		# more than the budget: bounded instead by the most the program
		# can have, its working set and one 8 MiB mapping a thread (1 MiB
		# aside for stacks, 2 for the learner's tables), which the program's
		# peak as the learner took it must not pass either (taken too high,
		# it raises the limit)
		base=$(kv vmhwm_kb "$(shimmed "" "$AP" sizes 0 8 8M 1)")
		most=$((base * 1024 + $1 * (8 << 20) + (1 << 20)))
		echo "the program's most: $most B"
		[ "$peak" -le $((most + (2 << 20))) ]
		[ $((learned * 1024)) -le $((most + limit + (2 << 20))) ]
	fi
}

@test "the budget: a program churning many sizes never holds RSS more than the budget over its own peak" {
	needs_plain_runtime
	budget_sizes 1
}

# CI of c1d77cc (UBSan): over_peak 4,194,304 B against a 4,186,110 B
# limit (a difference of two reads of shared state taken for the look's
# own doing).  CI of 224560a (UBSan): VmHWM 80,924 kB against 81.3 MB: a
# look forgot mappings 10 to 20 ms old that threads were still filling;
# it now counts them until RSS shows them touched (count_grown).
@test "the budget: four threads churning many sizes at once: peak RSS within the budget over the most the program can have" {
	needs_plain_runtime
	budget_sizes 4
}

# A 64 MiB mapping 1 MiB of it touched stops counting as coming after 0.5
# to 1 s; its unmap took its length out all the same, and eight new 3 MiB
# mappings went uncounted: peak RSS 9 MiB past the top, 4 runs of 5.  In
# the fifth, the churn beside it drained the part of the count that goes,
# the big mapping counted as long as the churn went on, the cache stayed
# closed, and the churning site backed off for good (6 regions kept
# against about 1,000).
@test "the budget: a mapping that stopped counting as coming, unmapped, takes no later one out of the count; churn beside it is kept" {
	needs_plain_runtime
	plain=$(kv vmhwm_kb "$(shimmed "" "$AP" expire)")
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed auto "$AP" expire
	[ "$status" -eq 0 ]
	learned=$(kv vmhwm_kb "$output")
	rounds=$(kv rounds "$output")
	limit=$(jr r.json "d['auto']['budget']['limit']")
	kept=$(jr r.json "sum(r['recycle']['kept'] for r in d['rules'])")
	late=$(kv late_round_faults "$output")
	echo "peak RSS $plain kB without, $learned kB with (budget $limit B); $kept of $((rounds * 16)) unmaps kept; $late faults a round in the last 0.4 s"
	[ $((learned * 1024)) -le $((plain * 1024 + limit + (2 << 20))) ]
	# While the big mapping counts as coming (0.5 to 1 s) the cache makes
	# room for it; after, the churn is kept again (a round writes 16 MiB:
	# 4,096 faults fresh, 0 all kept).  A churn mapping in use across a
	# turn of the count carried its fall into the next, at every turn: 4
	# to 5 MiB counted as coming for good, and the cache shut to the end
	# (1 run of 6, before its unmap asked what of it was touched)
	[ "$kept" -gt 0 ]
	# (unless the big mapping, advised huge pages, grew after 0.5 s:
	# khugepaged's collapse reads as a fill, growth no fault says, and the
	# cache is held within the room meanwhile, 1 run of some 25)
	[ "$late" -le 1024 ] || [ "$(jr r.json "d['auto']['budget']['huge_holds']")" -gt 0 ]
}

# Eight 3 MiB mappings made while a churn is kept, and written 20 ms to
# 0.3 s later with no call between: counted as coming, but that was heeded
# only when the program mapped anew, and a look under the top opened the
# cache again: VmHWM 75,632 kB against a line of some 67,200 (d0a0bb8).
# Now what counted as coming for 10 ms or more, still untouched, has room
# made for it at each look.  (Past 0.5 to 1 s it no longer counts: the
# learner's stated limit, README.)
@test "the budget: mappings made and touched later with no call between: peak RSS within the budget" {
	needs_plain_runtime
	plain=$(kv vmhwm_kb "$(shimmed "" "$AP" late 50)")
	for ms in 50 300; do
		REPORT="$BATS_TEST_TMPDIR/r$ms.json" run --separate-stderr shimmed auto "$AP" late $ms
		[ "$status" -eq 0 ]
		learned=$(kv vmhwm_kb "$output")
		limit=$(jr r$ms.json "d['auto']['budget']['limit']")
		echo "late $ms: peak RSS $plain kB without, $learned kB with (budget $limit B)"
		[ $((learned * 1024)) -le $((plain * 1024 + limit + (2 << 20))) ]
		# (and the churn was kept before: there was something to give back)
		[ "$(jr r$ms.json "sum(r['recycle']['kept'] for r in d['rules'])")" -gt 100 ]
	done
}

# A 64 MiB buffer written whole, used past the time a mapping counts as
# coming, then unmapped: its pages came back as coming when RSS fell (its
# unmap took nothing out: its count had gone), so the learner took RSS for
# 64 MiB over its top, gave the churning site's regions back at each new
# mapping and kept none, for 0.5 to 1 s: 4,096 faults in the first round
# after against 0 to 512 (b2ce8f2 against the fix, 4 runs each).
@test "the budget: a buffer used for seconds then unmapped leaves nothing counted as coming; churn beside it stays kept" {
	needs_plain_runtime
	run --separate-stderr shimmed auto "$AP" refill
	[ "$status" -eq 0 ]
	echo "$output"
	steady=$(kv steady_faults "$output")
	after=$(kv after_faults "$output")
	first=$(kv first_after "$output")
	# (a round writes 16 MiB: 4,096 faults fresh, 0 all kept; 0 to 512
	# seen in the first round after, 10 runs; 1,024: a quarter of a round)
	[ "$steady" -le 1024 ]
	[ "$first" -le 2048 ]
	[ "$after" -le 1024 ]
}

@test "the budget: a malloc'd buffer used for seconds then freed leaves nothing counted as coming" {
	needs_plain_runtime
	# glibc unmaps a block this large itself, at free: the shim sees only
	# the free (3ebcf91: the cache given back, 4,096 faults a round, every
	# round of the 0.4 s after, 3 runs of 3; now 0)
	run --separate-stderr shimmed auto "$AP" refill malloc
	[ "$status" -eq 0 ]
	echo "$output"
	[ "$(kv steady_faults "$output")" -le 1024 ]
	[ "$(kv first_after "$output")" -le 2048 ]
	[ "$(kv after_faults "$output")" -le 1024 ]
}

@test "the budget: a buffer filled part way and left holds no more populated ahead than the budget" {
	needs_plain_runtime
	needs_thp_madvise
	# 64 MiB of a 256 MiB mapping filled from the front, then left: the
	# windows queued ahead of the front (two at once) and the huge page
	# the front is in are all that the learner adds, within the budget
	plain=$(kv vmhwm_kb "$(shimmed "" "$AP" part 256M 64M 10)")
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed auto "$AP" part 256M 64M 10
	[ "$status" -eq 0 ]
	learned=$(kv vmhwm_kb "$output")
	limit=$(jr r.json "d['auto']['budget']['limit']")
	queued=$(jr r.json "d['rules'][0]['background']['queued_bytes']")
	echo "peak RSS $plain kB without, $learned kB with; $queued B queued ahead; budget $limit B"
	[ "$queued" -gt 0 ]
	# what the budget held back is said (the program fills 12 MiB in the
	# 30 ms a window would cover; 10% of its peak is some 6 MiB)
	[ "$(jr r.json "d['auto']['budget']['windows_cut']")" -gt 0 ]
	# (the learner's own tables aside: 1 MiB)
	[ $((learned * 1024)) -le $((plain * 1024 + limit + (1 << 20))) ]
}

# 24 MiB grown with no mmap at all, by sbrk or by opening a reserve with
# mprotect, while the churn beside it is kept: the default budget saw it
# only at the program's next call, and took VmHWM 16.9 MB past the line
# (75,636 kB against 58,680 without the shim and a budget of 5.7 MB).
# Then, while regions are kept, the watcher looked every 10 ms too: 63,352
# against 58,636 and 5.7; but an old mapping of 16 MiB, advised huge pages
# once its front was seen and written at once, went 11.7 MB past (6e7b3a9:
# RSS up 6 MiB between two looks, a fault of 2 MiB each), and 16 MiB by
# sbrk 2.9.  Now the guard looks as often as the room left asks (every 1
# to 10 ms), and the cache stays within the room while an old mapping's
# advised front is being filled: 51,752 against 50,540 and 5.1; sbrk 16,
# 56,380 against 50,640 and 5.1.  The default's promise is for growth no
# faster than its looks are timed for (1 MiB a ms, README): the default's
# cases grow paced, half a MiB a ms at most.  Written at once, 16 MiB of an
# old mapping took 9 to 10 ms on a warm host, and before the watcher saw
# its front it went 1.0 to 6.8 MB past the line in 3 runs of 4
# (2026-12-06; BENCHMARKS.md): a failure of this test 3 times in 4, the
# build before the tables change alike.  Hard charges all the learner holds and the shim's
# own memory against the extra, wherever RSS is.  strided: huge pages
# advised over a whole buffer filled 1 MiB from the front, then one byte
# written every 2 MiB: a huge page each (the default: 131,880 kB against
# 68,048); hard advises only near the edges the program fills.
@test "the budget: 24 MiB grown with no call the shim sees (sbrk, mprotect, a mapping touched seconds later): peak RSS within it (both budgets); hard: a buffer advised huge pages then written sparsely too" {
	needs_plain_runtime
	for how in "sbrk 24" "mprotect 24" "old 24" "old 16" "sbrk 16"; do
		plain=$(kv vmhwm_kb "$(shimmed "" "$AP" grow $how paced)")
		REPORT="$BATS_TEST_TMPDIR/d.json" run --separate-stderr shimmed auto "$AP" grow $how paced
		[ "$status" -eq 0 ]
		soft=$(kv vmhwm_kb "$output")
		read -r limit held looks < <(jr d.json "d['auto']['budget']['limit'], d['auto']['budget']['held_peak'], d['auto']['budget']['guard_looks']" | tr -d '(),')
		echo "$how, paced: peak RSS $plain kB without, $soft kB by default (budget $limit B: held $held B at most; $looks guard looks)"
		[ $((soft * 1024)) -le $((plain * 1024 + limit)) ]
		[ "$held" -ge $((4 << 20)) ] # (the churn was kept: the line held by the guard's looks, not by keeping nothing)
		[ "$looks" -gt 0 ]
	done
	for how in sbrk mprotect old strided; do
		args="grow $how"
		[ $how != strided ] || args=strided
		plain=$(kv vmhwm_kb "$(shimmed "" "$AP" $args)")
		REPORT="$BATS_TEST_TMPDIR/$how.json" PREFAULT_AUTO_BUDGET=hard run --separate-stderr shimmed auto "$AP" $args
		[ "$status" -eq 0 ]
		hard=$(kv vmhwm_kb "$output")
		read -r limit held own < <(jr $how.json "d['auto']['budget']['limit'], d['auto']['budget']['held_peak'], d['auto']['budget']['shim_own']" | tr -d '(),')
		echo "$how: peak RSS $plain kB without, $hard kB hard (budget $limit B: held $held B at most, the shim's own $own B)"
		[ "$(jr $how.json "d['auto']['budget']['hard']")" -eq 1 ]
		# (and 512 KiB the shim's count of its own misses: CI of 0d37fe2,
		# strided, 75,756 kB against 68,396 and a line of 7,090 kB with
		# 6 MiB held and 644 KiB of its own counted; the loader's memory
		# for the shim's object is not in that count, 370 to 420 kB here)
		[ $((hard * 1024)) -le $((plain * 1024 + limit + (512 << 10))) ]
		[ $((held + own)) -le "$limit" ]
		# (some of the churn was kept, or huge pages advised: there was
		# something held; the churn then backs off, most of its regions
		# unmapped unkept)
		[ "$held" -ge $((1 << 20)) ] || [ $how = strided ]
	done
	# the default passes the line here (its stated limit): the probe is one
	# only hard holds.  (Its huge pages judged a win: the probe fills its
	# front slowly, and 1 run in 6 its paced rate judged them slower and
	# the advice went back before the sparse writes: 69,540 kB)
	REPORT="$BATS_TEST_TMPDIR/d.json" PREFAULT_TEST_HUGE=huge run --separate-stderr shimmed auto "$AP" strided
	[ "$status" -eq 0 ]
	[ $(($(kv vmhwm_kb "$output") * 1024)) -gt $((plain * 1024 + $(jr d.json "d['auto']['budget']['limit']"))) ]
}

# While what is kept passes the extra, the learner's thread looks at RSS
# every 10 ms (the guard, 107a457).  A program that churned at its start and
# then slept held the cache, and the guard looked, for as long as it slept
# (helper-28: 626 system calls a second, a thread that never left).  Now a
# second with no reuse gives back what is kept past the extra, and the
# guard ends: the thread leaves (107a457's library: 16 MiB held at exit,
# threads=2 after 3 s).
@test "the budget: a program that churned and then sleeps is given back what is kept past the extra, and the learner's thread leaves" {
	needs_plain_runtime
	REPORT="$BATS_TEST_TMPDIR/a.json" run --separate-stderr shimmed auto "$AP" idle 100
	[ "$status" -eq 0 ]
	read -r held limit < <(jr a.json "d['auto']['budget']['held'], d['auto']['budget']['limit']" | tr -d '(),')
	echo "asleep 0.1 s: held $held B at exit, the extra $limit B"
	# (something to guard; not always in a sanitizer's build, whose own
	# memory, counted against what is kept, is more than this extra: CI of
	# 6e7b3a9, ThreadSanitizer, nothing kept)
	[ "$held" -gt "$limit" ] || [ -n "${PREFAULT_SANITIZER:-}" ]
	REPORT="$BATS_TEST_TMPDIR/b.json" run --separate-stderr shimmed auto "$AP" idle 3000
	[ "$status" -eq 0 ]
	read -r held limit < <(jr b.json "d['auto']['budget']['held'], d['auto']['budget']['limit']" | tr -d '(),')
	echo "asleep 3 s: $output; held $held B at exit, the extra $limit B"
	[ "$held" -le "$limit" ]
	[ "$(kv threads "$output")" -eq 1 ]
}

# A fork child inherited the parent's kept regions and its peak: 16 MiB
# kept over a child that wrote 24 MiB, VmHWM 50.9 MB in the child against
# 34.0 without the shim.  The child gives them back, and finds its own peak.
# And the kernel starts the child's peak at the parent's RSS at the fork,
# kept regions and all (helper-27: 100 MiB written and unmapped, 9 MiB
# kept, the child's VmHWM 9.9 MB against 1.2): the parent gives back
# before the fork what the child's line has no room for.
@test "the budget: a fork child gives back the regions its parent kept, and is held to its own peak (both budgets)" {
	needs_plain_runtime
	for probe in "grow fork" "shrunk 100"; do
		plain=$(kv child_vmhwm_kb "$(shimmed "" "$AP" $probe)")
		for b in "" hard; do
			REPORT="$BATS_TEST_TMPDIR/f%p.json" PREFAULT_AUTO_BUDGET=$b run --separate-stderr shimmed auto "$AP" $probe
			[ "$status" -eq 0 ]
			child=$(kv child_vmhwm_kb "$output")
			echo "$probe, budget ${b:-default}: the child's peak RSS $child kB, $plain kB without the shim"
			# (the floor of the budget: 2 MiB)
			[ $((child * 1024)) -le $((plain * 1024 + (2 << 20))) ]
		done
	done
}

# A buffer the learner advised huge pages over, grown by mremap or by
# realloc (glibc's mremap), then written a byte every 2 MiB of what it
# gained: the advice went with it, and each byte was a huge page (VmHWM
# 323 MB against 69 without the shim); under hard, the advice near the
# edges split the mapping, and the program's mremap failed with EFAULT
# (glibc's realloc copied instead: 14 MB more).  The advice is taken back
# over the whole before the call.
@test "a buffer the learner advised, moved and grown by mremap or realloc: the call works as without the shim, and what it gains is not advised (hard: peak RSS within the budget)" {
	needs_plain_runtime
	for how in mmap malloc; do
		plain=$(kv vmhwm_kb "$(shimmed "" "$AP" moved $how)")
		for b in "" hard; do
			REPORT="$BATS_TEST_TMPDIR/m.json" PREFAULT_AUTO_BUDGET=$b run --separate-stderr shimmed auto "$AP" moved $how
			[ "$status" -eq 0 ]
			echo "$how, budget ${b:-default}: $output (without the shim: $plain kB)"
			[ "$(kv moved "$output")" = ok ]
			[ "$(kv intact "$output")" -eq 1 ]
			limit=$(jr m.json "d['auto']['budget']['limit']")
			# (the default's own limit: a realloc'd block is a buffer of its
			# own, seen filled from the front at once, and advised whole)
			[ "$how$b" = malloc ] || [ $(($(kv vmhwm_kb "$output") * 1024)) -le $((plain * 1024 + limit)) ]
		done
	done
}

@test "the hard budget: given alone or with the terms, said in the report; soft, the default, too; a bad one is refused" {
	REPORT="$BATS_TEST_TMPDIR/r.json" PREFAULT_AUTO_BUDGET=hard,25% shimmed auto "$AP" churn 20 1M >/dev/null
	[ "$(jr r.json "(d['auto']['budget']['hard'], d['auto']['budget']['percent'])")" = "(1, 25)" ]
	# (the shim's own memory is read under both: soft counts it against what is kept)
	for b in "" soft 25%,soft; do
		REPORT="$BATS_TEST_TMPDIR/d.json" PREFAULT_AUTO_BUDGET=$b shimmed auto "$AP" churn 20 1M >/dev/null
		[ "$(jr d.json "d['auto']['budget']['hard']")" -eq 0 ]
		[ "$(jr d.json "d['auto']['budget']['shim_own']")" -gt 0 ]
	done
	[ "$(jr d.json "d['auto']['budget']['percent']")" -eq 25 ]
	run --separate-stderr "$PF" run --auto --auto-budget hard --report stderr -- "$AP" churn 20 1M
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"; hard: all it held and the shim's own memory ("*") counted, wherever RSS was)"* ]]
	run --separate-stderr "$PF" run --auto --report stderr -- "$AP" churn 20 1M
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"2 MiB and a huge page at least; soft: freed regions kept below that peak too)"* ]]
	for bad in hard,hard harder hard, ,hard soft,hard hard,soft soft,soft; do
		run --separate-stderr "$PF" run --auto --auto-budget "$bad" -- "$AP" churn 20 1M
		[ "$status" -eq 2 ]
		[ -z "$output" ]
		[[ "$stderr" == *"--auto-budget"* ]]
	done
}

@test "the budget can be raised: PREFAULT_AUTO_BUDGET and run --auto-budget; a bad one is refused" {
	REPORT="$BATS_TEST_TMPDIR/r.json" PREFAULT_AUTO_BUDGET=50%,1G shimmed auto "$AP" churn 20 1M >/dev/null
	[ "$(jr r.json "(d['auto']['budget']['percent'], d['auto']['budget']['cap'])")" = "(50, 1073741824)" ]
	# bare: one warning naming the variable, and the program runs unchanged
	PREFAULT_AUTO_BUDGET=lots run --separate-stderr shimmed auto "$AP" churn 20 1M
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"PREFAULT_AUTO_BUDGET"* ]]
	[ "$(kv late_faults "$output")" -ge $((10 * 256)) ]
	# the tool: exit 2, nothing started
	run --separate-stderr "$PF" run --auto --auto-budget 0 -- "$AP" churn 20 1M
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	run --separate-stderr "$PF" run --auto -p streaming -- "$AP" churn 20 1M
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"choose one"* ]]
	run --separate-stderr "$PF" run --auto-budget 20% -- "$AP" churn 20 1M
	[ "$status" -eq 2 ]
}

@test "--auto -o: the learned policy passes check, names its sites by caller and size, and does what the learner did" {
	needs_no_tsan
	cd "$BATS_TEST_TMPDIR"
	run --separate-stderr "$PF" run --auto -o learned.policy -- "$AP" churn 400 1M
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"prefault:   auto: autoprobe+0x"* ]]
	[[ "$stderr" == *"wrote learned.policy (1 rule learned)"* ]]
	cat learned.policy
	run --separate-stderr "$PF" check ./learned.policy
	[ "$status" -eq 0 ]
	[[ "$output" == *"rule autoprobe-mmap-1M: call=mmap size=1M map=anon,private prot=rw caller=autoprobe -> recycle"* ]]
	grep -q '^caller = autoprobe$' learned.policy
	grep -q '^size = 1M$' learned.policy
	grep -Eq '^# site autoprobe\+0x[0-9a-f]+ mmap 1\.0 MiB: recycle, from .*\(churn\)' learned.policy
	# run as an ordinary policy, it cuts the program's faults as the learner did
	plain=$(kv late_faults "$("$AP" churn 400 1M)")
	learned=$(kv late_faults "$(shimmed ./learned.policy "$AP" churn 400 1M)")
	echo "faults over the second half: $plain without, $learned under the learned policy"
	[ $((learned * 10)) -le "$plain" ]
}

@test "--auto -o: a site backed off from is written commented out, with the reason; one left alone is a comment" {
	needs_plain_runtime
	cd "$BATS_TEST_TMPDIR"
	"$PF" run --auto -o turn.policy --report none -- "$AP" turn 20 80 8M
	cat turn.policy
	"$PF" check ./turn.policy
	grep -Eq '^# site autoprobe\+0x[0-9a-f]+ mmap 8\.0 MiB( to [0-9.]+ MiB)?: .*backed off at' turn.policy
	grep -q '^# \[rule autoprobe-mmap-8' turn.policy
	! grep -q '^\[rule' turn.policy
	"$PF" run --auto -o sparse.policy --report none -- "$AP" sparse 30 64M 100 vary
	grep -Eq '^#   autoprobe\+0x[0-9a-f]+ mmap 64\.0 MiB( to [0-9.]+ MiB)?: left alone' sparse.policy
	grep -q 'No rule was learned' sparse.policy
	"$PF" check ./sparse.policy
}

@test "a buffer filled from the front: the learner helps while it fills (huge pages, populated ahead), and says when the first touch came" {
	needs_plain_runtime
	needs_thp_madvise
	for how in mmap malloc; do
		plain=$(kv fill_faults "$("$AP" fill 64M 0 $how)")
		# huge pages won the check: the program's own faults are huge ones
		REPORT="$BATS_TEST_TMPDIR/$how.txt" PREFAULT_TEST_HUGE=huge run --separate-stderr shimmed auto "$AP" fill 64M 0 $how
		learned=$(kv fill_faults "$output")
		cat "$BATS_TEST_TMPDIR/$how.txt"
		echo "$how: faults filling 64 MiB: $plain without, $learned with the learner (huge pages)"
		[ $((learned * 4)) -le "$plain" ]
		grep -Eq "^prefault:   auto: autoprobe\+0x[0-9a-f]+ $how 64\.0 MiB: hugepage populate, from [0-9.]+ s: the program filled the first .* from the front, first touched [0-9]+ ms after the map \(at once\)" \
			"$BATS_TEST_TMPDIR/$how.txt"
		grep -Eq 'hugepage_check ([0-9]+) times?: .*: huge kept \1 of \1' "$BATS_TEST_TMPDIR/$how.txt"
		# small pages won: the advice is taken back, the worker populates ahead
		# (the fill paced at a page every 2 us: at full speed with huge pages
		# until the judgement, a loaded watcher could find it all filled)
		REPORT="$BATS_TEST_TMPDIR/s.json" PREFAULT_TEST_HUGE=small PREFAULT_AUTO_BUDGET=100% run --separate-stderr \
			shimmed auto "$AP" fill 64M 0 $how 2
		learned=$(kv fill_faults "$output")
		echo "$how: faults filling 64 MiB: $plain without, $learned with the learner (small pages)"
		[ "$learned" -le "$plain" ]
		[ "$(jr s.json "(d['rules'][0]['hugepage_check']['huge_won'], d['rules'][0]['huge_bytes'])")" = "(0, 0)" ]
		[ "$(jr s.json "d['rules'][0]['background']['populated_bytes']")" -gt 0 ]
	done
	# two windows out at once: the next queued behind the one the program
	# is going through (so the worker is not idle meanwhile); paced at a
	# page every 10 us (160 ms in all), so that the watcher's looks see the
	# front go through windows however loaded the machine (7 to 9 here)
	REPORT="$BATS_TEST_TMPDIR/w.json" PREFAULT_TEST_HUGE=small PREFAULT_AUTO_BUDGET=100% shimmed auto "$AP" fill 64M 0 mmap 10 >/dev/null
	[ "$(jr w.json "d['rules'][0]['background']['windows_behind']")" -gt 0 ]
	# first touched late: background, never populate in the call
	REPORT="$BATS_TEST_TMPDIR/late.txt" shimmed auto "$AP" fill 64M 100 >/dev/null
	grep -Eq '^prefault:   auto: autoprobe\+0x[0-9a-f]+ mmap 64\.0 MiB: [a-z ]*background, from .*first touched [0-9]+ ms after the map \(late\)' \
		"$BATS_TEST_TMPDIR/late.txt"
}

# Hard: the front's huge page had no room when the front was found (a
# peak of a few MiB, an extra of 2 MiB less the shim's own), and huge pages
# were never advised after it: 25,600 faults filling 256 MiB against
# 65,536 without the shim, the example streamer 1.29x of no shim against
# the default's 9.96.  Asked again as the peak grows: 17,485 to 22,055.
# At full speed the fill outran the learner's looks on CI's UBSan pass
# (39,469 faults, the test's line 32,768): paced at a page every 2 us, as
# the budget's promise is for growth its looks can follow, 11,846 to
# 13,359 here, plain and UBSan alike.
@test "hard: a buffer filled from the front gets huge pages once the budget has room for them" {
	needs_plain_runtime
	needs_thp_madvise
	plain=$(kv fill_faults "$("$AP" fill 256M 0 mmap 2)")
	REPORT="$BATS_TEST_TMPDIR/h.txt" PREFAULT_TEST_HUGE=huge PREFAULT_AUTO_BUDGET=hard run --separate-stderr shimmed auto "$AP" fill 256M 0 mmap 2
	[ "$status" -eq 0 ]
	cat "$BATS_TEST_TMPDIR/h.txt"
	echo "faults filling 256 MiB: $plain without, $(kv fill_faults "$output") hard"
	grep -Eq 'hugepage_check ([0-9]+) times?: .*: huge kept \1 of \1' "$BATS_TEST_TMPDIR/h.txt"
	[ $(($(kv fill_faults "$output") * 2)) -le "$plain" ]
}

@test "a malloc'd buffer the learner advises: glibc's mapping of it stays whole, so its realloc can still mremap it" {
	needs_plain_runtime
	needs_thp_madvise
	# 64 MiB less 16 bytes: the block ends on a page boundary, glibc's
	# mapping of it a page later (its header); advice over the block's
	# pages alone split the mapping there, and realloc's mremap of the
	# whole failed (EFAULT) and fell back to copying
	plain=$("$AP" fill 67108848 0 malloc)
	after=$(kv mapping "$plain" | cut -d, -f2)
	[ "$after" -ge 4096 ] || skip "not glibc's layout: the mapping ends $after bytes after the block"
	for h in huge small; do
		REPORT="$BATS_TEST_TMPDIR/$h.txt" PREFAULT_TEST_HUGE=$h run --separate-stderr shimmed auto "$AP" fill 67108848 0 malloc
		cat "$BATS_TEST_TMPDIR/$h.txt"
		grep -q 'hugepage_check' "$BATS_TEST_TMPDIR/$h.txt"
		echo "$h: $output (without the shim: $plain)"
		[ "$(kv mapping "$output" | cut -d, -f2)" -ge 4096 ]
	done
}

@test "huge pages the learner kept for a buffer are judged again as it fills, and the advice is taken back when they lose" {
	needs_plain_runtime
	needs_thp_madvise
	# huge pages win every judgement: they stay to the end
	REPORT="$BATS_TEST_TMPDIR/h.txt" PREFAULT_TEST_HUGE=huge run --separate-stderr shimmed auto "$AP" fill 256M 0 mmap
	huge=$(kv fill_faults "$output")
	cat "$BATS_TEST_TMPDIR/h.txt"
	grep -Eq 'hugepage_check ([2-9]|[1-9][0-9]+) times: .*: huge kept ([0-9]+) of \2' "$BATS_TEST_TMPDIR/h.txt"
	# they win the first and lose the next: the advice goes, the rest of the
	# buffer comes in small pages (the host may have stopped backing them)
	REPORT="$BATS_TEST_TMPDIR/s.txt" PREFAULT_TEST_HUGE=huge-then-small run --separate-stderr shimmed auto "$AP" fill 256M 0 mmap
	later=$(kv fill_faults "$output")
	cat "$BATS_TEST_TMPDIR/s.txt"
	echo "faults filling 256 MiB: $huge with huge pages kept, $later with them taken back"
	grep -Eq 'hugepage_check 2 times: .*: huge kept 1 of 2' "$BATS_TEST_TMPDIR/s.txt"
	# half the buffer or more comes in small pages: 32768 faults and more,
	# the program's and the worker's together (how they share them is the
	# worker's pace: since it keeps two windows ahead, the program's own
	# came to 16413 in one CI run, under a quarter of the buffer)
	all_huge=$(grep -oE '[0-9]+ faults \(' "$BATS_TEST_TMPDIR/h.txt" | head -n 1 | cut -d' ' -f1)
	all_later=$(grep -oE '[0-9]+ faults \(' "$BATS_TEST_TMPDIR/s.txt" | head -n 1 | cut -d' ' -f1)
	echo "every thread's faults: $all_huge with huge pages kept, $all_later with them taken back"
	[ "$later" -gt "$huge" ]
	[ "$all_later" -ge $((all_huge + 32768)) ]
}

@test "a buffer filled from both ends: the learner judges the huge pages at the end too, and takes them back when they lose" {
	needs_plain_runtime
	needs_thp_madvise
	# 16 MiB from the front (huge pages advised over the buffer, judged
	# there), then 64 MiB from the end down, as sort fills its line table.
	# The budget is the program's peak, so a judgement always has room.
	REPORT="$BATS_TEST_TMPDIR/h.txt" PREFAULT_TEST_HUGE=huge PREFAULT_AUTO_BUDGET=100% run --separate-stderr \
		shimmed auto "$AP" ends 256M 16M 64M 10
	huge=$(kv back_faults "$output")
	cat "$BATS_TEST_TMPDIR/h.txt"
	# huge pages win every judgement: the end is judged (after two huge
	# pages, then every 16 MiB) and gets huge pages
	grep -Eq 'hugepage_check ([3-9]|[1-9][0-9]+) times: .*: huge kept \1 of \1' "$BATS_TEST_TMPDIR/h.txt"
	# they win at the front and lose at the end: the rest of the end comes
	# in small pages, where before the end was never judged
	REPORT="$BATS_TEST_TMPDIR/s.txt" PREFAULT_TEST_HUGE=huge-then-small PREFAULT_AUTO_BUDGET=100% run --separate-stderr \
		shimmed auto "$AP" ends 256M 16M 64M 10
	later=$(kv back_faults "$output")
	cat "$BATS_TEST_TMPDIR/s.txt"
	echo "faults filling 64 MiB from the end: $huge with huge pages kept, $later with them taken back"
	grep -Eq 'hugepage_check 2 times: .*: huge kept 1 of 2' "$BATS_TEST_TMPDIR/s.txt"
	[ "$huge" -le 256 ]
	[ "$later" -ge 8192 ]
	# no room to judge the end (a budget of 2 MiB, all of it the advice's
	# own huge page): huge pages there are not kept, and the report says so
	REPORT="$BATS_TEST_TMPDIR/n.txt" PREFAULT_TEST_HUGE=huge PREFAULT_AUTO_BUDGET=2M run --separate-stderr \
		shimmed auto "$AP" ends 256M 16M 64M 10
	cat "$BATS_TEST_TMPDIR/n.txt"
	[ "$(kv back_faults "$output")" -ge 8192 ]
	grep -q 'huge pages taken back with no room to judge them 1 time' "$BATS_TEST_TMPDIR/n.txt"
}

@test "hugepage_check = yes: a hugepage rule measures its first chunk both ways and keeps the faster" {
	needs_plain_runtime
	needs_thp_madvise
	pol=$(policy hc <<<$'[global]\nbudget = 1G\n[rule big]\ncall = mmap\nsize = >=8M\naction = hugepage populate\nhugepage_check = yes')
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed "$pol" "$PROBE" alloc mmap 16M
	[ "$status" -eq 0 ]
	# populated whole, as without the check
	[ "$(kv resident "$output")" -eq "$(kv pages "$output")" ]
	f="$BATS_TEST_TMPDIR/r.json"
	[ "$(rule_stat "$f" big hugepage_check)" != "" ]
	[ "$(jget "$f" "d['rules'][0]['hugepage_check']['checks']")" -eq 1 ]
	[ "$(jget "$f" "d['rules'][0]['hugepage_check']['small_pages'] > 0 and d['rules'][0]['hugepage_check']['huge_pages'] == 512")" = True ]
	REPORT="$BATS_TEST_TMPDIR/r.txt" shimmed "$pol" "$PROBE" alloc mmap 16M >/dev/null
	grep -Eq 'hugepage_check 1 time: huge pages [0-9]+ ns a page, small [0-9]+: huge kept [01] of 1' "$BATS_TEST_TMPDIR/r.txt"
	# check shows it, and refuses it without hugepage
	run "$PF" check "$pol"
	[[ "$output" == *"hugepage_check=yes"* ]]
	pol=$(policy bad <<<$'[rule big]\nsize = >=8M\naction = populate\nhugepage_check = yes')
	run --separate-stderr "$PF" check "$pol"
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"hugepage_check applies to hugepage"* ]]
}

@test "a process tree under --auto: each process learns on its own, the summary lists each one's sites" {
	needs_no_tsan
	run --separate-stderr "$PF" run --auto -- sh -c "'$AP' churn 200 1M; '$AP' churn 200 1M"
	[ "$status" -eq 0 ]
	echo "$stderr"
	[ "$(grep -c '^prefault:   auto: autoprobe+0x[0-9a-f]* mmap 1.0 MiB: recycle' <<<"$stderr")" -eq 2 ]
}

@test "--auto -o with no report to learn from: the program's exit status, and the policy is said not written" {
	static=$(type -P ldconfig || echo /sbin/ldconfig)
	file -L "$static" | grep -q 'static' || skip "no static ldconfig here"
	cd "$BATS_TEST_TMPDIR"
	run --separate-stderr "$PF" run --auto -o none.policy -- "$static" -p
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"no report to learn from: none.policy not written"* ]]
	[ ! -e none.policy ]
	run --separate-stderr "$PF" run --auto -o none.policy -- sh -c "'$static' -p >/dev/null; exit 3"
	[ "$status" -eq 3 ]
}

# Without --auto, `run -o none` means no report; with it, -o names the
# policy file, and a file named none was once written (and committed) so.
@test "--auto -o: none, stderr, -, a template, an earlier report, no file or an unwritable one: refused with exit 2 before the run; PREFAULT_REPORT holds" {
	cd "$BATS_TEST_TMPDIR"
	# none and stderr name the report without --auto (--report is said); -
	# would mix the policy with the program's output; a report's %p or %e
	# has no meaning for the one policy learned (a file named so, after the
	# run, was what it did)
	for o in none:"--report none" stderr:"--report stderr" -:"-o -: " l-%p.policy:"-o l-%p.policy: "; do
		run --separate-stderr "$PF" run --auto -o "${o%%:*}" -- sh -c 'echo started'
		[ "$status" -eq 2 ]
		[ -z "$output" ]
		[[ "$stderr" == *"${o#*:}"* ]]
		[ ! -e "${o%%:*}" ]
	done
	# an earlier report named by -o (as it would be without --auto) is kept
	"$PF" run -o r.json -- true
	cp r.json r0.json
	run --separate-stderr "$PF" run --auto -o r.json -- sh -c 'echo started'
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[[ "$stderr" == *"is a prefault report"* ]]
	cmp r.json r0.json
	# no file named, or one that cannot be written: said before the run
	for o in "" "$BATS_TEST_TMPDIR/no/such/dir/l.policy"; do
		run --separate-stderr "$PF" run --auto -o "$o" -- sh -c 'echo started'
		[ "$status" -eq 2 ]
		[ -z "$output" ]
	done
	run --separate-stderr "$PF" run -o "" -- sh -c 'echo started'
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	# PREFAULT_REPORT holds under --auto -o as without -o: none is none,
	# and a file, which the tool cannot read from, is refused
	PREFAULT_REPORT=none run --separate-stderr "$PF" run --auto -o l.policy -- "$AP" churn 20 1M
	[ "$status" -eq 0 ]
	[[ "$stderr" != *"auto:"* ]]
	[ -s l.policy ]
	PREFAULT_REPORT=x.txt run --separate-stderr "$PF" run --auto -o l2.policy -- sh -c 'echo started'
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"PREFAULT_REPORT"* ]]
	[ ! -e l2.policy ]
}

# Finding (re-read of issue 21): no helper thread starts before the
# constructor, so a large mapping watched then had no watcher until the
# program made another; the constructor now starts it (auto_kick).
@test "a mapping made before the shim's constructor and filled after it: the learner's watcher sees it fill" {
	needs_plain_runtime
	needs_thp_madvise
	# libstack, preloaded after the shim, runs its constructor first: it maps
	# 16 MiB there, and a thread of its writes it from the front 100 ms later
	REPORT="$BATS_TEST_TMPDIR/r.txt" LIBSTACK_FILL_MS=100 LD_PRELOAD="$STACKLIB" run --separate-stderr shimmed auto sleep 0.5
	[ "$status" -eq 0 ]
	cat "$BATS_TEST_TMPDIR/r.txt"
	grep -Eq '^prefault:   auto: libstack\.so\+0x[0-9a-f]+ mmap 16\.0 MiB: .*the program filled the first .* from the front, first touched [0-9]+ ms after the map' \
		"$BATS_TEST_TMPDIR/r.txt"
}
