#!/bin/sh
# kselftest.sh BUILD: Linux's own memory selftests (built by
# tests/kselftest-build.sh into BUILD/kselftest/bin) without the shim, then
# under it in every mode: an empty policy (observe mode), each shipped policy
# in policies/, tests/aggressive.policy and tests/recycle-all.policy.  Each
# result is compared with the one without the shim: the exit status and, for
# tests that print them, each subtest's (ksft TAP lines, uffd-unit-tests'
# "Testing X on Y... done", protection_keys' "done").  A difference
# fails the run unless tests/kselftest.exceptions lists it, with why; an
# exception that no longer matches anything is named, so it can go.  A
# difference is looked at twice (the test run again with and without the
# shim): it counts only when both runs under the shim show it.
#
# The subset that runs, and why each other selftest does not, is the table
# below.  Runs as root (CI does): tests that need root skip their subtests
# otherwise, alike with and without the shim.  The hugetlb tests need
# reserved huge pages: KSELFTEST_HUGEPAGES of them (128, 256 MiB, by
# default; 0 for none, and the hugetlb tests are skipped) are reserved for
# the run and the previous count is put back, as are KSM's settings, which
# the KSM tests change.
#
# KSELFTEST_TESTS and KSELFTEST_MODES choose a subset by name (KSELFTEST_MODES=
# none: only the policies of KSELFTEST_POLICIES, files of one's own);
# KSELFTEST_TIMEOUT bounds each run (120 s); KSELFTEST_KEEP=DIR keeps every
# run's output there.
set -u
B=$(cd "${1:-build}" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$B/kselftest/bin
SHIM=$B/libprefault.so
EXCEPTIONS=$ROOT/tests/kselftest.exceptions
TIMEOUT=${KSELFTEST_TIMEOUT:-120}
HUGEPAGES=${KSELFTEST_HUGEPAGES:-128}

# NAME|COMMAND (in BIN)|NEEDS: "nobody" runs it as nobody, "hugetlb" needs
# reserved huge pages.  Each takes under 5 s without the shim here.
# on-fault-limit checks RLIMIT_MEMLOCK, which root is not held to.
# protection_keys as root resets nr_hugepages to 10 and draws at random
# among allocators, hugetlb among them, so it fails at random for want of a
# huge page; as nobody it leaves hugetlb alone.
TESTS='
cow|cow|
droppable|droppable|
gup_longterm|gup_longterm|
madv_populate|madv_populate|
map_fixed_noreplace|map_fixed_noreplace|
map_populate|map_populate|
mdwe_test|mdwe_test|
memfd_secret|memfd_secret|
mkdirty|mkdirty|
mlock-random-test|mlock-random-test|
mlock2-tests|mlock2-tests|
on-fault-limit|on-fault-limit|nobody
mrelease_test|mrelease_test|
mremap_dontunmap|mremap_dontunmap|
mremap_test|mremap_test|
mseal_test|mseal_test|
seal_elf|seal_elf|
pagemap_ioctl|pagemap_ioctl|
soft-dirty|soft-dirty|
uffd-unit-tests|uffd-unit-tests|
uffd-stress-anon|uffd-stress anon 20 16|
uffd-stress-shmem|uffd-stress shmem 20 16|
uffd-stress-shmem-private|uffd-stress shmem-private 20 16|
uffd-stress-hugetlb|uffd-stress hugetlb 64 32|hugetlb
uffd-stress-hugetlb-private|uffd-stress hugetlb-private 64 32|hugetlb
ksm_functional_tests|ksm_functional_tests|
ksm_tests-merge|ksm_tests -M -p 10|
ksm_tests-unmerge|ksm_tests -U|
ksm_tests-zero0|ksm_tests -Z -p 10 -z 0|
ksm_tests-zero1|ksm_tests -Z -p 10 -z 1|
ksm_tests-thp|ksm_tests -H -s 100|
ksm_tests-cow|ksm_tests -P -s 100|
protection_keys_64|protection_keys_64|nobody
pkey_sighandler_tests_64|pkey_sighandler_tests_64|
virtual_address_range|virtual_address_range|
hugepage-mmap|hugepage-mmap|hugetlb
hugepage-shm|hugepage-shm|hugetlb
map_hugetlb|map_hugetlb|hugetlb
hugepage-mremap|hugepage-mremap|hugetlb
hugepage-vmemmap|hugepage-vmemmap|hugetlb
hugetlb-madvise|hugetlb-madvise|hugetlb
hugetlb_dio|hugetlb_dio|hugetlb
thuge-gen|thuge-gen|hugetlb
'
# Not run, and why:
#   khugepaged: does not build from 6.12.117 (it uses KSFT_SKIP without
#     including kselftest.h); it also takes minutes and rewrites the THP
#     settings.
#   protection_keys_32, pkey_sighandler_tests_32: need a 32-bit toolchain,
#     and the shim is built for 64-bit programs only.
#   compaction_test: takes most of the machine's memory into huge pages and
#     rewrites nr_hugepages; fails here without the shim.
#   split_huge_page_test: needs an XFS image mounted through a loop device
#     (run_vmtests.sh makes one); fails here without it.
#   transhuge-stress: a stress loop that runs until it is killed: no result.
#   migration: needs two NUMA nodes (every subtest skips on one), and then
#     runs for minutes.
#   hmm-tests: needs the test_hmm kernel module.
#   gup_test: needs CONFIG_GUP_TEST's debugfs file (skips without it);
#     gup_longterm covers what it can without it.
#   va_high_addr_switch: needs 5-level page tables; fails here without the
#     shim.
#   hugetlb_fault_after_madv, hugetlb_madv_vs_map: need exactly one free
#     huge page (they skip with more), and race two threads for seconds.
#   hugetlb-read-hwpoison, hugetlb-soft-offline: inject memory failures into
#     the machine's pages.
#   write_to_hugetlbfs: a helper of charge_reserved_hugetlb.sh (a hugetlb
#     cgroup on a hugetlbfs mount), not a test.
#   ksm_tests -N: needs two NUMA nodes.

if [ ! -d "$BIN" ]; then
	echo "kselftest: no $BIN: run tests/kselftest-build.sh $B first" >&2
	exit 2
fi

# MODE|POLICY ("" for no shim).  "empty" is observe mode: no rules at all.
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
chmod 755 "$W"
: >"$W/empty.policy"
MODES="bare|
empty|$W/empty.policy
observe|$ROOT/policies/observe.policy
cpython|$ROOT/policies/cpython.policy
cpython-huge|$ROOT/policies/cpython-huge.policy
streaming|$ROOT/policies/streaming.policy
realtime|$ROOT/policies/realtime.policy
aggressive|$ROOT/tests/aggressive.policy
recycle|$ROOT/tests/recycle-all.policy"
# KSELFTEST_POLICIES: policy files of one's own, each one more mode named
# after its file.
for p in ${KSELFTEST_POLICIES:-}; do
	[ -r "$p" ] || { echo "kselftest: cannot read $p" >&2; exit 2; }
	MODES="$MODES
$(basename "$p" .policy)|$(cd "$(dirname "$p")" && pwd)/$(basename "$p")"
	[ -z "${KSELFTEST_MODES:-}" ] || KSELFTEST_MODES="$KSELFTEST_MODES $(basename "$p" .policy)"
done
for p in "$ROOT"/policies/*.policy; do
	n=$(basename "$p" .policy)
	echo "$MODES" | grep -q "^$n|" || { echo "kselftest: shipped policy $n has no mode here" >&2; exit 1; }
done

# Machine-wide settings some tests change: put back at exit.
KSM=/sys/kernel/mm/ksm
NRHP=/proc/sys/vm/nr_hugepages
saved_hp=$(cat $NRHP 2>/dev/null)
saved_ksm=
for f in run use_zero_pages pages_to_scan sleep_millisecs max_page_sharing merge_across_nodes; do
	[ -w "$KSM/$f" ] && saved_ksm="$saved_ksm $f=$(cat "$KSM/$f")"
done
restore() {
	# KSM's run must be 2 (unmerge) or 0 before merge_across_nodes changes.
	[ -w "$KSM/run" ] && echo 2 >"$KSM/run" 2>/dev/null
	for kv in $saved_ksm; do
		[ "${kv%%=*}" = run ] || echo "${kv#*=}" >"$KSM/${kv%%=*}" 2>/dev/null
	done
	for kv in $saved_ksm; do
		[ "${kv%%=*}" = run ] && echo "${kv#*=}" >"$KSM/run" 2>/dev/null
	done
	[ -n "$saved_hp" ] && [ "$(cat $NRHP)" != "$saved_hp" ] && echo "$saved_hp" >$NRHP 2>/dev/null
	rm -rf "$W"
}
trap restore EXIT
trap 'exit 130' INT TERM

have_hugetlb=0
if [ "$HUGEPAGES" -gt 0 ] && [ -w $NRHP ]; then
	[ "$saved_hp" -ge "$HUGEPAGES" ] || echo "$HUGEPAGES" >$NRHP 2>/dev/null
	free=$(awk '/^HugePages_Free/ {print $2}' /proc/meminfo)
	[ "${free:-0}" -ge "$HUGEPAGES" ] && have_hugetlb=1
fi
[ $have_hugetlb = 1 ] || echo "kselftest: no $HUGEPAGES free huge pages (KSELFTEST_HUGEPAGES, root): hugetlb tests skipped"

# For tests run as nobody: the shim and the program from a directory
# anyone may read (the build may be under a private home).
mkdir -p "$W/pub"
cp "$SHIM" "$W/pub/libprefault.so"
chmod 755 "$W/pub" && chmod 644 "$W/pub/libprefault.so"

# results LOG STATUS: one "KEY<TAB>RESULT<TAB>LABEL" line per subtest, then
# "exit".  A TAP subtest's key is its number (its description may carry
# figures that change from run to run: "Extra pages 5", "reaping a child with
# 2MB"), and the label is "N description".  A key seen twice (a forked
# child's lines) gets "#2", "#3".
results() {
	awk -v status="$2" '
	function put(k, r, l) { n = ++seen[k]; if (n > 1) k = k "#" n; print k "\t" r "\t" l }
	/^(not )?ok [0-9]+/ {
		r = ($1 == "not") ? "fail" : "ok"
		s = $0; sub(/^(not )?ok /, "", s)
		d = ""
		if (match(s, / ?# /)) { d = toupper(substr(s, RSTART + RLENGTH)); s = substr(s, 1, RSTART - 1) }
		if (d ~ /^SKIP/) r = "skip"; else if (d ~ /^XFAIL/) r = "xfail"
		k = s; sub(/ .*/, "", k)
		put(k, r, s); next
	}
	/^1\.\.0 # SKIP/ { put("plan", "skip", "plan"); next }
	/^Testing .*\.\.\. / {
		s = $0; sub(/^Testing /, "", s); r = s
		sub(/\.\.\. .*/, "", s); sub(/.*\.\.\. /, "", r); sub(/[: ].*/, "", r)
		put("Testing " s, r, "Testing " s); next
	}
	# protection_keys goes on in a forked child after its first process
	# exits 0, and says "done" at the end or stops at its first failed
	# assertion.  Its "test N PASSED" lines are no use: parent and children
	# write them at once, and lines come out cut and mixed.
	/^done \(all tests OK\)/ { if (!("done" in seen)) { seen["done"] = 1; print "done\tok\tdone (all tests OK)" } next }
	END { print "exit\t" status "\texit" }' "$1"
}

