#!/bin/sh
# test_limits.sh - the device's documented limits, each enforced with a
# message that names the rule (or warned about where the device goes on),
# and TCM overruns caught.
. "$(dirname "$0")/../cli/lib.sh"
. "$TOP/tests/host/lib_host.sh"
SOURCE=$TOP/tests/host/kernels/limits.cpp
RUN=$TOP/run-custom-op

check_true "the limit kernels build" host_build "$WORK/limits" limits 1 \
	'pass=my_ops::pass(Tensor x) -> Tensor' \
	'returns_shape=my_ops::returns_shape(Tensor x, int which) -> Tensor' \
	'wide=my_ops::wide(Tensor x) -> Tensor' \
	'no_dtype=my_ops::no_dtype(Tensor x) -> Tensor' \
	'tcm=my_ops::tcm(Tensor x, int which, int core) -> Tensor' \
	-- "$SOURCE"
sed 's/^/# /' "$WORK/limits/build.log"
LIB=$WORK/limits/limits

# Dimensions: more than 4 dimensions, none above 65535; up to 4, each up to
# 2^32-1 (a size-0 dimension beside it keeps the tensor empty).
FIVE="a tensor passed in or returned with more than 4 dimensions may have none above 65535"
run_driver "$LIB" pass f32:1 f32:1x1x1x1x65535
check_eq "5 dimensions of up to 65535 are passed in" "$status $(printf '%s\n' "$out" | head -1)" "0 out:"
run_driver "$LIB" pass f32:1 f32:1x1x1x1x65536
check_eq "5 dimensions with one of 65536 are refused" "$status $out" \
	"1 error: core 0: op pass: argument 1 has 5 dimensions and dimension 4 is 65536: $FIVE"
run_driver "$LIB" pass f32:1x65536x1x1x1 f32:1
check_eq "an output of 5 dimensions with one of 65536 is refused" "$status $out" \
	"1 error: core 0: op pass: the output has 5 dimensions and dimension 1 is 65536: $FIVE"
run_driver "$LIB" pass f32:1 f32:0x4294967295
check_eq "4 dimensions or fewer may be up to 2^32-1" "$status $out" "0 $(lines out: 0)"
run_driver "$LIB" pass f32:1 f32:0x4294967296
check_eq "a dimension of 2^32 is refused" "$status $out" \
	"1 error: core 0: op pass: argument 1: dimension 1 is 4294967296: a dimension of a tensor passed in or returned is at most 4294967295 (2^32-1)"
run_driver "$LIB" returns_shape f32:65535 f32:1 i32:1:0
check_eq "a returned tensor of 5 dimensions with one of 65536 is refused" "$status $out" \
	"1 error: core 0: op returns_shape: the returned tensor has 5 dimensions and dimension 4 is 65536: $FIVE"
run_driver "$LIB" returns_shape f32:1 f32:1 i32:1:1
check_eq "a returned tensor of 9 dimensions is refused" "$status $out" \
	"1 error: core 0: op returns_shape: the returned tensor has 9 dimensions: a tensor passed in or returned has at most 8"
run_driver "$LIB" returns_shape f32:65535 f32:1 i32:1:2
check_eq "a returned tensor of 5 dimensions of up to 65535 is copied" "$status $(printf '%s\n' "$out" | head -2)" \
	"0 $(lines out: 0)"

# kLong: the device does not support 64-bit ops generically.
run_driver "$LIB" wide i64:3 i64:3:5,6,7
check_eq "a 64-bit tensor received and made: one warning per op call" "$status $out" \
	"0 warning: core 0: op wide: a 64-bit (kLong) tensor: the device does not support 64-bit ops generically (the API reference no longer lists kLong among the dtypes)
$(lines out: 5 6 7)"

# Factories need a dtype (without options they do not compile: see
# test_compile_errors.sh).
run_driver "$LIB" no_dtype f32:2 f32:2
check_eq "a factory given options without a dtype" "$status $out" \
	"1 error: core 0: op no_dtype: zeros: the TensorOptions name no dtype: the device's API reference requires one, e.g. torch::zeros(..., torch::kFloat)"

# TCM overruns and misuse (tests/run/test_tcm.sh has more): the runtime's
# access checks see the kernel's stores and its memset.
BLOCK_OF_TCM="allocated by tcm_malloc in tcm(at::Tensor const&, int, int)"
tcm_case() {
	run_driver "$LIB" tcm f32:4 f32:8:@1 "i32:1:$1" i32:1:0
}
python3 "$TOP/tests/run/npy.py" make "$WORK/eight.npy" '<f4' 8 1 2 3 4 5 6 7 8
run_capture "$RUN" --op tcm --in "$WORK/eight.npy" --scalar 0 --scalar 0 "$LIB"
check_eq "a memset one byte past a 4096-byte block: found at the call, naming the block" "$status $err" \
	"1 run-custom-op: core 0: op tcm: tcm(at::Tensor const&, int, int) wrote 4097 bytes at byte 0 of the 4096-byte TCM block $BLOCK_OF_TCM, 1 byte past its end (on the device it overwrites the next block or a stream accessor's buffer)"
tcm_case 1
check_eq "a write past 100 bytes, in the block's 64-byte rounding, found at the write" "$status $out" \
	"1 error: core 0: op tcm: tcm(at::Tensor const&, int, int) wrote 1 byte at byte 100 of the 100-byte TCM block $BLOCK_OF_TCM, past its end (on the device it overwrites another block or a stream accessor's buffer)"
