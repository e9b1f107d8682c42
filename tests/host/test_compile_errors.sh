#!/bin/sh
# test_compile_errors.sh - the host compile behaves like the device's: what
# the device rejects at compile time, the host SDK rejects too, with the
# device's message; warnings are errors, except those only a 64-bit host
# gives, which stay warnings with a note; clang++ is preferred and $CXX
# overrides; the SDK's headers, the examples and wrapper.cpp compile
# warning-free under g++ and clang++.
. "$(dirname "$0")/../cli/lib.sh"
. "$TOP/tests/host/lib_host.sh"
KERNELS=$TOP/tests/host/kernels
RELU='relu=my_ops::relu(Tensor x) -> Tensor'
PROBE='probe=my_ops::probe(Tensor x) -> Tensor'

# The command build-custom-op --target host compiles a source with.
: >"$WORK/probe.cpp"
"$BCO" -n --target host -B "$WORK/n" --name probe --op "$PROBE" "$WORK/probe.cpp" >"$WORK/commands"
compile_line=$(grep -F -- "-o $WORK/n/probe.o" "$WORK/commands")
check_eq "the probe's compile command is found" "$(printf '%s\n' "$compile_line" | wc -l)" 1

# rejected WHAT PATTERN SOURCE [CFLAG...]: compiling SOURCE as
# build-custom-op does fails, with a message matching PATTERN (grep -e).
rejected() {
	what=$1 pattern=$2
	mkdir -p "$WORK/n" # build-custom-op -n writes nothing, not even the directory
	cp "$3" "$WORK/probe.cpp"
	shift 3
	if eval "$compile_line" '"$@"' >"$WORK/rejected.log" 2>&1; then
		failures=$((failures + 1))
		echo "not ok - $what"
		echo "# it compiled"
	elif grep -q -e "$pattern" "$WORK/rejected.log"; then
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
rejected "writing through a const tensor's accessor<T,N>() does not compile" \
	"assignment of read-only location\|cannot assign to return value because function 'operator\[\]' returns a const value" \
	"$KERNELS/refused.cpp" -DCASE=1
rejected "write_stream_accessor() on a const tensor does not compile" \
	"Can only write to non-const Tensors: write_stream_accessor<T>() needs a non-const tensor" \
	"$KERNELS/refused.cpp" -DCASE=2
rejected "torch::zeros without a dtype does not compile" \
	"torch::zeros needs a dtype: the device's API reference requires the options, e.g. torch::zeros(sizes, torch::kFloat)" \
	"$KERNELS/refused.cpp" -DCASE=3
rejected "torch::ones without a dtype does not compile" "torch::ones needs a dtype" "$KERNELS/refused.cpp" -DCASE=4
rejected "torch::empty without a dtype does not compile" "torch::empty needs a dtype" "$KERNELS/refused.cpp" -DCASE=5
rejected "torch::full without a dtype does not compile" "torch::full needs a dtype" "$KERNELS/refused.cpp" -DCASE=6
rejected "torch::eye(n) without a dtype does not compile" "torch::eye needs a dtype" "$KERNELS/refused.cpp" -DCASE=7
rejected "torch::eye(n, m) without a dtype does not compile" "torch::eye needs a dtype" "$KERNELS/refused.cpp" -DCASE=8
rejected "an unused variable is an error, as under the device's -Wall -Werror" \
	"error: unused variable" "$KERNELS/refused.cpp" -DCASE=9
"$BCO" --emit-wrapper "$WORK/wrapper.cpp" --target host --op "$RELU"
rejected "STACK_SIZE above 4 MB does not compile" "STACK_SIZE cannot be greater than 4MB." \
	"$WORK/wrapper.cpp" -DSTACK_SIZE=0x400001
rejected "a negative STACK_SIZE does not compile" "STACK_SIZE cannot be negative." "$WORK/wrapper.cpp" -DSTACK_SIZE=-1

# The warnings only a 64-bit host gives stay warnings, each with its note.
run_bco --target host -B "$WORK/host_only" --name host_only \
	--op 'my_ops::host_only_warnings(Tensor x) -> Tensor' "$KERNELS/host_only_warnings.cpp"
check_eq "a kernel with only 64-bit-host warnings builds" "$status:$out" "0:$WORK/host_only/host_only.so"
notes=$(printf '%s\n' "$err" | grep '^build-custom-op: note:' | sed 's/ stays a warning on the host target.*//')
case $HOST_FAMILY in
clang) expected="-Wformat -Wint-to-pointer-cast -Wint-to-void-pointer-cast -Wc++11-narrowing -Wconstant-conversion" ;;
gcc) expected="-Wformat -Wint-to-pointer-cast -Wnarrowing -Woverflow -Wsign-compare" ;;
*) expected="-Wformat -Wint-to-pointer-cast" ;;
esac
check_eq "each such warning gets a note ($HOST_CXX, $HOST_FAMILY)" "$notes" \
	"$(for flag in $expected; do echo "build-custom-op: note: $flag"; done)"
