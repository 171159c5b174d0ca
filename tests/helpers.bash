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
	LD_PRELOAD="$SHIM${LD_PRELOAD:+:$LD_PRELOAD}" PREFAULT_POLICY="$pol" PREFAULT_REPORT="${REPORT:-none}" "$@"
}

# kv KEY TEXT: the value of KEY=value in TEXT
kv() {
	sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" <<<"$2" | head -n 1
}

# jget FILE EXPR: evaluate a Python expression over the JSON document d
jget() {
	"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# rule_stat FILE RULE FIELD
rule_stat() {
	jget "$1" "[r for r in d['rules'] if r['name']=='$2'][0]['$3']"
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