# run NAME MODE POLICY NEEDS CMD...: one run, into $W/NAME.MODE.{log,res}.
# The output goes through a pipe, read to its end: so the run lasts until
# every process the test started is gone (protection_keys goes on in a
# forked child after its first process exits 0), as it would on a terminal.
# timeout starts it in a process group of its own and kills the group at
# the deadline; what the test left in the group is killed after it.
run() {
	rn=$1 rm=$2 rp=$3 rneeds=$4
	shift 4
	prog=$BIN/$1 shim=$SHIM
	[ "$rneeds" = nobody ] && prog=$W/pub/$1 shim=$W/pub/libprefault.so
	shift
	set -- "$prog" "$@"
	[ -n "$rp" ] && set -- env LD_PRELOAD="$shim" PREFAULT_POLICY="$rp" PREFAULT_REPORT=none "$@"
	[ "$rneeds" = nobody ] && set -- setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all "$@"
	mkdir -p "$W/cwd" && cd "$W/cwd" || exit 1
	: >"$W/status"
	timeout -k 5 "$TIMEOUT" sh -c '{ "$@"; echo $? >"$0"; } 2>&1 </dev/null | cat' "$W/status" "$@" \
		>"$W/$rn.$rm.log" 2>&1 &
	group=$!
	wait $group
	rc=$?
	[ -s "$W/status" ] && rc=$(cat "$W/status")
	kill -KILL -- -$group 2>/dev/null
	cd "$ROOT" || exit 1
	case $rc in
	124 | 137) st=timeout ;;
	12[89] | 1[3-9][0-9] | 2[0-9][0-9]) st="signal $((rc - 128))" ;;
	*) st=$rc ;;
	esac
	results "$W/$rn.$rm.log" "$st" >"$W/$rn.$rm.res"
}

