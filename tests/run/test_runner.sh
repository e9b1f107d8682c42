#!/bin/sh
# test_runner.sh - run-custom-op end to end, over the fake core library.
#
# tests/run/fake/ holds fake.so and fake_cpu0.so .. fake_cpu7.so, built from
# tests/run/fake_core.c (see run/run.mk); the record fake.ops is written here.
. "$(dirname "$0")/../cli/lib.sh"
RUN=$TOP/run-custom-op
FAKE=$TOP/tests/run/fake
# As on a device set up to print; tests/run/test_printf.sh tries the others.
export NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES=4096

npy() {
	python3 "$TOP/tests/run/npy.py" "$@"
}

# run_op ARGS...: runs the runner; sets $out, $err and $status.
run_op() { run_capture "$RUN" "$@"; }

# write_record BUILD_DIR/NAME CORES [OP_LINE...]: the record a host build
# writes, with the ids of the libraries there now; the fake library's ops
# when no OP_LINE is given.
write_record() { python3 "$TOP/tests/run/record.py" "$@"; }

# $M: a multicore build (plus its single-core library); $S: single-core only.
M=$WORK/multi
S=$WORK/single
mkdir -p "$M" "$S"
cp "$FAKE"/fake_cpu*.so "$M"/
cp "$FAKE"/fake.so "$S"/
write_record "$M/fake" 8
write_record "$S/fake" 1

npy make "$WORK/x.npy" '<f4' 2,5 1 2 3 4 5 6 7 8 9 10
npy make "$WORK/y.npy" '<f4' 2,5 2 4 6 8 10 12 14 16 18 20
npy make "$WORK/x_big.npy" '>f4' 2,5 1 2 3 4 5 6 7 8 9 10

# ---- running and writing the output ----
run_op --op scale2 --in "$WORK/x.npy" --out "$WORK/out.npy" "$M/fake"
check_eq "scale2 on 8 cores: exit 0, nothing printed" "$status:$out:$err" "0::"
check_file "scale2 on 8 cores: each core wrote its share of one output" "$WORK/out.npy" "$WORK/y.npy"

rm -f "$WORK/out.npy"
run_op --op scale2 --in "$WORK/x.npy" --out "$WORK/out.npy" "$S/fake"
check_eq "scale2 single-core (no NAME_cpu0.so): exit 0" "$status:$err" "0:"
check_file "scale2 single-core output" "$WORK/out.npy" "$WORK/y.npy"

run_op --op scale2 --cores 1 --in "$WORK/x_big.npy" --expect "$WORK/y.npy" "$S/fake"
check_eq "big-endian input read in host order; --cores 1 picks NAME.so" "$status:$err" "0:"

# BUILD_DIR/NAME without a slash: the build in the current directory, never
# a library of that name that the dynamic linker would search for.
mkdir -p "$WORK/elsewhere"
cp "$FAKE/fake_cpu0.so" "$WORK/elsewhere/fake.so"
rm -f "$WORK/out.npy"
run_capture env -C "$S" LD_LIBRARY_PATH="$WORK/elsewhere" "$RUN" --op scale2 --in "$WORK/x.npy" \
	--out "$WORK/out.npy" fake
check_eq "NAME alone is the build in the current directory (not NAME.so on LD_LIBRARY_PATH)" \
	"$status:$err" "0:"
check_file "and its library computes the output" "$WORK/out.npy" "$WORK/y.npy"

rm -f "$WORK/out.npy"
run_op --op copies --in "$WORK/x.npy" --out "$WORK/out.npy" "$M/fake"
check_eq "elements no core wrote are an error, and no output is written" \
	"$status:$err:$(ls "$WORK/out.npy" 2>&1 >/dev/null | wc -l)" \
	"1:run-custom-op: op copies: output coverage: elements [8, 10) of the output (row 1) were written by no core (on the device they keep what the output buffer held before the op):1"
run_op --op copies --in "$WORK/x.npy" --out "$WORK/out.npy" --output-checks warn "$M/fake"
check_eq "each core is its own copy of its library; with --output-checks warn, unwritten elements are NaN" \
	"$status:$err:$(npy show "$WORK/out.npy")" \
	"0:run-custom-op: warning: op copies: output coverage: elements [8, 10) of the output (row 1) were written by no core (on the device they keep what the output buffer held before the op):<f4 (2, 5): 1.0 1.0 1.0 1.0 1.0 1.0 1.0 1.0 nan nan"

