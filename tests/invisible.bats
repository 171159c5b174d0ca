#!/usr/bin/env bats
# What the program sees, under attack: hostile round 2's findings, each a
# small program (tests/probes/hostile2/) that once behaved differently under
# the shim.  Each runs without the shim and with it; what it prints (and its
# exit status) must be the same, but where a line says what differs by
# nature (addresses, the shim's own locked memory).
load helpers

H2="$B/probes/h2"
HP="$BATS_TEST_DIRNAME/probes/hostile2"
NOCAP="setpriv --bounding-set -ipc_lock" # without CAP_IPC_LOCK, RLIMIT_MEMLOCK applies

# same POLICY CMD...: the output and exit status without and with the shim
same() {
	local pol=$1
	shift
	plain=$(timeout 30 "$@" 2>&1; echo "[exit $?]")
	shim=$(timeout 30 env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$pol" PREFAULT_REPORT=none "$@" 2>&1; echo "[exit $?]")
	echo "without: $plain"
	echo "with:    $shim"
	[ "$plain" = "$shim" ]
}

@test "a file mapped over a recycled region by a raw system call is never wiped" {
	needs_plain_runtime
	same "$HP/rec.policy" "$H2/rawfixed" "$BATS_TEST_TMPDIR/data.bin"
	grep -q '"file contents"' <<<"$shim"
}

@test "shmat(SHM_REMAP) over a recycled region: the shared segment keeps its data" {
	needs_plain_runtime
	same "$HP/rec.policy" "$H2/shmremap"
}

@test "a range registered with userfaultfd is never kept for reuse" {
	needs_plain_runtime
	run -0 timeout 10 "$H2/uffd"
	[[ "$output" == *touched* ]] || skip "userfaultfd is not available here: $output"
	same "$HP/rec.policy" "$H2/uffd"
}

@test "an unmapped range that was kept still looks unmapped to mincore and msync" {
	needs_plain_runtime
	same "$HP/rec.policy" "$H2/unmapped"
}

@test "regions the program locked are never kept: its RLIMIT_MEMLOCK stays its own" {
	needs_plain_runtime
	command -v setpriv >/dev/null || skip "needs setpriv"
	same "$HP/rec.policy" $NOCAP "$H2/mlockrec"
	same "$HP/lock.policy" $NOCAP "$H2/lockmove"
	same "$HP/lock.policy" $NOCAP "$H2/maplocked"
}

@test "the program's own locks (MAP_LOCKED, mlockall) are never undone by the shim" {
	needs_plain_runtime
	same "$HP/lock.policy" "$H2/maplocked_dontneed"
	# VmLck includes the shim's own memory once the program locks everything:
	# what must hold is the program's answer and that free unlocks nothing
	run -0 env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$HP/lock.policy" PREFAULT_REPORT=none "$H2/mlockall_dontneed"
	echo "$output"
	[[ "$output" == *"Invalid argument"* ]]
	run -0 env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$HP/lockblk.policy" PREFAULT_REPORT=none "$H2/rtlock"
	echo "$output"
	[ "$(sed -n 's/.*before free \([0-9]*\) kB.*/\1/p' <<<"$output")" = "$(sed -n 's/.*after free \([0-9]*\) kB.*/\1/p' <<<"$output")" ]
}

@test "under the realtime policy, MADV_DONTNEED on part of a buffer leaves it one mapping (mremap works)" {
	needs_plain_runtime
	[ "$(id -u)" -eq 0 ] || skip "the policy's mlockall needs CAP_IPC_LOCK"
	same "$POLICIES/realtime.policy" "$H2/rtremap"
}

@test "an absurd mmap length fails as without the shim, and unmaps nothing" {
	# (the addresses differ from run to run: compared as ADDR)
	same "$POLICIES/streaming.policy" sh -c '"$0" 2>&1 | sed "s/0x[0-9a-f]*/ADDR/g"' "$H2/hugelen"
	same "$BATS_TEST_DIRNAME/aggressive.policy" sh -c '"$0" 2>&1 | sed "s/0x[0-9a-f]*/ADDR/g"' "$H2/hugelen"
}

@test "fork in a signal handler that interrupted the shim does not hang, nor does a _Fork child" {
	needs_plain_runtime
	run --separate-stderr timeout 60 env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$HP/rec.policy" PREFAULT_REPORT=none "$H2/sigfork"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(sed -n 's/forks \([0-9]*\).*/\1/p' <<<"$output")" -ge 100 ]
	same "$HP/rec.policy" "$H2/ufork"
}

