#!/usr/bin/env bats
# The command-line tool: run, check, usage.
load helpers

@test "--help and --version" {
	run --separate-stderr "$PF" --help
	[ "$status" -eq 0 ]
	grep -q 'run \[-p POLICY\]' <<<"$output"
	grep -q 'check POLICY' <<<"$output"
	grep -q 'cpython' <<<"$output"
	run --separate-stderr "$PF" --version
	[ "$status" -eq 0 ]
	[[ "$output" == "prefault "[0-9]* ]]
}

@test "usage errors exit 2" {
	run --separate-stderr "$PF"
	[ "$status" -eq 2 ]
	run --separate-stderr "$PF" frobnicate
	[ "$status" -eq 2 ]
	run --separate-stderr "$PF" run
	[ "$status" -eq 2 ]
	run --separate-stderr "$PF" run -p
	[ "$status" -eq 2 ]
	run --separate-stderr "$PF" run --bogus -- true
	[ "$status" -eq 2 ]
	run --separate-stderr "$PF" check
	[ "$status" -eq 2 ]
}

@test "run: the exit status is the program's, and a missing program is 127" {
	run --separate-stderr "$PF" run -o none -- sh -c 'exit 42'
	[ "$status" -eq 42 ]
	run -127 --separate-stderr "$PF" run -o none -- /no/such/program
	[ "$status" -eq 127 ]
}

@test "run prepends the shim to an existing LD_PRELOAD and sets the environment" {
	needs_plain_runtime
	LD_PRELOAD="$STACKLIB" run --separate-stderr "$PF" run -p cpython -o "$BATS_TEST_TMPDIR/x.json" -- sh -c 'echo "$LD_PRELOAD|$PREFAULT_POLICY|$PREFAULT_REPORT"'
	[ "$status" -eq 0 ]
	shim=$(readlink -f "$SHIM")
	pol=$(readlink -f "$POLICIES/cpython.policy")
	[ "$output" = "$shim:$STACKLIB|$pol|$BATS_TEST_TMPDIR/x.json" ]
	# and does not add the shim twice
	LD_PRELOAD="$shim" run --separate-stderr "$PF" run -o none -- sh -c 'echo "$LD_PRELOAD"'
	[ "$output" = "$shim" ]
}

@test "run without -p observes and reports" {
	run --separate-stderr "$PF" run -o "$BATS_TEST_TMPDIR/o.json" -- "$PROBE" keep 2 4M
	[ "$status" -eq 0 ]
	[ "$(jget "$BATS_TEST_TMPDIR/o.json" "d['policy']")" = None ]
	[ "$(jget "$BATS_TEST_TMPDIR/o.json" "d['calls']['mmap']")" -ge 2 ]
}

@test "run -p with a shipped policy acts on the program" {
	pol=$(populate_all)
	run --separate-stderr "$PF" run -p "$pol" -o none -- "$PROBE" alloc mmap 4M
	[ "$(kv resident "$output")" -eq 1024 ]
}

@test "make install honours PREFIX and DESTDIR, and the installed tool finds its shim and policies" {
	root="$BATS_TEST_DIRNAME/.."
	# (-o: install the build under test as it is; never rebuild it here with
	# other flags, which would break a sanitizer build other tests still use)
	make -s -C "$root" install BUILD="$B" -o "$B/libprefault.so" -o "$B/prefault" \
		PREFIX=/opt/pf DESTDIR="$BATS_TEST_TMPDIR/dest" >/dev/null
	d="$BATS_TEST_TMPDIR/dest/opt/pf"
	[ -x "$d/bin/prefault" ]
	[ -f "$d/lib/prefault/libprefault.so" ]
	[ -f "$d/share/prefault/policies/cpython.policy" ]
	run --separate-stderr "$d/bin/prefault" check cpython
	[ "$status" -eq 0 ]
	run --separate-stderr env -u PREFAULT_SHIM "$d/bin/prefault" run -o none -- sh -c 'echo "$LD_PRELOAD"'
	[ -n "${PREFAULT_SANITIZER:-}" ] || [ "$output" = "$(readlink -f "$d/lib/prefault/libprefault.so")" ]
}

@test "the shim exports exactly the wrappers listed in shim/entries.h" {
	syms=$(nm -D --defined-only "$SHIM" | awk '$2 ~ /[TWiV]/ {print $3}' | sort | tr '\n' ' ')
	listed=$(sed -n 's/.*X(\([a-z_0-9A-Z]*\)).*/&/p' "$BATS_TEST_DIRNAME/../shim/entries.h" | grep -o 'X([A-Za-z_0-9]*)' |
		sed 's/X(\(.*\))/\1/' | sort | tr '\n' ' ')
	echo "exported: $syms"
	echo "listed:   $listed"
	[ -n "$listed" ]
	[ "$syms" = "$listed" ]
	# and the wrappers are there: the list is not empty of the essentials
	[[ " $syms" == *" malloc "* ]] && [[ " $syms" == *" mmap "* ]] && [[ " $syms" == *" munmap "* ]]
}

# Finding: check echoed ESC and BEL bytes of a policy raw, in its errors and its rule lines:
# a policy could clear the screen, retitle the terminal or write the clipboard (OSC 52).
@test "check escapes a policy's control characters in errors and rule lines (issue 22 #10)" {
	osc="$BATS_TEST_TMPDIR/osc.policy" csi="$BATS_TEST_TMPDIR/csi.policy"
	printf '[rule r]\nprogram = a\033]52;c;SGVsbG8=\007b\naction = populate\n' >"$osc"
	printf '[rule r]\naction = pop\033[2J\302\233x\n' >"$csi"
	run --separate-stderr "$PF" check "$osc"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *'program=a\x1b]52;c;SGVsbG8=\x07b'* ]]
	[[ "$output" != *$'\033'* && "$output" != *$'\007'* ]]
	run --separate-stderr "$PF" check "$csi"
	echo "$stderr"
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"csi.policy:2: "*'pop\x1b[2J\xc2\x9bx'* ]]
	[[ "$stderr" != *$'\033'* && "$stderr" != *$'\302\233'* ]]
}

# Found by the audit of #10: a command-line argument with a newline, copied into the
# comment at the head of a suggested policy, became a rule of it.
@test "profile --suggest: the command in the policy's comments cannot add a line to it (issue 22 #10)" {
	f="$BATS_TEST_TMPDIR/s.policy"
	run --separate-stderr "$PF" profile --suggest "$f" -- true $'\n[rule evil]\naction = lock'
	echo "$stderr"
	[ "$status" -eq 0 ]
	head -n 1 "$f"
	! grep -q '^\[rule evil\]' "$f" || false
	grep -qF '\n[rule evil]\naction = lock' "$f"
}
