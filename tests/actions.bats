#!/usr/bin/env bats
# Actions: each one observed in the process it acted on.
load helpers

@test "without the shim, first touch faults once per page (the baseline the other tests beat)" {
	run --separate-stderr "$PROBE" alloc mmap 4M
	[ "$status" -eq 0 ]
	[ "$(kv resident "$output")" -eq 0 ]
	[ "$(kv touch_faults "$output")" -ge 1000 ]
}

@test "populate: every entry point is resident when it returns, and the touch loop takes no fault" {
	needs_own_malloc
	pol=$(populate_all)
	for entry in mmap mmap64 malloc calloc realloc posix_memalign aligned_alloc memalign valloc pvalloc; do
		run --separate-stderr shimmed "$pol" "$PROBE" alloc "$entry" 4M
		echo "$entry: $output"
		[ "$status" -eq 0 ]
		[ "$(kv resident "$output")" -eq "$(kv pages "$output")" ]
		[ "$(kv pages "$output")" -gt 800 ]
		[ "$(kv touch_faults "$output")" -eq 0 ]
	done
}

@test "populate keeps fresh anonymous memory zero-filled (mmap, mmap64, calloc)" {
	pol=$(populate_all)
	for entry in mmap mmap64 calloc; do
		run --separate-stderr shimmed "$pol" "$PROBE" alloc "$entry" 8M
		[ "$(kv zero "$output")" -eq 1 ]
	done
}

@test "a request below the rule's size is left alone" {
	pol=$(populate_all)
	run --separate-stderr shimmed "$pol" "$PROBE" alloc mmap 512K
	[ "$(kv resident "$output")" -eq 0 ]
	[ "$(kv touch_faults "$output")" -gt 100 ]
}

@test "call = malloc does not act on mmap, and call = mmap does not act on malloc" {
	needs_own_malloc
	pm=$(policy m <<<$'[rule r]\ncall = malloc\nsize = >=1M\naction = populate')
	run --separate-stderr shimmed "$pm" "$PROBE" alloc mmap 4M
	[ "$(kv resident "$output")" -eq 0 ]
	run --separate-stderr shimmed "$pm" "$PROBE" alloc malloc 4M
	[ "$(kv resident "$output")" -eq "$(kv pages "$output")" ]
	pp=$(policy p <<<$'[rule r]\ncall = mmap\nsize = >=1M\naction = populate')
	run --separate-stderr shimmed "$pp" "$PROBE" alloc malloc 4M
	[ "$(kv resident "$output")" -eq 0 ]
}

@test "reservations (PROT_NONE, MAP_NORESERVE) are not populated unless a rule names them" {
	pol=$(policy any <<<$'[rule r]\nsize = >=1M\naction = populate')
	run --separate-stderr shimmed "$pol" "$PROBE" alloc mmap 4M prot=none
	[ "$(kv resident "$output")" -eq 0 ]
	run --separate-stderr shimmed "$pol" "$PROBE" alloc mmap 4M noreserve
	[ "$(kv resident "$output")" -eq 0 ]
	named=$(policy named <<<$'[rule r]\nsize = >=1M\nmap = noreserve\naction = populate')
	run --separate-stderr shimmed "$named" "$PROBE" alloc mmap 4M noreserve
	[ "$(kv resident "$output")" -eq 1024 ]
}

@test "map-populate adds MAP_POPULATE: resident on return, zero-filled" {
	pol=$(policy mp <<<$'[rule r]\ncall = mmap\nsize = >=1M\naction = map-populate')
	run --separate-stderr shimmed "$pol" "$PROBE" alloc mmap 4M
	[ "$(kv resident "$output")" -eq 1024 ]
	[ "$(kv touch_faults "$output")" -eq 0 ]
	[ "$(kv zero "$output")" -eq 1 ]
}

