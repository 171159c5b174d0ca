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

@test "the budget's limit: null when nothing needed it (not worked out at exit), a number once a rule prefaulted" {
	pol=$(populate_all)
	# a rule that matched nothing: the limit was never worked out
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed "$pol" "$PROBE" keep 3 64K
	[ "$status" -eq 0 ]
	[ "$(jget "$BATS_TEST_TMPDIR/r.json" "d['budget']['limit']")" = None ]
	[ "$(jget "$BATS_TEST_TMPDIR/r.json" "d['budget']['peak']")" -eq 0 ]
	REPORT="$BATS_TEST_TMPDIR/r.txt" run --separate-stderr shimmed "$pol" "$PROBE" keep 3 64K
	grep -q "; budget peak 0 B (no limit worked out: nothing needed one)$" "$BATS_TEST_TMPDIR/r.txt"
	# a rule that prefaulted: a number, and the tool's summary says the same
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed "$pol" "$PROBE" keep 2 1M
	[ "$(jget "$BATS_TEST_TMPDIR/r.json" "type(d['budget']['limit']).__name__")" = int ]
	[ "$(jget "$BATS_TEST_TMPDIR/r.json" "d['budget']['limit'] > 0")" = True ]
	run --separate-stderr "$PF" run -p "$pol" -- "$PROBE" keep 3 64K
	[[ "$stderr" == *"; budget peak 0 B (no limit worked out: nothing needed one)"* ]]
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

# helper-34: with fs.protected_symlinks off, a directory symlink that
# another user made in a sticky shared directory was followed on the way
# (only the last component was opened O_NOFOLLOW): root's report, bare and
# under run, went into the directory of nobody's choosing.  Now each
# component is opened in turn and a link followed only where the kernel's
# protected_symlinks would (lib/path_walk.c), whatever the setting; the
# tool's own outputs the same way (open_output).
@test "a report, a profile and the tool's outputs never go through another user's symlink in a sticky shared directory; root's own link and links elsewhere are followed" {
	needs_plain_runtime
	[ "$(id -u)" -eq 0 ] || skip "needs root to plant another user's link"
	command -v setpriv >/dev/null || skip "needs setpriv"
	d=$(mktemp -d /tmp/pf-sticky.XXXXXX)
	chmod 755 "$d"
	mkdir "$d/stk" "$d/there" "$d/mine"
	chmod 1777 "$d/stk"
	chmod 777 "$d/there"
	setpriv --reuid=65534 --regid=65534 --clear-groups ln -s "$d/there" "$d/stk/evil"
	ln -s "$d/there" "$d/stk/ours"
	ln -s "$d/there" "$d/mine/link"
	# the CLI says so before the program starts, and starts nothing
	run --separate-stderr "$PF" run -o "$d/stk/evil/r.json" -- touch "$d/started"
	echo "$stderr"
	[ "$status" -eq 2 ]
	[ ! -e "$d/started" ]
	[[ "$stderr" == *"behind a symbolic link another user made in a shared directory"* ]]
	# the bare shim warns and writes nothing there; the program is as it was
	LD_PRELOAD="$SHIM_LD" PREFAULT_REPORT="$d/stk/evil/b.json" run --separate-stderr sh -c 'exit 4'
	[ "$status" -eq 4 ]
	[[ "$stderr" == *"goes through a symbolic link another user made in a shared directory (refused)"* ]]
	# a profile, and the tool's own outputs
	run --separate-stderr "$PF" profile -o "$d/stk/evil/p.json" -- true
	[ "$status" -ne 0 ]
	run --separate-stderr "$PF" run --auto -o "$d/stk/evil/l.policy" -- touch "$d/started"
	[ "$status" -eq 2 ]
	[ ! -e "$d/started" ]
	ls -la "$d/there"
	[ -z "$(ls "$d/there")" ]
	[ -L "$d/stk/evil" ]
	# and as the file itself: nobody's link in the sticky directory
	setpriv --reuid=65534 --regid=65534 --clear-groups ln -s "$d/there/t.policy" "$d/stk/t.policy"
	run --separate-stderr "$PF" run --auto -o "$d/stk/t.policy" -- true
	[ "$status" -eq 2 ]
	[ ! -e "$d/there/t.policy" ]
	# root's own link whose text goes through nobody's (helper-35: the
	# kernel followed it whole), said before the program starts
	echo precious >"$d/there/v.policy"
	ln -s "$d/stk/evil/v.policy" "$d/mine/out.policy"
	run --separate-stderr "$PF" run --auto -o "$d/mine/out.policy" -- touch "$d/started"
	[ "$status" -eq 2 ]
	[ ! -e "$d/started" ]
	[ "$(cat "$d/there/v.policy")" = precious ]
	rm "$d/there/v.policy"
	# a link of ours to a file not made yet: made, as fopen makes it
	ln -s target.policy "$d/mine/dangle.policy"
	(cd "$d/mine" && "$PF" run --auto -o dangle.policy -- true)
	[ -s "$d/mine/target.policy" ]
	# /proc's links name an open file or directory: the kernel's to follow
	"$PF" run --auto -o /dev/stdout -- true 2>/dev/null | grep -q "^# Learned by 'prefault run --auto'"
	# root's own link there, and a link in a directory that is not shared
	LD_PRELOAD="$SHIM_LD" PREFAULT_REPORT="$d/stk/ours/o.json" sh -c 'exit 0'
	LD_PRELOAD="$SHIM_LD" PREFAULT_REPORT="$d/mine/link/m.json" sh -c 'exit 0'
	run --separate-stderr "$PF" run --auto -o "$d/mine/link/a.policy" -- true
	[ "$status" -eq 0 ]
	# nobody through nobody's own link: theirs to follow
	setpriv --reuid=65534 --regid=65534 --clear-groups env LD_PRELOAD="$SHIM_LD" PREFAULT_REPORT="$d/stk/evil/n.json" sh -c 'exit 0'
	ls -la "$d/there"
	[ -s "$d/there/o.json" ]
	[ -s "$d/there/m.json" ]
	[ -s "$d/there/a.policy" ]
	[ -s "$d/there/n.json" ]
	rm -rf "$d"
}

# ---- issue 14: the report never goes somewhere unsafe, never at the
# program's expense.
IOPROBE="$B/probes/ioprobe"

# as_named NAME CMD...: exec CMD with argv[0] = NAME under the shim, no policy,
# the report going to $REPORT (unset: the default)
as_named() {
	local name=$1
	shift
	bash -c 'n=$1; shift; export LD_PRELOAD="$1" PREFAULT_REPORT="$2"; shift 2; [ -n "$PREFAULT_REPORT" ] || unset PREFAULT_REPORT; exec -a "$n" "$@"' \
		sh "$name" "$SHIM_LD" "${REPORT:-}" "$@"
}

# Finding: with the default stderr report, a program that closed fd 2 and opened a data file (fd 2) got the report appended to it.
@test "the default stderr report never goes into a data file that took fd 2 after the program closed stderr (issue 14 #7)" {
	f="$BATS_TEST_TMPDIR/data.txt"
	run --separate-stderr env -u PREFAULT_REPORT -u PREFAULT_POLICY LD_PRELOAD="$SHIM_LD" "$IOPROBE" fd2file "$f"
	echo "status $status, output: $output; data file:"
	cat "$f"
	[ "$status" -eq 0 ]
	[ "$(kv fd "$output")" -eq 2 ] # the scenario happened: the data file was fd 2
	[ "$(cat "$f")" = data-from-the-program ]
	# the same with python3 started with fd 2 closed
	g="$BATS_TEST_TMPDIR/py.txt"
	run bash -c 'exec 2>&- env -u PREFAULT_REPORT -u PREFAULT_POLICY LD_PRELOAD="$1" "$2" -c "$3" "$4"' sh "$SHIM_LD" "$PY" \
		'import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644); os.write(fd, b"py-data\n"); print(fd)' "$g"
	echo "python: status $status, output: $output; data file:"
	cat "$g"
	[ "$status" -eq 0 ]
	[ "$output" = 2 ]
	[ "$(cat "$g")" = py-data ]
}

# Finding: a stderr pipe whose reader had gone made the report's write raise SIGPIPE: exit status 141 instead of 5.
@test "a stderr pipe with no reader: the report costs the program nothing, its exit status stays 5 (issue 14 #8)" {
	run "$IOPROBE" epipe 5
	[ "$status" -eq 5 ] # without the shim
	run env -u PREFAULT_REPORT -u PREFAULT_POLICY LD_PRELOAD="$SHIM_LD" "$IOPROBE" epipe 5
	echo "bare LD_PRELOAD: status $status"
	[ "$status" -eq 5 ]
	run env -u PREFAULT_REPORT "$PF" run -p observe -- "$IOPROBE" epipe 5
	echo "prefault run -p observe: status $status"
	[ "$status" -eq 5 ]
}

# Finding: a report path longer than 1,023 bytes was cut silently: asking for .../report.json overwrote .../report.
@test "a report path over 1023 bytes is never cut: an existing file at the cut is untouched (issue 14 #9)" {
	d="$BATS_TEST_TMPDIR"
	while [ $((${#d} + 200 + 8)) -lt 1023 ]; do
		d="$d/$(printf '%0199d' 0)"
	done
	d="$d/$(printf '%0*d' $((1023 - ${#d} - 8)) 0)"
	mkdir -p "$d"
	[ $((${#d} + 7)) -eq 1023 ] # "$d/report" is the first 1023 bytes of "$d/report.json"
	echo precious >"$d/report"
	REPORT="$d/report.json" run --separate-stderr shimmed "" "$PROBE" keep 1 1M
	echo "status $status, stderr: $stderr"
	[ "$status" -eq 0 ]
	[ "$(cat "$d/report")" = precious ]
	# written at exactly the path asked for, or refused with a warning
	if [ -e "$d/report.json" ]; then
		[ "$(jget "$d/report.json" "d['program']")" = pfprobe ]
	else
		grep -q '^prefault: ' <<<"$stderr"
	fi
}

# Finding: /proc and sysfs files passed the report-file checks: a report to /proc/sys/kernel/hostname set the hostname.
@test "a report to /proc/sys/kernel/hostname is refused: the hostname is unchanged, with a warning (issue 14 #10)" {
	[ "$(id -u)" -eq 0 ] || skip "needs root for a private UTS namespace"
	command -v unshare >/dev/null || skip "needs unshare"
	unshare -u true 2>/dev/null || skip "cannot make a UTS namespace here"
	run --separate-stderr unshare -u sh -c '
		echo pf-bats-host >/proc/sys/kernel/hostname || exit 99
		LD_PRELOAD="$1" PREFAULT_REPORT=/proc/sys/kernel/hostname sh -c "exit 4"
		echo "status=$?"
		echo "host=$(cat /proc/sys/kernel/hostname)"' sh "$SHIM_LD"
	echo "$output"
	echo "stderr: $stderr"
	[ "$(kv status "$output")" -eq 4 ]
	[ "$(kv host "$output")" = pf-bats-host ]
	grep -q '^prefault: .*/proc/sys/kernel/hostname' <<<"$stderr"
}

# many_rules: a policy whose JSON report is several KiB
many_rules() {
	local i
	for i in 1 2 3 4 5 6 7 8; do
		printf '[rule r%d]\nsize = %dM\naction = none\n' "$i" "$i"
	done | policy many
}

# Finding: a report that could not be written (file size limit) was dropped silently, and SIGXFSZ killed the program.
@test "a report cut by the file size limit: a warning, and the program's own exit status (issue 14 #11)" {
	needs_no_tsan # (its runtime crashes on the SIGXFSZ the write raises, before we can discard it)
	pol=$(many_rules)
	# without a limit the report is larger than the 1 KiB allowed below
	REPORT="$BATS_TEST_TMPDIR/free.json" run --separate-stderr shimmed "$pol" sh -c 'exit 5'
	[ "$status" -eq 5 ]
	[ "$(stat -c %s "$BATS_TEST_TMPDIR/free.json")" -gt 1024 ]
	f="$BATS_TEST_TMPDIR/r.json"
	run --separate-stderr bash -c 'ulimit -f 1; exec env LD_PRELOAD="$1" PREFAULT_POLICY="$2" PREFAULT_REPORT="$3" sh -c "exit 5"' \
		sh "$SHIM_LD" "$pol" "$f"
	echo "status $status, stderr: $stderr"
	[ "$status" -eq 5 ]
	grep -qi '^prefault: .*report' <<<"$stderr"
}

# Finding: on a full file system the report file was left empty, with no warning.
@test "a report on a full file system: a warning, and the program's own exit status (issue 14 #11)" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to mount a small tmpfs"
	command -v unshare >/dev/null || skip "needs unshare"
	unshare -m true 2>/dev/null || skip "cannot make a mount namespace here"
	pol=$(many_rules)
	mnt="$BATS_TEST_TMPDIR/mnt"
	mkdir "$mnt"
	run --separate-stderr unshare -m --propagation private sh -c '
		mount -t tmpfs -o size=4k tmpfs "$3" || exit 99
		head -c 8192 /dev/zero >"$3/fill" 2>/dev/null
		LD_PRELOAD="$1" PREFAULT_POLICY="$2" PREFAULT_REPORT="$3/r.json" sh -c "exit 5"
		echo "status=$?"
		echo "size=$(stat -c %s "$3/r.json" 2>/dev/null || echo none)"' sh "$SHIM_LD" "$pol" "$mnt"
	echo "$output"
	echo "stderr: $stderr"
	[ "$status" -ne 99 ] || skip "cannot mount a tmpfs here"
	[ "$(kv status "$output")" -eq 5 ]
	grep -qi '^prefault: .*report' <<<"$stderr"
}

# Finding: a program name with bytes 0x80 and above was copied raw into the JSON report, which was then invalid.
@test "JSON report: a program name is valid UTF-8 in it, invalid bytes as U+FFFD (issue 14 #12)" {
	f="$BATS_TEST_TMPDIR/utf8.json"
	REPORT="$f" run --separate-stderr as_named $'caf\xc3\xa9' "$PROBE" keep 1 1M
	[ "$status" -eq 0 ]
	run "$PY" -c 'import json, sys; print(json.load(open(sys.argv[1], encoding="utf-8"))["program"] == "caf\u00e9")' "$f"
	echo "valid name: $output"
	[ "$output" = True ]
	g="$BATS_TEST_TMPDIR/bad.json"
	REPORT="$g" run --separate-stderr as_named $'bad\xffname' "$PROBE" keep 1 1M
	[ "$status" -eq 0 ]
	run "$PY" -c 'import json, sys; print(json.load(open(sys.argv[1], encoding="utf-8"))["program"] == "bad\ufffdname")' "$g"
	echo "invalid byte: $output"
	[ "$output" = True ]
}

# Finding: a newline in the program name forged extra lines in the text report.
@test "text report: a newline in the program name forges no line (issue 14 #12)" {
	f="$BATS_TEST_TMPDIR/r.txt"
	REPORT="$f" run --separate-stderr as_named $'a\nforged line' "$PROBE" keep 1 1M
	[ "$status" -eq 0 ]
	cat "$f"
	[ -s "$f" ]
	[ "$(grep -vc '^prefault:' "$f")" -eq 0 ]
}

# Finding: %e of a program named ".." climbed out of the report directory.
@test "%e of a program named .. writes nothing outside the report directory (issue 14 #12)" {
	top="$BATS_TEST_TMPDIR/top"
	mkdir -p "$top/dir/pfprobe"
	# the template works for an ordinary name
	REPORT="$top/dir/%e/x.json" run --separate-stderr as_named pfprobe "$PROBE" keep 1 1M
	[ -s "$top/dir/pfprobe/x.json" ]
	REPORT="$top/dir/%e/x.json" run --separate-stderr as_named .. "$PROBE" keep 1 1M
	[ "$status" -eq 0 ]
	REPORT="$top/dir/%e" run --separate-stderr as_named .. "$PROBE" keep 1 1M
	[ "$status" -eq 0 ]
	ls -la "$top"
	[ "$(ls -A "$top")" = dir ]
}

# Finding: report files were created mode 0644.
@test "report files are created mode 0600 (issue 14 #12)" {
	umask 022
	REPORT="$BATS_TEST_TMPDIR/m.json" run --separate-stderr shimmed "" "$PROBE" keep 1 1M
	REPORT="$BATS_TEST_TMPDIR/m.txt" run --separate-stderr shimmed "" "$PROBE" keep 1 1M
	stat -c '%n %a' "$BATS_TEST_TMPDIR"/m.*
	[ "$(stat -c %a "$BATS_TEST_TMPDIR/m.json")" = 600 ]
	[ "$(stat -c %a "$BATS_TEST_TMPDIR/m.txt")" = 600 ]
}

# Finding: a policy's report = notes.txt truncated the user's notes.txt and wrote a report
# over it; check only printed the rules, so the user was not told where the report goes.
@test "report = notes.txt never overwrites a file that is not a report; check says where the report goes (issue 22 #7)" {
	cd "$BATS_TEST_TMPDIR"
	echo "my notes" >notes.txt
	pol=$(policy notes <<<$'[global]\nreport = notes.txt')
	# the shim: the notes stay, with a warning naming the file
	run --separate-stderr env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$pol" sh -c 'exit 3'
	echo "status $status, stderr: $stderr"
	[ "$status" -eq 3 ]
	[ "$(cat notes.txt)" = "my notes" ]
	[[ "$stderr" == *"notes.txt: the file is there and is not a prefault report (left as it was)"* ]]
	# run says so before it starts anything
	run --separate-stderr "$PF" run -p "$pol" -- touch started
	echo "status $status, stderr: $stderr"
	[ "$status" -eq 2 ]
	[ ! -e started ]
	[ "$(cat notes.txt)" = "my notes" ]
	[[ "$stderr" == *"notes.txt, which is there and not a prefault report"* ]]
	# a report, text or JSON, is overwritten by the next one; so is an empty file
	rm notes.txt
	for i in 1 2; do
		run --separate-stderr env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$pol" sh -c 'exit 0'
		[ -z "$stderr" ]
		grep -q '^prefault: sh\[' notes.txt
	done
	: >empty.json
	REPORT="$BATS_TEST_TMPDIR/empty.json" run --separate-stderr shimmed "" sh -c 'exit 0'
	[ "$(jget empty.json "d['program']")" = sh ]
	REPORT="$BATS_TEST_TMPDIR/empty.json" run --separate-stderr shimmed "" sh -c 'exit 0'
	[ -z "$stderr" ]
	# check shows where the report goes
	run --separate-stderr "$PF" check "$pol"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$pol: report: notes.txt (in the directory the program starts in)" ]
	run --separate-stderr "$PF" check streaming
	[[ "${lines[0]}" == *"/streaming.policy: report: stderr" ]]
}

# Finding (review of stop 35): run said nothing before the program started
# when the report's file was one the shim refuses for another reason than
# its contents (a symlink, a FIFO, a directory, a hard link, /proc): the
# program ran, and its report was lost.  The verdict is now one function,
# the shim's and the CLI's (lib/report_file.h).
@test "run refuses at once a report file the shim would not write over: a symlink, a FIFO, a directory, a hard link, /proc" {
	cd "$BATS_TEST_TMPDIR"
	echo "my notes" >notes.txt
	ln -s notes.txt link
	mkfifo fifo
	mkdir dir
	ln notes.txt hard
	for dest in link:"symbolic link" fifo:"not a regular file" dir:"not a regular file" hard:"another hard link" \
	            /proc/self/comm:"kernel file system"; do
		run --separate-stderr "$PF" run -o "${dest%%:*}" -- touch started
		echo "$dest: status $status, stderr: $stderr"
		[ "$status" -eq 2 ]
		[ ! -e started ]
		[[ "$stderr" == *"${dest%%:*}, which is "*"${dest#*:}"* ]]
	done
	[ "$(cat notes.txt)" = "my notes" ]
	# the same, through PREFAULT_REPORT
	PREFAULT_REPORT=link run --separate-stderr "$PF" run -- touch started
	[ "$status" -eq 2 ]
	[ ! -e started ]
	# and the shim, preloaded bare, leaves each as it was and warns
	for dest in link hard; do
		REPORT="$BATS_TEST_TMPDIR/$dest" run --separate-stderr shimmed "" sh -c 'exit 0'
		[ "$status" -eq 0 ]
		[[ "$stderr" == *"$dest"* ]]
	done
	[ "$(cat notes.txt)" = "my notes" ]
	[ -L link ]
}

@test "a warning after start-up never goes into a data file that took fd 2 (issue 19 item 4: one warning channel)" {
	pol=$(policy pop <<<$'[rule p]\ncall = mmap\nsize = >=1M\naction = populate')
	run env PREFAULT_TEST_NO_POPULATE=1 LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$pol" PREFAULT_REPORT=none \
		"$B/probes/h3/fd2data" "$BATS_TEST_TMPDIR/data.txt"
	echo "$output"
	[ "$output" = "fd 2 holds: data" ]
	# the warning is given where stderr is still the one the process started with
	run --separate-stderr env PREFAULT_TEST_NO_POPULATE=1 LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$pol" PREFAULT_REPORT=none \
		"$PROBE" alloc mmap 4M
	grep -q 'populating by touching pages instead' <<<"$stderr"
}

# Calls from a signal handler that interrupted the shim went uncounted, and
# a handler's calls while its thread exited counted in a block already
# folded: the report's mmap count fell short of the program's (helper-32).
@test "calls made in signal handlers are counted: ones that interrupted the shim, and ones while a thread exits" {
	needs_plain_runtime # (a sanitizer's runtime maps through the shim itself)
	for pol in "" auto; do
		REPORT="$BATS_TEST_TMPDIR/s.json" run --separate-stderr shimmed "$pol" "$B/probes/h3/sigcount" 20000 200
		[ "$status" -eq 0 ]
		echo "policy ${pol:-none}: $output; report mmap $(jget "$BATS_TEST_TMPDIR/s.json" "d['calls']['mmap']")"
		[ "$(kv handler "$output")" -gt 0 ]
		[ "$(jget "$BATS_TEST_TMPDIR/s.json" "d['calls']['mmap']")" -eq "$(kv maps "$output")" ]
		[ "$(jget "$BATS_TEST_TMPDIR/s.json" "d['calls']['munmap']")" -eq "$(kv maps "$output")" ]
		rm -f "$BATS_TEST_TMPDIR/s.json"
	done
	REPORT="$BATS_TEST_TMPDIR/e.json" run --separate-stderr shimmed "" "$B/probes/h3/exitsig" map 3000 20000
	[ "$status" -eq 0 ]
	echo "$output; report mmap $(jget "$BATS_TEST_TMPDIR/e.json" "d['calls']['mmap']")"
	[ "$(jget "$BATS_TEST_TMPDIR/e.json" "d['calls']['mmap']")" -eq "$(kv maps "$output")" ]
	[ "$(jget "$BATS_TEST_TMPDIR/e.json" "d['calls']['munmap']")" -eq "$(kv maps "$output")" ]
}

# Finding (stop 50): the walk that refuses other users' links (stop 49) holds
# a directory and the next one open at once; a program that had used all its
# files but one lost its report, which one open() had written before.
@test "a program that used all its descriptors but one still gets its report; through a link it is told why not" {
	needs_plain_runtime
	d="$BATS_TEST_TMPDIR"
	ln -s "$d" "$d/lk"
	fill='ulimit -n 64; i=3; while [ $i -lt 63 ]; do eval "exec $i</dev/null"; i=$((i+1)); done; exec "$@"'
	run --separate-stderr bash -c "$fill" sh env PREFAULT_REPORT="$d/r.json" PREFAULT_POLICY= LD_PRELOAD="$SHIM_LD" /bin/true
	echo "status $status, stderr: $stderr"
	[ "$status" -eq 0 ]
	[ "$(jget "$d/r.json" "d['program']")" = true ]
	# the scenario: one descriptor was free (ls takes it for the directory it lists)
	run bash -c "$fill" sh ls /proc/self/fd
	[ "$(echo "$output" | grep -c '^[0-9]')" -ge 63 ]
	# a link on the way takes the walk, which needs two: a warning that says so
	run --separate-stderr bash -c "$fill" sh env PREFAULT_REPORT="$d/lk/r2.json" PREFAULT_POLICY= LD_PRELOAD="$SHIM_LD" /bin/true
	echo "status $status, stderr: $stderr"
	[ "$status" -eq 0 ]
	[ ! -e "$d/r2.json" ]
	[[ "$stderr" == *"too many open files"* ]]
	# with two free, through the link
	fill2='ulimit -n 64; i=3; while [ $i -lt 62 ]; do eval "exec $i</dev/null"; i=$((i+1)); done; exec "$@"'
	run --separate-stderr bash -c "$fill2" sh env PREFAULT_REPORT="$d/lk/r2.json" PREFAULT_POLICY= LD_PRELOAD="$SHIM_LD" /bin/true
	[ "$status" -eq 0 ]
	[ "$(jget "$d/r2.json" "d['program']")" = true ]
}
