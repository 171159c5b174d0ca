#!/usr/bin/env bats
# Huge pages: placement on a 2 MiB boundary, and the fallback.
load helpers
unset PFPROBE_SMALL_PAGES # (huge pages are what these tests count)

@test "hugepage + populate: the whole mapping is backed by huge pages before mmap returns" {
	[ "$(thp_mode)" = never ] && skip "THP is off on this machine"
	pol=$(policy h <<<$'[rule h]\nsize = >=2M\nmap = anon private\naction = hugepage populate')
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed "$pol" "$PROBE" thp 64M
	echo "$output"
	[ "$(kv anon_huge_kb "$output")" -eq 65536 ]
	f="$BATS_TEST_TMPDIR/r.json"
	[ "$(rule_stat "$f" h huge_bytes)" -ge $((60 << 20)) ]
	# 32 huge-page faults instead of 16384 small ones
	[ "$(jget "$f" "d['faults']['in_prefault']")" -lt 1000 ]
}

@test "hugepage places an odd-sized mapping on a 2 MiB boundary so most of it gets huge pages" {
	[ "$(thp_mode)" = never ] && skip "THP is off on this machine"
	pol=$(policy h <<<$'[rule h]\nsize = >=2M\naction = hugepage populate')
	run --separate-stderr shimmed "$pol" "$PROBE" thp 9M
	echo "$output"
	[ "$(kv anon_huge_kb "$output")" -ge 8192 ]
}

@test "hugepage with threads = 2 on 512 MiB: all huge, all resident" {
	[ "$(thp_mode)" = never ] && skip "THP is off on this machine"
	pol=$(policy h <<<$'[rule h]\nsize = >=2M\naction = hugepage populate\nthreads = 2')
	run --separate-stderr shimmed "$pol" "$PROBE" thp 512M
	[ "$(kv anon_huge_kb "$output")" -eq 524288 ]
	[ "$(kv resident "$output")" -eq 131072 ]
}

@test "without huge pages (THP disabled for the process) it falls back to small pages and says so" {
	pol=$(policy h <<<$'[rule h]\nsize = >=2M\naction = hugepage populate')
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed "$pol" "$PROBE" nothp "$PROBE" thp 32M
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(kv anon_huge_kb "$output")" -eq 0 ]
	[ "$(kv resident "$output")" -eq 8192 ]
	f="$BATS_TEST_TMPDIR/r.json"
	[ "$(rule_stat "$f" h small_fallbacks)" -eq 1 ]
	jget "$f" "d['notes']" | grep -q 'fell back to small pages'
}

@test "hugepage never moves a mapping the program placed (address hint or MAP_FIXED)" {
	pol=$(policy h <<<$'[rule h]\nsize = >=2M\naction = hugepage')
	run --separate-stderr shimmed "$pol" "$PROBE" errno
	run --separate-stderr "$PROBE" errno
	[ "$status" -eq 0 ]
	run --separate-stderr shimmed "$pol" "$PROBE" unmaprace 8 4M
	[ "$(kv bad "$output")" -eq 0 ]
}

# Issue 14 #26: a hugepage rule on MAP_HUGETLB mappings added 2 MiB of
# alignment slack that could not be trimmed (hugetlb ranges unmap only in
# whole huge pages), so fewer hugetlb mappings fit than without the shim.
teardown() {
	if [ -n "${HUGE_OLD:-}" ]; then
		echo "$HUGE_OLD" >/proc/sys/vm/nr_hugepages
	fi
}

# A hugepage rule on MAP_HUGETLB mappings added 2 MiB of slack it could not trim: fewer hugetlb mappings fit before ENOMEM.
@test "a hugepage rule on MAP_HUGETLB mappings: as many fit in the reserved huge pages as without the shim (issue 14 #26)" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to reserve hugetlb pages"
	[ -w /proc/sys/vm/nr_hugepages ] || skip "cannot reserve hugetlb pages here"
	[ "$(thp_mode)" = never ] && skip "THP is off: the hugepage rule places nothing here"
	MMPROBE="$B/probes/mmprobe"
	HUGE_OLD=$(cat /proc/sys/vm/nr_hugepages)
	echo $((HUGE_OLD + 8)) >/proc/sys/vm/nr_hugepages
	free=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
	[ "$free" -ge 8 ] || skip "could not get 8 free hugetlb pages ($free)"
	# 3 MiB: two huge pages each, and not a multiple of the alignment slack
	run --separate-stderr "$MMPROBE" hugetlb 64 3M
	echo "without: $output"
	[ "$status" -eq 0 ]
	plain=$(kv fit "$output")
	[ "$plain" -ge 4 ]
	for pol in $'[rule h]\ncall = mmap\nsize = >=2M\naction = hugepage' \
	           $'[rule h]\nsize = >=2M\nmap = anon private\naction = hugepage populate'; do
		run --separate-stderr shimmed "$(policy h <<<"$pol")" "$MMPROBE" hugetlb 64 3M
		echo "with ${pol//$'\n'/; }: status=$status $output"
		[ "$status" -eq 0 ]
		[ "$(kv fit "$output")" -eq "$plain" ]
	done
}

@test "background hugepage: the workers fill the mapping with huge pages, off the program's thread" {
	[ "$(thp_mode)" = never ] && skip "THP is off on this machine"
	pol=$(policy h <<<$'[rule h]\nsize = >=2M\nmap = anon private\naction = background hugepage')
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed "$pol" "$PROBE" thp 64M wait
	echo "$output"
	[ "$(kv resident "$output")" -eq "$(kv pages "$output")" ]
	[ "$(kv anon_huge_kb "$output")" -ge $((60 << 10)) ]
	f="$BATS_TEST_TMPDIR/r.json"
	[ "$(rule_stat "$f" h huge_bytes)" -ge $((60 << 20)) ]
	[ "$(jget "$f" "[r for r in d['rules'] if r['name']=='h'][0]['background']['populated_bytes']")" -eq $((64 << 20)) ]
	# without hugepage, the same rule gives small pages: the test can fail
	pol2=$(policy s <<<$'[rule s]\nsize = >=2M\nmap = anon private\naction = background')
	PFPROBE_SMALL_PAGES=$([ "$(thp_mode)" = always ] && echo 1) run --separate-stderr shimmed "$pol2" "$PROBE" thp 64M wait
	[ "$(kv anon_huge_kb "$output")" -lt 4096 ]
}

@test "hugepage placement leaves no holes between 2 MiB-multiple mappings: they merge as without the shim (H3: virtual_address_range)" {
	needs_no_tsan # (its interceptors make the mmap calls, and place them their own way)
	[ "$(thp_mode)" = never ] && skip "THP is off on this machine"
	pol=$(policy h <<<$'[rule h]\nsize = >=2M\naction = hugepage')
	run "$PROBE" vmas 64 4M
	echo "bare: $output"
	bare=$(kv vmas "$output")
	run --separate-stderr shimmed "$pol" "$PROBE" vmas 64 4M
	echo "shim: $output"
	[ "$(kv aligned "$output")" -eq 64 ]
	# every mapping its own entry would be 64 (or more, with holes between)
	[ "$(kv vmas "$output")" -le $((bare + 2)) ]
	[ "$(kv vmas "$output")" -lt 8 ]
}