@test "a program that installs a seccomp filter runs as without the shim (bare, and under prefault run)" {
	needs_plain_runtime
	same "$HP/rec.policy" "$H2/seccomp_exit"
	same "$BATS_TEST_DIRNAME/aggressive.policy" "$H2/seccomp_exit"
	run --separate-stderr timeout 30 "$PF" run -- "$H2/seccomp_exit"
	echo "$output $stderr"
	[ "$status" -eq 0 ]
	# its report was written before the filter went in
	[[ "$stderr" == "prefault: seccomp_exit["* ]]
}

@test "a background worker never writes to a file mapped where its job was" {
	needs_plain_runtime
	# (how many mappings land at the old address is the kernel's placement,
	# not the shim's business: only the file's contents and mtime count)
	for i in 1 2; do
		run -0 timeout 60 env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$HP/background.policy" PREFAULT_REPORT=none \
			"$H2/bgrace" "$BATS_TEST_TMPDIR/bg.dat"
		echo "$output"
		[[ "$output" == "0 of 200 private file mappings missed"* ]]
		same "$HP/background.policy" "$H2/bgrace2" "$BATS_TEST_TMPDIR/bg2.dat"
	done
}

@test "hugepage with a populate the budget refused: a sparse table stays sparse" {
	needs_plain_runtime
	[ "$(thp_mode)" != always ] || skip "THP is always here: the kernel alone gives a sparse table huge pages"
	pol=$(policy sp <<<$'[global]\nbudget = 64M\n[rule big]\nsize = >=4M\nmap = anon private\naction = hugepage populate')
	run -0 timeout 60 env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$pol" PREFAULT_REPORT=none "$H2/sparse"
	echo "$output"
	rss=$(sed -n 's/.*peak RSS \([0-9]*\) MiB.*/\1/p' <<<"$output")
	[ "$rss" -lt 64 ] # with huge pages on each touch it was about 500
}

@test "prefault run: the caller sees the program's death by signal, and SIGKILL takes the program along" {
	needs_plain_runtime # (a sanitizer's runtime catches the program's SIGSEGV itself)
	run "$PF" run -o none -- sh -c 'kill -TERM $$'
	[ "$status" -eq 143 ]
	"$PY" -c '
import subprocess, sys
p = subprocess.run([sys.argv[1], "run", "-o", "none", "--", "sh", "-c", "kill -SEGV $$"])
assert p.returncode == -11, p.returncode' "$PF"
	run timeout 20 "$PY" "$HP/tmo2.py" "$PF"
	echo "$output"
	t=$(sed -n 's/^prefault .*after \([0-9.]*\) s/\1/p' <<<"$output")
	[ "${t%.*}" -lt 4 ]
}

@test "prefault run: Ctrl-C stops a shell loop, and a program that stops itself stops the tool" {
	run timeout 30 "$PY" "$HP/wce.py" "$PF"
	echo "$output"
	grep -q '^with:' <<<"$output"
	! grep '^with:' <<<"$output" | grep -q loop-finished || false
	run timeout 30 "$PY" "$HP/susp.py" "$PF"
	echo "$output"
	[ "$(grep -c 'Stopped' <<<"$output")" -eq 2 ]
}

# Hostile round 4 (carve and recycle; tests/probes/hostile4/): each probe
# under a carve rule and a recycle rule, the same output as without the shim.
H4="$B/probes/h4"
H4P="$BATS_TEST_DIRNAME/probes/hostile4"

@test "an mmap the kernel refuses (an offset not page aligned) is refused with a kept region or a reserve at hand" {
	needs_plain_runtime
	for pol in carve rec; do
		same "$H4P/$pol.policy" "$H4/argval"
		same "$H4P/$pol.policy" "$H4/argval" warm
	done
	grep -q 'unaligned offset 1 .*EINVAL' <<<"$shim"
}

