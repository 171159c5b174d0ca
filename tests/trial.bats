#!/usr/bin/env bats
# prefault trial, prefault bench, and the man pages.
load helpers

@test "trial, known answer: a policy that populates what the probe touches leaves about no faults in the program" {
	pol=$(policy pop <<<$'[global]\nreport = none\n[rule big]\nsize = >=16M\naction = populate')
	run --separate-stderr "$PF" trial -n 3 -p "$pol" --json -- "$PROBE" alloc mmap 64M
	[ "$status" -eq 0 ]
	echo "$output"
	j="$BATS_TEST_TMPDIR/t.json"
	echo "$output" >"$j"
	without=$(jget "$j" "d['faults_in_program']['without']['median']")
	with=$(jget "$j" "d['faults_in_program']['with']['median']")
	[ "${without%.*}" -ge 16000 ]
	# (a sanitizer's runtime faults its own shadow in, in the program's name)
	div=20
	[ -z "${SAN_RT:-}" ] || div=5
	[ "${with%.*}" -lt $((without / div)) ]
	# the process's own fault count does not drop: the shim took them instead
	[ "$(jget "$j" "int(d['minor_faults']['with']['median']) >= 16000")" = True ]
}

@test "trial, known answer: an empty policy leaves the faults in the program as they were, and claims no cut" {
	# Issue 12: the side without the shim counted the whole process and the
	# shim's side only from the shim's start, so a policy that does nothing
	# claimed 1.4x fewer faults.  Both sides are now the tree's faults from
	# wait4, less the shim's own work.
	needs_plain_runtime
	run --separate-stderr "$PF" trial -n 2 -p observe -- sleep 0.1
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q '^wall ' <<<"$output"
	grep -q '^peak RSS ' <<<"$output"
	grep -q '^faults left in the program: [0-9]* -> [0-9]* (none fewer)$' <<<"$output"
	! grep -q 'x fewer' <<<"$output" || false
	run --separate-stderr "$PF" trial -n 2 -p observe --json -- sleep 0.1
	j="$BATS_TEST_TMPDIR/t.json"
	echo "$output" >"$j"
	without=$(jget "$j" "int(d['faults_in_program']['without']['median'])")
	with=$(jget "$j" "int(d['faults_in_program']['with']['median'])")
	echo "faults in the program: $without -> $with"
	# the shim's own loading adds a few faults; it never removes the program's
	[ "$with" -ge "$without" ]
	[ "$with" -le $((without + 200)) ]
	# and the program's faults are the process's: nothing was prefaulted
	[ "$(jget "$j" "d['faults_in_program']['with']['median'] == d['minor_faults']['with']['median'] + d['major_faults']['with']['median']")" = True ]
}

@test "trial: every side runs in an environment of the same size, only one of them with the shim" {
	needs_plain_runtime # (a caller's LD_PRELOAD ahead of a sanitizer's runtime stops it)
	f="$BATS_TEST_TMPDIR/env.txt"
	run --separate-stderr "$PF" trial -n 2 --observe -p observe -- sh -c "env | wc -c >>$f; echo \"\${LD_PRELOAD:-none}\" >>$f"
	[ "$status" -eq 0 ]
	cat "$f"
	# warm-up and two rounds of three sides: nine runs, one size
	[ "$(grep -c '^[0-9]*$' "$f")" -eq 9 ]
	[ "$(grep '^[0-9]*$' "$f" | sort -u | wc -l)" -eq 1 ]
	[ "$(grep -c libprefault "$f")" -eq 6 ]
	[ "$(grep -c '^none$' "$f")" -eq 3 ]
	# an LD_PRELOAD of the caller's stays on every side, padded where the shim is not
	rm -f "$f"
	lib=$(ldd "$PROBE" | awk '/libc.so/ {print $3}')
	LD_PRELOAD="$lib" run --separate-stderr "$PF" trial -n 1 -p observe -- sh -c "env | wc -c >>$f; echo \"\$LD_PRELOAD\" >>$f"
	[ "$status" -eq 0 ]
	cat "$f"
	[ "$(grep '^[0-9]*$' "$f" | sort -u | wc -l)" -eq 1 ]
	[ "$(grep -c "libprefault.so:$lib\$" "$f")" -eq 2 ]
	[ "$(grep -c "^:*$lib\$" "$f")" -eq 2 ]
}

