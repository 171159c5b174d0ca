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

@test "the shim exports exactly the wrappers listed in shim/floor/entries.h" {
	syms=$(nm -D --defined-only "$SHIM" | awk '$2 ~ /[TWiV]/ {print $3}' | sort | tr '\n' ' ')
	listed=$(sed -n 's/.*X(\([a-z_0-9A-Z]*\)).*/&/p' "$BATS_TEST_DIRNAME/../shim/floor/entries.h" | grep -o 'X([A-Za-z_0-9]*)' |
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

# Finding: installed in a directory named "my x", the tool handed the loader
# LD_PRELOAD=".../my x/libprefault.so": it loaded ".../my" (an ERROR line in the program's
# stderr) and the relative "x/libprefault.so" from the current directory, a planted library.
@test "a space, ':' or '\$' in the tool's path: the shim loads, nothing from the current directory; run, profile, trial, tune (issue 22 #6)" {
	needs_plain_runtime # (PREFAULT_SHIM is the sanitizer's runtime and the shim then)
	work="$BATS_TEST_TMPDIR/work"
	mkdir -p "$work/x" "$work/b"
	cp "$B/probes/libcount.so" "$work/x/libprefault.so" # writes $COUNT_OUT when loaded
	cp "$B/probes/libcount.so" "$work/b/libprefault.so"
	cd "$work"
	export COUNT_OUT="$work/planted"
	for d in "my x" "a:b" 'd$LIB'; do
		inst="$BATS_TEST_TMPDIR/$d"
		mkdir -p "$inst"
		cp "$PF" "$SHIM" "$inst/"
		run --separate-stderr env -u PREFAULT_SHIM "$inst/prefault" run -- sh -c '"$1" && exit 4' sh "$(type -P true)"
		echo "$d: status $status, stderr: $stderr"
		[ "$status" -eq 4 ]
		[ ! -e planted ]
		[[ "$stderr" == "prefault: 2 processes (sh["* ]]
		[[ "$stderr" != *ld.so* ]]
	done
	inst="$BATS_TEST_TMPDIR/my x"
	run --separate-stderr env -u PREFAULT_SHIM "$inst/prefault" profile -- "$PROBE" keep 1 4M
	echo "profile: status $status, stderr: $stderr"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"pfprobe [1 process]"* ]]
	run --separate-stderr env -u PREFAULT_SHIM "$inst/prefault" tune --rank faults -n 1 -o "$work/t.policy" -- "$PROBE" keep 1 4M
	echo "tune: status $status, output: $output, stderr: $stderr"
	[ "$status" -eq 0 ]
	run --separate-stderr env -u PREFAULT_SHIM "$inst/prefault" trial -n 1 -p "$POLICIES/observe.policy" -- sh -c 'exit 0'
	[ "$status" -eq 0 ]
	[ ! -e planted ]
	# and the private link is gone
	[ -z "$(ls -d /dev/shm/prefault-shim.* /tmp/prefault-shim.* 2>/dev/null)" ]
}

# Finding: with the user's LD_PRELOAD holding libasan, run put the shim first, so ASan
# aborted the program (exit 1), and run blamed "a statically linked or set-user-ID program".
@test "a sanitizer's runtime in LD_PRELOAD stays first, the shim just after it (issue 22 #25)" {
	needs_plain_runtime
	rt=$(gcc -print-file-name=libasan.so)
	[ -e "$rt" ] || skip "no libasan here"
	shim=$(readlink -f "$SHIM")
	run --separate-stderr env LD_PRELOAD="$rt:$STACKLIB" ASAN_OPTIONS=detect_leaks=0 "$PF" run -- sh -c 'echo "$LD_PRELOAD"'
	echo "status $status, output $output, stderr: $stderr"
	[ "$status" -eq 0 ]
	[ "$output" = "$rt:$shim:$STACKLIB" ]
	[[ "$stderr" == "prefault: sh["* ]]
	# a clang runtime, and one after another library, are found too
	run --separate-stderr env LD_PRELOAD="$STACKLIB /x/libclang_rt.tsan-x86_64.so" "$PF" run -o none -- sh -c 'echo "$LD_PRELOAD"'
	[ "$output" = "$STACKLIB /x/libclang_rt.tsan-x86_64.so:$shim" ]
}

# Finding: run blamed a static binary for every missing report, without looking.
@test "run names the cause it checked when no report came: static, or none found (issue 22 #25)" {
	static=$(type -P ldconfig || echo /sbin/ldconfig)
	file -L "$static" | grep -q 'static' || skip "no static ldconfig here"
	run --separate-stderr "$PF" run -- "$static" -p
	echo "$stderr"
	[[ "$stderr" == *"ldconfig["*"] wrote no report: it is statically linked (checked: no program interpreter"* ]]
	run --separate-stderr "$PF" run -- env -u LD_PRELOAD true
	echo "$stderr"
	[[ "$stderr" == *"env["*"] wrote no report: the shim can load into it (dynamically linked, not set-user-ID: checked)"* ]]
	[[ "$stderr" != *static* ]]
}