check_eq "the note says why" "$(printf '%s\n' "$err" | grep '^build-custom-op: note: -Wformat ')" \
	"build-custom-op: note: -Wformat stays a warning on the host target, which is 64-bit, while the device is 32-bit: size_t, ptrdiff_t and long are 32 bits there and int64_t is long long, so a format that is right on the device (%d or %u for a size_t, %lld for an int64_t) is wrong here, and the other way round. The device compiles with -Werror: check this line against the device's types."

# Which compiler: $CXX, else clang++ when it is on PATH, else c++; the
# flags that name warnings follow its family.  Stand-ins on PATH suffice,
# as a dry run runs nothing.
mkdir -p "$WORK/with_clang" "$WORK/without_clang" "$WORK/tools"
printf '#!/bin/sh\nexit 0\n' >"$WORK/tools/g++-12"
chmod +x "$WORK/tools/g++-12"
ln -s "$WORK/tools/g++-12" "$WORK/with_clang/clang++"
ln -s "$WORK/tools/g++-12" "$WORK/with_clang/g++"
ln -s "$WORK/tools/g++-12" "$WORK/without_clang/c++"
COMMON="-std=c++14 -fPIC -O2 -g -MMD -MP -MF $WORK/n/probe.d -Wall -Werror -fstack-clash-protection -Wno-error=format -Wno-error=int-to-pointer-cast -Wno-error=narrowing"
TAIL="-I$SDK/include -c -o $WORK/n/probe.o $WORK/probe.cpp"
# The host runtime's access checks, as each family spells them.
CLANG_CHECKS="-fsanitize=kernel-address -mllvm -asan-instrumentation-with-call-threshold=0 -mllvm -asan-stack=0 -mllvm -asan-globals=0"
GCC_CHECKS="-fsanitize=kernel-address --param=asan-instrumentation-with-call-threshold=0 --param=asan-stack=0 --param=asan-globals=0"
# compile_with ENVIRONMENT...: the probe's compile command under env.
compile_with() {
	rm -rf "$WORK/n"
	env "$@" "$BCO" -n --target host -B "$WORK/n" --name probe --op "$PROBE" "$WORK/probe.cpp" |
		grep -F -- "-o $WORK/n/probe.o"
}
check_eq "clang++ is preferred when it is on PATH" "$(compile_with -u CXX PATH="$WORK/with_clang")" \
	"clang++ $COMMON -Wno-error=constant-conversion -Wno-c99-designator $CLANG_CHECKS $TAIL"
check_eq "c++ without clang++; a c++ that is g++ gets g++'s warning names" \
	"$(compile_with -u CXX PATH="$WORK/without_clang")" \
	"c++ $COMMON -Wno-error=overflow -Wno-error=sign-compare $GCC_CHECKS $TAIL"
check_eq "\$CXX overrides the choice" "$(compile_with CXX=g++ PATH="$WORK/with_clang")" \
	"g++ $COMMON -Wno-error=overflow -Wno-error=sign-compare $GCC_CHECKS $TAIL"
check_eq "a \$CXX of neither family gets only the flags both know (and no access checks)" \
	"$(compile_with CXX="$WORK/tools/mycc" PATH="$WORK/with_clang")" "$WORK/tools/mycc $COMMON $TAIL"

# The same sources with every warning an error, under each compiler here.
for compiler in g++ clang++; do
	if ! command -v "$compiler" >/dev/null 2>&1; then
		echo "ok - warning-free under $compiler # SKIP $compiler is not installed"
		continue
	fi
	for source in "$WORK/wrapper.cpp" "$TOP/examples/relu/relu.cpp" "$TOP/examples/relu_multicore/relu.cpp" \
		"$TOP/examples/axpby/axpby.cpp" "$TOP/examples/relu_memcpy/relu.cpp" "$TOP/tests/run/kernels/custom_op.cpp" \
		"$KERNELS/rules.cpp" "$KERNELS/ops.cpp" "$KERNELS/api.cpp" \
		"$KERNELS/coherence.cpp" "$KERNELS/limits.cpp" "$KERNELS/big_locals.cpp"; do
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
