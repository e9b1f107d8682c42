#!/bin/sh
# test_run_examples.sh - the examples built with build-custom-op --target host
# and run with run-custom-op, end to end, on even and uneven sizes.
. "$(dirname "$0")/../cli/lib.sh"
RUN=$TOP/run-custom-op
# As on a device set up to print (see run-custom-op(1), OUTPUT OF THE CORES).
export NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES=4096
NPY="python3 $TOP/tests/run/npy.py"
cd "$WORK" || exit 1

# host_build NAME SCHEMA SOURCE [OPTIONS...]: builds into build/.
host_build() {
	name=$1 schema=$2 source=$3
	shift 3
	run_bco --target host -B build --name "$name" --op "$schema" "$@" "$source"
}
# floats COUNT: COUNT values spread over [-8, 8), and relu_of the same.
floats() { awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "%g ", ((i * 37) % 129 - 64) / 8 }'; }
relu_of() { awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) { v = ((i * 37) % 129 - 64) / 8; printf "%g ", (v > 0 ? v : 0) } }'; }
# run_op ARGS...: runs run-custom-op; sets $out, $err and $status.
run_op() { run_capture "$RUN" "$@"; }

host_build relu 'my_ops::relu(Tensor x) -> Tensor' "$TOP/examples/relu/relu.cpp" -v -j 1
check_eq "the single-core relu builds for the host" "$status:$out" "0:build/relu.so"
# The compiler build-custom-op chooses, and the flags for its family (its
# warnings' names, and its spelling of the runtime's access checks).
if [ -n "${CXX:-}" ]; then host_cxx=$CXX; elif command -v clang++ >/dev/null; then host_cxx=clang++; else host_cxx=c++; fi
case $(basename "$(realpath "$(command -v "$host_cxx")")") in
*clang*) family_flags="-Wno-error=constant-conversion -Wno-c99-designator -fsanitize=kernel-address -mllvm -asan-instrumentation-with-call-threshold=0 -mllvm -asan-stack=0 -mllvm -asan-globals=0" ;;
*g++* | *gcc*) family_flags="-Wno-error=overflow -Wno-error=sign-compare -fsanitize=kernel-address --param=asan-instrumentation-with-call-threshold=0 --param=asan-stack=0 --param=asan-globals=0" ;;
esac
check_eq "-v shows each host command, shell-quoted, before its status line" "$(printf '%s\n' "$err" | sed -n '1,2p;5,6p')" \
"$host_cxx -std=c++14 -fPIC -O2 -g -MMD -MP -MF build/relu.d -Wall -Werror -fstack-clash-protection -Wno-error=format -Wno-error=int-to-pointer-cast -Wno-error=narrowing $family_flags -I$TOP/sdk/host/include -c -o build/relu.o $TOP/examples/relu/relu.cpp
[1/3] CC $TOP/examples/relu/relu.cpp
$host_cxx -shared -o build/relu.so build/relu.o build/wrapper.o $TOP/sdk/host/lib/core_single.o $TOP/sdk/host/lib/libcustomop_host.a -Wl,-Bsymbolic -Wl,--no-undefined -Wl,--compress-debug-sections=zlib
[3/3] LINK build/relu.so"
check_eq "the host build records its layout, its library with the library's id, and the ops" \
	"$(cat build/relu.ops)" "# build-custom-op ops 2
