#!/usr/bin/env bats
# The report at exit: fields, figures, destinations, and safety.
load helpers

@test "JSON report: every documented field, with the figures of a known run" {
	pol=$(populate_all)
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed "$pol" "$PROBE" keep 4 4M
	[ "$status" -eq 0 ]
	f="$BATS_TEST_TMPDIR/r.json"
	[ "$(jget "$f" "d['program']")" = pfprobe ]
	[ "$(jget "$f" "d['policy']")" = "$pol" ]
	[ "$(jget "$f" "type(d['pid']).__name__")" = int ]
	[ "$(jget "$f" "d['wall_s'] > 0")" = True ]
	for k in minor major in_prefault in_program; do
		[ "$(jget "$f" "type(d['faults']['$k']).__name__")" = int ]
	done
	[ "$(rule_stat "$f" big matched)" -eq 4 ]
	[ "$(rule_stat "$f" big bytes)" -eq $((16 << 20)) ]
	[ "$(rule_stat "$f" big prefaulted_bytes)" -eq $((16 << 20)) ]
	[ "$(rule_stat "$f" big skipped)" -eq 0 ]
	[ "$(jget "$f" "[r for r in d['rules'] if r['name']=='big'][0]['seconds'] > 0")" = True ]
	[ "$(jget "$f" "[r for r in d['rules'] if r['name']=='big'][0]['sizes']")" = "[{'size': 4194304, 'maps': 4, 'bytes': 16777216}]" ]
	# The 4096 pages were faulted by the shim, not by the program's touch loop.
	[ "$(jget "$f" "d['faults']['in_prefault']")" -ge 4096 ]
	[ "$(jget "$f" "d['faults']['in_program']")" -lt 1000 ]
	[ "$(jget "$f" "d['faults']['in_prefault'] + d['faults']['in_program'] == d['faults']['minor'] + d['faults']['major']")" = True ]
}

@test "without a policy the shim observes: counts and sizes, faults all in the program" {
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed "" "$PROBE" keep 4 4M
	f="$BATS_TEST_TMPDIR/r.json"
	[ "$(jget "$f" "d['policy']")" = None ]
	[ "$(jget "$f" "d['faults']['in_prefault']")" -eq 0 ]
	[ "$(jget "$f" "d['faults']['in_program']")" -ge 4096 ]
	[ "$(jget "$f" "d['calls']['mmap']")" -ge 4 ]
	[ "$(jget "$f" "[s['maps'] for s in d['unmatched']['mmap']['sizes'] if s['size']==4194304][0]")" -eq 4 ]
}

@test "unmatched requests are still counted when a policy is in force" {
	pol=$(populate_all)
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed "$pol" "$PROBE" keep 3 64K
	f="$BATS_TEST_TMPDIR/r.json"
	[ "$(rule_stat "$f" big matched)" -eq 0 ]
	[ "$(jget "$f" "[s['maps'] for s in d['unmatched']['mmap']['sizes'] if s['size']==65536][0]")" -eq 3 ]
}

@test "text report on stderr by default: one short block" {
	pol=$(populate_all)
	REPORT=stderr run --separate-stderr shimmed "$pol" "$PROBE" keep 2 4M
	[ "$status" -eq 0 ]
	[[ "$stderr" == "prefault: pfprobe["* ]]
	grep -q 'rule big: 2 matched, 8.0 MiB; prefaulted 8.0 MiB' <<<"$stderr"
	[ "$(wc -l <<<"$stderr")" -le 6 ]
	unset REPORT
	LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$pol" run --separate-stderr "$PROBE" keep 1 4M
	[[ "$stderr" == "prefault: pfprobe["* ]]
}

@test "the policy's report key is used, and PREFAULT_REPORT overrides it" {
	pol=$(policy rep <<<"[global]"$'\n'"report = $BATS_TEST_TMPDIR/from-policy.json")
	LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$pol" run --separate-stderr "$PROBE" keep 1 1M
	[ -s "$BATS_TEST_TMPDIR/from-policy.json" ]
	[ -z "$stderr" ]
	LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$pol" PREFAULT_REPORT=none run --separate-stderr "$PROBE" keep 1 1M
	[ -z "$stderr" ]
}

@test "%p and %e name the report after the process; .json selects JSON, otherwise text" {
	REPORT="$BATS_TEST_TMPDIR/r.%e.%p.json" run --separate-stderr shimmed "" "$PROBE" keep 1 1M
	f=$(ls "$BATS_TEST_TMPDIR"/r.pfprobe.*.json)
	pid=$(jget "$f" "d['pid']")
	[ "$f" = "$BATS_TEST_TMPDIR/r.pfprobe.$pid.json" ]
	REPORT="$BATS_TEST_TMPDIR/r.txt" run --separate-stderr shimmed "" "$PROBE" keep 1 1M
	grep -q '^prefault: pfprobe\[' "$BATS_TEST_TMPDIR/r.txt"
}