npy make "$WORK/column.npy" '<f4' 5,1,2 1 2 3 4 5 6 7 8 9 10
run_op --op scale2 --in "$WORK/column.npy" --out "$WORK/out.npy" "$M/fake"
check_eq "a dimension of size 1 in the input and the output: contiguous, and run" \
	"$status:$err:$(npy show "$WORK/out.npy")" \
	"0::<f4 (5, 1, 2): 2.0 4.0 6.0 8.0 10.0 12.0 14.0 16.0 18.0 20.0"

# ---- --expect ----
npy make "$WORK/want.npy" '<f4' 2,5 2 4 6 8 10 12 14 16 18.5 21
run_op --op scale2 --in "$WORK/x.npy" --expect "$WORK/want.npy" "$M/fake"
check_eq "--expect mismatch: first multi-index, both values, exit 1" "$status:$err" \
	"1:run-custom-op: output differs from $WORK/want.npy at [1, 3]: got 18, expected 18.5 (2 of 10 elements differ; rtol 1e-05, atol 1e-08)"

run_op --op scale2 --in "$WORK/x.npy" --expect "$WORK/want.npy" --atol 1 "$M/fake"
check_eq "--atol 1 accepts differences up to 1" "$status:$err" "0:"

run_op --op scale2 --in "$WORK/x.npy" --expect "$WORK/want.npy" --rtol 0.04 --atol=0 "$M/fake"
check_eq "--rtol 0.04: |18 - 18.5| <= 0.04 * 18.5, |20 - 21| > 0.04 * 21" "$status:$err" \
	"1:run-custom-op: output differs from $WORK/want.npy at [1, 4]: got 20, expected 21 (1 of 10 elements differ; rtol 0.04, atol 0)"

npy make "$WORK/want_int.npy" '<i8' 2,2 -4 -4 -4 5
run_op --op fill --scalar -4 --out-shape 2,2 --out-dtype int64 --expect "$WORK/want_int.npy" \
	--atol 10 "$M/fake"
check_eq "integers compare exactly, whatever --atol says" "$status:$err" \
	"1:run-custom-op: output differs from $WORK/want_int.npy at [1, 1]: got -4, expected 5 (1 of 4 elements differ)"

npy make "$WORK/want_shape.npy" '<f4' 10 2 4 6 8 10 12 14 16 18 20
run_op --op scale2 --in "$WORK/x.npy" --expect "$WORK/want_shape.npy" "$M/fake"
check_eq "--expect with another shape" "$status:$err" \
	"1:run-custom-op: $WORK/want_shape.npy has shape (10,) but the output has shape (2, 5)"

run_op --op scale2 --in "$WORK/x.npy" --expect "$WORK/want_int.npy" "$M/fake"
check_eq "--expect with another shape is reported before the dtype" "$status" "1"

npy make "$WORK/want_i4.npy" '<i4' 2,5 2 4 6 8 10 12 14 16 18 20
run_op --op scale2 --in "$WORK/x.npy" --expect "$WORK/want_i4.npy" "$M/fake"
check_eq "--expect with another dtype" "$status:$err" \
	"1:run-custom-op: $WORK/want_i4.npy is int32 but the output is float32; give --out-dtype int32 or save the expected values as float32"

# ---- scalars converted by the schema ----
run_op --op axpby --in "$WORK/x.npy" --in "$WORK/x.npy" --scalar 3 --scalar 0.5 --scalar 7 \
	--out "$WORK/out.npy" "$M/fake"
check_eq "axpby: Scalar 3, float 0.5, int 7 reach the kernel as int64, float32, int32" \
	"$status:$err:$(npy show "$WORK/out.npy")" \
	"0::<f4 (2, 5): 3.5 7.0 10.5 14.0 17.5 21.0 24.5 0.0 0.0 0.0"

run_op --op scalar_dtype --scalar 3 --out-shape 2 --out-dtype float32 --out "$WORK/out.npy" "$M/fake"
check_eq "a Scalar given an integer literal is int64 (dtype 4)" \
	"$status:$(npy show "$WORK/out.npy")" "0:<f4 (2,): 4.0 3.0"
run_op --op scalar_dtype --scalar -2.5e0 --out-shape 2 --out-dtype float32 --out "$WORK/out.npy" \
	"$M/fake"