cores 1
library relu.so $(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import record; print(record.library_id(sys.argv[2]))' "$TOP/tests/run" build/relu.so)
relu	T	(Tensor x)"
# shellcheck disable=SC2046 # the values are words
$NPY make x.npy '<f4' 5 -2 -1 0 1.5 2
run_op --in x.npy --out y.npy build/relu
check_eq "single-core relu runs" "$status:$($NPY show y.npy)" "0:<f4 (5,): 0.0 0.0 0.0 1.5 2.0"

# multicore_relu SOURCE WHAT: builds a multicore relu and runs it on even
# and uneven sizes, with the output checks.
multicore_relu() {
	rm -rf build
	host_build relu 'my_ops::relu(Tensor x) -> Tensor' "$1" --multicore
	check_eq "the $2 builds eight host libraries" "$status:$(printf '%s\n' "$out" | wc -l)" "0:8"
	for count in 3 8 21 1000 10001; do
		# shellcheck disable=SC2046
		$NPY make x.npy '<f4' "$count" $(floats "$count")
		# shellcheck disable=SC2046
		$NPY make want.npy '<f4' "$count" $(relu_of "$count")
		run_op --in x.npy --out y.npy --expect want.npy build/relu
		check_eq "$2 on 8 cores, $count elements, every element written once" "$status:$err" "0:"
	done
}
multicore_relu "$TOP/examples/relu_multicore/relu.cpp" "multicore relu"
run_op --cores 1 --in x.npy build/relu
check_eq "--cores 1 needs relu.so, which a multicore build does not make" "$status" 1

# The same relu written with custom_op.h: neuron_memcpy between HBM and a
# data RAM buffer, the output written through its HBM address.
multicore_relu "$TOP/examples/relu_memcpy/relu.cpp" "custom_op.h relu"
run_op --in x.npy --profile profile.json build/relu
check_eq "its neuron_memcpy calls are priced as TCM copies: 40004 bytes each way over the 8 cores" \
	"$status:$(python3 -c 'import json, sys
cores = json.load(open(sys.argv[1]))["cores"]
print(sum(c["tensor_to_tcm_bytes"] for c in cores), sum(c["tcm_to_tensor_bytes"] for c in cores))' profile.json)" \
	"0:40004 40004"

rm -rf build
host_build axpby 'my_ops::axpby(Tensor x, Tensor y, Scalar a, float b, int n) -> Tensor' "$TOP/examples/axpby/axpby.cpp"
check_eq "axpby builds for the host" "$status:$out" "0:build/axpby.so"
$NPY make x.npy '<f4' 4 16 -16 8 0
$NPY make y.npy '<f4' 4 0 0 256 -256
# four steps of y <- 0.25 x + 0.75 y: x (1 - 0.75^4) + 0.75^4 y, 0.75^4 = 0.31640625
$NPY make want.npy '<f4' 4 10.9375 -10.9375 86.46875 -81
run_op --in x.npy --in y.npy --scalar 0.25 --scalar 0.75 --scalar 4 --out out.npy --expect want.npy build/axpby
check_eq "axpby with a Tensor, a Tensor, a Scalar, a float and an int" "$status:$err:$($NPY show out.npy)" \
	"0::<f4 (4,): 10.9375 -10.9375 86.46875 -81.0"
run_op --in x.npy --in y.npy --scalar 0.25 --scalar 0.75 build/axpby
check_eq "too few arguments are refused before running" "$status:$err" \
	"2:run-custom-op: axpby expects (Tensor x, Tensor y, Scalar a, float b, int n); got 4 arguments"

# A kernel with 16 KiB of locals: too much for the emulated core stack, as
# for the device's; -DSTACK_SIZE moves it to a stack of its own.
rm -rf build
host_build big_locals 'my_ops::big_locals(Tensor x) -> Tensor' "$TOP/tests/host/kernels/big_locals.cpp"
$NPY make x.npy '<f4' 1 1
run_op --in x.npy build/big_locals
check_eq "a kernel that overflows the core stack is reported with the fix" "$status:$out:$err" \
	"1::run-custom-op: core 0: op big_locals: stack overflow in the core stack (12288 bytes); build with a larger -DSTACK_SIZE=<bytes> (see build-custom-op(1))"
# A 64 MiB frame is reported as the overflow every time, not run over
# whatever lies below the stack.
host_build big_locals 'my_ops::big_locals(Tensor x) -> Tensor' "$TOP/tests/host/kernels/big_locals.cpp" -D LOCALS=67108864
for attempt in 1 2 3; do
	run_op --in x.npy build/big_locals
	check_eq "a 64 MiB frame is the core stack's overflow (run $attempt of 3)" "$status:$out:$err" \
		"1::run-custom-op: core 0: op big_locals: stack overflow in the core stack (12288 bytes); build with a larger -DSTACK_SIZE=<bytes> (see build-custom-op(1))"
done
host_build big_locals 'my_ops::big_locals(Tensor x) -> Tensor' "$TOP/tests/host/kernels/big_locals.cpp" -D STACK_SIZE=65536
# (big_locals returns the output unwritten: what is checked here is the stack.)
run_op --in x.npy --output-checks off build/big_locals
check_eq "with -DSTACK_SIZE=65536 it runs on a switched stack, and says its result leaks" "$status:$out:$err" \
	"0:16384 bytes of locals, switched_stack 1, sum 2088960, quarter 522240:run-custom-op: warning: core 0: op big_locals: the op's result leaks on every call that switches stacks: switchBack() skips the destructor of the wrapper's \`output\`, so the tensor's handle is never freed (the device leaks it too); see run-custom-op(1), THE STACK SWITCH"

# The official multicore sample's partition bug shows on uneven sizes only.
rm -rf build
host_build relu 'my_ops::relu(Tensor x) -> Tensor' "$TOP/tests/host/official_relu_port.cpp" --multicore
for count in 16 4096; do
	# shellcheck disable=SC2046
	$NPY make x.npy '<f4' "$count" $(floats "$count")
	# shellcheck disable=SC2046
	$NPY make want.npy '<f4' "$count" $(relu_of "$count")
	run_op --in x.npy --expect want.npy build/relu
	check_eq "the official sample is right when 8 divides the size ($count)" "$status" 0
done
$NPY make x.npy '<f4' 21 $(floats 21)
run_op --in x.npy build/relu
check_eq "the official sample's bug is exposed on 21 elements" "$status" 1
# Core 7's share is enlarged to 2 + 21 % 8 = 7 before it becomes the
# multiplier of the offset: 7 * 7 = 49, past the end.
check_eq "the report names the core, the op and the rule it broke" "$err" \
	"run-custom-op: core 7: op relu: tensor_to_tcm: elements [49, 56) are outside argument 1 (Tensor x), which holds 21 elements of 4 bytes"
finish
