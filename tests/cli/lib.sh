# lib.sh - helpers for the end-to-end tests; source it from a test script.
#
# Each check prints "ok - WHAT" or "not ok - WHAT" (see tests/run-tests.sh).
# $TOP is the repository, $BCO the build-custom-op binary, $WORK a fresh
# directory removed when the script ends.  $BCO_RUNNER, when set, is put
# before the binary in run_bco (make check-valgrind sets it to valgrind).
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BCO=$TOP/build-custom-op
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bco-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
failures=0

# check_eq WHAT ACTUAL EXPECTED: the two strings are equal.
check_eq() {
	if [ "$2" = "$3" ]; then
		echo "ok - $1"
	else
		failures=$((failures + 1))
		echo "not ok - $1"
		printf '%s\n' "$3" | sed 's/^/# expected |/'
		printf '%s\n' "$2" | sed 's/^/# actual   |/'
	fi
}

# check_file WHAT FILE EXPECTED_FILE: the two files are byte-identical.
check_file() {
	if cmp -s "$2" "$3"; then
		echo "ok - $1"
	else
		failures=$((failures + 1))
		echo "not ok - $1"
		diff "$3" "$2" 2>&1 | sed 's/^/# /'
	fi
}

# check_true WHAT COMMAND...: the command succeeds.
check_true() {
	what=$1
	shift
	if "$@"; then
		echo "ok - $what"
	else
		failures=$((failures + 1))
		echo "not ok - $what"
		echo "# command failed: $*"
	fi
}

# run_bco ARGS...: runs the binary; sets $out, $err and $status.
run_bco() {
	${BCO_RUNNER:-} "$BCO" "$@" >"$WORK/.out" 2>"$WORK/.err"
	status=$?
	out=$(cat "$WORK/.out")
	err=$(cat "$WORK/.err")
}

# finish: the script's exit status.
finish() {
	[ "$failures" -eq 0 ]
}
