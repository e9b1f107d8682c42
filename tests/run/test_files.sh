#!/bin/sh
# test_files.sh - run-custom-op and the files a user names: --out never
# destroys what is there, no two of the files it writes and --expect are
# one file, --in reads no more than the .npy header declares; and a kernel
# cannot end the process (exit(), fork() ...).
#
# Over the fake core library (tests/run/fake) and tests/run/kernels/mischief.cpp
# built for the host (tests/run/mischief).  Runs that may end by a signal
# or under a resource limit, and kernels that end in a violation, run
# without $BCO_RUNNER (valgrind).
. "$(dirname "$0")/../cli/lib.sh"
RUN=$TOP/run-custom-op
FAKE=$TOP/tests/run/fake
MISCHIEF=$TOP/tests/run/mischief/multi/mischief
export NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES=4096
npy() { python3 "$TOP/tests/run/npy.py" "$@"; }
# run_op ARGS...: runs run-custom-op (after $BCO_RUNNER); sets $out, $err and $status.
run_op() {
	# shellcheck disable=SC2086 # the runner is words
	run_capture ${BCO_RUNNER:-} "$RUN" "$@"
}

B=$WORK/build
mkdir -p "$B"
cp "$FAKE"/fake.so "$B"/
python3 "$TOP/tests/run/record.py" "$B/fake" 1
npy make "$WORK/x.npy" '<f4' 4 1 2 3 4
npy make "$WORK/y.npy" '<f4' 4 2 4 6 8
cd "$WORK" || exit 1

# ---- --out: written by the rule for every user-named output ----
if mknod full c 1 7 2>/dev/null; then
	run_op --op scale2 --in x.npy --out full "$B/fake"
	check_eq "--out to a device that fails the write: exit 1, saying so" "$status:$err" \
		"1:run-custom-op: cannot write full: No space left on device"
	check_true "and the device is still there, not deleted" test -c full
else
	echo "ok - --out to a device that fails the write # skip mknod is not permitted here (run as root)"
fi
npy make old.npy '<f4' 1 99
cp old.npy target.npy
ln -s target.npy link.npy
run_op --op scale2 --in x.npy --out link.npy "$B/fake"
check_eq "--out through a symlink: the target is written" "$status:$(npy show target.npy)" \
	"0:<f4 (4,): 2.0 4.0 6.0 8.0"
check_true "and the link stays a link" test -L link.npy
mkfifo pipe
timeout 20 cat pipe >from_pipe.npy &
run_op --op scale2 --in x.npy --out pipe "$B/fake"
wait
check_eq "--out to a FIFO is written through" "$status:$(npy show from_pipe.npy)" \
	"0:<f4 (4,): 2.0 4.0 6.0 8.0"
check_true "and it stays a FIFO" test -p pipe

cp old.npy kept.npy
# 200,000 int64 elements: 1.6 MB, beyond the 100-block file size limit, so
# the kernel's SIGXFSZ kills the run while it writes.
{
	sh -c 'ulimit -f 100 && exec "$@"' sh "$RUN" --op fill --scalar 7 --out-shape 200000 \
		--out-dtype int64 --out kept.npy "$B/fake"
	killed=$?
} 2>/dev/null
check_eq "a run killed while it writes --out (SIGXFSZ)" "$killed" 153
check_file "leaves the file it replaces as it was: no partial output" kept.npy old.npy
rm -f .kept.npy.tmp.*

# ---- --out and --expect ----
cp y.npy same.npy
run_op --op scale2 --in y.npy --out same.npy --expect same.npy "$B/fake"
check_eq "--out and --expect naming one file are refused: the output would replace the expectation" \
	"$status:$err" \
	"2:run-custom-op: --out same.npy and --expect same.npy are the same file: the output would replace the values it is compared with; write the output elsewhere"