@test "populate on a read-only file mapping reads it in (MADV_POPULATE_READ)" {
	head -c 4194304 /dev/urandom >"$BATS_TEST_TMPDIR/data"
	pol=$(policy f <<<$'[rule r]\nmap = file\naction = populate')
	run --separate-stderr shimmed "$pol" "$PROBE" alloc mmap 4M "file=$BATS_TEST_TMPDIR/data" prot=r
	[ "$(kv resident "$output")" -eq 1024 ]
	[ "$(kv touch_faults "$output")" -eq 0 ]
}

@test "willneed reads a cold file mapping ahead" {
	pol=$(policy w <<<$'[rule r]\nmap = file\naction = willneed')
	run --separate-stderr "$PROBE" file "$BATS_TEST_TMPDIR/cold" 8M
	echo "without: $output"
	# Without the shim, nothing reads the file: it stays cold.
	[ "$(kv resident_later "$output")" -lt 256 ]
	run --separate-stderr shimmed "$pol" "$PROBE" file "$BATS_TEST_TMPDIR/cold" 8M
	echo "with: $output"
	[ "$(kv resident_later "$output")" -eq "$(kv pages "$output")" ]
}

@test "lock: the mapping counts in VmLck" {
	needs_plain_runtime
	pol=$(policy l <<<$'[rule r]\nsize = >=1M\naction = lock')
	run --separate-stderr "$PROBE" vmlck 4M
	[ "$(kv vmlck_kb "$output")" -eq 0 ]
	run --separate-stderr shimmed "$pol" "$PROBE" vmlck 4M
	[ "$(kv vmlck_kb "$output")" -ge 4096 ]
}

@test "lock and hugepage on a malloc'd block: glibc's mapping of it stays whole, so its realloc can still mremap it" {
	needs_plain_runtime
	ap="$B/probes/autoprobe"
	# 4 MiB less 16 bytes: the block ends on a page boundary, glibc's
	# mapping of it a page later (its header); locking or advising the
	# block's pages alone split the mapping there, and realloc's mremap of
	# the whole failed (EFAULT) and fell back to copying
	plain=$("$ap" fill 4194288 0 malloc)
	after=$(kv mapping "$plain" | cut -d, -f2)
	[ "$after" -ge 4096 ] || skip "not glibc's layout: the mapping ends $after bytes after the block"
	for a in lock hugepage "lock hugepage populate"; do
		pol=$(policy l <<<"[rule r]"$'\n'"call = malloc"$'\n'"size = >=1M"$'\n'"action = $a")
		REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed "$pol" "$ap" fill 4194288 0 malloc
		echo "$a: $output (without the shim: $plain)"
		[ "$(jget "$BATS_TEST_TMPDIR/r.json" "d['rules'][0]['matched']")" -eq 1 ]
		[ "$(kv mapping "$output" | cut -d, -f2)" -ge 4096 ]
	done
}

@test "mlockall = current future (the realtime recipe): later mappings are locked too" {
	needs_plain_runtime
	pol=$(policy ml <<<$'[global]\nmlockall = current future')
	run --separate-stderr shimmed "$pol" "$PROBE" vmlck 4M
	[ "$(kv vmlck_kb "$output")" -ge 4096 ]
}

@test "hugepage with populate: the mapping is backed by huge pages (AnonHugePages)" {
	unset PFPROBE_SMALL_PAGES
	grep -q '\[never\]' /sys/kernel/mm/transparent_hugepage/enabled && skip "THP disabled on this machine"
	pol=$(policy h <<<$'[rule r]\nsize = >=8M\naction = hugepage populate')
	run --separate-stderr shimmed "$pol" "$PROBE" thp 16M
	echo "$output"
	[ "$(kv anon_huge_kb "$output")" -ge 2048 ]
	if grep -q '\[madvise\]' /sys/kernel/mm/transparent_hugepage/enabled; then
		pol2=$(policy p <<<$'[rule r]\nsize = >=8M\naction = populate')
		run --separate-stderr shimmed "$pol2" "$PROBE" thp 16M
		[ "$(kv anon_huge_kb "$output")" -eq 0 ]
	fi
}

