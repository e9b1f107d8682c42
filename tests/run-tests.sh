#!/bin/sh
# run-tests.sh - runs each test program given as an argument and totals them.
#
# A test program prints one line per check: "ok - WHAT" or "not ok - WHAT"
# (details may follow on lines starting with "#").  A check that could not
# run prints "ok - WHAT # skip WHY" (the TAP form; SKIP in any case): it is
# counted as skipped, not passed, and WHY should say what to install.  A
# program that exits non-zero without reporting a failed check counts as one
# failed check, so a crash is never a pass; so does one that exits 0 without
# reporting any check, so a script that silently did nothing is never a pass.
# The last line is "N passed, N failed, N skipped".  Under CI=true a skip is
# also a failure: CI installs everything every test needs.
# PYTHON_TEST_ENV holds VAR=VALUE words for the Python tests (make check-asan).
passed=0
failed=0
skipped=0
log=${TMPDIR:-/tmp}/run-tests.$$
trap 'rm -f "$log"' EXIT INT TERM
skip_pattern='^ok .*# *[Ss][Kk][Ii][Pp]'
for test in "$@"; do
	case $test in
	*.sh) sh "$test" >"$log" 2>&1 ;;
	*.py) env ${PYTHON_TEST_ENV:-} python3 "$test" >"$log" 2>&1 ;;
	*) "$test" >"$log" 2>&1 ;;
	esac
	status=$?
	skip=$(grep -c "$skip_pattern" "$log")
	ok=$(($(grep -c '^ok ' "$log") - skip))
	bad=$(grep -c '^not ok ' "$log")
	if [ "$status" -ne 0 ] && [ "$bad" -eq 0 ]; then
		echo "not ok - $test exited with status $status" >>"$log"
		bad=1
	elif [ "$status" -eq 0 ] && [ $((ok + bad + skip)) -eq 0 ]; then
		echo "not ok - $test exited 0 but reported no check" >>"$log"
		bad=1
	fi
	if [ "${CI:-}" = true ] && [ "$skip" -ne 0 ]; then
		echo "not ok - $test skipped $skip checks, and under CI=true nothing may be skipped" >>"$log"
		bad=$((bad + 1))
	fi
	if [ "$bad" -ne 0 ]; then
		echo "FAIL $test ($ok passed, $bad failed, $skip skipped)"
		grep -v '^ok ' "$log" | sed 's/^/    /'
		grep "$skip_pattern" "$log" | sed 's/^/    /'
	elif [ "$skip" -ne 0 ]; then
		echo "PASS $test ($ok checks, $skip skipped)"
		grep "$skip_pattern" "$log" | sed 's/^/    /'
	else
		echo "PASS $test ($ok checks)"
	fi
	passed=$((passed + ok))
	failed=$((failed + bad))
	skipped=$((skipped + skip))
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