@test "mremap passes its fifth argument with MREMAP_DONTUNMAP too: a hint is honoured, an unaligned one refused" {
	needs_plain_runtime
	run same "$H4P/rec.policy" "$H4/mremaphint"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "MAP_POPULATE served from a kept region is populated whole, as a fresh one is" {
	needs_plain_runtime
	same "$H4P/rec.policy" "$H4/flags" populate
	grep -q 'round 1: resident at map 256/256' <<<"$shim"
}

@test "a signal handler that munmaps while the shim is busy leaves no stale record: a file later mapped there keeps its data" {
	needs_plain_runtime
	for pol in carve rec; do
		same "$H4P/$pol.policy" "$H4/sigunmap"
	done
	grep -q 'file intact' <<<"$shim"
}

@test "a child made by a raw clone system call maps and unmaps freely while the parent's threads churn" {
	needs_plain_runtime
	for pol in carve rec; do
		same "$H4P/$pol.policy" "$H4/rawclone" 500
	done
}

@test "process_madvise and vmsplice on a region: its advice, guard pages and spliced pages never follow it into a later mapping" {
	needs_plain_runtime
	for pol in carve rec; do
		for m in guard dontfork wipe; do
			same "$H4P/$pol.policy" "$H4/pmadv" "$m"
		done
		same "$H4P/$pol.policy" "$H4/vmsplice"
	done
}

@test "a handler's mprotect on a range the shim locked, while the shim is busy: the lock is still the shim's, so the program's MADV_DONTNEED works" {
	needs_plain_runtime
	same "$H4P/lockrec.policy" "$H4/lockforget"
	grep -q 'DONTNEED) on the program.s own region: rc=0' <<<"$shim"
}

@test "more calls in a handler than the shim can note: nothing leaks, freed addresses are free, fresh memory reads zero" {
	needs_plain_runtime
	same "$H4P/rec.policy" "$H4/overflow" 9 40
	grep -q 'VmSize grew by more than 64 MiB: no' <<<"$shim"
}

# Finding (helper-36): under a policy's mlockall future the kernel populated
# each private file mapping the program made by write faults, a copy of
# every page: the program no longer saw later changes to the file (the
# shipped realtime policy; Python's mmap with ACCESS_COPY).
@test "under the policy's mlockall future a private file mapping still shows later changes to the file" {
	needs_plain_runtime
	[ "$(id -u)" -eq 0 ] || skip "the policy's mlockall needs CAP_IPC_LOCK"
	cd "$BATS_TEST_TMPDIR"
	cat >priv.py <<-'PYEOF'
	import mmap, os
	with open('pf.dat', 'wb') as f: f.write(b'A' * (1 << 20))
	f = open('pf.dat', 'r+b')
	m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)  # MAP_PRIVATE, read and write
	os.pwrite(f.fileno(), b'B' * 4096, 8192)                # the file changes after the map
	m[0:1] = b'W'                                           # a page the program wrote is its own
	os.pwrite(f.fileno(), b'C' * 4096, 0)
	print(m[8192:8193], m[0:1], m[65536:65537])
	PYEOF
	printf '[global]\nmlockall = current future\n' >ml.policy
	same "$BATS_TEST_TMPDIR/ml.policy" "$PY" priv.py
	[[ "$shim" == *"b'B' b'W' b'A'"* ]]
	same "$POLICIES/realtime.policy" "$PY" priv.py
}

# Findings (helper-37's C and D): a region kept from before the program
# changed the rules new mappings are made by came back as the old rules made
# it: rwx after PR_SET_MDWE (write-xor-execute bypassed), rw where
# READ_IMPLIES_EXEC now gives rwx (the program's jump into it crashed).
@test "after PR_SET_MDWE or a new persona, a mapping is made by the new rules, kept regions or not" {
	needs_plain_runtime
	H5="$B/probes/h5"
	for mode in mdwe rie rieraw; do
		for pol in "$HP/rec.policy" "$BATS_TEST_DIRNAME/aggressive.policy"; do
			same "$pol" "$H5/exec_rules" $mode 1048576
		done
		same "$BATS_TEST_DIRNAME/aggressive.policy" "$H5/exec_rules" $mode 4096
	done
	# the report says why recycling stopped
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed "$HP/rec.policy" "$H5/exec_rules" rie 1048576
	[ "$status" -eq 0 ]
	[ "$(jget "$BATS_TEST_TMPDIR/r.json" "any('persona' in n for n in d['notes'])")" = True ]
}