# differ NAME MODE: "KEY<TAB>LABEL<TAB>BARE<TAB>SHIM" for each subtest whose
# result under the shim is none of those seen without it (or that only one
# side has); the label is the bare run's, if it has the subtest.  A second
# run without the shim (bare2, made when a first difference shows) adds what
# the test does on its own from run to run (mremap_test's "40MB Preamble"
# fails now and then: its fixed address may be taken).
differ() {
	set -- "$W/$1.bare.res" "$W/$1.$2.res" "$W/$1.bare2.res" "$2"
	if [ "$4" != bare2 ] && [ -f "$3" ]; then set -- "$1" "$3" "$2"; else set -- "$1" "$2"; fi
	awk -F '\t' -v nb=$(($# - 1)) 'FNR == 1 { f++ }
	f <= nb {
		if (!($1 in a)) { k[++n] = $1; l[$1] = $3; a[$1] = $2 }
		else if (index("|" a[$1] "|", "|" $2 "|") == 0) a[$1] = a[$1] "|" $2
		next
	}
	{ b[$1] = $2; if (!($1 in a)) { k[++n] = $1; l[$1] = $3 } }
	END {
		for (i = 1; i <= n; i++) {
			x = (k[i] in a) ? a[k[i]] : "missing"; y = (k[i] in b) ? b[k[i]] : "missing"
			if (index("|" x "|", "|" y "|") == 0) print k[i] "\t" l[k[i]] "\t" x "\t" y
		}
	}' "$@"
}

# The exceptions file: TEST | MODES | SUBTEST | WHY (TEST and SUBTEST are
# globs, SUBTEST matched against the label; MODES separated by spaces, or *).
# rules NAME MODE: the SUBTEST patterns that apply, as "LINE<TAB>REGEX".
rules() {
	awk -v test="$1" -v mode="$2" '
	function re(g) { gsub(/[][\\.^$+(){}|\/]/, "\\\\&", g); gsub(/\*/, ".*", g); gsub(/\?/, ".", g); return "^" g "$" }
	function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
	/^[ \t]*(#|$)/ { next }
	{
		if (split($0, f, "|") < 4) { print "tests/kselftest.exceptions:" FNR ": want TEST | MODES | SUBTEST | WHY" > "/dev/stderr"; next }
		if (test !~ re(trim(f[1]))) next
		m = " " trim(f[2]) " "
		if (m == " * " || index(m, " " mode " ")) print FNR "\t" re(trim(f[3]))
	}' "$EXCEPTIONS"
}

# notrun NAME MODE: an exception with SUBTEST "-" keeps the test from
# running in that mode at all (it would take the machine's memory, or hang).
notrun() {
	l=$(rules "$1" "$2" | awk -F '\t' '$2 == "^-$" { print $1; exit }')
	[ -n "$l" ] && echo "$l" >>"$W/used" && echo "$l"
}

# excepted NAME MODE: reads differ's lines and marks each "listed:LINE" or
# "NEW".  A changed exit status is explained when a listed subtest failed
# under the shim and it exited with an ordinary failure status (a signal or
# a hang must be listed as "exit").
excepted() {
	rules "$1" "$2" >"$W/rules"
	awk -F '\t' -v used="$W/used" -v rules="$W/rules" '
	BEGIN { while ((getline l < rules) > 0) { split(l, f, "\t"); n++; at[n] = f[1]; pat[n] = f[2] } }
	{ d[++nd] = $0; label[nd] = $2; shim[nd] = $4 }
	$1 == "exit" { exitline = nd; next }
	{
		for (i = 1; i <= n; i++) if ($2 ~ pat[i]) { hit[nd] = at[i]; print at[i] >> used; break }
		if (hit[nd] && shim[nd] ~ /^(fail|failed|ERROR|missing)$/) failed = 1
	}
	END {
		if (exitline) {
			for (i = 1; i <= n; i++) if ("exit" ~ pat[i]) { hit[exitline] = at[i]; print at[i] >> used; break }
			if (!hit[exitline] && failed && shim[exitline] ~ /^[0-9]+$/ && shim[exitline] != 0) hit[exitline] = "implied"
		}
		for (i = 1; i <= nd; i++) print (hit[i] ? "listed:" hit[i] : "NEW") "\t" d[i]
	}'
}

selected() { [ -z "$2" ] || echo " $2 " | tr ',' ' ' | grep -q " $1 "; }

: >"$W/used"
: >"$W/tally"
start=$(date +%s)
echo "kselftest: $(ls "$BIN" | wc -l) selftests built; running the subset below without the shim and in $(echo "$MODES" | grep -c '|.') modes"
echo "$TESTS" | while IFS='|' read -r name cmd needs; do
	[ -n "$name" ] || continue
	selected "$name" "${KSELFTEST_TESTS:-}" || continue
	set -- $cmd
	if [ ! -x "$BIN/$1" ]; then
		echo "kselftest: $name: not built (see $B/kselftest/not-built)"
		continue
	fi
	if [ "$needs" = hugetlb ] && [ $have_hugetlb = 0 ]; then
		echo "kselftest: $name: skipped (no huge pages reserved)"
		continue
	fi
	if [ "$needs" = nobody ]; then
		cp "$BIN/$1" "$W/pub/" && chmod 755 "$W/pub/$1" || exit 1
	fi
	t0=$(date +%s)
	same='' listed='' skipped=''
	# Not a pipe: the loop's verdicts are needed after it.
	echo "$MODES" >"$W/modes"
	while IFS='|' read -r mode pol; do
		[ "$mode" = bare ] || selected "$mode" "${KSELFTEST_MODES:-}" || continue
		if [ "$mode" != bare ] && l=$(notrun "$name" "$mode"); then
			skipped="$skipped $mode (line $l)"
			continue
		fi
		# A test may have changed the count (protection_keys sets its own).
		[ "$needs" = hugetlb ] && [ "$(cat $NRHP)" -lt "$HUGEPAGES" ] && echo "$HUGEPAGES" >$NRHP
		run "$name" "$mode" "$pol" "$needs" $cmd
		[ "$mode" = bare ] && continue
		differ "$name" "$mode" | excepted "$name" "$mode" >"$W/$name.$mode.diff"
		# A difference gets a second look: one more run without the shim
		# (once per test), whose results count as the same too, and one
		# more under the shim; it counts where both runs under the shim show
		# it.  A difference that shows once is printed, not counted: some
		# tests vary on their own (mremap_test's fixed addresses,
		# uffd-stress's address hints, now and then).
		if grep -q '^NEW' "$W/$name.$mode.diff" && [ ! -f "$W/$name.bare2.res" ]; then
			run "$name" bare2 "" "$needs" $cmd
			varies=$(differ "$name" bare2 | cut -f 2 | tr '\n' ',' | sed 's/,$//; s/,/, /g')
			[ -z "$varies" ] || echo "kselftest: $name: varies without the shim from run to run (both results count as the same): $varies"
			differ "$name" "$mode" | excepted "$name" "$mode" >"$W/$name.$mode.diff"
		fi
		if grep -q '^NEW' "$W/$name.$mode.diff"; then
			grep '^NEW' "$W/$name.$mode.diff" | cut -f 2 | sort >"$W/once1"
			mv "$W/$name.$mode.log" "$W/$name.$mode.log1"
			run "$name" "$mode" "$pol" "$needs" $cmd
			differ "$name" "$mode" | excepted "$name" "$mode" >"$W/$name.$mode.diff"
			grep '^NEW' "$W/$name.$mode.diff" | cut -f 2 | sort >"$W/once2"
			once=$(comm -3 "$W/once1" "$W/once2" | tr -d '\t' | tr '\n' ',' | sed 's/,$//; s/,/, /g')
			[ -z "$once" ] || echo "kselftest: $name under $mode: differed in one run of two, not counted: $once"
			comm -12 "$W/once1" "$W/once2" >"$W/both"
			awk -F '\t' -v OFS='\t' -v both="$W/both" 'BEGIN { while ((getline k < both) > 0) b[k] = 1 }
				$1 == "NEW" && !($2 in b) { $1 = "once" } { print }' "$W/$name.$mode.diff" >"$W/diff2" &&
				mv "$W/diff2" "$W/$name.$mode.diff"
		fi
		if grep -q '^NEW' "$W/$name.$mode.diff"; then
			echo "kselftest: $name under $mode: DIFFERS from the run without the shim (not in tests/kselftest.exceptions):" >&2
			grep '^NEW' "$W/$name.$mode.diff" | head -n 20 |
				awk -F '\t' '{ printf "    %s: %s without the shim, %s with it\n", $3, $4, $5 }' >&2
			grep -Ev '^(not )?ok |^Testing |^test +[0-9]+ PASSED' "$W/$name.$mode.log" | tail -n 8 | sed 's/^/    | /' >&2
			echo fail >>"$W/tally"
		elif grep -q '^listed' "$W/$name.$mode.diff"; then
			listed="$listed $mode ($(grep -c '^listed' "$W/$name.$mode.diff"))"
			echo pass >>"$W/tally"
		else
			same="$same $mode"
			echo pass >>"$W/tally"
		fi
	done <"$W/modes"
	bare=$(tail -n 1 "$W/$name.bare.res" | cut -f 2)
	subs=$(($(wc -l <"$W/$name.bare.res") - 1))
	echo "kselftest: $name: exit $bare, $subs subtests without the shim, $(($(date +%s) - t0)) s in all;" \
		"same under:${same:- none}${listed:+; listed differences under:$listed}${skipped:+; not run under:$skipped}"
	if [ -n "${KSELFTEST_KEEP:-}" ]; then
		mkdir -p "$KSELFTEST_KEEP" && cp "$W/$name".* "$KSELFTEST_KEEP/"
	fi
done

# Exceptions that matched nothing in this run, for tests and modes that ran.
awk -F '|' -v used="$W/used" -v w="$W" '
	function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
	BEGIN { while ((getline l < used) > 0) u[l] = 1 }
	/^[ \t]*(#|$)/ || $4 ~ /\(sometimes\)/ { next }
	!(FNR in u) {
		t = trim($1); nm = split(trim($2), m, " ")
		for (i = 1; i <= nm; i++) {
			if ((getline x < (w "/" t "." (m[i] == "*" ? "bare" : m[i]) ".res")) > 0) {
				printf "kselftest: tests/kselftest.exceptions:%d matched nothing in this run (fixed? then remove it): %s | %s | %s\n", FNR, t, trim($2), trim($3)
				break
			}
		}
	}' "$EXCEPTIONS"

pass=$(grep -c pass "$W/tally")
fail=$(grep -c fail "$W/tally")
echo "kselftest: $(($(date +%s) - start)) s; a run under the shim passes when it matched the run without it, or differed only as listed"
echo "kselftest: $pass passed, $fail failed"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
