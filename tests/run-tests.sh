#!/bin/sh
# run-tests.sh - runs the test programs given as arguments, several at a
# time, and totals them.
#
# A test program prints one line per check: "ok - WHAT" or "not ok - WHAT"
# (details may follow on lines starting with "#").  A check that could not
# run prints "ok - WHAT # skip WHY" (the TAP form; SKIP in any case): it is
# counted as skipped, not passed, and WHY should say what to install.  A
# program that exits non-zero without reporting a failed check counts as one
# failed check, so a crash is never a pass; so does one that exits 0 without
# reporting any check, so a script that silently did nothing is never a pass;
# so does one still running when its time limit passes (it is killed).
# Under CI=true a skip is also a failure: CI installs everything every test
# needs.
#
# The programs run TEST_JOBS at a time (default: the number of CPUs), the
# slowest of the last run first; each program's result is printed in the
# order of the arguments, as soon as it and those before it have ended.
# Each program's duration goes to TEST_TIMES (default build/test-times.txt),
# one "SECONDS NAME" line per program (the lines of programs this run did not
# run are kept), and the five slowest are listed
# before the last line, "N passed, N failed, N skipped".
#
# TEST_TIMEOUT: each program's time limit in seconds (default 900).
# PYTHON_TEST_ENV holds VAR=VALUE words for the Python tests (make check-asan).
jobs=${TEST_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
time_limit=${TEST_TIMEOUT:-900}
times=${TEST_TIMES:-build/test-times.txt}
case $jobs in '' | *[!0-9]* | 0) jobs=2 ;; esac
case $time_limit in '' | *[!0-9]*) time_limit=900 ;; esac
skip_pattern='^ok .*# *[Ss][Kk][Ii][Pp]'

work=$(mktemp -d "${TMPDIR:-/tmp}/run-tests.XXXXXX") || exit 1
# On an interrupt, the programs still running are stopped with it.
stop() {
	for pid_file in "$work"/*.pid; do
		[ -f "$pid_file" ] && kill "$(cat "$pid_file")" 2>/dev/null
	done
	rm -rf "$work"
	trap - EXIT
	exit 130
}
trap 'rm -rf "$work"' EXIT
trap stop INT TERM HUP

now() {
	date +%s.%N
}

# Runs program number $1 ($2), in the background of the caller: its output
# in $work/$1.log, then its exit status and duration in $work/$1.done.
start() {
	(
		began=$(now)
		case $2 in
		*.sh) set -- "$1" sh "$2" ;;
		*.py) set -- "$1" env ${PYTHON_TEST_ENV:-} python3 "$2" ;;
		*) set -- "$1" "$2" ;;
		esac
		number=$1
		shift
		timeout -k 10 "$time_limit" "$@" >"$work/$number.log" 2>&1 </dev/null
		status=$?
		echo "$status $(now) $began" >"$work/$number.tmp"
		mv "$work/$number.tmp" "$work/$number.done"
	) &
	echo $! >"$work/$1.pid"
}

# The programs, numbered in argument order, listed slowest first by the
# durations of the last run (unknown ones first, in argument order).
count=0
for test in "$@"; do
	count=$((count + 1))
	printf '%s\n' "$test" >"$work/$count.name"
done
order=$(
	i=0
	for test in "$@"; do
		i=$((i + 1))
		# A program never timed goes first; one timed at 0.00 s, last.
		seconds=$( [ -f "$times" ] && awk -v name="$test" '$2 == name { s = $1 } END { if (s != "") print s + 0 }' "$times")
		[ -n "$seconds" ] || seconds=1000000
		echo "$seconds $i"
	done | sort -k1,1nr -k2,2n | awk '{ print $2 }'
)

passed=0
failed=0
skipped=0
running=0
next_to_print=1
: >"$work/times"

# Prints the result of program $1 and adds it to the totals.
report() {
	test=$(cat "$work/$1.name")
	log=$work/$1.log
	read -r status ended began <"$work/$1.done"
	awk -v e="$ended" -v b="$began" -v n="$test" 'BEGIN { printf "%.2f %s\n", e - b, n }' >>"$work/times"
	if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
		echo "not ok - $test was still running when its time limit of $time_limit s passed" >>"$log"
	fi
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
}

# Prints, in argument order, every result that is ready.
print_ready() {
	while [ "$next_to_print" -le "$count" ] && [ -f "$work/$next_to_print.done" ]; do
		report "$next_to_print"
		next_to_print=$((next_to_print + 1))
	done
}

# Counts the programs still running, and forgets those that ended.
count_running() {
	running=0
	for pid_file in "$work"/*.pid; do
		[ -f "$pid_file" ] || continue
		job=${pid_file##*/}
		job=${job%.pid}
		if [ -f "$work/$job.done" ]; then
			wait "$(cat "$pid_file")" 2>/dev/null
			rm -f "$pid_file"
		else
			running=$((running + 1))
		fi
	done
}

for number in $order; do
	count_running
	while [ "$running" -ge "$jobs" ]; do
		sleep 0.1
		print_ready
		count_running
	done
	start "$number" "$(cat "$work/$number.name")"
done
while [ "$next_to_print" -le "$count" ]; do
	print_ready
	[ "$next_to_print" -le "$count" ] && sleep 0.1
done
count_running

# This run's durations, then the earlier ones of the programs it did not run.
if mkdir -p "$(dirname "$times")" 2>/dev/null; then
	cp "$work/times" "$work/all-times"
	[ -f "$times" ] && awk 'NR == FNR { ran[$2] = 1; next } !($2 in ran)' "$work/times" "$times" >>"$work/all-times"
	cp "$work/all-times" "$times" 2>/dev/null
fi
if [ "$count" -gt 1 ]; then
	echo "the slowest (seconds):"
	sort -k1,1nr "$work/times" | head -5 | sed 's/^/    /'
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
