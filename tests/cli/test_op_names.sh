#!/bin/sh
# test_op_names.sh - op names that pass as C identifiers but make a wrapper
# that does not compile are refused, and only those.  The functions of the
# kernel API come from the host SDK's headers (kernel_api.py), so a new
# function there fails this test until validation knows it; each refused
# name's wrapper is compiled against the host SDK to show it fails.
. "$(dirname "$0")/lib.sh"
INCLUDE=$TOP/sdk/host/include
CXX=${CXX:-c++}
TAB=$(printf '\t')

# wrapper_for NAME ARGS: the host wrapper of op NAME(ARGS), made for a
# placeholder name (validation refuses NAME itself) and renamed: the
# generator only substitutes the name.
wrapper_for() {
	"$BCO" --emit-wrapper - --target host --op "zzplaceholder=ns::f($2) -> Tensor" |
		sed "s/zzplaceholder/$1/g" >"$WORK/$1.cpp"
}
# compiles NAME: the wrapper of NAME compiles against the host SDK.
compiles() {
	"$CXX" -std=c++14 -fsyntax-only -I"$INCLUDE" "$WORK/$1.cpp" >"$WORK/$1.err" 2>&1
}

wrapper_for relu_kernel 'Tensor x, Scalar s, int i, float f, long long l'
check_true "the control: a wrapper with a free name compiles against the host SDK" compiles relu_kernel

python3 "$TOP/tests/cli/kernel_api.py" "$INCLUDE" >"$WORK/api"
check_true "the host SDK declares functions in namespace at" grep -q "^abs$TAB" "$WORK/api"
while IFS=$TAB read -r name args; do
	if [ "$args" = - ]; then
		# No call with the wrapper's arguments reaches it: the name is free.
		run_bco --emit-wrapper - --op "$name=ns::$name(Tensor x) -> Tensor"
		check_eq "$name (at::$name takes no argument the wrapper passes) is accepted" "$status" 0
		wrapper_for "$name" 'Tensor x'
		check_true "and its wrapper compiles" compiles "$name"
		continue
	fi
	run_bco --emit-wrapper - --op "ns::$name($args) -> Tensor"
	check_eq "$name is refused with the reason and the rename" "$status:$err" \
		"1:build-custom-op: op 1: function name '$name' is also at::$name of the kernel API: the wrapper's call $name(...) with a Tensor argument would be ambiguous (argument-dependent lookup finds both); rename the kernel function, for example to '${name}_kernel' (FN=${name}_kernel in --op, or in fn_names)"
	wrapper_for "$name" "$args"
	if compiles "$name"; then
		failures=$((failures + 1))
		echo "not ok - the wrapper of $name($args) does not compile"
	else
		check_true "the wrapper of $name($args) does not compile: the call is ambiguous" \
			grep -q ambiguous "$WORK/$name.err"
	fi
done <"$WORK/api"
run_bco --emit-wrapper - --op "abs_kernel=ns::abs(Tensor x) -> Tensor"
check_eq "the rename the message gives is accepted" "$status" 0

run_bco --emit-wrapper - --op 'ns::output(Tensor x) -> Tensor'
check_eq "output, the wrapper's variable, is refused" "$status:$err" \
	"1:build-custom-op: op 1: function name 'output' is the wrapper's variable for the kernel's result, so the call output(...) would not compile; rename the kernel function, for example to 'output_kernel' (FN=output_kernel in --op, or in fn_names)"
wrapper_for output 'Tensor x'
check_true "and its wrapper does not compile" sh -c '! "$1" -std=c++14 -fsyntax-only -I"$2" "$3" 2>/dev/null' \
	sh "$CXX" "$INCLUDE" "$WORK/output.cpp"

# Every namespace the host SDK's headers open at global scope is refused.
for namespace in $(python3 "$TOP/tests/cli/kernel_api.py" --namespaces "$INCLUDE"); do
	run_bco --emit-wrapper - --op "$namespace=ns::f(Tensor x) -> Tensor"
	check_eq "namespace $namespace of the SDK headers is refused" "$status" 1
	wrapper_for "$namespace" 'Tensor x'
	check_true "and its wrapper does not compile" sh -c '! "$1" -std=c++14 -fsyntax-only -I"$2" "$3" 2>/dev/null' \
		sh "$CXX" "$INCLUDE" "$WORK/$namespace.cpp"
done
finish
