#!/bin/sh
# test_inputs.sh - values that would reach the tools wrongly are refused,
# or passed so that no tool misreads them.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/fake/sdk.sh"
mkdir "$WORK/project"
cd "$WORK/project" || exit 1
RELU='my_ops::relu(Tensor x) -> Tensor'
printf 'int relu;\n' >relu.cpp
printf 'int x;\n' >./-x.cpp

run_bco -n --name relu --op "$RELU" -- -x.cpp
check_eq "a source starting with '-' reaches the compiler as ./-x.cpp" \
	"$status:$(printf '%s\n' "$out" | head -1 | sed 's/.* -o //')" "0:build/-x.o ./-x.cpp"
run_bco -n -B -dir --name relu --op "$RELU" relu.cpp
check_eq "a build directory starting with '-' is passed as ./-dir" \
	"$status:$(printf '%s\n' "$out" | sed -n 2p | sed 's/.* -o //')" "0:./-dir/wrapper.o ./-dir/wrapper.cpp"
run_bco -j1 -B -dir --name relu --op "$RELU" relu.cpp
check_eq "and builds there" "$status:$out" "0:./-dir/relu.packed.so"

run_bco -n -I '' --name relu --op "$RELU" relu.cpp
check_eq "an empty -I is refused" "$status:$err" "2:build-custom-op: -I needs a directory, not an empty value
Try 'build-custom-op --help' for more information."
run_bco -n -D '' --name relu --op "$RELU" relu.cpp
check_eq "an empty -D is refused" "$status:$err" "2:build-custom-op: -D needs NAME[=VALUE], not an empty value
Try 'build-custom-op --help' for more information."
run_bco -n --cflag= --name relu --op "$RELU" relu.cpp
check_eq "an empty --cflag is refused" "$status:$err" \
	"1:build-custom-op: cflags: entry 1 is empty: the compiler would take an empty word for a file named ''"
run_bco -n --ldflag -lm --ldflag= --name relu --op "$RELU" relu.cpp
check_eq "an empty --ldflag is refused" "$status:$err" \
	"1:build-custom-op: ldflags: entry 2 is empty: the linker would take an empty word for a file named ''"

mkdir a.cpp
run_bco -n --name relu --op "$RELU" a.cpp
check_eq "a directory named a.cpp is refused" "$status:$err" \
	"1:build-custom-op: source a.cpp is a directory, not a C or C++ file"
printf 'int k;\n' >kernel
run_bco -n --name relu --op "$RELU" kernel
check_eq "a source without an extension is refused" "$status:$err" \
	"1:build-custom-op: source kernel has no C or C++ extension (.c, .cc, .cp, .cxx, .cpp, .CPP, .c++ or .C), which tells the compiler its language; rename it"
printf 'int k;\n' >kernel.txt
run_bco -n --name relu --op "$RELU" kernel.txt
check_eq "a source with another extension is refused" "$status" 1
mkfifo pipe.cpp
run_bco -n --name relu --op "$RELU" pipe.cpp
check_eq "a FIFO is refused" "$status:$err" \
	"1:build-custom-op: source pipe.cpp is not a regular file (a device, FIFO or socket); give the kernel's C or C++ file"
for extension in c cc cp cxx cpp CPP c++ C; do cp relu.cpp "k_$extension.$extension"; done
run_bco -n --name relu --op "$RELU" k_c.c k_cc.cc k_cp.cp k_cxx.cxx k_cpp.cpp k_CPP.CPP k_c++.c++ k_C.C
check_eq "every C and C++ extension is a source" "$status" 0

run_bco -n -B '' --name relu --op "$RELU" relu.cpp
check_eq "an empty build directory is refused" "$status:$err" \
	"1:build-custom-op: the build directory is empty: name one, such as 'build' (or '.' for this one)"

long=$(printf '%0300d' 0 | tr 0 a)
run_bco -n --name "$long" --op "$RELU" relu.cpp
check_eq "a 300-character name is refused, saying why" "$status:$err" \
	"1:build-custom-op: library name is 300 characters long; at most 200 are allowed, so that every file named after it (such as NAME_cpu7.stripped.so) fits in a file name"
name200=$(printf '%0200d' 0 | tr 0 b)
run_bco -j1 --multicore --name "$name200.so" --op "$RELU" relu.cpp
check_eq "a 200-character name builds all its files" "$status:$(printf '%s\n' "$out" | tail -1)" \
	"0:build/${name200}_cpu7.packed.so"

run_bco -n --name builtin --op "$RELU" relu.cpp
check_eq "the library name builtin is reserved" "$status:$err" \
	"1:build-custom-op: library name 'builtin' is reserved by the Neuron runtime; choose another name"
run_bco -n --name builtin.so --op "$RELU" relu.cpp
check_eq "with an extension too" "$status:$err" \
	"1:build-custom-op: library name 'builtin.so' is reserved by the Neuron runtime; choose another name"
run_bco -n --name builtin2 --op "$RELU" relu.cpp
check_eq "builtin2 is not" "$status" 0
finish
