#!/bin/sh
# sanitize.sh BUILD KIND: the bats suite against a sanitized build of the
# shim (KIND: undefined, address or thread).  Sanitizer reports go to files;
# any file at the end fails the run, whatever the tests said.
set -u
B=$(cd "$1" && pwd)
KIND=$2
LOGS=$(mktemp -d)
export PREFAULT_BUILD="$B" PREFAULT_SANITIZER="$KIND"
case $KIND in
address) RT=$(gcc -print-file-name=libasan.so) ;;
thread) RT=$(gcc -print-file-name=libtsan.so) ;;
*) RT= ;;
esac
# The CLI preloads whatever PREFAULT_SHIM says: the runtime first, then the shim.
export PREFAULT_SHIM="${RT:+$RT:}$B/libprefault.so"
export ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1:log_path=$LOGS/asan:verify_asan_link_order=0"
export UBSAN_OPTIONS="print_stacktrace=1:log_path=$LOGS/ubsan"
# report_thread_leaks=0: in a child forked from a threaded parent TSan takes
# the parent's threads for leaked ones at _exit, and symbolizing that report
# unmaps through the (instrumented) shim, which re-enters TSan's report lock:
# the child hangs (tests/hangs.bats' forkbudget).
export TSAN_OPTIONS="log_path=$LOGS/tsan:die_after_fork=0:report_signal_unsafe=0:second_deadlock_stack=1:allocator_may_return_null=1:report_thread_leaks=0"
bats ${SAN_BATS:-tests}
status=$?
# The errno probe asks for absurd allocations on purpose; with
# allocator_may_return_null the runtime answers NULL (as libc does) but still
# logs a warning line.  Those lines alone are not findings.
for f in "$LOGS"/*; do
	[ -e "$f" ] || continue
	if grep -qv 'Sanitizer failed to allocate 0x' "$f"; then
		echo "sanitize.sh: $KIND report $f:" >&2
		head -n 60 "$f" >&2
		status=1
	fi
done
rm -rf "$LOGS"
exit $status
