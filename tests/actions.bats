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

@test "mlockall = current future (the realtime recipe): later mappings are locked too" {
	needs_plain_runtime
	pol=$(policy ml <<<$'[global]\nmlockall = current future')
	run --separate-stderr shimmed "$pol" "$PROBE" vmlck 4M
	[ "$(kv vmlck_kb "$output")" -ge 4096 ]
}

@test "hugepage with populate: the mapping is backed by huge pages (AnonHugePages)" {
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
