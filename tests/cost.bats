#!/usr/bin/env bats
# The shim's own cost per operation, held to a budget (issue 18).  Counts,
# never timings: system calls from the report's ledger (shim.syscalls, every
# call the shim makes, counted by kind in shim/floor/glue.c), checked against
# strace, and instructions from callgrind.  The cost of one operation is
# the difference between a run of 2N operations and a run of N, so what
# start-up and exit cost cancels out.  A change that adds a system call, a
# lock or a page walk to one of these paths fails here.
load helpers

COST="$B/probes/costprobe"
FWD="$B/probes/libfwd.so"

# calls POLICY MODE ARGS...: the shim's system calls in a run of costprobe
# (of one kind, if KIND is set; less those of the kind BUT names)
calls() {
	local pol="$1" f="$BATS_TEST_TMPDIR/ledger.$$.$RANDOM.json"
	shift
	REPORT="$f" shimmed "$pol" "$COST" "$@" >/dev/null || return 1
	jget "$f" "d['shim']['syscalls']['${KIND:-total}']${BUT:+ - d['shim']['syscalls']['$BUT']}"
}

# per_op POLICY N MODE ARGS (N goes after MODE): system calls per operation,
# from runs of N and 2N operations
per_op() {
	local pol="$1" n="$2" mode="$3" a b
	shift 3
	a=$(calls "$pol" "$mode" "$n" "$@") && b=$(calls "$pol" "$mode" $((2 * n)) "$@") || return 1
	awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN { printf "%.4f\n", (b - a) / n }'
}

# The shim looks at free memory at most every 100 ms (recycle's guard), so
# a build a sanitizer slows down tenfold makes more looks a cycle: counts a
# cycle that include them are the plain build's.
needs_plain_timing() {
	[ -z "${PREFAULT_SANITIZER:-}" ] || skip "the $PREFAULT_SANITIZER build's cycles are slower: its time-based looks are more a cycle"
}

# le X Y: X <= Y, as numbers
le() { awk -v x="$1" -v y="$2" 'BEGIN { exit !(x <= y) }'; }

recycle_policy() {
	policy rc <<-'EOF'
	[rule churn]
	call = mmap
	size = 256K..1M
	action = recycle
	EOF
}

@test "the report carries the cost ledger: shim.syscalls by kind in JSON, one line of text" {
	pol=$(populate_all)
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed "$pol" "$COST" keepmaps 4 4M
	[ "$status" -eq 0 ]
	f="$BATS_TEST_TMPDIR/r.json"
	# every kind, and a total that is their sum: four populates at least
	[ "$(jget "$f" "d['shim']['syscalls']['total'] == sum(v for k, v in d['shim']['syscalls'].items() if k != 'total')")" = True ]
	[ "$(jget "$f" "d['shim']['syscalls']['madvise']")" -ge 4 ]
	[ "$(jget "$f" "sorted(d['shim']['syscalls'])[:3]")" != "[]" ]
	REPORT="$BATS_TEST_TMPDIR/r.txt" run --separate-stderr shimmed "$pol" "$COST" keepmaps 4 4M
	grep -Eq '^prefault:   prefault work: [0-9]+ system calls \([a-z0-9_]+ [0-9]+' "$BATS_TEST_TMPDIR/r.txt"
}

