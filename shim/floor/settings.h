/* settings.h: every PREFAULT_* variable the shim reads, described once and
 * read once, at start-up (init.c), into one record that init.c hands down
 * through the modules' *_setup calls (mimalloc's options.c).  No module
 * reads the environment itself.
 *
 * A variable marked test-only exists for the tests and benchmarks: it is
 * documented here, not in the README. */
#ifndef PREFAULT_SETTINGS_H
#define PREFAULT_SETTINGS_H

enum { SET_STR, SET_FLAG }; /* a string (NULL: unset or empty), or set at all */

/* field, variable, kind, test-only, what it is */
#define PF_SETTINGS(X)                                                                               \
	X(policy, "PREFAULT_POLICY", SET_STR, 0, "the policy file (unset: observe only)")            \
	X(report, "PREFAULT_REPORT", SET_STR, 0, "where the report goes: stderr, none or a path")     \
	X(report_quiet, "PREFAULT_REPORT_QUIET", SET_FLAG, 0, "the tool collects: never warn")       \
	X(report_fd, "PREFAULT_REPORT_FD", SET_STR, 0, "the tool's socket, for reports that cannot be files") \
	X(auto_budget, "PREFAULT_AUTO_BUDGET", SET_STR, 0, "auto: what the learner may hold, N% of the program's peak and/or a size (10%,256M)") \
	X(profile, "PREFAULT_PROFILE", SET_STR, 0, "profile into this path template")                \
	X(profile_period, "PREFAULT_PROFILE_PERIOD", SET_STR, 0, "sample every N faults")            \
	X(bg_strategy, "PREFAULT_BG_STRATEGY", SET_STR, 1, "trail: the old background walk (benchmarks)") \
	X(test_no_populate, "PREFAULT_TEST_NO_POPULATE", SET_FLAG, 1, "take the pre-5.14 fallback") \
	X(test_no_perf, "PREFAULT_TEST_NO_PERF", SET_FLAG, 1, "take the path where perf_event_open is refused") \
	X(test_no_reader, "PREFAULT_TEST_NO_READER", SET_FLAG, 1, "start no reader thread: the rings are read only at exit, and a full one drops samples") \
	X(test_hpage, "PREFAULT_TEST_HPAGE_SIZE", SET_STR, 1, "the huge page size carve goes by, in bytes (a size the request does not divide)") \
	X(test_carve_slots, "PREFAULT_TEST_CARVE_SLOTS", SET_STR, 1, "carve: the reserves table's size, fewer than its own (reserves past it left out of the report, soon)") \
	X(test_huge, "PREFAULT_TEST_HUGE", SET_STR, 1, "huge, small or huge-then-small: what a check of huge pages against small finds") \
	X(test_locked_signal, "PREFAULT_TEST_LOCKED_SIGNAL", SET_STR, 1, "profile: raise this signal once, in the first munmap, while the live ranges' lock is held")

struct settings {
#define PF_SETTING_FIELD(field, var, kind, test, what) const char *field;
	PF_SETTINGS(PF_SETTING_FIELD)
#undef PF_SETTING_FIELD
};

/* Read them all (a flag reads as "1" when set, NULL when not). */
void settings_read(struct settings *s);
#endif
