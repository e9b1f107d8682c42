#!/bin/sh
# test_run_tests.sh - tests/run-tests.sh counts what each test program
# reports: a skip apart from a pass, silence and a crash as failures, and
# under CI=true a skip as a failure too; a Python test's failed setUpModule
# is named.  And tests/unit/test_exec passes
# under nohup, whose ignored SIGHUP is its stated precondition.
. "$(dirname "$0")/lib.sh"
cd "$WORK" || exit 1
RUN_TESTS=$TOP/tests/run-tests.sh

printf 'echo "ok - one"\necho "ok - two"\n' >passes.sh
printf 'echo "ok - one"\necho "ok - two # skip needs a thing: apt-get install thing"\necho "ok - three # SKIP later"\n' >skips.sh
printf 'exit 0\n' >silent.sh
printf 'echo "ok - one"\nexit 3\n' >crashes.sh
printf 'echo "ok - one"\necho "not ok - two"\necho "# why"\nexit 1\n' >fails.sh

run_capture sh "$RUN_TESTS" passes.sh
check_eq "passes are counted" "$status:$out" "0:PASS passes.sh (2 checks)
2 passed, 0 failed, 0 skipped"
run_capture env CI= sh "$RUN_TESTS" skips.sh
check_eq "skips are counted apart and listed" "$status:$out" "0:PASS skips.sh (1 checks, 2 skipped)
    ok - two # skip needs a thing: apt-get install thing
    ok - three # SKIP later
1 passed, 0 failed, 2 skipped"
run_capture env CI=true sh "$RUN_TESTS" skips.sh
check_eq "under CI=true a skip is a failure" "$status:$(printf '%s\n' "$out" | tail -1)" \
	"1:1 passed, 1 failed, 2 skipped"
run_capture sh "$RUN_TESTS" silent.sh
check_eq "a program that reports nothing fails" "$status:$out" "1:FAIL silent.sh (0 passed, 1 failed, 0 skipped)
    not ok - silent.sh exited 0 but reported no check
0 passed, 1 failed, 0 skipped"
run_capture sh "$RUN_TESTS" crashes.sh
check_eq "a program that exits non-zero without a failed check fails" "$status:$out" \
	"1:FAIL crashes.sh (1 passed, 1 failed, 0 skipped)
    not ok - crashes.sh exited with status 3
1 passed, 1 failed, 0 skipped"
run_capture sh "$RUN_TESTS" fails.sh passes.sh
check_eq "failures are shown with their details, and totalled" \
	"$status:$(printf '%s\n' "$out" | grep -v '^    [0-9][0-9]*[.][0-9][0-9] ')" \
	"1:FAIL fails.sh (1 passed, 1 failed, 0 skipped)
    not ok - two
    # why
PASS passes.sh (2 checks)
the slowest (seconds):
3 passed, 1 failed, 0 skipped"
check_eq "the slowest programs are listed with their durations" \
	"$(printf '%s\n' "$out" | sed -n 's/^    [0-9][0-9]*[.][0-9][0-9] //p' | sort)" "fails.sh
passes.sh"

# Programs run side by side: waits.sh ends only once signals.sh has run.
# One at a time, waits.sh comes first and meets its time limit.
printf 'n=0\nwhile [ ! -f signal ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done\n[ -f signal ] && echo "ok - signalled"\n' >waits.sh
printf 'touch signal\necho "ok - signals"\n' >signals.sh
rm -f signal build/test-times.txt
run_capture env TEST_JOBS=2 sh "$RUN_TESTS" waits.sh signals.sh
check_eq "two programs run at once, their results in argument order" "$status:$(printf '%s\n' "$out" | sed -n '1,2p;$p')" \
	"0:PASS waits.sh (1 checks)
PASS signals.sh (1 checks)
2 passed, 0 failed, 0 skipped"
check_eq "each program's duration is written, one line each" \
	"$(awk '{ print ($1 ~ /^[0-9]+[.][0-9][0-9]$/), $2 }' build/test-times.txt | sort)" "1 signals.sh
1 waits.sh"
rm -f signal
# A program timed at 0.00 s is known to be quick: it goes last, not first.
printf '0.05 waits.sh\n0.00 signals.sh\n' >build/test-times.txt
run_capture env TEST_JOBS=1 TEST_TIMEOUT=1 sh "$RUN_TESTS" waits.sh signals.sh
check_eq "a program still running at its time limit is stopped and fails" \
	"$status:$(printf '%s\n' "$out" | sed -n '1,3p;$p')" \
	"1:FAIL waits.sh (0 passed, 1 failed, 0 skipped)
    not ok - waits.sh was still running when its time limit of 1 s passed
PASS signals.sh (1 checks)
1 passed, 1 failed, 0 skipped"

run_capture sh "$RUN_TESTS" passes.sh
check_eq "a run of some programs keeps the durations of the others" \
	"$(awk '{ print $2 }' build/test-times.txt)" "passes.sh
waits.sh
signals.sh"

# A Python test whose setUpModule fails: tests/python/tap.py names it.
cat >setup_fails.py <<EOF
import sys, unittest
sys.path.insert(0, '$TOP/tests/python')
import tap
def setUpModule():
    raise RuntimeError('the fixture could not be built')
class Checks(unittest.TestCase):
    def test_one(self):
        pass
tap.main()
EOF
run_capture sh "$RUN_TESTS" setup_fails.py
check_eq "a failed setUpModule is a failed check that names it, with its cause" \
	"$status:$(printf '%s\n' "$out" | sed -n '1,2p;$p'):$(printf '%s\n' "$out" | grep -c 'RuntimeError: the fixture could not be built')" \
	"1:FAIL setup_fails.py (0 passed, 1 failed, 0 skipped)
    not ok - setUpModule (__main__)
0 passed, 1 failed, 0 skipped:1"

if [ -x "$TOP/tests/unit/test_exec" ]; then
	run_capture nohup "$TOP/tests/unit/test_exec"
	check_eq "tests/unit/test_exec passes under nohup" "$status:$(grep -c '^not ok' "$WORK/.out")" "0:0"
else
	failures=$((failures + 1))
	echo "not ok - tests/unit/test_exec passes under nohup: build it first (make)"
fi
finish
