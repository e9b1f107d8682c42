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
		"1:build-custom-op: op 1: function name '$name' is also at::$name of the kernel API: the wrapper's call $name(...) with a Tensor argument would be ambiguous (argument-dependent lookup finds both); rename the kernel function, for example to '${name}_kernel' (FN=${name}_kernel in --op, in fn_names, or m.def(\"$name\", SHAPE_FUNCTION, \"${name}_kernel\") in a shape library)"
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
	"1:build-custom-op: op 1: function name 'output' is the wrapper's variable for the kernel's result, so the call output(...) would not compile; rename the kernel function, for example to 'output_kernel' (FN=output_kernel in --op, in fn_names, or m.def(\"output\", SHAPE_FUNCTION, \"output_kernel\") in a shape library)"
wrapper_for output 'Tensor x'
check_true "and its wrapper does not compile" sh -c '! "$1" -std=c++14 -fsyntax-only -I"$2" "$3" 2>/dev/null' \
	sh "$CXX" "$INCLUDE" "$WORK/output.cpp"

# The names the wrapper's headers (the host SDK's, and the C and C++
# libraries they include) declare at global scope as something other than a
# function: a type, variable, enumerator or namespace.  One translation
# unit declares a kernel of every identifier of the preprocessed wrapper;
# those the compiler refuses are the names taken (by $CXX, and by g++ and
# clang++ when installed: their own <stddef.h> differ).  Each is refused,
# and a name ending in _t is refused only when it is one of them.
printf '#include "neuron/wrapper_api.h"\n' >"$WORK/headers.cpp"
: >"$WORK/identifiers"
: >"$WORK/taken"
for compiler in "$CXX" g++ clang++; do
	command -v "$compiler" >/dev/null 2>&1 || continue
	limit=-fmax-errors=0
	"$compiler" --version | grep -q clang && limit=-ferror-limit=0
	"$compiler" -std=c++14 -E -P -I"$INCLUDE" "$WORK/headers.cpp" |
		grep -oE '\b[A-Za-z][A-Za-z0-9_]*\b' | grep -v __ | sort -u >"$WORK/seen"
	{
		cat "$WORK/headers.cpp"
		sed 's/.*/at::Tensor &(const at::Tensor \&);/' "$WORK/seen"
	} >"$WORK/declarations.cpp"
	"$compiler" -std=c++14 -fsyntax-only $limit -I"$INCLUDE" "$WORK/declarations.cpp" 2>&1 |
		sed -n 's/^[^:]*declarations\.cpp:\([0-9]*\):[0-9]*: error: .*/\1/p' | sort -un |
		while read -r line; do sed -n "$((line - 1))p" "$WORK/seen"; done >>"$WORK/taken"
	cat "$WORK/seen" >>"$WORK/identifiers"
done
sort -u -o "$WORK/taken" "$WORK/taken"
sort -u -o "$WORK/identifiers" "$WORK/identifiers"
check_true "the headers take size_t, pthread_t and timezone" sh -c \
	'grep -qx size_t "$1" && grep -qx pthread_t "$1" && grep -qx timezone "$1"' sh "$WORK/taken"
refused_wrongly= accepted_wrongly=
while read -r name; do
	run_bco --emit-wrapper - --op "$name=ns::f(Tensor x) -> Tensor"
	[ "$status" = 1 ] || accepted_wrongly="$accepted_wrongly $name"
done <"$WORK/taken"
check_eq "every name the headers take is refused" "$accepted_wrongly" ""
run_bco --emit-wrapper - --op 'ns::size_t(Tensor x) -> Tensor'
check_eq "with the reason and the rename in each way of naming a kernel" "$status:$err" \
	"1:build-custom-op: op 1: function name 'size_t' is a type, variable, constant, namespace or macro that the SDK's or the C library's headers declare, so the wrapper would not compile; rename the kernel function, for example to 'size_t_kernel' (FN=size_t_kernel in --op, in fn_names, or m.def(\"size_t\", SHAPE_FUNCTION, \"size_t_kernel\") in a shape library)"
grep '_t$' "$WORK/identifiers" >"$WORK/ending_in_t"
printf '%s\n' softmax_t relu_t my_type_t >>"$WORK/ending_in_t"
while read -r name; do
	run_bco --emit-wrapper - --op "$name=ns::f(Tensor x) -> Tensor"
	if grep -qx "$name" "$WORK/taken"; then
		continue
	fi
	[ "$status" = 0 ] || refused_wrongly="$refused_wrongly $name"
done <"$WORK/ending_in_t"
check_eq "a name ending in _t that the headers do not take is accepted" "$refused_wrongly" ""
wrapper_for softmax_t 'Tensor x'
check_true "softmax_t's wrapper compiles" compiles softmax_t

# Every namespace the host SDK's headers open at global scope is refused.
for namespace in $(python3 "$TOP/tests/cli/kernel_api.py" --namespaces "$INCLUDE"); do
	run_bco --emit-wrapper - --op "$namespace=ns::f(Tensor x) -> Tensor"
	check_eq "namespace $namespace of the SDK headers is refused" "$status" 1
	wrapper_for "$namespace" 'Tensor x'
	check_true "and its wrapper does not compile" sh -c '! "$1" -std=c++14 -fsyntax-only -I"$2" "$3" 2>/dev/null' \
		sh "$CXX" "$INCLUDE" "$WORK/$namespace.cpp"
done
finish