@test "trial --observe: three columns, the shim's own cost apart from the policy's effect" {
	needs_plain_runtime
	pol=$(policy pop <<<$'[global]\nreport = none\n[rule big]\nsize = >=16M\naction = populate')
	run --separate-stderr "$PF" trial -n 2 --observe -p "$pol" --json -- "$PROBE" alloc mmap 64M
	[ "$status" -eq 0 ]
	j="$BATS_TEST_TMPDIR/t.json"
	echo "$output" >"$j"
	without=$(jget "$j" "int(d['faults_in_program']['without']['median'])")
	observe=$(jget "$j" "int(d['faults_in_program']['observe']['median'])")
	with=$(jget "$j" "int(d['faults_in_program']['with']['median'])")
	echo "faults in the program: without $without, observe $observe, with $with"
	[ "$without" -ge 16000 ]
	# observe mode only watches: the program keeps its faults
	[ "$observe" -ge "$without" ]
	[ "$observe" -le $((without + 200)) ]
	[ "$with" -lt $((observe / 20)) ]
	jget "$j" "d['shim_cost']['verdict'], d['policy_effect']['verdict']"
	[ "$(jget "$j" "len(d['pairs']) == 2 and all(set(p) == {'without', 'observe', 'with'} for p in d['pairs'])")" = True ]
	run --separate-stderr "$PF" trial -n 1 --observe -p "$pol" -- "$PROBE" alloc mmap 64M
	echo "$output"
	grep -q 'without prefault *observe mode *with the policy' <<<"$output"
	grep -q "the shim's own cost" <<<"$output"
	grep -q "the policy's effect" <<<"$output"
}

@test "trial: progress on stderr only when it is a terminal" {
	run --separate-stderr "$PF" trial -n 2 -p observe -- true
	[ "$status" -eq 0 ]
	echo "stderr: $stderr"
	[ "$stderr" = "prefault trial: 2 alternating pairs after a warm-up of each; program output discarded" ]
	run on_tty "$PF" trial -n 2 -p observe -- true
	echo "$output" | cat -v
	[ "$status" -eq 0 ]
	grep -q 'prefault trial: [0-9]*s spent; warm-up, without prefault' <<<"$output"
	grep -q 'prefault trial: [0-9]*s spent, about [0-9]*s left; pair 2 of 2, with the policy' <<<"$output"
}

@test "trial of a failing program reports it, with its exit status" {
	run --separate-stderr "$PF" trial -n 2 -p observe -- "$PROBE" fail 3
	[ "$status" -eq 1 ]
	grep -q 'the program failed without prefault (run 1): exit status 3' <<<"$stderr"
	grep -q 'failing on purpose' <<<"$stderr"
	run --separate-stderr "$PF" trial -n 2 -p observe -- /no/such/program
	[ "$status" -eq 1 ]
	grep -q 'exit status 127' <<<"$stderr"
}

@test "trial --json is well-formed, with every measure on both sides" {
	pol=$(policy empty <<<$'[global]\nreport = none')
	run --separate-stderr "$PF" trial -n 2 -p "$pol" --json -- "$PROBE" burn 20
	[ "$status" -eq 0 ]
	echo "$output" >"$BATS_TEST_TMPDIR/t.json"
	for m in wall_s user_s sys_s minor_faults major_faults peak_rss_kb faults_in_program; do
		jget "$BATS_TEST_TMPDIR/t.json" "d['$m']['without']['median'] >= 0 and d['$m']['with']['max'] >= d['$m']['with']['min']" | grep -q True
	done
	jget "$BATS_TEST_TMPDIR/t.json" "d['verdict']" | grep -Eq '^(faster|slower|no effect|inconclusive)$'
}

@test "trial usage errors exit 2 and start nothing" {
	run --separate-stderr "$PF" trial -- true
	[ "$status" -eq 2 ]
	run --separate-stderr "$PF" trial -n 0 -p observe -- true
	[ "$status" -eq 2 ]
	bad=$(policy bad <<<$'[rule r]\naction = sometimes')
	run --separate-stderr "$PF" trial -p "$bad" -- touch "$BATS_TEST_TMPDIR/started"
	[ "$status" -eq 2 ]
	[ ! -e "$BATS_TEST_TMPDIR/started" ]
}

@test "bench: every row, per page and as factors, with faults; JSON well-formed" {
	run --separate-stderr "$PF" bench -r 1 16M
	[ "$status" -eq 0 ]
	echo "$output"
	for row in "first touch" MAP_POPULATE MADV_POPULATE_WRITE mlock "huge pages (MADV_HUGEPAGE" "populate, 2 threads" \
	           "huge pages, 2 threads" "retouch (already mapped)"; do
		grep -qF "$row" <<<"$output"
	done
	# first touch faults once per page; populate moves the faults into the preparation
	[ "$(awk '/^first touch/ {print $(NF)}' <<<"$output")" -ge 4096 ]
	run --separate-stderr "$PF" bench -r 1 --json 16M
	echo "$output" >"$BATS_TEST_TMPDIR/b.json"
	[ "$(jget "$BATS_TEST_TMPDIR/b.json" "len(d['phases'])")" -eq 8 ]
	[ "$(jget "$BATS_TEST_TMPDIR/b.json" "[p['minor_faults'] for p in d['phases'] if p['phase']=='retouch'][0] == 0")" = True ]
	run --separate-stderr "$PF" bench 12Q
	[ "$status" -eq 2 ]
}

@test "the man pages render without warnings" {
	command -v man >/dev/null || skip "no man"
	for m in prefault.1 prefault.policy.5; do
		f="$BATS_TEST_DIRNAME/../man/$m"
		run --separate-stderr env MANWIDTH=80 man -l "$f"
		[ "$status" -eq 0 ]
		grep -q '^NAME' <<<"$output"
		[ -z "$stderr" ]
		if command -v groff >/dev/null; then
			run --separate-stderr groff -man -ww -z "$f"
			[ -z "$stderr" ]
		fi
	done
}

