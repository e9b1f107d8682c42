#!/bin/sh
# test_api.sh - the documented API that kernels call gives the documented
# result: pow and bitwise ops with a Scalar first, fill_, the accessor type
# names with close(), the coherence policy, and assert from <torch/torch.h>.
. "$(dirname "$0")/../cli/lib.sh"
. "$TOP/tests/host/lib_host.sh"

check_true "the API kernels build" host_build "$WORK/api" api 1 \
	'api_float=my_ops::api_float(Tensor x, int which) -> Tensor' \
	'api_int=my_ops::api_int(Tensor x, int which) -> Tensor' \
	-- "$TOP/tests/host/kernels/api.cpp"
sed 's/^/# /' "$WORK/api/build.log"

# float_case N WHAT EXPECTED...: api_float(x, N) of x = 1 2 3.
float_case() {
	run_driver "$WORK/api/api" api_float f32:3 f32:3:1,2,3 "i32:1:$1"
	what=$2
	shift 2
	check_eq "$what" "$status $out" "0 $(lines out: "$@")"
}
float_case 0 "pow(2.0, x): a Scalar base" 2 4 8
float_case 1 "pow_out(out, 2, x)" 2 4 8
float_case 2 "fill_(2.5) fills in place" 2.5 2.5 2.5
float_case 3 "fill_(7) converts an integer Scalar to the tensor's dtype" 7 7 7
float_case 4 "every accessor type by its documented name; close() returns 0" 3 5 7
float_case 5 "assert from <torch/torch.h> alone, holding" 1 2 3
run_driver "$WORK/api/api" api_float f32:3 f32:3:1,2,3 i32:1:6
case $out in
"error: core 0: op api_float: assertion failed: x.numel() == 0 ($TOP/tests/host/kernels/api.cpp:49, in "*"api_float("*")")
	check_eq "a failed assert ends the op with the assertion, not the process" "$status" 1 ;;
*) check_eq "a failed assert ends the op with the assertion, not the process" "$status $out" "1 error: core 0: op api_float: assertion failed: x.numel() == 0 ($TOP/tests/host/kernels/api.cpp:49, in ...)" ;;
esac
float_case 7 "the coherence policy is COHERENT until set, and shared by copies" 11 11 11
float_case 8 "fill_ returns the tensor itself, bound to a torch::Tensor&" 1.5 1.5 1.5

# int_case N WHAT EXPECTED...: api_int(x, N) of x = 0 1 2 3 (int32).
int_case() {
	run_driver "$WORK/api/api" api_int i32:4 i32:4:0,1,2,3 "i32:1:$1"
	what=$2
	shift 2
	check_eq "$what" "$status $out" "0 $(lines out: "$@")"
}
int_case 0 "bitwise_and(6, x): a Scalar first" 0 0 2 2
int_case 1 "bitwise_or(1, x)" 1 1 3 3
int_case 2 "bitwise_and_out(out, 6, x)" 0 0 2 2
int_case 3 "bitwise_or_out(out, 2^32 + 5, x): the Scalar cast to int32 is 5" 5 5 7 7
int_case 4 "bitwise_and(x, 6.9): the Scalar cast to int32 is 6" 0 0 2 2
int_case 5 "pow(2, x) of integers" 1 2 4 8
int_case 6 "pow_out(out, 3, x)" 1 3 9 27
run_driver "$WORK/api/api" api_int f32:4 i32:4:0,1,2,3 i32:1:7
check_eq "pow(2.5, x) of integers gives Float" "$status $out" "0 $(lines out: 1 2.5 6.25 15.625)"
run_driver "$WORK/api/api" api_int i32:2 i32:2:1,-1 i32:1:5
check_eq "pow(2, x) to a negative integer power is refused, as in PyTorch" "$status $out" \
	"1 error: core 0: op api_int: pow: Integers to negative integer powers are not allowed."
finish
