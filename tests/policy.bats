#!/usr/bin/env bats
# The policy language: what check accepts, and how bad input is named.
load helpers

@test "every shipped policy checks clean, one line per rule" {
	for p in "$POLICIES"/*.policy; do
		run --separate-stderr "$PF" check "$p"
		[ "$status" -eq 0 ]
		[ -z "$stderr" ]
		rules=$(grep -c '^\[rule ' "$p" || true)
		if [ "$rules" -gt 0 ]; then
			[ "$(grep -c ': rule ' <<<"$output")" -eq "$rules" ]
		fi
	done
}

@test "shipped policies are found by name" {
	run --separate-stderr "$PF" check cpython realtime streaming observe
	[ "$status" -eq 0 ]
	grep -q 'pymalloc-arenas' <<<"$output"
}

@test "the example in the documentation parses as documented" {
	pol=$(policy doc <<-'EOF'
	# policies/cpython.policy (example)
	[global]
	budget = 1G          # most bytes this process may prefault
	report = stderr      # stderr | none | a path

	[rule pymalloc-arenas]
	call   = mmap        # mmap | malloc | any (default any)
	size   = 256K..1M    # N, A..B (inclusive), >=N, <=N
	map    = anon private   # any of anon file private shared; all must hold
	prot   = rw          # the request must include these
	caller = python3* libpython3*
	program = *
	action = populate
	EOF
	)
	run --separate-stderr "$PF" check "$pol"
	[ "$status" -eq 0 ]
	[ "$output" = "$pol: report: stderr"$'\n'"$pol: rule pymalloc-arenas: call=mmap size=256K..1M map=anon,private prot=rw caller=python3*,libpython3* program=* -> populate" ]
}

@test "size forms: N, A..B, >=N, <=N, >N, <N, any, with K M G T" {
	for s in "4096" "256K..1M" "256K .. 1M" ">=2M" "<=1G" ">4K" "<1T" "any" "1t" "0..4K"; do
		pol=$(policy s <<<"[rule r]"$'\n'"size = $s"$'\n'"action = none")
		run --separate-stderr "$PF" check "$pol"
		echo "$s: $stderr"
		[ "$status" -eq 0 ]
	done
}

# Each malformed policy: its text, the line the error must name, and a word
# the message must contain.
bad_cases() {
	cat <<-'EOF'
	[rule r]\nsize = 12Q\naction = none|2|unknown suffix
	[rule r]\nsize = 1M..256K\naction = none|2|empty
	[rule r]\nsize = -5\naction = none|2|not a number
	[rule r]\nsize = 99999999999999999999\naction = none|2|too large
	[rule r]\nsize = 16777216T\naction = none|2|too large
	[rule r]\nsize =\naction = none|2|no value
	[rule r]\nsise = 1M\naction = none|2|unknown rule key 'sise'
	[rule r]\naction = populate sometimes|2|unknown action 'sometimes'
	[rule r]\naction = recycle|1|recycle works on mmap calls only
	[rule r]\ncall = mmap\nsize = 256K 1M\naction = recycle|3|write two rules
	[rule r]\nthreads = 2\naction = willneed|1|threads applies to populate
	[rule r]\nthreads = 0\naction = populate|2|threads takes a whole number from 1 to 64
	[rule r]\nthreads = 2x\naction = populate|2|threads takes a whole number
	[rule r]\nthreads = 65\naction = populate|2|from 1 to 64
	[rule r]\naction = populate background|2|choose one
	[rule r]\nchunk = 2M\naction = populate|1|chunk applies to background
	[rule r]\nchunk = 4K\naction = background|2|chunk is too small
	[rule r]\ncall = stack\naction = populate|1|needs depth
	[rule r]\ncall = stack mmap\ndepth = 64K\naction = populate|1|cannot be combined
	[rule r]\ncall = stack\ndepth = 64K\nmap = anon\naction = populate|1|do not apply
	[rule r]\ncall = stack\ndepth = 64K\naction = hugepage|1|takes action populate
	[rule r]\ndepth = 64K\naction = populate|1|depth applies to call = stack
	[global]\nworkers = many|2|workers takes a whole number
	[rule r]\naction = none populate|2|cannot be combined
	[rule r]\ncall = brk\naction = none|2|unknown call 'brk'
	[rule r]\nmap = anon file\naction = none|2|never match
	[rule r]\nmap = anonymous\naction = none|2|unknown mapping kind
	[rule r]\nprot = rwz\naction = none|2|bad prot
	[rule r]\nprot = rr\naction = none|2|bad prot
	[rule r]\ncaller = lib[abc\naction = none|2|unterminated
	[rule r]\ncaller = /usr/lib/libfoo.so\naction = none|2|file names, not paths
	[rule r]\nsize = 1M\nsize = 2M\naction = none|3|given twice
	# a comment\n\n[rule r]\nsize = 1M|3|has no action
	[rule r]\naction = none\n[rule r]\naction = none|3|defined twice
	[rule bad name]\naction = none|1|bad rule name
	[rule]\naction = none|1|needs a name
	[rules r]\naction = none|1|unknown section
	[global\nbudget = 1G|1|bad section header
	budget = 1G|1|outside any section
	[global]\nbudget = lots|2|bad size
	[global]\nbudgett = 1G|2|unknown key 'budgett'
	[global]\nmlockall = always|2|unknown mlockall mode
	[global]\n\nmlockall = onfault|3|onfault goes with current or future
	[global]\n[global]|2|given twice
	[global]\nsize = 1M|2|unknown key 'size'
	[rule r]\nbudget = 1G\naction = none|2|unknown rule key 'budget'
	[rule r]\njust some words|2|expected 'key = value'
	[rule r]\n= populate|2|missing key
	[rule r]\ncall = malloc\naction = map-populate|1|mmap calls only
	[rule r]\ncall = malloc\nmap = file\naction = populate|1|never match
	EOF
}

@test "malformed policies: check names FILE:LINE and what is wrong, and exits 2" {
	n=0
	while IFS='|' read -r text line word; do
		n=$((n + 1))
		f="$BATS_TEST_TMPDIR/bad$n.policy"
		printf '%b\n' "$text" >"$f"
		run --separate-stderr "$PF" check "$f"
		echo "case $n: $text -> $stderr"
		[ "$status" -eq 2 ]
		[[ "$stderr" == "$f:$line: "* ]]
		[[ "$stderr" == *"$word"* ]]
	done < <(bad_cases)
	[ "$n" -ge 30 ]
}

@test "check reports every bad file, and the good ones, in one run" {
	good=$(policy good <<<$'[rule r]\naction = none')
	printf '[rule r]\nsize = 1X\naction = none\n' >"$BATS_TEST_TMPDIR/b1.policy"
	printf '[global]\nreport\n' >"$BATS_TEST_TMPDIR/b2.policy"
	run --separate-stderr "$PF" check "$BATS_TEST_TMPDIR/b1.policy" "$good" "$BATS_TEST_TMPDIR/b2.policy"
	[ "$status" -eq 2 ]
	grep -q "b1.policy:2: " <<<"$stderr"
	grep -q "b2.policy:2: " <<<"$stderr"
	grep -q "rule r" <<<"$output"
}

@test "a NUL byte or a missing file is an error, not a crash" {
	printf '[rule r]\naction = none\0\n' >"$BATS_TEST_TMPDIR/nul.policy"
	run --separate-stderr "$PF" check "$BATS_TEST_TMPDIR/nul.policy"
	[ "$status" -eq 2 ]
	grep -q "nul.policy:2: NUL byte" <<<"$stderr"
	run --separate-stderr "$PF" check "$BATS_TEST_TMPDIR/absent.policy"
	[ "$status" -eq 2 ]
	run --separate-stderr "$PF" check no-such-shipped-policy
	[ "$status" -eq 2 ]
	grep -q "shipped: " <<<"$stderr"
}

@test "run with a bad policy exits 2 and starts nothing" {
	bad=$(policy bad <<<$'[rule r]\nsize = huge\naction = populate')
	run --separate-stderr "$PF" run -p "$bad" -- touch "$BATS_TEST_TMPDIR/started"
	[ "$status" -eq 2 ]
	[[ "$stderr" == "$bad:2: "* ]]
	[ ! -e "$BATS_TEST_TMPDIR/started" ]
}

@test "a bad policy under a bare LD_PRELOAD: one warning naming FILE:LINE, program unchanged" {
	bad=$(policy bad <<<$'[global]\nbudget = 1G\n[rule r]\naction = sometimes')
	REPORT=stderr run --separate-stderr shimmed "$bad" sh -c 'echo out; echo err >&2; exit 7'
	[ "$status" -eq 7 ]
	[ "$output" = "out" ]
	[ "$(grep -c "^prefault: $bad:4: unknown action 'sometimes'" <<<"$stderr")" -eq 1 ]
	[ "$(grep -c '^prefault' <<<"$stderr")" -eq 1 ]
	grep -q '^err$' <<<"$stderr"
	# unchanged: nothing populated
	run --separate-stderr shimmed "$bad" "$PROBE" alloc mmap 4M
	[ "$(kv resident "$output")" -eq 0 ]
}

@test "a missing policy file under a bare LD_PRELOAD warns and runs the program" {
	run --separate-stderr shimmed "$BATS_TEST_TMPDIR/nope.policy" sh -c 'exit 3'
	[ "$status" -eq 3 ]
	grep -q "nope.policy: cannot use the policy: no such file or directory" <<<"$stderr"
}

# ---- issue 14: policy loading must never block, never read the program's
# input, and the shim and check must give the same answer.

# pad_policy SIZE FILE: a valid populate policy padded with comment lines
# (each under the parser's line limit) to exactly SIZE bytes
pad_policy() {
	"$PY" -c '
import sys
size, path = int(sys.argv[1]), sys.argv[2]
text = "[rule big]\nsize = >=1M\nmap = anon private\naction = populate\n"
while size - len(text) >= 200:
    text += "#" + "x" * 98 + "\n"
text += "#" + "x" * (size - len(text) - 2) + "\n"
open(path, "w").write(text)
' "$1" "$2"
	[ "$(stat -c %s "$2")" -eq "$1" ]
}

# Finding: a FIFO as PREFAULT_POLICY hung the program before main, and check hung on it too.
@test "a FIFO as the policy: the shim refuses it at once and runs the program, check exits 2 (issue 14 #1)" {
	fifo="$BATS_TEST_TMPDIR/fifo.policy"
	mkfifo "$fifo"
	run --separate-stderr timeout 10 env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$fifo" PREFAULT_REPORT=none \
		sh -c 'echo out; exit 4'
	echo "shim: status $status, stderr: $stderr"
	[ "$status" -eq 4 ]
	[ "$output" = out ]
	[ "$(grep -c '^prefault' <<<"$stderr")" -eq 1 ]
	grep -q "^prefault: $fifo: .*not a regular file" <<<"$stderr"
	run --separate-stderr timeout 10 "$PF" check "$fifo"
	echo "check: status $status, stderr: $stderr"
	[ "$status" -eq 2 ]
	grep -q "$fifo: .*not a regular file" <<<"$stderr"
}

# Finding: check took a read error (a directory, /proc/self/mem) for EOF and passed the file as "no rules".
@test "a directory or /proc/self/mem as the policy: check exits 2 naming it, the shim warns and runs the program (issue 14 #2)" {
	dir="$BATS_TEST_TMPDIR/dir.policy"
	mkdir "$dir"
	for p in "$dir" /proc/self/mem; do
		run --separate-stderr timeout 10 "$PF" check "$p"
		echo "check $p: status $status, output: $output, stderr: $stderr"
		[ "$status" -eq 2 ]
		grep -qF "$p" <<<"$stderr"
		[ -z "$output" ]
		run --separate-stderr timeout 10 env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$p" PREFAULT_REPORT=stderr \
			sh -c 'echo out; exit 4'
		echo "shim $p: status $status, stderr: $stderr"
		[ "$status" -eq 4 ]
		[ "$output" = out ]
		[ "$(grep -c '^prefault' <<<"$stderr")" -eq 1 ]
		grep -qF "prefault: $p: " <<<"$stderr"
	done
}

# Finding: a directory named "streaming" in the current directory shadowed the shipped policy.
@test "a directory named like a shipped policy does not shadow it: run -p streaming uses the shipped file (issue 14 #2)" {
	cd "$BATS_TEST_TMPDIR"
	mkdir streaming
	run --separate-stderr timeout 30 "$PF" run -p streaming -o R.json -- true
	echo "status $status, stderr: $stderr"
	[ "$status" -eq 0 ]
	[ -s R.json ]
	[[ "$(jget R.json "d['policy']")" == *policies/streaming.policy ]]
}

# Finding: policies of 65,535 and 65,536 bytes passed check but the shim refused them as "larger than 64 KiB".
@test "policy size limit: the shim and check agree at 65535, 65536 (accepted) and 65537 bytes (refused) (issue 14 #3)" {
	for size in 65535 65536; do
		f="$BATS_TEST_TMPDIR/size$size.policy"
		pad_policy "$size" "$f"
		run --separate-stderr "$PF" check "$f"
		echo "check $size: status $status, stderr: $stderr"
		[ "$status" -eq 0 ]
		run --separate-stderr shimmed "$f" "$PROBE" alloc mmap 4M
		echo "shim $size: $output, stderr: $stderr"
		[ "$status" -eq 0 ]
		! grep -q '^prefault' <<<"$stderr" || false
		[ "$(kv resident "$output")" -eq "$(kv pages "$output")" ] # the policy was applied
	done
	f="$BATS_TEST_TMPDIR/size65537.policy"
	pad_policy 65537 "$f"
	run --separate-stderr "$PF" check "$f"
	echo "check 65537: status $status, stderr: $stderr"
	[ "$status" -eq 2 ]
	grep -qF "$f" <<<"$stderr"
	run --separate-stderr shimmed "$f" "$PROBE" alloc mmap 4M
	echo "shim 65537: $output, stderr: $stderr"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^prefault' <<<"$stderr")" -eq 1 ]
	grep -qF "prefault: $f" <<<"$stderr"
	[ "$(kv resident "$output")" -eq 0 ]
}

# Finding: PREFAULT_POLICY=/dev/stdin made the shim read the program's standard input.
@test "PREFAULT_POLICY=/dev/stdin on a pipe is refused, and the program still gets its input (issue 14 #4)" {
	run --separate-stderr timeout 10 sh -c 'printf "hello\n" | LD_PRELOAD="$1" PREFAULT_POLICY=/dev/stdin PREFAULT_REPORT=none cat' \
		sh "$SHIM_LD"
	echo "status $status, output: $output, stderr: $stderr"
	[ "$status" -eq 0 ]
	[ "$output" = hello ]
	[ "$(grep -c '^prefault' <<<"$stderr")" -eq 1 ]
	grep -q '^prefault: /dev/stdin: ' <<<"$stderr"
	# and check gives the same answer
	run --separate-stderr timeout 10 sh -c 'printf "[rule r]\naction = none\n" | "$1" check /dev/stdin' sh "$PF"
	[ "$status" -eq 2 ]
	grep -q '/dev/stdin' <<<"$stderr"
}

# Finding: a symlink loop was reported as "is a symbolic link (refused)", although symlinked policies work.
@test "a symlink loop as the policy is named as a loop; a policy behind a valid symlink works (issue 14 #5)" {
	a="$BATS_TEST_TMPDIR/cycle-a.policy"
	b="$BATS_TEST_TMPDIR/cycle-b.policy"
	ln -s "$b" "$a"
	ln -s "$a" "$b"
	run --separate-stderr env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$a" PREFAULT_REPORT=none sh -c 'exit 3'
	echo "shim: status $status, stderr: $stderr"
	[ "$status" -eq 3 ]
	[ "$(grep -c '^prefault' <<<"$stderr")" -eq 1 ]
	grep -qF "prefault: $a: " <<<"$stderr"
	! grep -q 'symbolic link (refused)' <<<"$stderr" || false
	grep -Eqi 'levels of symbolic links|loop' <<<"$stderr"
	run --separate-stderr "$PF" check "$a"
	echo "check: status $status, stderr: $stderr"
	[ "$status" -eq 2 ]
	! grep -q 'symbolic link (refused)' <<<"$stderr" || false
	grep -Eqi 'levels of symbolic links|loop' <<<"$stderr"
	# a valid symlink to a good policy: check passes and the shim applies it
	real=$(populate_all)
	ln -s "$real" "$BATS_TEST_TMPDIR/link.policy"
	run --separate-stderr "$PF" check "$BATS_TEST_TMPDIR/link.policy"
	[ "$status" -eq 0 ]
	run --separate-stderr shimmed "$BATS_TEST_TMPDIR/link.policy" "$PROBE" alloc mmap 4M
	! grep -q '^prefault' <<<"$stderr" || false
	[ "$(kv resident "$output")" -eq "$(kv pages "$output")" ]
}

# Finding: recycle_max = 0 was silently taken as the 64M default.
@test "recycle_max = 0 is refused: check exits 2 naming FILE:LINE and recycle_max (issue 14 #6)" {
	pol=$(policy rm0 <<<$'[rule arenas]\ncall = mmap\nsize = 1M\naction = recycle\nrecycle_max = 0')
	run --separate-stderr "$PF" check "$pol"
	echo "check: status $status, output: $output, stderr: $stderr"
	[ "$status" -eq 2 ]
	[[ "$stderr" == "$pol:5: "* ]]
	[[ "$stderr" == *recycle_max* ]]
	# the shim gives the same answer: one warning naming FILE:LINE, the program unchanged
	run --separate-stderr shimmed "$pol" sh -c 'exit 3'
	[ "$status" -eq 3 ]
	[ "$(grep -c "^prefault: $pol:5: " <<<"$stderr")" -eq 1 ]
}

# Minor finding of issue 22: size = 0 was accepted, though no mapping or block is ever empty.
@test "size = 0, 0..0, <=0 and <1 are refused: check and the shim name FILE:LINE (issue 22 minor)" {
	for s in 0 0..0 '<=0' '<1' 0K; do
		pol=$(policy z <<<$'[global]\n[rule nothing]\n'"size = $s"$'\naction = populate')
		run --separate-stderr "$PF" check "$pol"
		echo "$s: status $status, stderr: $stderr"
		[ "$status" -eq 2 ]
		[[ "$stderr" == "$pol:3: size 0 can never match"* ]]
	done
	run --separate-stderr shimmed "$pol" sh -c 'exit 3'
	[ "$status" -eq 3 ]
	[ "$(grep -c "^prefault: $pol:3: size 0" <<<"$stderr")" -eq 1 ]
}

# Finding: a policy saved with a UTF-8 byte order mark was refused, the message quoting an
# invisible character, while CRLF line ends were accepted.
@test "a UTF-8 byte order mark at the start of a policy is accepted, by check and the shim alike (issue 22 #11)" {
	pol="$BATS_TEST_TMPDIR/bom.policy"
	printf '\357\273\277# saved by an editor\r\n[rule big]\r\nsize = >=1M\r\nmap = anon private\r\naction = populate\r\n' >"$pol"
	run --separate-stderr "$PF" check "$pol"
	echo "status $status, output: $output, stderr: $stderr"
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "$pol: rule big: call=any size=>=1M map=anon,private -> populate" ]
	run --separate-stderr shimmed "$pol" "$PROBE" alloc mmap 4M
	echo "shim: $output; $stderr"
	[ -z "$stderr" ]
	[ "$(kv resident "$output")" -eq 1024 ]
	# only at the start: elsewhere it is a character like any other
	printf '[rule big]\n\357\273\277action = populate\n' >"$pol"
	run --separate-stderr "$PF" check "$pol"
	[ "$status" -eq 2 ]
}

# Finding: run -p realtime silently used a file named realtime in the current directory,
# even one owned by someone else in a shared directory, whose report key clobbered a file.
@test "-p NAME is the shipped policy whatever the directory holds; ./NAME is the file, and the tool says which (issue 22 #8)" {
	cd "$BATS_TEST_TMPDIR"
	printf '[global]\nreport = %s/planted.json\n' "$BATS_TEST_TMPDIR" >streaming
	run --separate-stderr "$PF" run -p streaming -- true
	echo "status $status, stderr: $stderr"
	[ "$status" -eq 0 ]
	[ ! -e planted.json ]
	[[ "$stderr" == *"streaming is the shipped policy "*"/streaming.policy; for the file here, write ./streaming"* ]]
	# the file, named as a path
	run --separate-stderr "$PF" run -p ./streaming -- true
	[ "$status" -eq 0 ]
	[ -s planted.json ]
	# a name that is not shipped is not looked up here: refused, nothing started, the way out said
	cp streaming mine
	run --separate-stderr "$PF" run -p mine -- touch started
	echo "status $status, stderr: $stderr"
	[ "$status" -eq 2 ]
	[ ! -e started ]
	[[ "$stderr" == *"mine: no shipped policy of that name"*"for the file here, write ./mine"* ]]
	# check names the file it read
	run --separate-stderr "$PF" check streaming
	[[ "$output" == */policies/streaming.policy:\ rule\ * ]]
}
