#!/bin/sh
# test_compile_errors.sh - what the device rejects at compile time, the host
# SDK rejects too, with the device's message; and the SDK's headers, the
# examples and wrapper.cpp compile warning-free under g++ and clang++.
. "$(dirname "$0")/../cli/lib.sh"
. "$TOP/tests/host/lib_host.sh"
KERNELS=$TOP/tests/host/kernels
RELU='relu=my_ops::relu(Tensor x) -> Tensor'

# rejected WHAT MESSAGE SOURCE [CFLAG...]: compiling SOURCE fails, saying MESSAGE.
rejected() {
	what=$1 message=$2 source=$3
	shift 3
	if "$HOST_CXX" -std=c++14 -fPIC -O2 -Wall "$@" -I"$SDK/include" -c -o "$WORK/rejected.o" "$source" \
		>"$WORK/rejected.log" 2>&1; then
		failures=$((failures + 1))
		echo "not ok - $what"
		echo "# it compiled"
	elif grep -q "$message" "$WORK/rejected.log"; then
		echo "ok - $what"
	else
		failures=$((failures + 1))
		echo "not ok - $what"
		sed 's/^/# /' "$WORK/rejected.log"
	fi
}

rejected "data_ptr() does not compile" "data_ptr() is not available on the device" "$KERNELS/data_ptr.cpp"
rejected "writing through a const tensor's tcm_accessor does not compile" \
	"Can only write to non-const Tensors" "$KERNELS/const_tcm_write.cpp"
"$BCO" --emit-wrapper "$WORK/wrapper.cpp" --target host --op "$RELU"
rejected "STACK_SIZE above 4 MB does not compile" "STACK_SIZE cannot be greater than 4MB." \
	"$WORK/wrapper.cpp" -DSTACK_SIZE=0x400001

# The same sources with every warning an error, under each compiler here.
for compiler in g++ clang++; do
	if ! command -v "$compiler" >/dev/null 2>&1; then
		echo "ok - warning-free under $compiler # SKIP $compiler is not installed"
		continue
	fi
	for source in "$WORK/wrapper.cpp" "$TOP/examples/relu/relu.cpp" "$TOP/examples/relu_multicore/relu.cpp" \
		"$TOP/examples/axpby/axpby.cpp" "$KERNELS/rules.cpp" "$KERNELS/ops.cpp"; do
		case $source in
		"$WORK"/*) label=wrapper.cpp ;;
		*) label=$(basename "$(dirname "$source")")/$(basename "$source") ;;
		esac
		check_true "$label is warning-free under $compiler" \
			"$compiler" -std=c++14 -fPIC -O2 -Wall -Wextra -Wpedantic -Werror -I"$SDK/include" \
			-c -o "$WORK/strict.o" "$source"
	done
done
finish