check_eq "a Scalar given any other number is float32 (dtype 6)" \
	"$status:$(npy show "$WORK/out.npy")" "0:<f4 (2,): 6.0 -2.5"

run_op --op fill --scalar 9000000000 --out-shape 3 --out-dtype int64 --out "$WORK/out.npy" "$M/fake"
check_eq "a long long takes 64-bit values" "$status:$(npy show "$WORK/out.npy")" \
	"0:<i8 (3,): 9000000000 9000000000 9000000000"

# ---- arguments checked against the schema ----
run_op --op axpby --in "$WORK/x.npy" --in "$WORK/x.npy" --scalar 3 --scalar 0.5 "$M/fake"
check_eq "too few arguments" "$status:$err" \
	"2:run-custom-op: axpby expects (Tensor x, Tensor y, Scalar a, float b, int n); got 4 arguments"
run_op --op axpby --in "$WORK/x.npy" --scalar 1 --scalar 3 --scalar 0.5 --scalar 7 "$M/fake"
check_eq "--scalar where a Tensor is expected" "$status:$err" \
	"2:run-custom-op: axpby argument 2 (Tensor y) is a tensor: give it with --in FILE.npy, not --scalar 1"
run_op --op axpby --in "$WORK/x.npy" --in "$WORK/x.npy" --in "$WORK/x.npy" --scalar 0.5 --scalar 7 \
	"$M/fake"
check_eq "--in where a Scalar is expected" "$status:$err" \
	"2:run-custom-op: axpby argument 3 (Scalar a) is a number: give it with --scalar V, not --in $WORK/x.npy"
run_op --op axpby --in "$WORK/x.npy" --in "$WORK/x.npy" --scalar 3 --scalar 0.5 --scalar 2.5 "$M/fake"
check_eq "an int given 2.5" "$status:$err" \
	"2:run-custom-op: axpby argument 5 (int n): --scalar 2.5 is not an integer"
run_op --op axpby --in "$WORK/x.npy" --in "$WORK/x.npy" --scalar 3 --scalar 0.5 --scalar 3000000000 \
	"$M/fake"
check_eq "an int beyond int32" "$status:$err" \
	"2:run-custom-op: axpby argument 5 (int n): --scalar 3000000000 is out of the int32 range"
run_op --op axpby --in "$WORK/x.npy" --in "$WORK/x.npy" --scalar 3 --scalar 1e99 --scalar 1 "$M/fake"
check_eq "a float beyond float32" "$status:$err" \
	"2:run-custom-op: axpby argument 4 (float b): --scalar 1e99 is out of the float32 range"
run_op --op scalar_dtype --scalar 9223372036854775808 --out-shape 2 --out-dtype float32 "$M/fake"
check_eq "a Scalar whole number beyond int64 (not a wrapped float32)" "$status:$err" \
	"2:run-custom-op: scalar_dtype argument 1 (Scalar s): --scalar 9223372036854775808 is out of the int64 range"
run_op --op scalar_dtype --scalar 1e400 --out-shape 2 --out-dtype float32 "$M/fake"
check_eq "a Scalar beyond the double range (not inf)" "$status:$err" \
	"2:run-custom-op: scalar_dtype argument 1 (Scalar s): --scalar 1e400 is out of the float32 range"
run_op --op axpby --in "$WORK/x.npy" --in "$WORK/x.npy" --scalar 3 --scalar 1e400 --scalar 1 "$M/fake"
check_eq "a float beyond the double range (not inf)" "$status:$err" \
	"2:run-custom-op: axpby argument 4 (float b): --scalar 1e400 is out of the float32 range"
run_op --op axpby --in "$WORK/x.npy" --in "$WORK/x.npy" --scalar 3x --scalar 1 --scalar 1 "$M/fake"
check_eq "a Scalar that is not a number" "$status:$err" \
	"2:run-custom-op: axpby argument 3 (Scalar a): --scalar 3x is not a number"

run_op --op fill --scalar 1 "$M/fake"
check_eq "no tensor input and no --out-shape" "$status:$err" \
	"2:run-custom-op: fill has no tensor argument to take the output's shape and dtype from; give --out-shape and --out-dtype"

# ---- what the cores print ----
run_op --op chatter --in "$WORK/x.npy" "$M/fake"
check_eq "core 0's output goes to stdout as printed" "$status:$out" "0:core 0 says hello
and goodbye"
check_eq "a one-time note precedes the flagged lines" "$(head -n 1 "$WORK/.err")" \
	"run-custom-op: note: lines marked [core N] were printed by cores 1-7; on the device only core 0's output reaches the host"
