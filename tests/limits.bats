#!/usr/bin/env bats
# The program's resources (issue 22, class C and #28, #29): the shim must not
# cost the program its memory, its locked-memory limit or its task limit,
# before or after the program changes its privileges.  Small programs of
# tests/probes/hostile3/, run without the shim and with it.
load helpers

H3="$B/probes/h3"
RT="$POLICIES/realtime.policy"

# with POLICY PROG ARGS: PROG's output under the shim (report none)
with() {
	local pol=$1
	shift
	timeout 60 env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$pol" PREFAULT_REPORT=none "$@"
}

needs_root() {
	[ "$(id -u)" -eq 0 ] || skip "needs root (locking without limit, setuid, cgroups)"
}

@test "realtime where locking is unlimited: a 1 GiB MAP_NORESERVE table with two pages used stays small (issue 22 #12)" {
	needs_root
	needs_plain_runtime
	plain=$("$H3/rtsparse")
	run with "$RT" "$H3/rtsparse"
	echo "without: $plain"
	echo "with:    $output"
	[ "$output" = "$plain" ]
	# and the policy's mlockall is in force all the same: a later mapping is locked
	run with "$RT" "$PROBE" vmlck 4M
	[ "$(kv vmlck_kb "$output")" -ge 4096 ]
}

@test "realtime: a fork child's MADV_DONTNEED is not undone, and nothing is locked in it (issue 22 #13)" {
	needs_root
	needs_plain_runtime
	plain=$("$H3/rtfork")
	run with "$RT" "$H3/rtfork"
	echo "without: $plain"
	echo "with:    $output"
	[ "$output" = "$plain" ]
}

