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

# run_capture COMMAND ARGS...: runs a command; sets $out, $err and $status.
# Under make check-asan, ASan warns once that it cannot follow the host
# runtime's stack switches (swapcontext); that line is the sanitizer's, not
# the program's, and is dropped from $err.
run_capture() {
	"$@" >"$WORK/.out" 2>"$WORK/.err"
	status=$?
	out=$(cat "$WORK/.out")
	err=$(grep -v "^==[0-9]*==WARNING: ASan doesn't fully support makecontext/swapcontext" "$WORK/.err")
}

# run_bco ARGS...: runs the binary (after $BCO_RUNNER); sets $out, $err and $status.
run_bco() {
	# shellcheck disable=SC2086 # the runner is words
	run_capture ${BCO_RUNNER:-} "$BCO" "$@"
}

# start_reporting_end FILE COMMAND ARGS...: starts the command in the
# background; when it ends, FILE holds "exit N" or "signal NAME" (a shell
# reports both as one number).  Sets $pid to the command's own process,
# which gets SIGINT, SIGTERM and SIGHUP with their default disposition.
start_reporting_end() {
	rm -f "$1" "$1.pid"
	python3 -c '
import signal, subprocess, sys
child = subprocess.Popen(["env", "--default-signal=INT,TERM,HUP"] + sys.argv[2:])
with open(sys.argv[1] + ".pid", "w") as stream:
    stream.write(str(child.pid))
status = child.wait()
with open(sys.argv[1], "w") as stream:
    stream.write("signal " + signal.Signals(-status).name[3:] if status < 0 else "exit %d" % status)
' "$@" &
	reporter=$!
	tries=0
	while [ ! -s "$1.pid" ] && [ $tries -lt 600 ]; do sleep 0.1; tries=$((tries + 1)); done
	pid=$(cat "$1.pid")
}

# wait_for_end FILE: waits for the command start_reporting_end started.
wait_for_end() {
	wait "$reporter"
}

# finish: the script's exit status.
finish() {
	[ "$failures" -eq 0 ]
}
