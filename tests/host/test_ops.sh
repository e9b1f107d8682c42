#!/bin/sh
# test_ops.sh - the element-wise ops, factories and dtypes give exact results.
. "$(dirname "$0")/../cli/lib.sh"
. "$TOP/tests/host/lib_host.sh"

check_true "the op kernels build" host_build "$WORK/ops" ops 1 \
	'float_ops=my_ops::float_ops(Tensor x, int which) -> Tensor' \
	'int_ops=my_ops::int_ops(Tensor x, int which) -> Tensor' \
	-- "$TOP/tests/host/kernels/ops.cpp"
sed 's/^/# /' "$WORK/ops/build.log"

# float_op N WHAT EXPECTED...: float_ops(x, N) of x = -2.5 -1 0 1.5 4.
float_op() {
	run_driver "$WORK/ops/ops" float_ops f32:5 f32:5:-2.5,-1,0,1.5,4 "i32:1:$1"
	what=$2
	shift 2
	check_eq "$what" "$status $out" "0 $(lines out: "$@")"
}
float_op 0 abs 2.5 1 0 1.5 4
float_op 1 ceil -2 -1 0 2 4
float_op 2 floor -3 -1 0 1 4
float_op 3 "clamp to [-1, 2]" -1 -1 0 1.5 2
float_op 4 "pow by 2" 6.25 1 0 2.25 16
float_op 5 "add with alpha 2" -7.5 -3 0 4.5 12
float_op 6 "sub a scalar" -3.5 -2 -1 0.5 3
float_op 7 "div by a scalar" -1.25 -0.5 0 0.75 2
float_op 8 "log2 of full(8.0)" 3 3 3 3 3
float_op 9 "a Half 1/3 rounds to 0.333252" 0.333252 0.333252 0.333252 0.333252 0.333252
float_op 10 "a BFloat16 1/3 rounds to 0.333984" 0.333984 0.333984 0.333984 0.333984 0.333984
float_op 11 "mul_out into get_dst_tensor()" 6.25 1 0 2.25 16
float_op 12 "eye's diagonal and off-diagonal" 1 1 1 1 1
float_op 13 "sin(0) + exp(0)" 1 1 1 1 1
run_driver "$WORK/ops/ops" float_ops f32:5 f32:5:-2.5,-1,0,1.5,4 i32:1:14
check_eq "div_out of a Float result into an Int tensor" "$status $out" \
	"1 error: core 0: op float_ops: div_out: result type Float can't be cast to the desired output type Int"

# int_op N WHAT EXPECTED...: int_ops(x, N) of x = -7 -1 0 5 12 (int32).
int_op() {
	run_driver "$WORK/ops/ops" int_ops i32:5 i32:5:-7,-1,0,5,12 "i32:1:$1"
	what=$2
	shift 2
	check_eq "$what" "$status $out" "0 $(lines out: "$@")"
}
int_op 0 "bitwise_and with 6" 0 6 0 4 4
int_op 1 "bitwise_or with ones" -7 -1 1 5 13
int_op 2 bitwise_not 6 0 -1 -6 -13
int_op 3 "abs of integers" 7 1 0 5 12
int_op 4 "mul of integers" 49 1 0 25 144
int_op 5 "pow of integers" -343 -1 0 125 1728
finish