@test "caller globs match the calling object's file name" {
	needs_no_tsan
	yes=$(policy y <<<$'[rule r]\nsize = >=1M\ncaller = pfprob?\naction = populate')
	no=$(policy n <<<$'[rule r]\nsize = >=1M\ncaller = libc.so*\naction = populate')
	run --separate-stderr shimmed "$yes" "$PROBE" alloc mmap 4M
	[ "$(kv resident "$output")" -eq 1024 ]
	run --separate-stderr shimmed "$no" "$PROBE" alloc mmap 4M
	[ "$(kv resident "$output")" -eq 0 ]
}

@test "program globs turn a rule on only in the named program" {
	yes=$(policy y <<<$'[rule r]\nsize = >=1M\nprogram = pf*\naction = populate')
	no=$(policy n <<<$'[rule r]\nsize = >=1M\nprogram = python*\naction = populate')
	run --separate-stderr shimmed "$yes" "$PROBE" alloc mmap 4M
	[ "$(kv resident "$output")" -eq 1024 ]
	run --separate-stderr shimmed "$no" "$PROBE" alloc mmap 4M
	[ "$(kv resident "$output")" -eq 0 ]
}

@test "the first matching rule wins" {
	pol=$(policy order <<-'EOF'
	[rule leave-alone]
	size = >=1M
	action = none
	[rule populate]
	size = >=1M
	action = populate
	EOF
	)
	run --separate-stderr shimmed "$pol" "$PROBE" alloc mmap 4M
	[ "$(kv resident "$output")" -eq 0 ]
}

@test "without MADV_POPULATE_* the shim falls back, says so once, and still populates" {
	pol=$(populate_all)
	PREFAULT_TEST_NO_POPULATE=1 run --separate-stderr shimmed "$pol" "$PROBE" alloc mmap 4M
	[ "$(kv resident "$output")" -eq 1024 ]
	[ "$(kv zero "$output")" -eq 1 ]
	[ "$(grep -c 'lacks MADV_POPULATE' <<<"$stderr")" -eq 1 ]
}

# Issue 14, findings 19-21, 25 and 27: actions must never change what the
# program sees (its own mlock and madvise, file contents, which rule matches).
MMPROBE="$B/probes/mmprobe"

teardown() {
	if [ -n "${NOBODY_DIR:-}" ]; then
		rm -rf "$NOBODY_DIR"
	fi
}