@test "report = none writes nothing" {
	REPORT=none run --separate-stderr shimmed "" "$PROBE" keep 1 1M
	[ -z "$stderr" ]
}

@test "a report is never written through a symlink, nor into a FIFO, and the program is unaffected" {
	echo precious >"$BATS_TEST_TMPDIR/target"
	ln -s "$BATS_TEST_TMPDIR/target" "$BATS_TEST_TMPDIR/r.json"
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed "" sh -c 'exit 5'
	[ "$status" -eq 5 ]
	[ "$(cat "$BATS_TEST_TMPDIR/target")" = precious ]
	grep -q 'symbolic link' <<<"$stderr"
	mkfifo "$BATS_TEST_TMPDIR/fifo.json"
	REPORT="$BATS_TEST_TMPDIR/fifo.json" run --separate-stderr timeout 10 env LD_PRELOAD="$SHIM_LD" PREFAULT_REPORT="$BATS_TEST_TMPDIR/fifo.json" sh -c 'exit 6'
	[ "$status" -eq 6 ]
}

@test "the budget bounds what is prefaulted and live; skipped requests are counted" {
	pol=$(policy b <<<$'[global]\nbudget = 8M\n[rule big]\nsize = >=1M\naction = populate')
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed "$pol" "$PROBE" keep 4 4M
	f="$BATS_TEST_TMPDIR/r.json"
	[ "$(rule_stat "$f" big prefaulted_bytes)" -eq $((8 << 20)) ]
	[ "$(jget "$f" "[r for r in d['rules'] if r['name']=='big'][0]['skipped_by']['budget']")" -eq 2 ]
	[ "$(jget "$f" "d['budget']['peak']")" -le $((8 << 20)) ]
	[ "$(jget "$f" "d['budget']['limit']")" -eq $((8 << 20)) ]
}

@test "the budget comes back when memory is unmapped or freed" {
	needs_plain_runtime
	pol=$(policy b <<<$'[global]\nbudget = 4M\n[rule big]\nsize = >=1M\naction = populate')
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed "$pol" "$PROBE" churn 10 4M
	f="$BATS_TEST_TMPDIR/r.json"
	[ "$(rule_stat "$f" big prefaulted_bytes)" -eq $((40 << 20)) ]
	[ "$(rule_stat "$f" big skipped)" -eq 0 ]
	[ "$(jget "$f" "d['budget']['used']")" -eq 0 ]
	REPORT="$BATS_TEST_TMPDIR/m.json" run --separate-stderr shimmed "$pol" "$PROBE" free 10 4M
	f="$BATS_TEST_TMPDIR/m.json"
	[ "$(rule_stat "$f" big matched)" -eq 10 ]
	[ "$(rule_stat "$f" big skipped)" -eq 0 ]
}

@test "a budget of 0 prefaults nothing" {
	pol=$(policy b <<<$'[global]\nbudget = 0\n[rule big]\nsize = >=1M\naction = populate')
	run --separate-stderr shimmed "$pol" "$PROBE" alloc mmap 4M
	[ "$(kv resident "$output")" -eq 0 ]
}

@test "a set-user-ID program writes no report (root only: needs a trusted preload path)" {
	needs_plain_runtime
	[ "$(id -u)" -eq 0 ] || skip "needs root to make a set-user-ID program"
	command -v setpriv >/dev/null || skip "needs setpriv"
	libdir=$(dirname "$(readlink -f /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null || echo /lib)")
	lib="libprefault-bats-$$.so"
	cp "$SHIM" "$libdir/$lib"
	chmod 4755 "$libdir/$lib" # the loader preloads only set-user-ID libraries into such programs
	d=$(mktemp -d /tmp/pf-suid.XXXXXX)
	chmod 755 "$d"
	cp "$PROBE" "$d/plain"
	cp "$PROBE" "$d/suid"
	chmod 4755 "$d/suid"
	out=$(mktemp -d /tmp/pf-out.XXXXXX)
	chmod 777 "$out"
	setpriv --reuid=65534 --regid=65534 --clear-groups env LD_PRELOAD="$lib" PREFAULT_REPORT="$out/plain.json" "$d/plain" keep 1 1M
	setpriv --reuid=65534 --regid=65534 --clear-groups env LD_PRELOAD="$lib" PREFAULT_REPORT="$out/suid.json" "$d/suid" keep 1 1M
	rm -f "$libdir/$lib"
	ls -l "$out"
	[ -s "$out/plain.json" ]  # the same set-up does write for an ordinary program
	[ ! -e "$out/suid.json" ]
	rm -rf "$d" "$out"
}
