#!/bin/sh
# test_violations.sh - each broken device rule ends the op with an error
# naming the core, the op and the rule; what the rules allow still works.
. "$(dirname "$0")/../cli/lib.sh"
. "$TOP/tests/host/lib_host.sh"
KERNELS=$TOP/tests/host/kernels

check_true "the rule kernels build" host_build "$WORK/rules" rules 1 \
	'stream_exhaust=my_ops::stream_exhaust(Tensor x) -> Tensor' \
	'tcm_pool=my_ops::tcm_pool(Tensor x) -> Tensor' \
	'wrong_dtype=my_ops::wrong_dtype(Tensor x) -> Tensor' \
	'accessor_dim=my_ops::accessor_dim(Tensor x) -> Tensor' \
	'accessor_index=my_ops::accessor_index(Tensor x) -> Tensor' \
	'sizes_index=my_ops::sizes_index(Tensor x) -> Tensor' \
	'scale=my_ops::scale(Tensor x, Scalar a) -> Tensor' \
	'add_mismatch=my_ops::add_mismatch(Tensor x, Tensor y) -> Tensor' \
	'whoami=my_ops::whoami(Tensor x) -> Tensor' \
	'element_types=my_ops::element_types(Tensor x) -> Tensor' \
	-- "$KERNELS/rules.cpp"
sed 's/^/# /' "$WORK/rules/build.log"
LIB=$WORK/rules/rules

run_driver "$LIB" stream_exhaust f32:4 f32:4:@1
check_eq "a fifth stream accessor works without a TCM buffer, with a warning that it is slow on the device" "$status $out" \
	"0 warning: core 0: op stream_exhaust: read_stream_accessor<float>(): the TCM pool has no 4096 bytes free for the stream's buffer (0 of 16384 bytes free): the stream works, but on the device at the speed of the element accessor
print core 0: five reads: 5
$(lines out: 1 2 3 4)"

run_driver "$LIB" tcm_pool f32:4 f32:4:@1
check_eq "tcm_malloc gives NULL, not an error, when the pool is short" "$status $out" "0 $(lines \
	'print core 0: whole pool: ok' \
	'print core 0: one more byte: NULL' \
	'print core 0: blocks 64-byte aligned: 1' \
	'print core 0: past the pool: NULL' \
	'print core 0: with four stream accessors: NULL' \
	'print core 0: four reads of the first element: 4' \
	out: 1 2 3 4)"

run_driver "$LIB" wrong_dtype f32:3 f32:3:@1
check_eq "a result of another dtype than the output" "$status $out" \
	"1 error: core 0: op wrong_dtype: customop_return_tensor: the result's dtype is Int but the output's is Float: the returned tensor must have the output's dtype"

run_driver "$LIB" accessor_dim f32:3 f32:3:@1
check_eq "accessor<float,2> on a 1-D tensor" "$status $out" \
	"1 error: core 0: op accessor_dim: accessor<float,2>(): the tensor has dim() 1, not 2"

run_driver "$LIB" accessor_index f32:3 f32:3:@1
check_eq "an accessor index one past the end" "$status $out" \
	"1 error: core 0: op accessor_index: accessor: index 3 is out of range for dimension 0 of size 3"
run_driver "$LIB" sizes_index f32:3 f32:3:@1
check_eq "sizes()[1] of a tensor of one dimension" "$status $out" \
	"1 error: core 0: op sizes_index: IntArrayRef: index 1 is out of range for a list of 1 (sizes() and strides() have one element per dimension; on the device the read goes past the list)"

run_driver "$LIB" scale f32:3 f32:3:@1 i32:1:2
check_eq "a Scalar from a 1-element tensor" "$status $out" "0 $(lines out: 2 4 6)"
run_driver "$LIB" scale f32:3 f32:3:@1 f32:3:@1
check_eq "a Scalar from a 3-element tensor" "$status $out" \
	"1 error: core 0: op scale: customop_next_scalar: Cannot create an at::Scalar. Argument has more than 1 element (argument 2 has 3)"
run_driver "$LIB" scale f32:3 f32:3:@1
check_eq "an argument the host did not pass" "$status $out" \
	"1 error: core 0: op scale: customop_next_scalar: argument 2 requested, but the op was given 1"

run_driver "$LIB" add_mismatch f32:3 f32:3:@1 f32:4:@1
check_eq "add of two shapes (no broadcasting)" "$status $out" \
	"1 error: core 0: op add_mismatch: add: shapes [3] and [4] differ: the device does not broadcast"

run_driver "$LIB" no_such_op f32:3 f32:3:@1
check_eq "an op the library lacks" "$status $out" "1 error: core 0: op no_such_op: no op of that name in this library"

run_driver "$LIB" whoami f32:2 f32:2:@1
check_eq "printf, puts and putchar reach the host from a single-core build" "$status $out" "0 $(lines \
	'print core 0: core 0 of 8' 'print core 0: via puts' 'print core 0: !' out: 1 2)"