check_file "and the file is left as it was" same.npy y.npy
ln -s same.npy alias.npy
ln same.npy hard.npy
run_op --op scale2 --in y.npy --out alias.npy --expect same.npy "$B/fake"
check_eq "the same file through a symlink" "$status" 2
run_op --op scale2 --in y.npy --out hard.npy --expect same.npy "$B/fake"
check_eq "the same file through a hard link" "$status" 2
run_op --op scale2 --in y.npy --out new.npy --expect new.npy "$B/fake"
check_eq "--expect is read first: a missing one fails before anything runs or is written" \
	"$status:$err" "1:run-custom-op: new.npy: cannot open: No such file or directory"
check_true "and --out is not written" test ! -e new.npy

# ---- two of the written files (--out, --profile, --profile-svg) as one ----
cp y.npy want.npy
run_op --op scale2 --in y.npy --profile want.npy --expect want.npy "$B/fake"
check_eq "--profile naming --expect's file is refused: it would replace the expectation" \
	"$status:$err" \
	"2:run-custom-op: --profile want.npy and --expect want.npy are the same file: the output would replace the values it is compared with; write the output elsewhere"
check_file "and the expectation is left as it was" want.npy y.npy
run_op --op scale2 --in y.npy --out both --profile ./both "$B/fake"
check_eq "--out and --profile naming one new file are refused: one would replace the other" \
	"$status:$err" \
	"2:run-custom-op: --out both and --profile ./both are the same file: one would replace the other; give each its own file"
check_true "and nothing is written" test ! -e both
ln -s new_target.npy dangling
run_op --op scale2 --in y.npy --out new_target.npy --profile dangling "$B/fake"
check_eq "--out a new file and --profile a symlink to it (not there yet) are refused" \
	"$status:$err" \
	"2:run-custom-op: --out new_target.npy and --profile dangling are the same file: one would replace the other; give each its own file"
check_true "and nothing is written" test ! -e new_target.npy
run_op --op scale2 --in y.npy --profile hard.npy --profile-svg alias.npy "$B/fake"
check_eq "--profile and --profile-svg naming one file by two names are refused" "$status" 2
check_file "and it is left as it was" same.npy y.npy
run_op --op scale2 --in y.npy --out /dev/null --profile /dev/null --profile-svg /dev/null "$B/fake"
check_eq "a device is written through: all three may be /dev/null" "$status" 0

# ---- --in reads what the header declares, no more ----
# feed [FILE]: writes FILE (if given), then zeros, 1 MiB at a time, to
# stdout until 64 MiB or until the reader is gone; says how many bytes the
# pipe took in all.
feed() {
	python3 -c '
import signal, sys
signal.signal(signal.SIGPIPE, signal.SIG_IGN)
written = 0
chunks = [open(sys.argv[1], "rb").read()] if len(sys.argv) > 1 else []
chunks += [bytes(1 << 20)] * 64
try:
    for chunk in chunks:
        sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.flush()
        written += len(chunk)
except BrokenPipeError:
    pass
print(written, file=sys.stderr)
' "$@" 2>fed.txt
}
feed | "$RUN" --op scale2 --in /dev/stdin "$B/fake" 2>err.txt
check_eq "--in on endless zeros: refused after its first bytes, not read to the end" \
	"$(cat err.txt):$(test "$(cat fed.txt)" -lt 4194304 && echo 'under 4 MiB taken')" \
	"run-custom-op: /dev/stdin: not a .npy file: it does not start with \"\\x93NUMPY\":under 4 MiB taken"
run_op --op scale2 --in /dev/zero "$B/fake"
check_eq "--in /dev/zero, the same" "$status:$err" \
	"1:run-custom-op: /dev/zero: not a .npy file: it does not start with \"\\x93NUMPY\""
feed x.npy | "$RUN" --op scale2 --in /dev/stdin --out piped.npy "$B/fake" 2>err.txt
check_eq "--in from a pipe that goes on past the data: the declared data is read, no more" \
	"$(cat err.txt):$(npy show piped.npy):$(test "$(cat fed.txt)" -lt 4194304 && echo 'under 4 MiB taken')" \
	":<f4 (4,): 2.0 4.0 6.0 8.0:under 4 MiB taken"
