#!/usr/bin/env bats
# userfaultfd (issue 22 #5, #30, #31): a range the program registers must
# fault as it would without the shim.  No worker touches it from then on,
# nothing the shim kept is left there, and in missing mode the pages the
# shim made resident (populated, or a reused region it cleared) that the
# program never wrote are dropped, so the program's handler serves them.
load helpers

H3="$B/probes/h3"

uffd_or_skip() {
	run timeout 10 "$H3/uffdserve"
	[ "$status" -ne 2 ] || skip "userfaultfd is not available here: $output"
	expected="$output"
	[ "$expected" = $'values 0xab 0xab, faults served: 2\nunmapped' ]
}

# under POLICY [ARGS]: uffdserve (or $PROG) under the shim with POLICY
under() {
	local pol=$1
	shift
	run --separate-stderr timeout 20 env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$pol" PREFAULT_REPORT=none "$H3/${PROG:-uffdserve}" "$@"
	echo "$pol: $output (status $status)"
}

# The wrapper read UFFDIO_REGISTER's argument before the call: a pointer the
# kernel answers with EFAULT killed the program (helper-32), policy or none.
@test "UFFDIO_REGISTER with an argument that cannot be read: EFAULT as without the shim, no crash" {
	run "$H3/uffdbad"
	[ "$status" -eq 0 ]
	plain=$output
	run --separate-stderr env LD_PRELOAD="$SHIM_LD" PREFAULT_REPORT=none "$H3/uffdbad"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "$plain" ]
	grep -q "prot_none=-1 errno=14" <<<"$output" || grep -q userfaultfd= <<<"$output"
}

@test "a lazy loader's handler serves its pages under background: the worker neither goes through it nor blocks (issue 22 #5)" {
	needs_plain_runtime
	uffd_or_skip
	under "$(policy bg <<<$'[rule bg]\ncall = mmap\nsize = >=1M\naction = background')"
	[ "$status" -eq 0 ]
	[ "$output" = "$expected" ]
}

@test "populate and the realtime policy: the pages of a registered range fault to the handler as without the shim (issue 22 #5, #30)" {
	needs_plain_runtime
	uffd_or_skip
	under "$(policy pop <<<$'[rule pop]\ncall = mmap\nsize = >=1M\naction = populate')"
	[ "$output" = "$expected" ]
	# realtime: populated and, where locking is unlimited (root here), locked
	under "$POLICIES/realtime.policy"
	[ "$output" = "$expected" ]
}

@test "recycle: a reused region registered with userfaultfd faults to the handler, not to the zeros the shim wrote (issue 22 #30)" {
	needs_plain_runtime
	uffd_or_skip
	pol=$(policy rec <<<$'[rule rec]\ncall = mmap\nsize = >=1M\naction = recycle\nrecycle_max = 64M')
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr timeout 20 env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$pol" \
		PREFAULT_REPORT="$BATS_TEST_TMPDIR/r.json" "$H3/uffdserve" reuse
	echo "$output"
	[ "$output" = "$expected" ]
	# (the region really was reused)
	[ "$(jget "$BATS_TEST_TMPDIR/r.json" "d['rules'][0]['recycle']['recycled']")" -eq 1 ]
}

@test "write tracking: a range registered for write protection is left alone by background workers (issue 22 #31)" {
	needs_plain_runtime
	run timeout 10 "$H3/wptrack"
	[ "$status" -ne 2 ] || skip "userfaultfd write protection is not available here: $output"
	[ "$output" = "pages made resident after the registration: 0" ]
	run --separate-stderr timeout 20 env LD_PRELOAD="$SHIM_LD" PREFAULT_REPORT=none \
		PREFAULT_POLICY="$(policy bg <<<$'[rule bg]\ncall = mmap\nsize = >=1M\naction = background')" "$H3/wptrack"
	echo "$output"
	[ "$output" = "pages made resident after the registration: 0" ]
}

@test "userfaultfd in minor mode on shared memory: the pages the shim mapped fault to the handler, which changes them first (H3: uffd-unit-tests minor)" {
	needs_plain_runtime
	run timeout 10 "$H3/uffdminor"
	[ "$status" -ne 2 ] || skip "minor faults on shmem are not available here: $output"
	[ "$output" = "values 0xcd 0xcd, minor faults served: 2" ]
	expected="$output"
	PROG=uffdminor
	under "$(policy pop <<<$'[rule pop]\nmap = file shared\nsize = >=1M\naction = populate')"
	[ "$output" = "$expected" ]
	under "$(policy lk <<<$'[rule lk]\nmap = file shared\nsize = >=1M\naction = lock')"
	[ "$output" = "$expected" ]
	under "$POLICIES/realtime.policy"
	[ "$output" = "$expected" ]
}

@test "realtime with mlockall onfault: a read-only registered range faults to the handler (the kernel selftest mkdirty), where mlockall future maps the zero page" {
	needs_plain_runtime
	uffd_or_skip
	run timeout 10 "$H3/uffdserve" ro
	[ "$output" = "$expected" ]
	sed 's/^mlockall = current future$/mlockall = current future onfault/' "$POLICIES/realtime.policy" >"$BATS_TEST_TMPDIR/rt.policy"
	grep -q '^mlockall = current future onfault$' "$BATS_TEST_TMPDIR/rt.policy"
	"$PF" check "$BATS_TEST_TMPDIR/rt.policy"
	under "$BATS_TEST_TMPDIR/rt.policy" ro
	[ "$output" = "$expected" ]
	# the documented difference without onfault, where locking is unlimited
	if [ "$(id -u)" -eq 0 ]; then
		under "$POLICIES/realtime.policy" ro
		[ "$output" = $'values 0x0 0x0, faults served: 0\nunmapped' ]
	fi
}

# The shim's lock, taken again after the program's MADV_DONTNEED, was an
# mlock: its populate went through the program's handler (every page of the
# range served), or failed half done and left the range locked, so the next
# MADV_DONTNEED failed with EINVAL (the kernel selftest uffd-stress).
@test "lock and realtime: MADV_DONTNEED on a registered range sends no fault of the shim's to the handler, and works twice (H3: uffd-stress)" {
	needs_plain_runtime
	uffd_or_skip
	run timeout 10 "$H3/uffdserve" dontneed
	want=$'values 0xab 0xab, faults served: 2\ndontneed 0 0, value 0xab, faults served: 3\nunmapped'
	[ "$output" = "$want" ]
	under "$(policy lk <<<$'[rule lk]\ncall = mmap\nsize = >=1M\naction = lock')" dontneed
	[ "$output" = "$want" ]
	under "$POLICIES/realtime.policy" dontneed
	[ "$output" = "$want" ]
}
