#!/usr/bin/env bats
# Scale: programs with far more mappings than the shim's tables were sized
# for.  The budget must still bound what is prefaulted and live.
load helpers

MMPROBE="$B/probes/mmprobe"

# 64,000 live 16 KiB mappings under a populate rule: 47,616 went untracked (skipped_by.table_full), so the budget no longer bounded what was prefaulted.
@test "64,000 live 16 KiB mappings under populate: every one tracked, and the budget bounds what is prefaulted (issue 14 #31)" {
	# Without the shim first: the kernel merges these adjacent mappings, so
	# they stay far below vm.max_map_count.
	run --separate-stderr timeout 120 "$MMPROBE" manymaps 64000 16K
	echo "without: $output"
	[ "$status" -eq 0 ]
	[ "$(kv failed "$output")" -eq 0 ]
	[ "$(kv vmas "$output")" -lt "$(cat /proc/sys/vm/max_map_count)" ]
	pol=$(policy many <<-'EOF2'
	[global]
	budget = 512M
	[rule small]
	call = mmap
	size = 16K
	map = anon private
	action = populate
	EOF2
	)
	f="$BATS_TEST_TMPDIR/r.json"
	run --separate-stderr timeout 120 env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$pol" PREFAULT_REPORT="$f" \
		"$MMPROBE" manymaps 64000 16K
	echo "with: status=$status $output"
	[ "$status" -eq 0 ]
	[ "$(kv failed "$output")" -eq 0 ]
	jget "$f" "[r for r in d['rules'] if r['name']=='small'][0]['skipped_by'], d['budget'], d['notes']"
	[ "$(rule_stat "$f" small matched)" -eq 64000 ]
	[ "$(jget "$f" "[r for r in d['rules'] if r['name']=='small'][0]['skipped_by']['table_full']")" -eq 0 ]
	[ "$(jget "$f" "d['budget']['peak'] <= d['budget']['limit']")" = True ]
	# all 64,000 are still mapped at exit: what was prefaulted is all live
	[ "$(jget "$f" "[r for r in d['rules'] if r['name']=='small'][0]['prefaulted_bytes'] <= d['budget']['limit']")" = True ]
}
