#!/bin/bash
# Hostile round 2: reproducers of ways the shim changes what a program sees.
# Not part of `make test`.  Each case runs its program without the shim and
# under it; the two lines should match.  Some cases need root (cgroups,
# dropping CAP_IPC_LOCK with setpriv, userfaultfd) and THP in madvise mode.
#
#   tests/probes/hostile2/run.sh [CASE...]      (after make)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../../.." && pwd)
B=${PREFAULT_BUILD:-$TOP/build}
S=$B/libprefault.so
PF=$B/prefault
O=$B/hostile2
P=$TOP/policies
mkdir -p "$O"
for c in "$HERE"/*.c; do
	n=$(basename "$c" .c)
	[ "$O/$n" -nt "$c" ] || gcc -O2 -w -o "$O/$n" "$c" -lpthread || exit 1
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

both() { # both POLICY CMD...: without the shim, then under it
	local pol=$1
	shift
	printf '  without: '
	timeout 20 "$@" 2>&1 | tr '\n' ' '
	echo "[exit ${PIPESTATUS[0]}]"
	printf '  with:    '
	timeout 20 env LD_PRELOAD="$S" PREFAULT_POLICY="$pol" PREFAULT_REPORT=none "$@" 2>&1 | tr '\n' ' '
	echo "[exit ${PIPESTATUS[0]}]"
}
NOCAP="setpriv --bounding-set -ipc_lock" # no CAP_IPC_LOCK: RLIMIT_MEMLOCK applies
cgroup() { # cgroup LIMIT CMD...: from tests/recycle.bats
	local limit=$1 base cg
	shift
	if base=$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup) && [ -n "$base" ] && [ -w "/sys/fs/cgroup/memory$base" ]; then
		cg="/sys/fs/cgroup/memory$base/prefault-h2-$$"
		mkdir -p "$cg" && echo "$limit" >"$cg/memory.limit_in_bytes" || { rmdir "$cg"; return 99; }
	elif base=$(sed -n 's/^0:://p' /proc/self/cgroup) && grep -qw memory "/sys/fs/cgroup$base/cgroup.subtree_control" 2>/dev/null; then
		cg="/sys/fs/cgroup$base/prefault-h2-$$"
		mkdir -p "$cg" && echo "$limit" >"$cg/memory.max" || { rmdir "$cg"; return 99; }
	else
		return 99
	fi
	sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$@"
	local rc=$?
	rmdir "$cg" 2>/dev/null
	return $rc
}

case_seccomp() { echo "seccomp_exit: a sandboxed program exits 0 (prefault run, observe mode)"
	printf '  without: '; "$O/seccomp_exit" | tr '\n' ' '; echo "[exit ${PIPESTATUS[0]}]"
	printf '  with:    '; "$PF" run -- "$O/seccomp_exit" 2>/dev/null | tr '\n' ' '; echo "[exit ${PIPESTATUS[0]}]"; }
case_sigfork() { echo "sigfork: fork() in a SIGALRM handler while main loops mmap/munmap (recycle; realtime hangs too, less often)"
	both "$HERE/rec.policy" "$O/sigfork"; }
case_ufork() { echo "ufork: _Fork() child of a threaded program maps memory (recycle)"
	both "$HERE/rec.policy" "$O/ufork"; }
case_hugelen() { echo "hugelen: mmap(NULL, (size_t)-1 MiB) (streaming policy; may also crash)"
	both "$P/streaming.policy" "$O/hugelen"; }
case_rawfixed() { echo "rawfixed: file mapped over a tracked region by a raw mmap syscall, unmapped, fresh mmap (recycle)"
	both "$HERE/rec.policy" "$O/rawfixed" "$T/data.bin"; }
case_shmremap() { echo "shmremap: shmat(SHM_REMAP) over a tracked region, unmapped, fresh mmap (recycle)"
	both "$HERE/rec.policy" "$O/shmremap"; }
case_uffd() { echo "uffd: userfaultfd-registered region unmapped, fresh mmap touched (recycle)"
	both "$HERE/rec.policy" "$O/uffd"; }
case_mlockrec() { echo "mlockrec: program-locked 1 MiB unmapped x4, then mlock 2 MiB under RLIMIT_MEMLOCK 2 MiB (recycle)"
	both "$HERE/rec.policy" $NOCAP "$O/mlockrec"; }
case_lockmove() { echo "lockmove: a shim-locked buffer grown by mremap (lock rule, RLIMIT_MEMLOCK 8 MiB)"
	both "$HERE/lock.policy" $NOCAP "$O/lockmove"; }
case_maplocked() { echo "maplocked: mmap(MAP_LOCKED) beside a shim-locked buffer (lock rule, RLIMIT_MEMLOCK 8 MiB)"
	both "$HERE/lock.policy" $NOCAP "$O/maplocked"; }
case_maplocked_dontneed() { echo "maplocked_dontneed: MADV_DONTNEED on a MAP_LOCKED buffer (lock rule)"
	both "$HERE/lock.policy" "$O/maplocked_dontneed"; }
case_mlockall_dontneed() { echo "mlockall_dontneed: mlockall(CURRENT|FUTURE), then MADV_DONTNEED (lock rule)"
	both "$HERE/lock.policy" "$O/mlockall_dontneed"; }
case_rtlock() { echo "rtlock: the real-time malloc recipe, mlockall, then free (lock rule on blocks)"
	both "$HERE/lockblk.policy" "$O/rtlock"; }
case_rtremap() { echo "rtremap: MADV_DONTNEED on part of a buffer, then mremap of all of it (realtime policy, as root)"
	both "$P/realtime.policy" "$O/rtremap"; }
case_bgrace() { echo "bgrace: private file mapping where a background job was (background, 2 workers)"
	both "$HERE/background.policy" "$O/bgrace" "$T/bg.dat"
	both "$HERE/background.policy" "$O/bgrace" "$T/bg.dat"; } # a race: a few in 200 here, sometimes none
case_bgrace2() { echo "bgrace2: shared file mapping only read, where a background job was (background, 2 workers)"
	both "$HERE/background.policy" "$O/bgrace2" "$T/bg2.dat"; }
case_sparse() { echo "sparse: 4 GiB table touched every 2 MiB over 1 GiB, in a 200 MiB cgroup (streaming policy)"
	printf '  without: '; cgroup $((200 << 20)) "$O/sparse" 2>&1 | tr '\n' ' '; echo "[exit ${PIPESTATUS[0]}]"
	printf '  with:    '; cgroup $((200 << 20)) env LD_PRELOAD="$S" PREFAULT_POLICY="$P/streaming.policy" PREFAULT_REPORT=none "$O/sparse" 2>&1 | tr '\n' ' '; echo "[exit ${PIPESTATUS[0]}]"; }
case_unmapped() { echo "unmapped: asking whether an unmapped range is gone (recycle)"
	both "$HERE/rec.policy" "$O/unmapped"; }
case_threads() { echo "threads: Threads: in /proc/self/status after a 128 MiB mmap (streaming policy)"
	both "$P/streaming.policy" "$O/threads"; }
case_wce() { echo "wce: Ctrl-C in an interactive shell loop of prefault run"; python3 "$HERE/wce.py" "$PF"; }
case_suspend() { echo "suspend: 'suspend' in a shell run under prefault run"; python3 "$HERE/susp.py" "$PF"; }
case_timeout() { echo "timeout: Python's Popen/communicate(timeout)/kill idiom"; python3 "$HERE/tmo2.py" "$PF"; }

ALL="seccomp sigfork ufork hugelen rawfixed shmremap uffd mlockrec lockmove maplocked maplocked_dontneed
mlockall_dontneed rtlock rtremap bgrace bgrace2 sparse unmapped threads wce suspend timeout"
for c in ${@:-$ALL}; do
	"case_$c"
done