expected_flagged=$(for core in 1 2 3 4 5 6 7; do
	echo "[core $core] and goodbye"
	echo "[core $core] core $core says hello"
done | LC_ALL=C sort)
check_eq "other cores' lines go whole to stderr, flagged with their core" \
	"$(tail -n +2 "$WORK/.err" | LC_ALL=C sort)" "$expected_flagged"

run_op --op chatter --in "$WORK/x.npy" "$S/fake"
check_eq "a single-core build prints as core 0" "$status:$out:$err" "0:core 0 says hello
and goodbye:"

# ---- violations and faults ----
run_op --op violation --in "$WORK/x.npy" --out "$WORK/none.npy" "$M/fake"
check_eq "a runtime violation is reported as the runtime words it" "$status:$err" \
	"1:run-custom-op: core 2: op violation: tcm_malloc: the 16 KiB TCM pool is exhausted"
check_true "no output is written when a core fails" test ! -e "$WORK/none.npy"

overflow_message="stack overflow in the emulated core stack (4096 bytes); build with a larger -DSTACK_SIZE=<bytes> (see build-custom-op(1))"
run_op --op overflow --in "$WORK/x.npy" "$M/fake"
check_eq "a fault in an announced guard region is that stack's overflow" "$status:$err" \
	"1:run-custom-op: core 3: op overflow: $overflow_message"
run_op --op far_overflow --in "$WORK/x.npy" "$M/fake"
check_eq "a fault just below a guard region is an overflow too" "$status:$err" \
	"1:run-custom-op: core 3: op far_overflow: $overflow_message"
run_op --op overflow --in "$WORK/x.npy" "$S/fake"
check_eq "an overflow in a single-core build is on core 0" "$status:$err" \
	"1:run-custom-op: core 0: op overflow: $overflow_message"
run_op --op wild --in "$WORK/x.npy" "$M/fake"
check_eq "a fault elsewhere is a segmentation fault with its address" "$status:$err" \
	"1:run-custom-op: core 5: op wild: segmentation fault (SIGSEGV) at address 0x10; the kernel used memory it does not own"
run_op --op unguarded --in "$WORK/x.npy" "$M/fake"
check_eq "a withdrawn guard region no longer counts as a stack" "$status:$(echo "$err" | sed 's/0x[0-9a-f]*/ADDRESS/')" \
	"1:run-custom-op: core 3: op unguarded: segmentation fault (SIGSEGV) at address ADDRESS; the kernel used memory it does not own"

# ---- Ctrl-C ----
# The mischief build's kernels: 5 never returns, 6 waits in a system call.
# interrupted ARGS...: runs the runner on them, and after a second sends it
# SIGINT; sets $ended ("signal INT", ...) and $err.
MISCHIEF=$TOP/tests/run/mischief
npy make "$WORK/ten.npy" '<f4' 10 -5 -4 -3 -2 -1 0 1 2 3 4
interrupted() {
	start_reporting_end "$WORK/ended" "$RUN" --op mischief --in "$WORK/ten.npy" "$@" \
		2>"$WORK/.err"
	sleep 1
	kill -INT "$pid"
	wait_for_end "$WORK/ended"
	ended=$(cat "$WORK/ended")
	err=$(grep -v "^==[0-9]*==WARNING: ASan doesn't fully support makecontext/swapcontext" "$WORK/.err")
}
interrupted --scalar 5 --scalar 0 --out "$WORK/stopped.npy" "$MISCHIEF/single/mischief"
check_eq "Ctrl-C stops a kernel that never returns; the program says so and ends by SIGINT" \
	"$ended:$err" \
	"signal INT:run-custom-op: core 0: op mischief: still running when the op was interrupted (SIGINT): stopped"
check_true "no output is written after Ctrl-C" test ! -e "$WORK/stopped.npy"
interrupted --scalar 6 --scalar -1 "$MISCHIEF/multi/mischief"
check_eq "Ctrl-C on eight cores: the core stopped, and those not started" \
	"$ended:$(echo "$err" | head -n 2)" \
	"signal INT:run-custom-op: core 0: op mischief: still running when the op was interrupted (SIGINT): stopped
run-custom-op: cores 1-7: op mischief: not started when the op was interrupted (SIGINT)"