tcm_case 6
check_eq "tensor_to_tcm of 5 floats into a 16-byte block, found at the copy" "$status $out" \
	"1 error: core 0: op tcm: tensor_to_tcm: 20 bytes into byte 0 of the 16-byte TCM block $BLOCK_OF_TCM reach 4 bytes past its end (on the device the copy reaches the next block or a stream accessor's buffer)"
tcm_case 2
check_eq "tcm_free of a pointer into a block" "$status $out" \
	"1 error: core 0: op tcm: tcm_free: the pointer is 16 bytes into a 100-byte TCM block $BLOCK_OF_TCM: free the pointer tcm_malloc returned"
tcm_case 3
check_eq "a double tcm_free" "$status $out" \
	"1 error: core 0: op tcm: tcm_free: a double free: the 256-byte TCM block was freed already"
tcm_case 4
check_eq "tcm_free of memory that is not TCM" "$status $out" \
	"1 error: core 0: op tcm: tcm_free: the pointer is not one that tcm_malloc or neuron_dataram_allocate returned (it is not in the TCM pool)"
tcm_case 5
check_eq "blocks not freed by the end of the op: a warning with their sizes" "$status $out" \
	"0 warning: core 0: op tcm: 2 TCM blocks allocated during the op were not freed by its end: 4096 bytes from tcm_malloc, 100 bytes from tcm_malloc; they stay allocated in this core's 16384-byte pool
$(lines out: 0 0 0 0)"
tcm_case 7
check_eq "writing a whole block, and the whole pool, is no overrun" "$status $out" "0 $(lines out: 0 0 0 0)"

check_true "the limit kernels build for 8 cores" host_build "$WORK/limits8" limits 8 \
	'tcm=my_ops::tcm(Tensor x, int which, int core) -> Tensor' \
	'stream=my_ops::stream(Tensor x) -> Tensor' 'wide=my_ops::wide(Tensor x) -> Tensor' -- "$SOURCE"
sed 's/^/# /' "$WORK/limits8/build.log"
# Every core warns of kLong, then fails alike (it returns a tensor of its
# own): the warning comes once per call and the error once, naming them.
python3 "$TOP/tests/run/npy.py" make "$WORK/wide.npy" '<i8' 3 5 6 7
run_capture "$RUN" --op wide --in "$WORK/wide.npy" "$WORK/limits8/limits"
check_eq "on 8 cores, the kLong warning comes once per call, and the error once, naming the cores" \
	"$status $err" \
	"1 run-custom-op: warning: cores 0-7: op wide: a 64-bit (kLong) tensor: the device does not support 64-bit ops generically (the API reference no longer lists kLong among the dtypes)
run-custom-op: cores 0-7: op wide: customop_return_tensor: a multicore build must write its output through get_dst_tensor() (each core writes its share; copying would overwrite the other cores' shares)"
run_capture "$RUN" --op tcm --in "$WORK/eight.npy" --scalar 0 --scalar 3 "$WORK/limits8/limits"
check_eq "an overrun on core 3 names core 3" "$status $err" \
	"1 run-custom-op: core 3: op tcm: tcm(at::Tensor const&, int, int) wrote 4097 bytes at byte 0 of the 4096-byte TCM block $BLOCK_OF_TCM, 1 byte past its end (on the device it overwrites the next block or a stream accessor's buffer)"

# Multicore: only TCM accessors (element accessors: see test_violations.sh).
run_driver --cores 8 "$WORK/limits8/limits" stream f32:4 f32:4:1,2,3,4
expected=$(for core in 0 1 2 3 4 5 6 7; do
	echo "error: core $core: op stream: read_stream_accessor<float>(): a multicore build supports only the TCM accessor (tcm_accessor()); element and stream accessors are undefined behaviour on the device's cores in SPMD mode"
done)
check_eq "a stream accessor in a multicore build" "$status $out" "1 $expected"

# More than 10 functions in one library: the host build refuses them (the
# device's only warns), and the emulator refuses to load a library made by
# hand that registers them.
set --
for i in 1 2 3 4 5 6 7 8 9 10 11; do
	set -- "$@" "my_ops::f$i(Tensor x) -> Tensor"
done
TOO_MANY_BUILT="build-custom-op: 11 ops in one library, but the device documents at most 10 functions in a library (and one custom-op library per model), and the host target's emulator refuses more; keep at most 10 ops in the library"
host_build "$WORK/many" many 1 "$@" -- "$SOURCE"
check_eq "an 11-function library is refused by the host build, naming the limit" "$?:$(cat "$WORK/many/build.log")" \
	"1:$TOO_MANY_BUILT"
ops=
for op; do ops="$ops --op '$op'"; done
eval "set -- $ops"
"$BCO" --emit-wrapper - --target xtensa "$@" 2>/dev/null |
	sed 's/asm("j switchBack");/switchBack();/' >"$WORK/many_wrapper.cpp"
check_true "a wrapper of 11 functions made by hand builds" host_build "$WORK/hand" many 1 -- "$SOURCE" "$WORK/many_wrapper.cpp"
TOO_MANY="the library registers 11 functions, but the device documents at most 10 in a library (and one custom-op library per model)"
run_driver "$WORK/hand/many" f1 f32:1 f32:1
check_eq "the emulator refuses to load 11 functions" "$status $out" "2 driver: $WORK/hand/many.so: $TOO_MANY"
finish
