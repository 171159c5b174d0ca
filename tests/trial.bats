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
	[ "${with%.*}" -lt $((without / 20)) ]
	# the process's own fault count does not drop: the shim took them instead
	[ "$(jget "$j" "int(d['minor_faults']['with']['median']) >= 16000")" = True ]
}

@test "trial, known answer: an empty policy has no effect, and says so" {
	# A sanitizer's runtime adds milliseconds to every start: a real effect.
	[ -z "${PREFAULT_SANITIZER:-}" ] || skip "a sanitized shim is slower to start"
	pol=$(policy empty <<<$'[global]\nreport = none')
	run --separate-stderr "$PF" trial -n 5 -p "$pol" -- "$PROBE" burn 300
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q '^verdict: no effect' <<<"$output"
	grep -q '^wall ' <<<"$output"
	grep -q '^faults in the program ' <<<"$output"
	grep -q '^peak RSS ' <<<"$output"
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
	make -s -C "$root" install BUILD="$B" PREFIX=/opt/pf DESTDIR="$BATS_TEST_TMPDIR/dest" >/dev/null
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