@test "make install puts the man pages in place" {
	root="$BATS_TEST_DIRNAME/.."
	# (-o: as in cli.bats, never rebuild the build under test here)
	make -s -C "$root" install BUILD="$B" -o "$B/libprefault.so" -o "$B/prefault" \
		PREFIX=/opt/pf DESTDIR="$BATS_TEST_TMPDIR/dest" >/dev/null
	[ -f "$BATS_TEST_TMPDIR/dest/opt/pf/share/man/man1/prefault.1" ]
	[ -f "$BATS_TEST_TMPDIR/dest/opt/pf/share/man/man5/prefault.policy.5" ]
}

# Finding (issue 14): when the program failed only with the policy, trial dropped its stderr (kept in the emptied report directory).
@test "trial of a program that fails only with the policy shows the program's own stderr (issue 14 #28)" {
	prog='case "$LD_PRELOAD" in *libprefault*) echo boom-XYZ >&2; exit 3 ;; esac; exit 0'
	run --separate-stderr timeout 120 "$PF" trial -n 2 -p observe -- sh -c "$prog"
	echo "status $status, stderr: $stderr"
	[ "$status" -eq 1 ]
	grep -q 'the program failed with the policy (run 1): exit status 3' <<<"$stderr"
	grep -q 'boom-XYZ' <<<"$stderr"
}

# Finding: a '%' in $TMPDIR (%p, %e, %%) was expanded by the shim inside the tool's private
# report directory, so every report was lost, and trial counted the shim's own work as the
# program's faults.
@test "a '%' in TMPDIR: trial, run and profile still read every report (issue 22 #9)" {
	tmp="$BATS_TEST_TMPDIR/t%p%e%%x"
	mkdir "$tmp"
	pol=$(policy pop <<<$'[global]\nreport = none\n[rule big]\nsize = >=16M\naction = populate')
	TMPDIR="$tmp" run --separate-stderr "$PF" trial -n 1 -p "$pol" --json -- "$PROBE" alloc mmap 64M
	echo "status $status, output: $output, stderr: $stderr"
	[ "$status" -eq 0 ]
	j="$BATS_TEST_TMPDIR/t.json"
	echo "$output" >"$j"
	without=$(jget "$j" "int(d['faults_in_program']['without']['median'])")
	with=$(jget "$j" "int(d['faults_in_program']['with']['median'])")
	[ "$without" -ge 16000 ]
	[ "$with" -lt $((without / 5)) ]
	TMPDIR="$tmp" run --separate-stderr "$PF" run -- sh -c 'exit 0'
	echo "run: $stderr"
	[[ "$stderr" == "prefault: sh["*" faults "* ]]
	TMPDIR="$tmp" run --separate-stderr "$PF" profile -- "$PROBE" alloc mmap 4M
	echo "profile: $stderr"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"pfprobe [1 process]"* ]]
	[ -z "$(ls -A "$tmp")" ]
}

# Finding: bench accepted any size up to 64G whatever memory was free: bench -r 1 1G in a
# 512 MiB cgroup was OOM-killed with no message (on a shared machine the OOM killer may
# pick someone else's process).
@test "bench refuses a buffer larger than the memory available or the cgroup's room, and says both (issue 22 #15)" {
	# in a small cgroup first (the OOM killer, should the check fail, then stays inside it)
	st=99
	[ "$(id -u)" -ne 0 ] || in_small_cgroup $((256 << 20)) "$PF" bench -r 1 512M 2>"$BATS_TEST_TMPDIR/err" >/dev/null || st=$?
	if [ "$st" -ne 99 ]; then
		cat "$BATS_TEST_TMPDIR/err"
		[ "$st" -eq 2 ]
		grep -q "the cgroup has .* left under its limit of 256 MiB" "$BATS_TEST_TMPDIR/err"
		in_small_cgroup $((256 << 20)) "$PF" bench -r 1 16M >/dev/null # what fits still runs
	fi
	avail=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
	big=$(( (avail / 1024 / 1024) + 2 ))G
	run --separate-stderr "$PF" bench -r 1 "$big"
	echo "$big: status $status, stderr: $stderr"
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[[ "$stderr" == "prefault bench: a "*" buffer does not fit: MemAvailable is "* ]]
}

# helper-34: every run reads /dev/null, and input piped to trial was timed
# unread with nothing said (a filter measured doing nothing).
@test "trial: input piped to it is said not to reach the program (every run reads /dev/null); none said with no input" {
	run --separate-stderr bash -c "seq 1 1000 | '$PF' trial -n 1 -p observe -- sh -c 'wc -c > \"$BATS_TEST_TMPDIR/n\"'"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"the program reads /dev/null in every run, not this input"* ]]
	[ "$(cat "$BATS_TEST_TMPDIR/n")" -eq 0 ]
	run --separate-stderr "$PF" trial -n 1 -p observe -- true </dev/null
	[ "$status" -eq 0 ]
	[[ "$stderr" != *"/dev/null in every run"* ]]
}
