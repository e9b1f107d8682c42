#!/bin/sh
# run-tests.sh - runs each test program given as an argument and totals them.
#
# A test program prints one line per check: "ok - WHAT" or "not ok - WHAT"
# (details may follow on lines starting with "#").  A program that exits
# non-zero without reporting a failed check counts as one failed check, so a
# crash is never a pass.  The last line is "N passed, N failed".
# PYTHON_TEST_ENV holds VAR=VALUE words for the Python tests (make check-asan).
passed=0
failed=0
log=${TMPDIR:-/tmp}/run-tests.$$
trap 'rm -f "$log"' EXIT INT TERM
for test in "$@"; do
	case $test in
	*.sh) sh "$test" >"$log" 2>&1 ;;
	*.py) env ${PYTHON_TEST_ENV:-} python3 "$test" >"$log" 2>&1 ;;
	*) "$test" >"$log" 2>&1 ;;
	esac
	status=$?
	ok=$(grep -c '^ok ' "$log")
	bad=$(grep -c '^not ok ' "$log")
	if [ "$status" -ne 0 ] && [ "$bad" -eq 0 ]; then
		echo "not ok - $test exited with status $status" >>"$log"
		bad=1
	fi
	if [ "$bad" -ne 0 ]; then
		echo "FAIL $test ($ok passed, $bad failed)"
		grep -v '^ok ' "$log" | sed 's/^/    /'
	else
		echo "PASS $test ($ok checks)"
	fi
	passed=$((passed + ok))
	failed=$((failed + bad))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
