# helpers.bash: shared set-up for the bats suite.
# PREFAULT_BUILD points at the build to test (make test sets it), so the same
# tests run against sanitizer builds.
bats_require_minimum_version 1.5.0

B="${PREFAULT_BUILD:-$BATS_TEST_DIRNAME/../build}"
SHIM="$B/libprefault.so"
PF="$B/prefault"
PROBE="$B/probes/pfprobe"
STACKLIB="$B/probes/libstack.so"
POLICIES="$BATS_TEST_DIRNAME/../policies"
PY=/usr/bin/python3

# Where transparent huge pages are "always" (RHEL's default), the kernel
# backs a probe's plain mappings with huge pages by itself, and the tests
# that count small-page faults would count 32 where they mean 16384: pfprobe
# disables THP for itself (PR_SET_THP_DISABLE).  Whatever the mode now: it
# can change while the suite runs (a test of "always" on a shared machine).
# Files about huge pages unset this (they need THP; what they count is huge
# pages).
thp_mode() { sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null; }
needs_thp_madvise() { [ "$(thp_mode)" = madvise ] || skip "THP is not in madvise mode here"; }
export PFPROBE_SMALL_PAGES=1

# Sanitized builds (make test-sanitize): the sanitizer's runtime must be
# loaded first, so it is initialised before any instrumented code runs; ASan
# and TSan then serve malloc from their own allocators, so tests of the
# malloc-family wrappers skip themselves there (the UBSan run covers them).
SAN_RT=
case "${PREFAULT_SANITIZER:-}" in
address*) SAN_RT=$(gcc -print-file-name=libasan.so) ;;
thread) SAN_RT=$(gcc -print-file-name=libtsan.so) ;;
esac
SHIM_LD="${SAN_RT:+$SAN_RT:}$SHIM"
# ASan and TSan also stub out mlock, map shadow memory (peak RSS), and cannot
# be preloaded into a copied set-user-ID library: such tests need a plain build.
# Instruction counts (callgrind) are the plain build's: a sanitizer's
# instrumentation adds its own.
needs_plain_build() {
	if [ -n "${PREFAULT_SANITIZER:-}" ]; then
		skip "instructions of the $PREFAULT_SANITIZER build are not the plain build's"
	fi
}
needs_plain_runtime() {
	if [ -n "$SAN_RT" ]; then
		skip "the $PREFAULT_SANITIZER runtime changes what this test observes"
	fi
}
# ThreadSanitizer stands in front of the shim: its interceptors make the mmap
# calls (hiding the real caller), it turns vfork into fork, starts threads its
# own way (our stack trampoline would run before it has set the thread up),
# and faults in its shadow memory in the program's name.
needs_no_tsan() {
	if [ "${PREFAULT_SANITIZER:-}" = thread ]; then
		skip "ThreadSanitizer changes what this test observes"
	fi
}
needs_own_malloc() {
	if [ -n "$SAN_RT" ]; then
		skip "the $PREFAULT_SANITIZER runtime serves malloc itself"
	fi
}

# policy NAME: write stdin to $BATS_TEST_TMPDIR/NAME.policy and print the path
policy() {
	local f="$BATS_TEST_TMPDIR/$1.policy"
	cat >"$f"
	echo "$f"
}

# shimmed POLICY CMD...: run CMD under the shim with POLICY (may be ""),
# report as $REPORT (default none)
shimmed() {
	local pol="$1"
	shift
	LD_PRELOAD="$SHIM_LD${LD_PRELOAD:+:$LD_PRELOAD}" PREFAULT_POLICY="$pol" PREFAULT_REPORT="${REPORT:-none}" "$@"
}

# arena_policy ACTIONS [GLOBAL-LINES] [RULE-LINES]: a policy whose one rule,
# "arenas", takes anonymous private mmaps of 256 KiB to 1 MiB (CPython's
# arenas, old and new) with ACTIONS
arena_policy() {
	policy arenas <<-EOF
	[global]
	${2:-}
	[rule arenas]
	call = mmap
	size = 256K..1M
	map = anon private
	action = $1
	${3:-}
	EOF
}

# arena_stat FILE SECTION FIELD: a figure of the arenas rule's SECTION
# (recycle, carve) in the JSON report FILE
arena_stat() { rule_stat "$1" arenas "$2" "$3"; }

# kv KEY TEXT: the value of KEY=value in TEXT
kv() {
	sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" <<<"$2" | head -n 1
}

# jget FILE EXPR: evaluate a Python expression over the JSON document d
jget() {
	"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# rule_stat FILE RULE FIELD, or FILE RULE SECTION FIELD: a figure of the rule
# RULE in the JSON report FILE (SECTION: recycle, carve, hugepage_check, ...)
rule_stat() {
	jget "$1" "[r for r in d['rules'] if r['name']=='$2'][0]['$3']${4:+['$4']}"
}

# A policy that populates every anonymous mapping and block of 1 MiB or more.
populate_all() {
	policy populate-all <<-'EOF'
	[rule big]
	size = >=1M
	map = anon private
	action = populate
	EOF
}

# on_tty CMD...: run CMD with its stderr on a terminal (a pseudo-terminal,
# 250 columns wide), and print what it wrote there; stdout stays ours.
on_tty() {
	"$PY" -c '
import fcntl, os, struct, subprocess, sys, termios
m, s = os.openpty()
fcntl.ioctl(s, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 250, 0, 0))
p = subprocess.Popen(sys.argv[1:], stderr=s, stdin=subprocess.DEVNULL)
os.close(s)
out = b""
while True:
    try:
        d = os.read(m, 65536)
    except OSError:
        break
    if not d:
        break
    out += d
p.wait()
sys.stdout.write(out.decode("utf-8", "replace"))
sys.exit(p.returncode)' "$@"
}

# in_small_cgroup LIMIT CMD...: run CMD in a new memory cgroup limited to
# LIMIT bytes (cgroup v1 or v2); returns 99 when cgroups cannot be made here.
in_small_cgroup() {
	local limit=$1 base cg v
	shift
	if base=$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup) && [ -n "$base" ] && [ -w "/sys/fs/cgroup/memory$base" ]; then
		cg="/sys/fs/cgroup/memory$base/prefault-bats-$$"
		mkdir "$cg" || return 99
		echo "$limit" >"$cg/memory.limit_in_bytes" || { rmdir "$cg"; return 99; }
	elif base=$(sed -n 's/^0:://p' /proc/self/cgroup) && grep -qw memory "/sys/fs/cgroup$base/cgroup.subtree_control" 2>/dev/null; then
		cg="/sys/fs/cgroup$base/prefault-bats-$$"
		mkdir "$cg" || return 99
		echo "$limit" >"$cg/memory.max" || { rmdir "$cg"; return 99; }
	else
		return 99
	fi
	sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$@"
	v=$?
	rmdir "$cg" 2>/dev/null || true
	return $v
}