# as_nobody CMD...: CMD as user nobody (root ignores RLIMIT_MEMLOCK), with
# the usual 8 MiB RLIMIT_MEMLOCK.
as_nobody() {
	prlimit --memlock=$((8 << 20)):$((8 << 20)) setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

# needs_nobody: skip unless the build can run as nobody here; makes NOBODY_DIR, a
# directory nobody can write (BATS_TEST_TMPDIR is root's alone).
needs_nobody() {
	[ "$(id -u)" -eq 0 ] || skip "needs root to run the program as a normal user"
	command -v setpriv >/dev/null && command -v prlimit >/dev/null || skip "needs setpriv and prlimit (util-linux)"
	NOBODY_DIR=$(mktemp -d /tmp/prefault-nobody.XXXXXX)
	chown 65534:65534 "$NOBODY_DIR"
	chmod 755 "$NOBODY_DIR"
	as_nobody test -r "$SHIM" -a -x "$MMPROBE" || skip "user nobody cannot reach the build here"
}

# nobody_under POLICY-TEXT CMD...: run CMD as nobody under the shim with that policy.
nobody_under() {
	install -m 644 /dev/stdin "$NOBODY_DIR/under.policy" <<<"$1"
	shift
	run --separate-stderr as_nobody env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$NOBODY_DIR/under.policy" \
		PREFAULT_REPORT=none "$@"
	echo "with: status=$status $output $stderr"
}

# The realtime policy's mlockall, as a normal user with an 8 MiB RLIMIT_MEMLOCK: malloc(64M) ENOMEM, mmap(64M) EAGAIN, no note.
@test "realtime as a normal user with an 8 MiB RLIMIT_MEMLOCK: malloc and mmap of 64 MiB succeed, and a note names RLIMIT_MEMLOCK (issue 14 #19)" {
	needs_plain_runtime
	needs_nobody
	run --separate-stderr as_nobody "$MMPROBE" bigalloc 64M
	echo "without: $output $stderr"
	[ "$status" -eq 0 ]
	[ "$(kv malloc_errno "$output")" -eq 0 ]
	[ "$(kv mmap_errno "$output")" -eq 0 ]
	install -m 644 "$POLICIES/realtime.policy" "$NOBODY_DIR/realtime.policy"
	f="$NOBODY_DIR/r.json"
	run --separate-stderr as_nobody env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$NOBODY_DIR/realtime.policy" \
		PREFAULT_REPORT="$f" "$MMPROBE" bigalloc 64M
	echo "with: status=$status $output"
	[ "$status" -eq 0 ]
	[ "$(kv malloc_errno "$output")" -eq 0 ]
	[ "$(kv mmap_errno "$output")" -eq 0 ]
	jget "$f" "d['notes']"
	[ "$(jget "$f" "any('memlock' in n.lower() for n in d['notes'])")" = True ]
}

# A lock rule used up the program's own RLIMIT_MEMLOCK: after the shim locked 5 MiB, the program's mlock(4 MiB) failed.
@test "a lock rule leaves the program its own RLIMIT_MEMLOCK: its mlock of 4 MiB under 8 MiB still succeeds (issue 14 #20)" {
	needs_plain_runtime
	needs_nobody
	run --separate-stderr as_nobody "$MMPROBE" mlockown 5M 4M
	echo "without: $output $stderr"
	[ "$status" -eq 0 ]
	[ "$(kv mlock_errno "$output")" -eq 0 ]
	nobody_under $'[rule l]\ncall = mmap\nsize = 5M\naction = lock' "$MMPROBE" mlockown 5M 4M
	[ "$status" -eq 0 ]
	[ "$(kv mlock_errno "$output")" -eq 0 ]
}

# Under lock (or mlockall as root with realtime), MADV_DONTNEED failed with EINVAL and the data stayed where zeros belong.
@test "MADV_DONTNEED on memory the shim locked returns 0 and the range reads zero, under lock and under realtime (issue 14 #21)" {
	needs_plain_runtime
	[ "$(id -u)" -eq 0 ] || [ "$(ulimit -l)" = unlimited ] || skip "needs root or an unlimited RLIMIT_MEMLOCK, so that the shim's locking takes"
	run --separate-stderr "$MMPROBE" dontneed 4M
	[ "$status" -eq 0 ]
	[ "$(kv madvise_errno "$output")" -eq 0 ]
	[ "$(kv nonzero "$output")" -eq 0 ]
	lock=$(policy l <<<$'[rule l]\nsize = >=1M\naction = lock')
	got=
	for pol in "$lock" "$POLICIES/realtime.policy"; do
		run --separate-stderr shimmed "$pol" "$MMPROBE" dontneed 4M
		echo "$(basename "$pol"): status=$status $output"
		got="$got $status:$(kv madvise_errno "$output"):$(kv nonzero "$output")"
	done
	# exit status, madvise's errno, bytes not zero after it: for each policy
	[ "$got" = " 0:0:0 0:0:0" ]
}

# node aborted (exit 133, a V8 check on a failed madvise) under the realtime policy.
@test "node runs under the realtime policy as it does without the shim (issue 14 #21)" {
	needs_plain_runtime
	command -v node >/dev/null || skip "node is not installed"
	[ "$(id -u)" -eq 0 ] || [ "$(ulimit -l)" = unlimited ] || skip "needs root or an unlimited RLIMIT_MEMLOCK, so that mlockall takes"
	js='let a = []; for (let i = 0; i < 200000; i++) a.push({ i, s: "x" + i }); console.log(a.length, a[199999].s)'
	run --separate-stderr timeout 120 node -e "$js"
	[ "$status" -eq 0 ]
	expected="$output"
	run --separate-stderr timeout 120 env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$POLICIES/realtime.policy" PREFAULT_REPORT=none \
		node -e "$js"
	echo "status=$status $output"
	echo "$stderr" | head -n 5
	[ "$status" -eq 0 ]
	[ "$output" = "$expected" ]
}

# A populated MAP_PRIVATE writable file mapping showed stale contents after the file changed: MADV_POPULATE_WRITE broke COW early.
@test "populate on a private writable file mapping: the file's later change shows through until the program writes (issue 14 #25)" {
	run --separate-stderr "$MMPROBE" cowfile "$BATS_TEST_TMPDIR/plain" 64K
	[ "$status" -eq 0 ]
	[ "$(kv pages "$output")" -ge 1 ]
	[ "$(kv seen_new "$output")" -eq "$(kv pages "$output")" ]
	pol=$(policy f <<<$'[rule f]\ncall = mmap\nmap = file\naction = populate')
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed "$pol" "$MMPROBE" cowfile "$BATS_TEST_TMPDIR/with" 64K
	echo "status=$status $output"
	[ "$status" -eq 0 ]
	[ "$(rule_stat "$BATS_TEST_TMPDIR/r.json" f matched)" -eq 1 ]
	[ "$(kv seen_new "$output")" -eq "$(kv pages "$output")" ]
}

# caller matching kept a stale cache after dlclose: a library loaded later at the same base matched as the old one.
@test "caller = after dlclose: a library loaded at the old one's base is matched by its own name (issue 14 #27)" {
	needs_no_tsan
	LA="$B/probes/libcallA.so" LB="$B/probes/libcallB.so"
	run --separate-stderr "$MMPROBE" caller "$LA" "$LB"
	[ "$status" -eq 0 ]
	[ "$(kv same_base "$output")" -eq 1 ] || skip "libcallB.so does not load at libcallA.so's old base here"
	pol=$(policy c <<<$'[rule a]\ncall = mmap\nsize = 1M\ncaller = libcallA.so\naction = populate')
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed "$pol" "$MMPROBE" caller "$LA" "$LB"
	echo "status=$status $output"
	[ "$status" -eq 0 ]
	[ "$(kv same_base "$output")" -eq 1 ] || skip "libcallB.so did not load at libcallA.so's old base under the shim"
	[ "$(kv a_ok "$output")" -eq 1 ]
	[ "$(kv b_ok "$output")" -eq 1 ]
	# libcallA's mmap, and not libcallB's
	[ "$(rule_stat "$BATS_TEST_TMPDIR/r.json" a matched)" -eq 1 ]
}

# A range the shim locked was unlocked before the program's mremap and never
# locked again: grown in place, it no longer merged with its locked
# neighbour (Linux's mm selftest mremap_test, "mremap expand merge").
@test "lock: a locked range the program mremaps stays locked and merges with its neighbours; its lock is still the shim's to give back (H3: mremap_test 16)" {
	needs_plain_runtime
	needs_nobody
	nobody_under $'[rule l]\ncall = mmap\nsize = 6M\naction = lock' "$MMPROBE" lockmove 2M 4M
	[ "$status" -eq 0 ]
	[ "$(kv merged "$output")" -eq 1 ]
	# the program's own 4 MiB lock under 8 MiB: the shim's 6 MiB, moved, gave way
	[ "$(kv mlock_errno "$output")" -eq 0 ]
	[ "$(kv vmlck_kb "$output")" -eq 4096 ]
}

@test "lock: growing a locked mapping past RLIMIT_MEMLOCK succeeds as it would without the shim" {
	needs_plain_runtime
	needs_nobody
	run --separate-stderr as_nobody "$MMPROBE" lockgrow 4M 12M
	[ "$(kv mremap_errno "$output")" -eq 0 ]
	nobody_under $'[rule l]\ncall = mmap\nsize = 4M\naction = lock' "$MMPROBE" lockgrow 4M 12M
	[ "$(kv mremap_errno "$output")" -eq 0 ]
	[ "$(kv vmlck_kb "$output")" -eq 0 ]
}