run_driver "$LIB" element_types i32:2 i32:2:@1
check_eq "a stream or TCM copy of another type than the tensor's dtype: its bytes as they are, with a warning" \
	"$status $out" "0 $(lines \
	'warning: core 0: op element_types: read_stream_accessor<float>() on argument 1, whose dtype is Int: its bytes are taken as float, not converted (as on the device); use read_stream_accessor<int32_t>() for it, or give the tensor the dtype Float' \
	'print core 0: 1 read as float: 1.4013e-45' 'print core 0: 1 read as int32_t: 1' \
	'warning: core 0: op element_types: tensor_to_tcm<float>() on argument 1, whose dtype is Int: its bytes are taken as float, not converted (as on the device); use tensor_to_tcm<int32_t>() for it, or give the tensor the dtype Float' \
	'print core 0: 2 copied as words: 2' out: 1 2)"

check_true "the rule kernels build for 8 cores" host_build "$WORK/rules8" rules 8 \
	'whoami=my_ops::whoami(Tensor x) -> Tensor' -- "$KERNELS/rules.cpp"
sed 's/^/# /' "$WORK/rules8/build.log"
run_driver --cores 8 "$WORK/rules8/rules" whoami f32:2 f32:2:@1
expected=$(for core in 0 1 2 3 4 5 6 7; do
	lines "print core $core: core $core of 8" "print core $core: via puts" "print core $core: !"
done)
check_eq "each core knows its id from the link and prints with it" "$status $out" "0 $expected
$(lines out: 1 2)"

# Eleven arguments: build-custom-op refuses the schema, so the wrapper is
# written by hand, as the generator would write it.
check_true "an eleven-argument op builds" host_build "$WORK/eleven" eleven 1 -- \
	"$KERNELS/rules.cpp" "$KERNELS/eleven_wrapper.cpp"
sed 's/^/# /' "$WORK/eleven/build.log"
set -- f32:1:1 f32:1:2 f32:1:3 f32:1:4 f32:1:5 f32:1:6 f32:1:7 f32:1:8 f32:1:9 f32:1:10
run_driver "$WORK/eleven/eleven" eleven f32:1 "$@" f32:1:11
check_eq "the host passes 11 arguments" "$status $out" \
	"1 error: core 0: op eleven: too many arguments: 11 given, the device passes at most 10"
run_driver "$WORK/eleven/eleven" eleven f32:1 "$@"
check_eq "the wrapper pulls an 11th argument" "$status $out" \
	"1 error: core 0: op eleven: customop_next_tensor: too many arguments: the device passes at most 10"

# A copy as the result; eight cores cannot share that.
check_true "the copy kernel builds for 8 cores" host_build "$WORK/copy8" copy 8 \
	'my_ops::copy(Tensor x) -> Tensor' -- "$KERNELS/rules.cpp"
run_driver --cores 8 "$WORK/copy8/copy" copy f32:8 f32:8:@-4
expected=$(for core in 0 1 2 3 4 5 6 7; do
	echo "error: core $core: op copy: customop_return_tensor: a multicore build must write its output through get_dst_tensor() (each core writes its share; copying would overwrite the other cores' shares)"
done)
check_eq "a multicore build that returns a copy" "$status $out" "1 $expected"

# The single-core relu reads and writes through element accessors, which a
# multicore build does not support.
check_true "the single-core relu builds for 8 cores" host_build "$WORK/relu8" relu 8 \
	'my_ops::relu(Tensor x) -> Tensor' -- "$TOP/examples/relu/relu.cpp"
run_driver --cores 8 "$WORK/relu8/relu" relu f32:8 f32:8:@-4
expected=$(for core in 0 1 2 3 4 5 6 7; do
	echo "error: core $core: op relu: accessor<float,1>(): a multicore build supports only the TCM accessor (tcm_accessor()); element and stream accessors are undefined behaviour on the device's cores in SPMD mode"
done)
check_eq "an element accessor in a multicore build" "$status $out" "1 $expected"

# The official multicore sample's partition bug shows on sizes 8 does not divide.
check_true "the port of the official multicore relu builds" host_build "$WORK/official" relu 8 \
	'my_ops::relu(Tensor x) -> Tensor' -- "$TOP/tests/host/official_relu_port.cpp"
sed 's/^/# /' "$WORK/official/build.log"
run_driver --cores 8 "$WORK/official/relu" relu f32:16 f32:16:@-8
check_eq "the official sample is right when 8 divides the size" "$status $out" "0 $(relu_of -8 16)"
run_driver --cores 8 "$WORK/official/relu" relu f32:13 f32:13:@-6
check_eq "the official sample's last core runs off the end of 13 elements" "$status $out" \
	"1 error: core 7: op relu: tensor_to_tcm: elements [42, 48) are outside argument 1, which holds 13 elements of 4 bytes"
finish