@test "the ledger counts what the kernel sees: strace gives the same mincore, madvise and getrusage calls" {
	needs_plain_runtime
	command -v strace >/dev/null || skip "strace is not installed"
	pol=$(recycle_policy)
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr strace -f -qq -c -o "$BATS_TEST_TMPDIR/st" \
		-e trace=mincore,madvise,getrusage \
		env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$pol" PREFAULT_REPORT="$BATS_TEST_TMPDIR/r.json" "$COST" cycles 2000 256K 1
	[ "$status" -eq 0 ]
	cat "$BATS_TEST_TMPDIR/st"
	f="$BATS_TEST_TMPDIR/r.json"
	# The program makes none of these calls itself: every one is the shim's.
	# (but for one getrusage of costprobe's own; the loader and libc make
	# prlimit64 and mprotect calls too, so those are not compared)
	for k in mincore madvise getrusage; do
		seen=$(awk -v k="$k" '$NF == k { print $4 }' "$BATS_TEST_TMPDIR/st")
		[ "$k" != getrusage ] || seen=$((seen - 1))
		echo "$k: strace ${seen:-0}, ledger $(jget "$f" "d['shim']['syscalls']['$k']")"
		[ "${seen:-0}" -eq "$(jget "$f" "d['shim']['syscalls']['$k']")" ]
	done
	# (sparse regions kept side by side are asked about four at a time)
	[ "$(jget "$f" "d['shim']['syscalls']['mincore']")" -ge 400 ]
}

@test "recycle: at most one system call a cycle of mmap 256 KiB, touch one page, munmap; a quarter where four are kept side by side" {
	needs_plain_timing
	pol=$(recycle_policy)
	run per_op "$pol" 2000 cycles 256K 1
	echo "sparse churn: $output system calls a cycle"
	[ "$status" -eq 0 ]
	le "$output" 1.01
	# The program holds one region at a time: its next requests go to the
	# kernel, with a hint beside the kept one, until four are kept side by
	# side; then one mincore asks about the four (cost before: 1.00)
	le "$output" 0.30
	# and it is recycling: all but those few requests get a kept region
	# (at most 2 x 4 - 1 of them left to the kernel, the first, and the
	# last one kept)
	a=$(REPORT="$BATS_TEST_TMPDIR/r.json" shimmed "$pol" "$COST" cycles 2000 256K 1)
	[ "$(jget "$BATS_TEST_TMPDIR/r.json" "[r for r in d['rules'] if r['name'] == 'churn'][0]['recycle']['recycled']")" -ge 1992 ]
}

@test "recycle: ranges the program takes back do not stop regions being asked about four at a time (hostile review of 22564e1)" {
	needs_plain_timing
	pol=$(recycle_policy)
	# 20 times in the first half of 40,000 cycles the program maps 8 pages
	# over one of the ranges it unmapped lately (a kept region there is
	# given back): the batches must form again (before the fix the class
	# was left with one region, one mincore a cycle, in 4 runs of 5)
	REPORT="$BATS_TEST_TMPDIR/r.json" run --separate-stderr shimmed "$pol" "$COST" takeback 40000 256K 20 500
	echo "$output"
	[ "$(kv taken "$output")" -eq 20 ]
	f="$BATS_TEST_TMPDIR/r.json"
	jget "$f" "(d['shim']['syscalls']['mincore'], d['rules'][0]['recycle']['recycled'], d['rules'][0]['recycle']['cache_peak_bytes'])"
	[ "$(jget "$f" "d['shim']['syscalls']['mincore']")" -le 12000 ]
	# and the cache stays small: 16 regions at most are kept for a batch
	[ "$(jget "$f" "d['rules'][0]['recycle']['cache_peak_bytes']")" -le $((16 * 256 << 10)) ]
}

@test "recycle: a dense region (every page touched) is cleared whole, with no system call" {
	needs_plain_timing
	pol=$(recycle_policy)
	# (none asks which pages are resident: the region was resident whole)
	KIND=mincore run per_op "$pol" 500 cycles 1M 256
	echo "dense churn: $output mincore calls a cycle"
	[ "$status" -eq 0 ]
	le "$output" 0.003
	# and in all, no more than the look at free memory every 100 ms costs
	# (a dozen small reads; dense churn here runs about 70 us a cycle)
	run per_op "$pol" 500 cycles 1M 256
	echo "dense churn: $output system calls a cycle in all"
	le "$output" 0.1
}