# ---- a stop does not count against the time limit ----
# Kernel 31 takes 1 s on core 0; the runner is stopped for 3 s of it.
start_reporting_end "$WORK/ended" "$RUN" --timeout 2 --op mischief --in "$WORK/ten.npy" \
	--scalar 31 --scalar 0 --out "$WORK/after_stop.npy" "$MISCHIEF/multi/mischief" 2>"$WORK/.err"
sleep 0.3
kill -STOP "$pid"
sleep 3
kill -CONT "$pid"
wait_for_end "$WORK/ended"
check_eq "time stopped (SIGSTOP, then SIGCONT) is not counted in the time limit" \
	"$(cat "$WORK/ended"):$(grep -v "^==[0-9]*==WARNING: ASan" "$WORK/.err")" "exit 0:"
check_eq "the op stopped for a while gives its result" \
	"$(npy show "$WORK/after_stop.npy")" "<f4 (10,): 0.0 0.0 0.0 0.0 0.0 0.0 1.0 2.0 3.0 4.0"

# ---- finding the build ----
mkdir -p "$WORK/xtensa"
cp "$FAKE/fake.so" "$WORK/xtensa/"
run_op --in "$WORK/x.npy" "$WORK/xtensa/fake"
check_eq "no .ops record: not a host build" "$status:$err" \
	"1:run-custom-op: $WORK/xtensa/fake.ops not found: $WORK/xtensa/fake was not built for the host target by build-custom-op; build it with build-custom-op --target host"
run_op --in "$WORK/x.npy" "$WORK/nothing/relu"
check_eq "no build at all" "$status:$err" \
	"1:run-custom-op: no host build at $WORK/nothing/relu: neither $WORK/nothing/relu.so nor $WORK/nothing/relu_cpu0.so exists; build it with build-custom-op --target host"
run_op --cores 8 --op scale2 --in "$WORK/x.npy" "$S/fake"
check_eq "--cores 8 on a single-core build" "$status:$err" \
	"1:run-custom-op: $S/fake is a single-core build ($S/fake.ops names one core library): --cores 8 needs a multicore build; leave out --cores, or rebuild with build-custom-op --target host --multicore"
run_op --in "$WORK/x.npy" "$M/fake"
check_eq "several ops and no --op" "$status:$err" \
	"2:run-custom-op: $M/fake has 11 ops (scale2, axpby, scalar_dtype, fill, chatter, copies, violation, overflow, far_overflow, wild, unguarded); choose one with --op NAME"
run_op --op relu --in "$WORK/x.npy" "$M/fake"
check_eq "an unknown --op" "$status:$err" \
	"2:run-custom-op: --op relu: $M/fake has no such op (its ops, by kernel function: scale2, axpby, scalar_dtype, fill, chatter, copies, violation, overflow, far_overflow, wild, unguarded)"

mkdir -p "$WORK/one"
cp "$FAKE/fake.so" "$WORK/one/"
write_record "$WORK/one/fake" 1 "$(printf 'scale2\tT\t(Tensor x)')"
run_op --in "$WORK/x.npy" "$WORK/one/fake"
check_eq "a stale record (fewer ops than registered)" "$status:$err" \
	"1:run-custom-op: $WORK/one/fake.ops lists the ops (scale2) but $WORK/one/fake.so registers (scale2, axpby, scalar_dtype, fill, chatter, copies, violation, overflow, far_overflow, wild, unguarded); the record is stale: rebuild with build-custom-op --target host"