@test "a fork in a pids cgroup of 2 tasks works while a background worker runs (issue 22 #14)" {
	needs_no_tsan # (its runtime's own background thread is a task of the two)
	needs_root
	cg=/sys/fs/cgroup/pids/prefault-test-$$
	[ -d /sys/fs/cgroup/pids ] || cg=/sys/fs/cgroup/prefault-test-$$
	mkdir "$cg" 2>/dev/null && echo 2 >"$cg/pids.max" 2>/dev/null || { rmdir "$cg" 2>/dev/null; skip "cannot make a pids cgroup here"; }
	pol=$(policy bg <<<$'[rule bg]\ncall = mmap\nsize = >=1M\naction = background')
	inside() { sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$@"; }
	plain=$(inside "$H3/pidsfork")
	shim=$(inside env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$pol" PREFAULT_REPORT=none "$H3/pidsfork")
	rmdir "$cg"
	echo "without: $plain"
	echo "with:    $shim"
	[ "$plain" = "fork ok" ]
	[ "$shim" = "fork ok" ]
}

@test "realtime in a root daemon that drops to nobody: malloc and mmap of 16 MiB work, and a raw MADV_DONTNEED too (issue 22 #28, #29)" {
	needs_root
	needs_plain_runtime
	plain=$(ulimit -l 8192 && "$H3/privdrop" drop)
	run bash -c 'ulimit -l 8192 && "$@"' sh env LD_PRELOAD="$SHIM_LD" PREFAULT_POLICY="$RT" PREFAULT_REPORT=none "$H3/privdrop" drop
	echo "without: $plain"
	echo "with:    $output"
	[ "$output" = "$plain" ]
	[[ "$output" == *"malloc 16 MiB: ok"*"mmap 16 MiB: ok"*"raw MADV_DONTNEED: ok, reads 0x0" ]]
	# and before any drop (locking unlimited, so everything is locked): the raw call still works
	run with "$RT" "$H3/privdrop"
	[[ "$output" == *"raw MADV_DONTNEED: ok, reads 0x0" ]]
}

@test "a program's mlockall under a locked-memory limit 1 MiB above its own size fits with the shim too (its tables are mapped when used, not in its BSS)" {
	needs_root
	needs_plain_build # (a sanitizer's runtime maps terabytes of shadow)
	plain=$(kv vmsize_kb "$("$H3/lockroom")")
	limit=$((plain + 1024))
	run "$H3/lockroom" "$limit"
	echo "without, $plain kB and a limit of $limit kB: $output"
	[ "$output" = "mlockall: ok" ]
	# no policy, and a policy whose rule watches every mmap by caller
	run with "" "$H3/lockroom" "$limit"
	echo "with no policy: $output"
	[ "$output" = "mlockall: ok" ]
	pol=$(policy calls <<<$'[rule calls]\ncall = mmap\nsize = >=64K\ncaller = lockroom\naction = populate')
	run with "$pol" "$H3/lockroom" "$limit"
	echo "with a caller rule: $output"
	[ "$output" = "mlockall: ok" ]
	# what the shim adds to the address space, for the log
	with "" "$H3/lockroom"
}

# helper-33 on the tables above: mapped on first need, a caller rule's
# table of objects (152 KiB) came inside the program's first matched mmap,
# after the program had measured its room in main: its mmap failed under
# RLIMIT_AS (ENOMEM), RLIMIT_DATA, or locked under RLIMIT_MEMLOCK (EAGAIN);
# a report sent to the tool needed two scratch mappings at exit, refused
# there; a profile's /proc/self/maps text (896 KiB) was refused at its
# snapshot and the profile named nothing.  Now each is mapped at start-up
# where the configuration needs it.
@test "the shim's tables are in the address space before main: a program that measures its room there and maps into it works with a caller rule, --auto, prefault run and profile" {
	needs_root # (the drop: the report then cannot go where the tool asked)
	needs_plain_build
	run "$H3/lockroom" as 1024 1000
	[ "$output" = "mmap: ok" ]
	pol=$(policy calls <<<$'[rule calls]\ncall = mmap\nsize = >=64K\ncaller = lockroom\naction = populate')
	run with "$pol" "$H3/lockroom" as 1024 1000
	echo "caller rule: $output"
	[ "$output" = "mmap: ok" ]
	run with auto "$H3/lockroom" as 1024 1000
	echo "--auto: $output"
	[ "$output" = "mmap: ok" ]
	# the report reaches the tool through its socket, from a program out of room at exit
	cd "$BATS_TEST_TMPDIR"
	run --separate-stderr "$PF" run -- "$H3/lockroom" as 1024 1000 drop
	echo "run: $output / $stderr"
	[ "$output" = "mmap: ok" ]
	[[ "$stderr" == *"prefault: lockroom["*"faults"* ]]
	[[ "$stderr" != *"wrote no report"* ]]
	# and the profile names the objects
	run --separate-stderr "$PF" profile -o "$BATS_TEST_TMPDIR/p.json" -- "$H3/lockroom" as 1024 1000
	[ "$output" = "mmap: ok" ]
	grep -q lockroom "$BATS_TEST_TMPDIR/p.json"
	! grep -q '"object": *"?"' "$BATS_TEST_TMPDIR/p.json"
}

# glibc's pthread_create clears __libc_single_threaded for good, and the
# shim's start-up threads (joined before main) are threads: under --auto, a
# background rule or a pool it reads 0 at main (README Limits; helper-34).
# Where the shim starts none, it reads as without the shim; and after a
# thread of the program's own, 0 under every policy (the flag must never
# say single in a threaded process: libstdc++ drops its atomics by it).
@test "__libc_single_threaded: at main as without the shim where the policy starts no thread of the shim's; 0 after the program's own thread under every policy" {
	needs_plain_runtime
	SINGLE="$B/probes/h4/single"
	plain=$("$SINGLE" thread)
	[ "$plain" = "main=1 after=0" ]
	for pol in "" "$POLICIES/observe.policy" "$RT" "$POLICIES/cpython.policy"; do
		run with "$pol" "$SINGLE" thread
		echo "${pol:-no policy}: $output"
		[ "$output" = "$plain" ]
	done
	for pol in auto "$POLICIES/streaming.policy" "$BATS_TEST_DIRNAME/aggressive.policy"; do
		run with "$pol" "$SINGLE" thread
		echo "$pol: $output"
		[ "$status" -eq 0 ]
		[ "$(kv after "$output")" -eq 0 ]
	done
}
