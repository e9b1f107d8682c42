#!/bin/sh
# test_examples.sh - the examples built for the host give exact results on
# even and uneven sizes, on one core and on eight.
. "$(dirname "$0")/../cli/lib.sh"
. "$TOP/tests/host/lib_host.sh"
RELU='relu=my_ops::relu(Tensor x) -> Tensor'
AXPBY='axpby=my_ops::axpby(Tensor x, Tensor y, Scalar a, float b, int n) -> Tensor'

check_true "single-core relu builds" host_build "$WORK/relu" relu 1 "$RELU" -- "$TOP/examples/relu/relu.cpp"
sed 's/^/# /' "$WORK/relu/build.log"
for count in 8 13 1; do
	run_driver "$WORK/relu/relu" relu "f32:$count" "f32:$count:@-5"
	check_eq "single-core relu of $count elements" "$status $out" "0 $(relu_of -5 "$count")"
done

check_true "multicore relu builds" host_build "$WORK/relu8" relu 8 "$RELU" -- \
	"$TOP/examples/relu_multicore/relu.cpp"
sed 's/^/# /' "$WORK/relu8/build.log"
# 8 and 16 divide evenly; 3 and 7 leave cores without work; 8197 makes each
# core loop over more than one 1024-element chunk.
for count in 8 16 3 7 13 8197; do
	"$DRIVER" --cores 8 "$WORK/relu8/relu" relu "f32:$count" "f32:$count:@-4000" >"$WORK/actual" 2>&1
	relu_of -4000 "$count" >"$WORK/expected"
	check_file "multicore relu of $count elements on 8 cores" "$WORK/actual" "$WORK/expected"
done
run_driver --cores 8 "$WORK/relu8/relu" relu f32:2x5 f32:2x5:-1,2,-3,4,-5,6,-7,8,-9,10
check_eq "multicore relu of a 2x5 tensor" "$status $out" "0 $(lines out: 0 2 0 4 0 6 0 8 0 10)"

check_true "the custom_op.h relu builds" host_build "$WORK/relu_memcpy" relu 8 "$RELU" -- \
	"$TOP/examples/relu_memcpy/relu.cpp"
sed 's/^/# /' "$WORK/relu_memcpy/build.log"
for count in 8 3 13 8197; do
	"$DRIVER" --cores 8 "$WORK/relu_memcpy/relu" relu "f32:$count" "f32:$count:@-4000" >"$WORK/actual" 2>&1
	relu_of -4000 "$count" >"$WORK/expected"
	check_file "custom_op.h relu of $count elements on 8 cores" "$WORK/actual" "$WORK/expected"
done

check_true "axpby builds" host_build "$WORK/axpby" axpby 1 "$AXPBY" -- "$TOP/examples/axpby/axpby.cpp"
sed 's/^/# /' "$WORK/axpby/build.log"
# Four steps of y <- 0.25 x + 0.75 y: y + (x - y) (1 - 0.75^4) = 175/256 of the way.
run_driver "$WORK/axpby/axpby" axpby f32:3 f32:3:256,-256,0 f32:3:0,0,16 f32:1:0.25 f32:1:0.75 i32:1:4
check_eq "axpby: four blend steps" "$status $out" "0 $(lines out: 175 -175 5.0625)"
run_driver "$WORK/axpby/axpby" axpby f32:5 f32:5:@1 f32:5:@10 i32:1:2 f32:1:-1 i32:1:1
check_eq "axpby: an int Scalar, one step" "$status $out" "0 $(lines out: -8 -7 -6 -5 -4)"
run_driver "$WORK/axpby/axpby" axpby f32:2 f32:2:1,2 f32:2:3,4 f32:1:2 f32:1:1 i32:1:0
check_eq "axpby: no steps returns y" "$status $out" "0 $(lines out: 3 4)"
finish