mkdir -p "$WORK/mixed"
cp "$M"/* "$WORK/mixed/"
cp "$FAKE/fake_cpu1.so" "$WORK/mixed/fake_cpu2.so"
write_record "$WORK/mixed/fake" 8
run_op --op scale2 --in "$WORK/x.npy" "$WORK/mixed/fake"
check_eq "a library linked for another core" "$status:$err" \
	"1:run-custom-op: $WORK/mixed/fake_cpu2.so was linked for core 1, not core 2; rebuild it with build-custom-op --target host"

# ---- bad inputs ----
npy make "$WORK/fortran.npy" '<f4' 2,5 1 2 3 4 5 6 7 8 9 10 --fortran
run_op --op scale2 --in "$WORK/fortran.npy" "$M/fake"
check_eq "a Fortran-order input" "$status:$err" \
	"1:run-custom-op: $WORK/fortran.npy: Fortran-order array (fortran_order: True); only C order is read: save numpy.ascontiguousarray(a) instead"
npy make "$WORK/scalar.npy" '<f4' "" 1
run_op --op scale2 --in "$WORK/scalar.npy" "$M/fake"
check_eq "a 0-dimensional input" "$status:$err" \
	"1:run-custom-op: $WORK/scalar.npy: a 0-dimensional array; a tensor argument needs at least 1 dimension (save it with shape (1,))"
run_op --op scale2 --in "$WORK/missing.npy" "$M/fake"
check_eq "a missing input" "$status:$err" \
	"1:run-custom-op: $WORK/missing.npy: cannot open: No such file or directory"

# ---- usage errors ----
run_op --frobnicate "$M/fake"
check_eq "unknown option" "$status:$err" \
	"2:run-custom-op: unknown option '--frobnicate' (see run-custom-op --help)"
run_op "$M/fake" "$S/fake"
check_eq "extra argument" "$status:$err" \
	"2:run-custom-op: extra argument '$S/fake': give one BUILD_DIR/NAME"
run_op --cores 3 "$M/fake"
check_eq "--cores 3" "$status:$err" "2:run-custom-op: --cores 3: expected 1 or 8"
run_op --rtol 1e-3 "$M/fake"
check_eq "--rtol without --expect" "$status:$err" \
	"2:run-custom-op: --rtol without --expect: the tolerances apply to --expect only"
run_op --expect "$WORK/y.npy" --atol -1 "$M/fake"
check_eq "a negative --atol" "$status:$err" \
	"2:run-custom-op: --atol -1: expected a finite number >= 0, e.g. --atol 1e-6"
run_op --out-shape 4,,2 "$M/fake"
check_eq "a bad --out-shape" "$status:$err" \
	"2:run-custom-op: --out-shape 4,,2: expected dimensions separated by commas, e.g. --out-shape 4,1024"
run_op --out-shape 2,4294967296 "$M/fake"
check_eq "an --out-shape dimension beyond 2^32-1 is named as too large" "$status:$err" \
	"2:run-custom-op: --out-shape 2,4294967296: dimension 1 is 4294967296: a dimension is at most 4294967295 (2^32-1)"
run_op --out-shape 99999999999999999999999 "$M/fake"
check_eq "and one beyond any integer type" "$status:$err" \
	"2:run-custom-op: --out-shape 99999999999999999999999: dimension 0 is 99999999999999999999999: a dimension is at most 4294967295 (2^32-1)"
run_op --out-dtype float64 "$M/fake"
check_eq "an unknown --out-dtype" "$status:$err" \
	"2:run-custom-op: --out-dtype float64: expected float32, bfloat16, float16, int32, int8, int64, int16 or uint8"
run_op --core-stack 12k "$M/fake"
check_eq "a bad --core-stack" "$status:$err" \
	"2:run-custom-op: --core-stack 12k: expected a number of bytes from 4096 to 1073741824, e.g. --core-stack 65536"
run_op --out "$WORK/a.npy" --out "$WORK/b.npy" "$M/fake"
check_eq "an option given twice" "$status:$err" "2:run-custom-op: --out given twice"
run_op --in
check_eq "an option without its value" "$status:$err" \
	"2:run-custom-op: --in needs a value (see run-custom-op --help)"
run_op --op scale2 --in "$WORK/x.npy" "$M/fake.so"
check_eq "a library named with its suffix" "$status:$err" \
	"2:run-custom-op: $M/fake.so: name the build without a suffix, as BUILD_DIR/NAME (e.g. build/relu for build/relu.so)"
run_op
check_eq "no library" "$status:$err" \
	"2:run-custom-op: no library given: name it as BUILD_DIR/NAME, e.g. run-custom-op --in x.npy build/relu"
run_op --help
check_eq "--help teaches with an example" \
	"$status:$(echo "$out" | head -n 1):$(echo "$out" | grep -c 'run-custom-op --in x.npy --out y.npy --expect want.npy build/relu')" \
	"0:usage: run-custom-op [OPTION]... BUILD_DIR/NAME:1"
"$RUN" --help >/dev/full 2>"$WORK/help.err"
status=$?
check_eq "--help into a full disk fails, saying so" "$status:$(cat "$WORK/help.err")" \
	"1:run-custom-op: cannot write to standard output: No space left on device"

finish