@test "observe mode: no system call of the shim's for mmap, munmap, malloc and free" {
	run per_op "" 2000 maps 256K
	echo "observe mmap+munmap: $output"
	[ "$output" = 0.0000 ]
	run per_op "" 20000 pairs 64
	echo "observe malloc+free: $output"
	[ "$output" = 0.0000 ]
	# a policy whose rules match nothing is observe mode too
	pol=$(policy never <<<$'[rule never]\nsize = 1T\naction = populate')
	run per_op "$pol" 2000 maps 256K
	[ "$output" = 0.0000 ]
	run per_op "$pol" 2000 cycles 256K 1
	[ "$output" = 0.0000 ]
}

@test "populate: one system call a populated mapping, the populate itself" {
	# (a size some multi-size THP setting turns to large pages needs the fault
	# meter: then its faults cannot be counted from the pages)
	for f in /sys/kernel/mm/transparent_hugepage/hugepages-*kB/enabled; do
		[ -e "$f" ] || continue
		kb=${f#*hugepages-}; kb=${kb%kB/enabled}
		if [ "$kb" -le 1024 ] && grep -q '\[always\]' "$f"; then skip "multi-size THP of $kb kB is always on here"; fi
	done
	! grep -q '\[always\]' /sys/kernel/mm/transparent_hugepage/enabled ||
		[ "$(cat /sys/kernel/mm/transparent_hugepage/hpage_pmd_size)" -gt $((1 << 20)) ] ||
		skip "THP is always on for 1 MiB here"
	# (a budget of its own: the default follows free memory, which the
	# tests running beside this one move)
	pol=$(policy pop <<<$'[global]\nbudget = 1G\n[rule big]\ncall = mmap\nsize = 1M\naction = populate')
	run per_op "$pol" 200 keepmaps 1M
	echo "populate: $output system calls a mapping"
	[ "$status" -eq 0 ]
	[ "$output" = 1.0000 ]
	# and the faults it took are still the shim's, counted
	REPORT="$BATS_TEST_TMPDIR/r.json" shimmed "$pol" "$COST" keepmaps 200 1M
	[ "$(rule_stat "$BATS_TEST_TMPDIR/r.json" big faults)" -eq $((200 * (1 << 20) / $(getconf PAGESIZE))) ]
}

@test "no memory for the shim's tables (its mmaps of 140 to 512 KiB fail): the program runs as without it, and the report says what went without" {
	needs_plain_runtime # (a sanitizer's runtime maps blocks of its own in that range)
	# a caller rule needs the table of calling objects (152 KiB), --auto
	# its sites (352 KiB); both are mapped when first needed
	pol=$(policy notable <<<$'[rule p]\ncall = mmap\nsize = 1M\ncaller = costprobe\naction = populate')
	REPORT="$BATS_TEST_TMPDIR/r.json" run -0 shimmed "$pol" "$COST" notable 200 1M
	[[ "$output" == *ok=1* ]]
	[ "$(rule_stat "$BATS_TEST_TMPDIR/r.json" p matched)" -eq 0 ]
	[ "$(jget "$BATS_TEST_TMPDIR/r.json" "'memory for a table' in ' '.join(d['notes'])")" = True ]
	REPORT="$BATS_TEST_TMPDIR/a.json" run -0 shimmed auto "$COST" notable 200 1M
	[[ "$output" == *ok=1* ]]
	[ "$(jget "$BATS_TEST_TMPDIR/a.json" "'memory for a table' in ' '.join(d['notes'])")" = True ]
	[ "$(jget "$BATS_TEST_TMPDIR/a.json" "len(d['auto']['sites'])")" -eq 0 ]
	# and where the tables can be had, the same rule matches (the test can fail)
	REPORT="$BATS_TEST_TMPDIR/r2.json" run -0 shimmed "$pol" "$COST" cycles 200 1M 1
	[ "$(rule_stat "$BATS_TEST_TMPDIR/r2.json" p matched)" -eq 200 ]
}

@test "a process with no memory for the shim's records, or no thread to spare: no failing call of the shim's on every wrapper call" {
	needs_plain_runtime # (a sanitizer's runtime maps 64 KiB blocks of its own)
	# costprobe nochunk: the shim's small mmaps fail (seccomp), so each populated
	# region finds no record.  Each call used to try to map a chunk again (one
	# failing mmap a cycle, hostile review of d6afa17); now the tries back off.
	pol=$(policy nochunk <<<$'[global]\nbudget = 1G\n[rule p]\ncall = mmap\nsize = 256K\naction = populate')
	KIND=mmap run per_op "$pol" 1000 nochunk 256K
	echo "the shim's mmap a cycle: $output (1.0000 before)"
	[ "$status" -eq 0 ]
	le "$output" 0.01
	REPORT="$BATS_TEST_TMPDIR/r.json" run -0 shimmed "$pol" "$COST" nochunk 500 256K
	[[ "$output" == *ok=1* ]]
	[ "$(rule_stat "$BATS_TEST_TMPDIR/r.json" p matched)" -eq 500 ]
	[ "$(jget "$BATS_TEST_TMPDIR/r.json" "d['rules'][0]['skipped_by']['table_full']")" -eq 500 ]
	[ "$(jget "$BATS_TEST_TMPDIR/r.json" "'no memory to track a region' in ' '.join(d['notes'])")" = True ]
	# malloc blocks: the blocks table, the same
	pol=$(policy nochunkm <<<$'[global]\nbudget = 1G\n[rule p]\ncall = malloc\nsize = 256K\naction = populate')
	KIND=mmap run per_op "$pol" 1000 nochunkm 256K
	echo "malloc: the shim's mmap a pair: $output (1.0000 before)"
	[ "$status" -eq 0 ]
	le "$output" 0.01
	# no thread can start (RLIMIT_NPROC): background's worker is not tried on every call
	pol=$(policy nothread <<<$'[global]\nbudget = 1G\n[rule p]\ncall = mmap\nsize = 256K\naction = background')
	KIND=clone3 run per_op "$pol" 1000 nothread 256K
	echo "no thread: the shim's clone3 a cycle: $output (1.0000 before)"
	[ "$status" -eq 0 ]
	le "$output" 0.01
	# and the report says why background did nothing; where threads can
	# start, it does not
	note='the system refused the shim a helper thread'
	REPORT="$BATS_TEST_TMPDIR/nt.json" shimmed "$pol" "$COST" nothread 100 256K >/dev/null
	jget "$BATS_TEST_TMPDIR/nt.json" "d['notes']" | grep -q "$note"
	REPORT="$BATS_TEST_TMPDIR/t.json" shimmed "$pol" "$COST" cycles 100 256K 1 >/dev/null
	[ "$(jget "$BATS_TEST_TMPDIR/t.json" "d['rules'][0]['matched']")" -ge 100 ]
	! jget "$BATS_TEST_TMPDIR/t.json" "d['notes']" | grep -q "$note"
}

# The learner (PREFAULT_POLICY=auto, issue 21): its decisions cost no
# system call on the program's calls beyond what the chosen action needs;
# what it watches costs none but the sampled mincore at unmap or free.
@test "auto: recycled churn at most one system call a cycle, a dense one none (as a recycle rule)" {
	needs_plain_timing
	run per_op auto 2000 cycles 256K 1
	echo "auto, sparse churn: $output system calls a cycle"
	[ "$status" -eq 0 ]
	le "$output" 1.01
	run per_op auto 500 cycles 1M 256
	echo "auto, dense churn: $output system calls a cycle"
	le "$output" 0.1
	# and it is the learner recycling (after the churn is seen, and the few
	# requests left to the kernel so that four regions are kept side by side)
	REPORT="$BATS_TEST_TMPDIR/r.json" shimmed auto "$COST" cycles 2000 256K 1 >/dev/null
	[ "$(jget "$BATS_TEST_TMPDIR/r.json" "sum(r['recycle']['recycled'] for r in d['rules'])")" -ge 1983 ]
	# the hard budget too: its looks read the shim's own memory as well
	# (a mincore per 256 pages of its object), at most every 10 ms
	export PREFAULT_AUTO_BUDGET=hard
	run per_op auto 2000 cycles 256K 1
	echo "auto hard, sparse churn: $output system calls a cycle"
	le "$output" 1.01
	run per_op auto 500 cycles 1M 256
	echo "auto hard, dense churn: $output system calls a cycle"
	le "$output" 0.1
	REPORT="$BATS_TEST_TMPDIR/h.json" shimmed auto "$COST" cycles 2000 256K 1 >/dev/null
	[ "$(jget "$BATS_TEST_TMPDIR/h.json" "d['auto']['budget']['hard']")" -eq 1 ]
	[ "$(jget "$BATS_TEST_TMPDIR/h.json" "sum(r['recycle']['recycled'] for r in d['rules'])")" -ge 1983 ]
}

@test "auto: watching costs no system call on mmap, munmap, malloc or free, but mincore: sampled (1 in 16), or for a mapping in use across a turn" {
	# mappings it watches and never acts on: kept, then all unmapped.  The
	# unmap of one the learner counted across a turn of its count (10 ms
	# after its first look, then every 0.5 to 1 s) asks what of it was
	# touched: one mincore (up to 256 pages), and nothing else.  Whether a
	# turn falls between the maps and the unmaps goes by the clock: 2,000
	# may all be asked and 4,000 not, or the other way (2 mincores a
	# mapping by the difference of the two runs), so the mincores are
	# counted in one run, and the rest by the difference (and the shim's own
	# memory, read at a look at most every 100 ms: a mincore per 256 pages of
	# its object, 4 here; 3 more in 4,003 once)
	KIND=mincore run calls auto keepmaps 4000 256K
	echo "auto, watched mmap+munmap: $output mincores for 4,000"
	[ "$status" -eq 0 ]
	[ "$output" -le 4040 ]
	BUT=mincore run per_op auto 2000 keepmaps 256K
	echo "auto, watched mmap+munmap, but mincore: $output"
	le "$output" 0.07
	# blocks it watches: malloc and free of 1 MiB, never touched (sparse)
	run per_op auto 2000 pairs 1M
	echo "auto, watched malloc+free: $output"
	le "$output" 0.07
	# what it does not look at: small mappings and blocks
	run per_op auto 2000 maps 16K
	[ "$output" = 0.0000 ]
	run per_op auto 20000 pairs 64
	[ "$output" = 0.0000 ]
}

# ir PRELOAD ARGS...: instructions callgrind counts for costprobe ARGS
ir() {
	local pre="$1"
	shift
	LD_PRELOAD="$pre" PREFAULT_REPORT=none PREFAULT_POLICY="${IR_POLICY:-}" \
		valgrind --tool=callgrind --callgrind-out-file=/dev/null "$COST" "$@" 2>&1 >/dev/null |
		sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' | tr -d , | tail -n 1
}

# ir_pair PRELOAD N MODE [ARGS]: instructions per malloc/free pair of 64 bytes,
# from runs of N and 2N pairs (costprobe MODE ARGS N 64)
ir_pair() {
	local pre="$1" n="$2" a b
	a=$(ir "$pre" "${@:3}" "$n" 64) && b=$(ir "$pre" "${@:3}" $((2 * n)) 64) || return 1
	awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN { printf "%.2f\n", (b - a) / n }'
}

@test "malloc and free in observe mode: instructions a pair within 5% of a bare forwarding wrapper (callgrind)" {
	needs_plain_build
	command -v valgrind >/dev/null || skip "valgrind is not installed"
	fwd=$(ir_pair "$FWD" 20000 pairs)
	shim=$(ir_pair "$SHIM" 20000 pairs)
	echo "per malloc/free pair: bare wrapper $fwd, shim $shim instructions"
	le "$shim" "$(awk -v f="$fwd" 'BEGIN { print f * 1.05 }')"
}

@test "auto: malloc and free of small blocks, instructions a pair within 5% of a bare forwarding wrapper (callgrind)" {
	needs_plain_build
	command -v valgrind >/dev/null || skip "valgrind is not installed"
	export IR_POLICY=auto
	fwd=$(ir_pair "$FWD" 20000 pairs)
	shim=$(ir_pair "$SHIM" 20000 pairs)
	echo "per malloc/free pair under auto: bare wrapper $fwd, shim $shim instructions"
	le "$shim" "$(awk -v f="$fwd" 'BEGIN { print f * 1.05 }')"
	# (and the learner was on)
	REPORT="$BATS_TEST_TMPDIR/r.json" shimmed auto "$COST" pairs 10 64 >/dev/null
	[ "$(jget "$BATS_TEST_TMPDIR/r.json" "'sites' in d['auto']")" = True ]
}

@test "free of an untracked block takes no lock while a block is tracked: within 5% of a bare wrapper (callgrind; issue 22 #16)" {
	needs_plain_build
	command -v valgrind >/dev/null || skip "valgrind is not installed"
	export IR_POLICY
	IR_POLICY=$(policy big <<<$'[rule big]\ncall = malloc\nsize = >=4M\naction = populate')
	fwd=$(ir_pair "$FWD" 20000 tracked 8M)
	shim=$(ir_pair "$SHIM" 20000 tracked 8M)
	echo "per malloc/free pair beside a tracked 8 MiB block: bare wrapper $fwd, shim $shim instructions"
	le "$shim" "$(awk -v f="$fwd" 'BEGIN { print f * 1.05 }')"
	# the block really was tracked: its free gave the budget back
	REPORT="$BATS_TEST_TMPDIR/r.json" shimmed "$IR_POLICY" "$COST" tracked 8M 10 64
	[ "$(jget "$BATS_TEST_TMPDIR/r.json" "d['budget']['peak']")" -ge $((4 << 20)) ]
	[ "$(jget "$BATS_TEST_TMPDIR/r.json" "d['budget']['used']")" -eq 0 ]
}

@test "carve: no more system calls a cycle than recycle (sparse and dense churn)" {
	needs_plain_timing
	pol=$(policy cv <<<$'[rule churn]\ncall = mmap\nsize = 256K..1M\naction = carve')
	rc=$(recycle_policy)
	for args in "256K 1" "1M 256"; do
		# the calls a cycle may make: the mincore that says what to clear,
		# and the mappings and advice of a new reserve (once in many cycles)
		for k in mincore mmap munmap madvise; do
			# shellcheck disable=SC2086
			c=$(KIND=$k per_op "$pol" 2000 cycles $args) && r=$(KIND=$k per_op "$rc" 2000 cycles $args)
			echo "cycles $args: $k: carve $c, recycle $r a cycle"
			# (a reserve's mmap, its one or two trims and its madvise come
			# once for many cycles: a call or two more or less per run)
			le "$c" "$(awk -v r="$r" 'BEGIN { print r + 0.002 }')"
		done
		# in all: no more than the look at free memory every 100 ms adds
		# shellcheck disable=SC2086
		c=$(per_op "$pol" 2000 cycles $args)
		echo "cycles $args: carve $c system calls a cycle in all"
		le "$c" 1.01
		[ "$args" = "256K 1" ] || le "$c" 0.1
	done
	# and it is carving (where huge pages can be had): one reserve serves them all
	REPORT="$BATS_TEST_TMPDIR/r.json" shimmed "$pol" "$COST" cycles 2000 256K 1 >/dev/null
	[ "$(jget "$BATS_TEST_TMPDIR/r.json" "[r for r in d['rules'] if r['name'] == 'churn'][0]['recycle']['recycled']")" -ge 1999 ]
}
