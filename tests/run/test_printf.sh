#!/bin/sh
# test_printf.sh - a kernel's printf as on the device: kept per core during
# the op, shown after it, sized by NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES.
#
# Over the fake core library (tests/run/fake) with a record written here,
# and tests/run/kernels/mischief.cpp built for the host (tests/run/mischief).
. "$(dirname "$0")/../cli/lib.sh"
RUN=$TOP/run-custom-op
FAKE=$TOP/tests/run/fake
MISCHIEF=$TOP/tests/run/mischief/multi/mischief
unset NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES

run_op() { run_capture "$RUN" "$@"; }
npy() { python3 "$TOP/tests/run/npy.py" "$@"; }

M=$WORK/multi
S=$WORK/single
mkdir -p "$M" "$S"
cp "$FAKE"/fake_cpu*.so "$M"/
cp "$FAKE"/fake.so "$S"/
# record BUILD_DIR/NAME CORES: the record of the fake library's ops.
record() { python3 "$TOP/tests/run/record.py" "$@"; }
record "$M/fake" 8
record "$S/fake" 1
npy make "$WORK/x.npy" '<f4' 8 1 2 3 4 5 6 7 8

UNSET_NOTE="run-custom-op: note: NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES is unset, so all that the kernel printed is shown; on the device it must be set (a power of two up to 131072, the bytes kept per core) for printf to print at all"
FLAGGED_NOTE="run-custom-op: note: lines marked [core N] were printed by cores 1-7; on the device only core 0's output reaches the host"
# flagged PREFIX LINE...: each of cores 1-7's lines, core by core.
flagged() {
	for core in 1 2 3 4 5 6 7; do
		for line in "$@"; do
			printf '[core %d] %s\n' "$core" "$(printf '%s' "$line" | sed "s/#/$core/")"
		done
	done
}

# ---- unset: all of it, and a note that the device would print nothing ----
run_op --op chatter --in "$WORK/x.npy" "$M/fake"
check_eq "unset: core 0's output on stdout, as printed" "$status:$out" "0:core 0 says hello
and goodbye"
check_eq "unset: one note that the device needs the variable, the other cores' lines whole and core by core (kept until the op ended)" \
	"$err" "$UNSET_NOTE
$FLAGGED_NOTE
$(flagged 'core # says hello' 'and goodbye')"
run_op --op chatter --in "$WORK/x.npy" "$S/fake"
check_eq "unset, single-core: the output, and the note once" "$status:$out:$err" "0:core 0 says hello
and goodbye:$UNSET_NOTE"
run_op --op scale2 --in "$WORK/x.npy" "$S/fake"
check_eq "unset: no note when nothing is printed" "$status:$out:$err" "0::"
run_op --op chatter --in "$WORK/x.npy" --scalar 10000 "$MISCHIEF"
check_eq "unset: 10,000 bytes from each core are all kept" \
	"$status:$(printf '%s' "$out" | wc -c):$(printf '%s\n' "$err" | grep -c '^\[core 7\] 0123')" "0:10007:1"

# ---- set: the device's buffer ----
NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES=4096 run_op --op chatter --in "$WORK/x.npy" "$M/fake"
check_eq "4096: the same output, without the unset note" "$status:$out:$err" "0:core 0 says hello
and goodbye:$FLAGGED_NOTE
$(flagged 'core # says hello' 'and goodbye')"
NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES=0 run_op --op chatter --in "$WORK/x.npy" "$M/fake"
check_eq "0: printf prints nothing" "$status:$out:$err" "0::"
NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES=16 run_op --op chatter --in "$WORK/x.npy" "$M/fake"
LOST="[14 bytes of printf output lost: the buffer holds 16 bytes (NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES)]"
check_eq "16: the oldest 14 of 30 bytes are lost, and one line says so" "$status:$out" "0:$LOST
llo
and goodbye"
check_eq "16: on every core" "$err" "$FLAGGED_NOTE
$(flagged "$LOST" 'llo' 'and goodbye')"
NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES=131072 run_op --op chatter --in "$WORK/x.npy" \
	--scalar 140000 "$MISCHIEF"
check_eq "131072: a core printing 140,007 bytes keeps the last 131,072" \
	"$status:$(printf '%s\n' "$out" | head -n 1):$(printf '%s' "$out" | tail -n +2 | wc -c)" \
	"0:[8935 bytes of printf output lost: the buffer holds 131072 bytes (NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES)]:131072"

# ---- shown after the op, also when it failed ----
NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES=1024 run_op --op mischief --in "$WORK/x.npy" \
	--scalar 11 --scalar 0 "$MISCHIEF"
check_eq "a kernel that printed, then faulted: its output is shown" "$status:$out:$err" \
	"1:core 0 was here:run-custom-op: core 0: op mischief: segmentation fault (SIGSEGV) at address 0x10; the kernel used memory it does not own"
# On the last core: the cores after one that never returns may never start.
NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES=1024 run_op --op mischief --in "$WORK/x.npy" \
	--scalar 12 --scalar 7 --timeout 0.2 "$MISCHIEF"
check_eq "a kernel that printed, then never returned: its output is shown after the time limit" \
	"$status:$out:$err" "1::$FLAGGED_NOTE
[core 7] core 7 is stuck
run-custom-op: core 7: op mischief: still running when the time limit of 0.2 s passed: stopped"

# ---- values the device refuses ----
for value in 1000 262144 abc '' -4 3 0x100 '16 '; do
	case $value in
	abc | '' | -4 | 0x100 | '16 ') why="not a number" ;;
	262144) why="too big" ;;
	*) why="not a power of two" ;;
	esac
	NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES=$value run_op --op chatter --in "$WORK/x.npy" "$M/fake"
	check_eq "'$value' is refused before anything runs" "$status:$out:$err" \
		"2::run-custom-op: NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES=$value: $why; the device takes a power of two up to 131072 (the bytes of each core's printf buffer), or 0 to print nothing"
done
finish