head -c 136 x.npy >short.npy
run_op --op scale2 --in short.npy "$B/fake"
check_eq "--in cut short in its data" "$status:$err" \
	"1:run-custom-op: short.npy: data is 8 bytes but shape (4,) of float32 needs 16"
cat x.npy x.npy >long.npy
run_op --op scale2 --in long.npy "$B/fake"
check_eq "--in with more data than its shape: told by its size, not read" "$status:$err" \
	"1:run-custom-op: long.npy: data is 160 bytes but shape (4,) of float32 needs 16"
head -c 100 x.npy >cut_header.npy
cat cut_header.npy | { "$RUN" --op scale2 --in /dev/stdin "$B/fake" 2>err.txt; echo $? >status.txt; }
check_eq "--in from a pipe that ends in the header" \
	"$(cat status.txt):$(cat err.txt)" "1:run-custom-op: /dev/stdin: truncated header: it declares 118 bytes but 90 follow"

# ---- the build's files are regular files, else refused without reading ----
# A FIFO blocks an open() for reading until a writer comes: none comes here.
mkdir fifo_build
mkfifo fifo_build/fake.ops
cp "$B/fake.so" fifo_build/
run_capture timeout 10 "$RUN" --op scale2 --in x.npy fifo_build/fake
check_eq "a FIFO as NAME.ops: refused, not waited on" "$status:$err" \
	"1:run-custom-op: fifo_build/fake.ops: not a regular file"
rm fifo_build/fake.ops fifo_build/fake.so
cp "$B/fake.ops" fifo_build/
mkfifo fifo_build/fake.so
run_capture timeout 10 "$RUN" --op scale2 --in x.npy fifo_build/fake
check_eq "a FIFO as NAME.so: refused, not waited on" "$status:$err" \
	"1:run-custom-op: fifo_build/fake.so is not a regular file"

# ---- standard output and error ----
"$RUN" --op chatter --in x.npy --scalar 20 --out printed.npy "$MISCHIEF" >/dev/full 2>err.txt
check_eq "the kernel's output cannot be written to stdout: exit 1, saying so" "$?:$(tail -n 1 err.txt)" \
	"1:run-custom-op: cannot write the kernel's output to standard output: No space left on device"
"$RUN" --op warn --in x.npy --out quiet.npy "$MISCHIEF" >&- 2>&-
check_eq "stdout and stderr closed: they read as /dev/null, and the output is written" \
	"$?:$(npy show quiet.npy)" "0:<f4 (4,): 1.0 2.0 3.0 4.0"

# ---- a kernel cannot end the process ----
# Not under $BCO_RUNNER: a violation abandons the kernel without running its
# destructors (as on the device), which memcheck reports as lost blocks.
run_op() { run_capture "$RUN" "$@"; }
for call in 'exit 13 exit(0)' 'exit 14 exit(3)' 'exit 15 _exit(0)' 'exit 16 _Exit(0)' \
	'exit 17 quick_exit(0)' 'exit 19 exit(0)'; do
	set -- $call
	run_op --op mischief --in x.npy --scalar "$2" --scalar 4 "$MISCHIEF"
	check_eq "a kernel calling $3 is an error naming the core and the op" "$status:$out:$err" \
		"1::run-custom-op: core 4: op mischief: the kernel called $3, which would end the process on the host; a kernel ends by returning its result"
done
run_op --op mischief --in x.npy --scalar 18 --scalar 1 "$MISCHIEF"
check_eq "a kernel calling fork() is refused" "$status:$out:$err" \
	"1::run-custom-op: core 1: op mischief: the kernel called fork(), which the device does not have (on the host it would leave a second process running the rest of the op)"
check_eq "and no second runner printed" "$(printf '%s' "$out$err" | grep -c 'runs on')" 0
finish
