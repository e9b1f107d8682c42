#!/bin/sh
# test_build_incremental.sh - what a rebuild runs, and what runs at once.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/fake/sdk.sh"
cd "$WORK" || exit 1
mkdir -p src
printf '#include "relu.h"\nint relu;\n' >src/relu.cpp
printf 'int relu_h;\n' >src/relu.h
printf 'int axpy;\n' >src/axpy.cpp
FAKE_LOG=$WORK/log
export FAKE_LOG
OPS="--op my_ops::relu(Tensor\ x)->Tensor"

build() {
	: >log
	run_bco -j 2 --name lib --op 'my_ops::relu(Tensor x) -> Tensor' \
		--op 'my_ops::axpy(Tensor x, Scalar a) -> Tensor' "$@" src/relu.cpp src/axpy.cpp
}
# outputs: what the fake tools wrote in the last build, in order of the steps.
outputs() { sed -n 's/.* -o \([^ ]*\) .*/\1/p' log | sort | tr '\n' ' '; }
# change FILE...: gives the files a modification time they never had (in
# the past, so that no test depends on which is newer: any other time is a
# change).
moves=0
change() {
	moves=$((moves + 1))
	touch -d "@$(($(date +%s) - 1000 - moves))" "$@"
}

build
check_eq "the first build runs every step" "$status:$(outputs)" \
	"0:build/axpy.o build/lib.packed.so build/lib.so build/relu.o build/wrapper.o "
build
check_eq "a no-op rebuild spawns no process" "$status:$(cat log)" "0:"
check_eq "a no-op rebuild prints the artifact and no status" "$out:$err" "build/lib.packed.so:"

change src/relu.h
build
check_eq "touching a header rebuilds its includer, then the link and the pack" "$(outputs)" \
	"build/lib.packed.so build/lib.so build/relu.o "
build
check_eq "and then nothing" "$(cat log)" ""

change src/axpy.cpp
build
check_eq "touching a source rebuilds its object, the link and the pack" "$(outputs)" \
	"build/axpy.o build/lib.packed.so build/lib.so "

build --cflag -O3
check_eq "a new cflag rebuilds everything it reaches" "$(outputs)" \
	"build/axpy.o build/lib.packed.so build/lib.so build/relu.o build/wrapper.o "
build --cflag -O3
check_eq "the same cflag again rebuilds nothing" "$(cat log)" ""

build --cflag -O3 -I src
check_eq "an include reaches the user sources, not the wrapper" "$(outputs)" \
	"build/axpy.o build/lib.packed.so build/lib.so build/relu.o "

: >log
run_bco -j 2 --name lib --op 'my_ops::relu(Tensor x) -> Tensor' \
	--op 'my_ops::axpy(Tensor x, Scalar a, int n) -> Tensor' --cflag -O3 -I src src/relu.cpp src/axpy.cpp
check_eq "a changed schema rebuilds the wrapper only, then the link and the pack" "$(outputs)" \
	"build/lib.packed.so build/lib.so build/wrapper.o "

build --cflag -O3 -I src
rm build/lib.so
build --cflag -O3 -I src
check_eq "a deleted library is linked and packed again" "$(outputs)" "build/lib.packed.so build/lib.so "

LM_LICENSE_FILE=/other/license build --cflag -O3 -I src
check_eq "a changed license rebuilds every step" "$(outputs)" \
	"build/axpy.o build/lib.packed.so build/lib.so build/relu.o build/wrapper.o "

printf '# build-custom-op log 1\nzzzz garbage\n\001\002' >build/.build-custom-op.log
build --cflag -O3 -I src
check_eq "a corrupt build log means a rebuild, not a crash" "$status:$(outputs)" \
	"0:build/axpy.o build/lib.packed.so build/lib.so build/relu.o build/wrapper.o "
head -c 40 build/.build-custom-op.log >build/log.tmp && mv build/log.tmp build/.build-custom-op.log
build --cflag -O3 -I src
check_eq "a truncated build log rebuilds what it no longer vouches for" "$status" 0
build --cflag -O3 -I src
check_eq "and the next build is a no-op again" "$(cat log)" ""

rm build/relu.d
build --cflag -O3 -I src
check_eq "a missing depfile rebuilds its object" "$(outputs)" "build/lib.packed.so build/lib.so build/relu.o "

# Multicore: one header, one compile, eight links and packs.
rm -rf build
: >log
run_bco --multicore --name lib --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp src/axpy.cpp
change src/relu.h
: >log
run_bco --multicore --name lib --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp src/axpy.cpp
check_eq "multicore: a header change runs 1 compile, 8 links and 8 packs" \
	"$(grep -c -- '-c ' log) $(grep -c -- '-mlsp' log) $(grep -c xt-pkg-loadlib log)" "1 8 8"

# Parallelism, shown by the order of the fake tools' stamps, not by time.
rm -rf build
FAKE_STAMPS=$WORK/stamps FAKE_BARRIER=3 run_bco -j 3 --name lib --op 'my_ops::relu(Tensor x) -> Tensor' \
	src/relu.cpp src/axpy.cpp
check_eq "with -j 3 the two compiles and the wrapper compile run at once" \
	"$status:$(head -3 stamps | cut -d' ' -f1 | tr '\n' ' '):$(grep -c timeout stamps)" "0:start start start :0"
rm -rf build stamps
FAKE_STAMPS=$WORK/stamps run_bco -j 1 --name lib --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp src/axpy.cpp
check_eq "with -j 1 every step ends before the next starts" "$(cut -d' ' -f1 stamps | tr '\n' ' ')" \
	"start end start end start end start end start end "
rm -rf build stamps
FAKE_STAMPS=$WORK/stamps run_bco -j 2 --multicore --name lib --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp
first_pack=$(grep -n 'start lib_cpu0.packed.so' stamps | cut -d: -f1)
last_link=$(grep -n 'end lib_cpu7.so' stamps | cut -d: -f1)
check_true "a pack starts as soon as its own link ends, before the last link ends" test "$first_pack" -lt "$last_link"
check_eq "the status lines count from 1 to 18 in order" "$(printf '%s\n' "$err" | cut -d' ' -f1 | tr '\n' ' ')" \
	"$(for k in $(seq 1 18); do printf '[%d/18] ' "$k"; done)"
check_eq "the 18 steps: 2 compiles, 8 links and 8 packs" \
	"$(printf '%s\n' "$err" | cut -d' ' -f2- | sed 's/cpu[0-7]/cpuI/' | sort | uniq -c | sed 's/^ *//')" \
"1 CC build/wrapper.cpp
1 CC src/relu.cpp
8 LINK build/lib_cpuI.so
8 PACK build/lib_cpuI.packed.so"
finish
