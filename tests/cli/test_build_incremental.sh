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
past=$(($(date +%s) - 100000))
change() {
	past=$((past + 1))
	touch -d "@$past" "$@"
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

# Clock skew: any change of an input's time is a change, earlier or later.
build --cflag -O3 -I src
printf 'int axpy_edited;\n' >src/axpy.cpp
change src/axpy.cpp
touch -d "@$(($(stat -c %Y build/axpy.o) - 3600))" src/axpy.cpp
build --cflag -O3 -I src
check_eq "an edited source given an older time than its object is recompiled" "$(outputs)" \
	"build/axpy.o build/lib.packed.so build/lib.so "
# warnings: the warning lines of the last build.
warnings() { printf '%s\n' "$err" | grep 'warning'; }
future_warning="build-custom-op: warning: src/relu.h is dated 2099-01-01 00:00:00 UTC, in the future; check the clock (it is rebuilt when its date changes, not at every build)"
touch -d '2099-01-01 00:00:00 UTC' src/relu.h
build --cflag -O3 -I src
check_eq "a header dated in the future is a change: its includer is recompiled, with a one-line warning" \
	"$(outputs):$(warnings)" "build/lib.packed.so build/lib.so build/relu.o :$future_warning"
build --cflag -O3 -I src
check_eq "the next build runs nothing, and warns again" "$status:$(cat log):$(warnings)" "0::$future_warning"
touch -d '2098-01-01 00:00:00 UTC' src/relu.h src/axpy.cpp
build --cflag -O3 -I src
check_eq "two inputs in the future: one line names the count" "$(warnings)" \
	"build-custom-op: warning: 2 inputs are dated in the future, such as src/relu.h (2098-01-01 00:00:00 UTC); check the clock (each is rebuilt when its date changes, not at every build)"
change src/relu.h src/axpy.cpp
build --cflag -O3 -I src
check_eq "back in the past: rebuilt once more, without a warning" "$(outputs):$(warnings)" \
	"build/axpy.o build/lib.packed.so build/lib.so build/relu.o :"

# The SDK: every file named on a link command is an input of the link.
mkdir -p "$SDK/lsp_fll_load_cpus/lsp_fll_load_cpu_single/ldscripts"
printf 'spec\n' >"$SDK/lsp_fll_load_cpus/lsp_fll_load_cpu_single/specs"
build --cflag -O3 -I src
check_eq "a file added to the linker spec relinks and repacks" "$(outputs)" "build/lib.packed.so build/lib.so "
for file in neuron/libneuroncustomop.a c10/lib/libc10.a neuron/libcweak.a \
	lsp_fll_load_cpus/lsp_fll_load_cpu_single/specs; do
	change "$SDK/$file"
	build --cflag -O3 -I src
	check_eq "a change of the SDK's $file relinks and repacks, and compiles nothing" "$(outputs)" \
		"build/lib.packed.so build/lib.so "
done
printf 'script\n' >"$SDK/lsp_fll_load_cpus/lsp_fll_load_cpu_single/ldscripts/elf32xtensa.x"
build --cflag -O3 -I src
printf 'other script\n' >"$SDK/lsp_fll_load_cpus/lsp_fll_load_cpu_single/ldscripts/elf32xtensa.x"
build --cflag -O3 -I src
check_eq "a linker script rewritten in a subdirectory of the spec relinks" "$(outputs)" "build/lib.packed.so build/lib.so "
build --cflag -O3 -I src
check_eq "and then nothing" "$(cat log)" ""

# -n: the steps that would run, and nothing written.
change src/relu.h
rm build/.build-custom-op.lock
cp build/.build-custom-op.log saved.log
build --cflag -O3 -I src -n
check_eq "-n prints the steps that would run, not every step" \
	"$status:$(printf '%s\n' "$out" | sed -n 's/.* -o \([^ ]*\) .*/\1/p' | tr '\n' ' ')" \
	"0:build/relu.o build/lib.so build/lib.packed.so "
check_eq "-n runs nothing, takes no lock and leaves the log as it was" \
	"$(cat log):$(ls -A build | grep -c lock):$(cmp build/.build-custom-op.log saved.log && echo same)" ":0:same"
: >log
run_bco -j 2 -n --name lib --op 'my_ops::relu(Tensor x) -> Tensor' \
	--op 'my_ops::axpy(Tensor x, Scalar a, long long n) -> Tensor' --cflag -O3 -I src src/relu.cpp src/axpy.cpp
check_eq "-n with a changed schema also prints the wrapper's compile" \
	"$(printf '%s\n' "$out" | sed -n 's/.* -o \([^ ]*\) .*/\1/p' | tr '\n' ' ')" \
	"build/relu.o build/wrapper.o build/lib.so build/lib.packed.so "
check_true "and leaves wrapper.cpp as it was" grep -q 'customop_next_int\|customop_next_scalar' build/wrapper.cpp
build --cflag -O3 -I src
build --cflag -O3 -I src -n
check_eq "-n after a build prints nothing" "$status:$out" "0:"

# A log of version 1 is read without harm: a no-op stays one.
build --cflag -O3 -I src
{
	echo '# build-custom-op log 1'
	sed -n 's/^\([0-9a-f]*\) [0-9a-f]* [^	]*	\(.*\)$/\1 build\/\2/p' build/.build-custom-op.log
} >old.log
mv old.log build/.build-custom-op.log
build --cflag -O3 -I src
check_eq "a build over a version 1 log of the same build runs nothing" "$status:$(cat log)" "0:"
check_eq "and records the log as version 2" "$(head -1 build/.build-custom-op.log):$(grep -c '	' build/.build-custom-op.log)" \
	"# build-custom-op log 2:7"
change src/relu.h
build --cflag -O3 -I src
check_eq "from then on a change of time is a change" "$(outputs)" "build/lib.packed.so build/lib.so build/relu.o "

# Layouts: a build removes what the last build of the library made and this one does not.
# files: what the build directory holds, but for the depfiles and the log and lock.
files() { ls build | grep -v '\.d$' | tr '\n' ' '; }
rm -rf build
build --multicore
build
check_eq "single-core after --multicore: the per-core libraries are gone" "$status:$(files)" \
	"0:axpy.o compile_commands.json lib.packed.so lib.so lib.stripped.so relu.o wrapper.cpp wrapper.o "
check_eq "and the log no longer names them" "$(grep -c _cpu build/.build-custom-op.log)" 0
build --multicore
check_eq "--multicore after single-core: the single-core library and its packs are gone" \
	"$status:$(files | tr ' ' '\n' | grep -c -v _cpu)" "0:5"
build --multicore --cflag -g
check_eq "with -g, the packs of the last build go too" "$(files | tr ' ' '\n' | grep -c packed)" 0
run_bco --name other --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp
check_eq "another library built into the directory leaves this one's outputs alone" \
	"$status:$(ls build | grep -c '^lib_cpu[0-7]\.so$'):$(ls build/other.*)" "0:8:build/other.packed.so
build/other.so
build/other.stripped.so"
build --multicore --cflag -g
check_true "and the other library's outputs stay too" test -f build/other.so
rm -rf build
build
: >log
run_bco -j 2 --name lib --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp
check_eq "a source dropped from the build: its object goes" "$status:$(files)" \
	"0:compile_commands.json lib.packed.so lib.so lib.stripped.so relu.o wrapper.cpp wrapper.o "

# Only objects and libraries are ever removed so, whatever a damaged log says.
printf '0000000000000001 0000000000000002 lib\t%s\n' relu.cpp .build-custom-op.lock stale.so \
	>>build/.build-custom-op.log
cp src/relu.cpp build/relu.cpp
: >build/stale.so
build
check_eq "a damaged log cannot make a build remove a source or the lock, only an object or a library" \
	"$status:$(ls -A build | grep -c -e '^relu.cpp$' -e lock -e stale)" "0:2"

# A header edited while the compile that first reads it runs: that compile
# is not recorded, so the next build compiles again.
rm -rf build stamps gate
FAKE_STAMPS=$WORK/stamps FAKE_GATE=$WORK/gate "$BCO" -j 1 --name lib --op 'my_ops::relu(Tensor x) -> Tensor' \
	src/relu.cpp >/dev/null 2>&1 &
first=$!
tries=0
while ! grep -q '^wait relu.o' stamps 2>/dev/null && [ $tries -lt 600 ]; do sleep 0.1; tries=$((tries + 1)); done
printf 'int relu_h_edited;\n' >src/relu.h
: >gate
wait $first
: >log
run_bco -j 1 --name lib --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp
check_eq "a header edited during its first compile: the next build compiles again" "$status:$(outputs)" \
	"0:build/lib.packed.so build/lib.so build/relu.o "
rm -f gate stamps
# The same, with the edit made as the compile starts, often before a
# coarse clock has moved on from the build's own time; ten times, since
# without the wait for the clock one in six or so was missed.
compiled_again=
for try in 1 2 3 4 5 6 7 8 9 10; do
	rm -rf build
	FAKE_EDIT=$WORK/src/relu.h FAKE_EDIT_BY=src/relu.cpp \
		run_bco -j 1 --name lib --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp
	: >log
	run_bco -j 1 --name lib --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp
	compiled_again="$compiled_again$status:$(grep -c -- '-c ' log) "
done
check_eq "a header edited as its first compile starts: the next build compiles again, 10 times of 10" \
	"$compiled_again" "0:1 0:1 0:1 0:1 0:1 0:1 0:1 0:1 0:1 0:1 "

# Multicore: one header, one compile, eight links and packs.
rm -rf build
: >log
run_bco --multicore --name lib --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp src/axpy.cpp
change src/relu.h
: >log
run_bco --multicore --name lib --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp src/axpy.cpp
check_eq "multicore: a header change runs 1 compile, 8 links and 8 packs" \
	"$(grep -c -- '-c ' log) $(grep -c -- '-mlsp' log) $(grep -c xt-pkg-loadlib log)" "1 8 8"
printf 'spec of core 3\n' >"$SDK/lsp_fll_load_cpus/lsp_fll_load_cpu3/specs"
: >log
run_bco --multicore --name lib --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp src/axpy.cpp
check_eq "multicore: a change of core 3's linker spec relinks and repacks core 3 only" "$(outputs)" \
	"build/lib_cpu3.packed.so build/lib_cpu3.so "

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