# Finding (helper-37's A): a seccomp filter installed before the program
# started (a service's SystemCallFilter, a sandbox) killed it on the shim's
# own getrusage, with no policy at all; under a policy, on mincore, madvise,
# prctl or clone3.  No process can read the filter: the shim stays out of
# the way unless told to trust it, and prefault run tries the shim's calls
# under the filter it inherited in a child of its own and vouches for it.
@test "under a seccomp filter it inherited the shim never makes a call that could kill the program; prefault run vouches where the filter lets its calls through" {
	needs_plain_runtime
	SX="$B/probes/h5/seccomp_exec"
	for pol in "" "$HP/rec.policy" auto; do
		run --separate-stderr "$SX" kill getrusage mincore madvise prctl clone3 -- \
			env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$pol" PREFAULT_REPORT="$BATS_TEST_TMPDIR/r.json" "$B/probes/h5/churn" 20 1048576
		echo "policy '$pol': status $status, $output / $stderr"
		[ "$status" -eq 0 ]
		[ ! -e "$BATS_TEST_TMPDIR/r.json" ] # (not even the report: its figures need getrusage)
	done
	# what the look saves it from: told to trust the filter, the shim's getrusage kills it
	run --separate-stderr "$SX" kill getrusage -- env LD_PRELOAD="$SHIM_LD" PREFAULT_SECCOMP=trust PREFAULT_REPORT=none "$B/probes/h5/churn" 2 1048576
	[ "$status" -eq $((128 + 31)) ]
	# prefault run under a filter that fails calls with EPERM: vouched for, the shim acts
	run --separate-stderr "$SX" eperm mincore -- "$PF" run -p "$(arena_policy recycle)" --report "$BATS_TEST_TMPDIR/v.json" -- "$B/probes/h5/churn" 20 1048576
	echo "eperm: status $status, $output / $stderr"
	[ "$status" -eq 0 ]
	[ "$(jget "$BATS_TEST_TMPDIR/v.json" "[r for r in d['rules'] if r['name']=='arenas'][0]['recycle']['recycled']")" -ge 10 ]
	# under one that kills on a call the shim makes: said, and the program runs unharmed
	run --separate-stderr "$SX" kill getrusage -- "$PF" run -p "$(arena_policy recycle)" -- "$B/probes/h5/churn" 20 1048576
	echo "kill: status $status, $output / $stderr"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"seccomp filter is in force here and killed a child"* ]]
	# a filter the program's own sandbox adds after the tool vouched is not vouched for
	run --separate-stderr "$SX" eperm mincore -- "$PF" run -- "$SX" kill getrusage -- "$B/probes/h5/churn" 20 1048576
	echo "added: status $status, $output / $stderr"
	[ "$status" -eq 0 ]
}

# Findings (helper-38, against FORWARD as first landed): a signal handler's
# own syscall(SYS_mmap, MAP_FIXED) over a kept region, made while the shim
# passed the program's mmap on, was passed on unseen too; and a handler that
# siglongjmp'd out of it left the marker set.  The kept region was then
# handed out over the file the handler had mapped there.
@test "a handler's mapping over a kept region, made while the shim passes the program's call on, is followed; a jump out of that call leaves nothing behind" {
	needs_plain_runtime
	for mode in handler jump; do
		run --separate-stderr env LD_PRELOAD="$SHIM_LD:$B/probes/libsigmmap.so" PREFAULT_POLICY="$HP/rec.policy" \
			PREFAULT_REPORT=none "$B/probes/h5/fwsig" $mode "$BATS_TEST_TMPDIR/f.dat"
		echo "$mode: status $status, $output / $stderr"
		[ "$status" -eq 0 ]
		[ "$output" = "same=0 file=65" ]
	done
}

@test "personality queries (0xffffffff, -1) and MDWE with no flags change nothing: recycling goes on" {
	needs_plain_runtime
	H5="$B/probes/h5"
	for mode in query negquery mdwe0; do
		REPORT="$BATS_TEST_TMPDIR/$mode.json" run --separate-stderr shimmed "$HP/rec.policy" "$H5/exec_rules" $mode 1048576
		echo "$mode: $output / $stderr"
		[ "$status" -eq 0 ]
		[ "$(jget "$BATS_TEST_TMPDIR/$mode.json" "any('persona' in n for n in d['notes'])")" = False ]
		[ "$(jget "$BATS_TEST_TMPDIR/$mode.json" "d['rules'][0]['recycle']['recycled']")" -ge 1 ]
	done
}

# Finding (helper-38): with 400 supplementary groups (a directory service's
# user) the Seccomp lines of /proc/self/status lay past the 4 KiB the shim
# read, and it stayed out of the way as if under a filter: no report.
@test "a process with thousands of groups, and none of its filters: the shim acts and reports" {
	needs_plain_runtime
	[ "$(id -u)" -eq 0 ] || skip "setgroups needs root"
	for n in 400 6000; do
		run --separate-stderr "$B/probes/h5/groups_exec" $n -- env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$HP/rec.policy" \
			PREFAULT_REPORT="$BATS_TEST_TMPDIR/g$n.json" "$B/probes/h5/churn" 20 1048576
		echo "$n: status $status, $output / $stderr"
		[ "$status" -eq 0 ]
		[ "$(jget "$BATS_TEST_TMPDIR/g$n.json" "d['rules'][0]['recycle']['recycled']")" -ge 10 ]
	done
}
