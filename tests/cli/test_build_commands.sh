#!/bin/sh
# test_build_commands.sh - the exact commands of xtensa builds, with the
# fake toolchain, and of host builds (dry runs, with a stand-in compiler).
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/fake/sdk.sh"
cd "$WORK" || exit 1
mkdir -p src inc
printf 'int relu;\n' >src/relu.cpp
printf 'int axpy;\n' >src/axpy.cpp
FAKE_LOG=$WORK/log
export FAKE_LOG

CC_OPT="-g -std=c++14 -stdlib=libc++-e -fno-jump-tables -Os -Wall -Werror -Wno-c99-designator -mcoproc"
CORE="--xtensa-core=ncore2gp --xtensa-system=/opt/aws/neuron/gpsimd/tools/ncore2gp/config"
INC="-I$SDK -I$SDK/torch/include -I$SDK/c10/include"
libs() { echo "$SDK/neuron/libneuroncustomop.a $SDK/c10/lib/libc10.a -lloader -mlsp=$SDK/lsp_fll_load_cpus/lsp_fll_load_cpu$1 -lxmem -lhal -lc++-e -lm -lgcc $SDK/neuron/libcweak.a"; }

run_bco -j 1 --name relu.so --op 'my_ops::relu(Tensor x) -> Tensor' \
	--op 'axpy=my_ops::axpy(Tensor x, Scalar a, float b, int c) -> Tensor' \
	-I inc -I -isystem/opt/x --cflag -O3 -D STACK_SIZE=8192 src/relu.cpp src/axpy.cpp
check_eq "a single-core build succeeds and prints the packed library" "$status:$out" "0:build/relu.packed.so"
check_eq "single-core commands, flag order included" "$(cat log)" \
"xt-clang++ $CC_OPT -MMD -MP -fpic -mlongcalls -c $CORE -O3 -DSTACK_SIZE=8192 $INC -Iinc -isystem/opt/x -o build/relu.o src/relu.cpp
xt-clang++ $CC_OPT -MMD -MP -fpic -mlongcalls -c $CORE -O3 -DSTACK_SIZE=8192 $INC -Iinc -isystem/opt/x -o build/axpy.o src/axpy.cpp
xt-clang++ $CC_OPT -MMD -MP -fpic -mlongcalls -c $CORE -O3 -DSTACK_SIZE=8192 $INC -o build/wrapper.o build/wrapper.cpp
xt-clang++ $CC_OPT $CORE $INC -o build/relu.so build/relu.o build/axpy.o build/wrapper.o $(libs _single)
xt-pkg-loadlib -e lib_func $CORE -o build/relu.packed.so -s build/relu.stripped.so build/relu.so"
check_eq "the status lines count the steps" "$err" "[1/5] CC src/relu.cpp
[2/5] CC src/axpy.cpp
[3/5] CC build/wrapper.cpp
[4/5] LINK build/relu.so
[5/5] PACK build/relu.packed.so"
check_file "the wrapper for both ops" build/wrapper.cpp "$TOP/tests/golden/relu_axpy.xtensa.cpp"
for f in relu.o axpy.o wrapper.o relu.so relu.packed.so relu.stripped.so relu.d wrapper.d; do
	check_true "build/$f exists" test -f "build/$f"
done

rm -rf build log
run_bco -j 1 --multicore -B out --name relu --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp
check_eq "a multicore build prints eight packed libraries" "$status:$out" "0:out/relu_cpu0.packed.so
out/relu_cpu1.packed.so
out/relu_cpu2.packed.so
out/relu_cpu3.packed.so
out/relu_cpu4.packed.so
out/relu_cpu5.packed.so
out/relu_cpu6.packed.so
out/relu_cpu7.packed.so"
expected="xt-clang++ $CC_OPT -MMD -MP -fpic -mlongcalls -c $CORE $INC -o out/relu.o src/relu.cpp
xt-clang++ $CC_OPT -MMD -MP -fpic -mlongcalls -c $CORE $INC -o out/wrapper.o out/wrapper.cpp"
for core in 0 1 2 3 4 5 6 7; do
	expected="$expected
xt-clang++ $CC_OPT $CORE $INC -o out/relu_cpu$core.so out/relu.o out/wrapper.o $(libs $core)
xt-pkg-loadlib -e lib_func $CORE -o out/relu_cpu$core.packed.so -s out/relu_cpu$core.stripped.so out/relu_cpu$core.so"
done
check_eq "multicore commands: one link per core with its own LSP, each packed after its link" "$(cat log)" "$expected"

rm -rf out log
run_bco --cflag -g --name relu --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp
check_eq "with -g the linked library is the artifact" "$status:$out" "0:build/relu.so"
check_eq "with -g nothing is packed" "$(grep -c xt-pkg-loadlib log)" 0
rm -rf build log
run_bco --cflag -ggdb --name relu --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp
check_eq "only the exact word -g skips packing" "$out" "build/relu.packed.so"

rm -rf build log
Q7_CORE=q8 LM_LICENSE_FILE=/lic FAKE_ENV=$WORK/env run_bco --name relu --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp
check_eq "Q7_CORE moves the core and its config" "$(head -1 log | grep -o -- '--xtensa-[a-z]*=[^ ]*' | tr '\n' ' ')" \
	"--xtensa-core=q8 --xtensa-system=/opt/aws/neuron/gpsimd/tools/q8/config "
check_eq "a set LM_LICENSE_FILE reaches the tools" "$(sort -u env)" "LM_LICENSE_FILE=/lic"
rm -rf build log env
FAKE_ENV=$WORK/env run_bco --core c1 --xtensa-system /sys --name relu --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp
check_eq "--core and --xtensa-system override" "$(head -1 log | grep -o -- '--xtensa-[a-z]*=[^ ]*' | tr '\n' ' ')" \
	"--xtensa-core=c1 --xtensa-system=/sys "
check_eq "an unset LM_LICENSE_FILE is given the default" "$(sort -u env)" \
	"LM_LICENSE_FILE=/opt/aws/neuron/gpsimd/tools/licenses/amzn_vq7_us_582883.out"

rm -rf build log
mkdir -p "$WORK/my sdk"
cp -r "$SDK/." "$WORK/my sdk/"
mkdir -p 'dir with $(touch pwned) and spaces'
printf 'int x;\n' >'dir with $(touch pwned) and spaces/k;rm -rf x.cpp'
FAKE_ARGV=$WORK/argv run_bco -B "b d" --sdk "$WORK/my sdk" -I "inc dir" --cflag '-DMSG="a b"' --name relu \
	--op 'my_ops::relu(Tensor x) -> Tensor' 'dir with $(touch pwned) and spaces/k;rm -rf x.cpp'
check_eq "paths with spaces and metacharacters build" "$status:$out" "0:b d/relu.packed.so"
check_true "nothing was executed from a path" test ! -e pwned -a ! -e "dir with \$(touch pwned) and spaces/pwned"
check_eq "each path and flag is one argv word" "$(grep 'k;rm -rf x.cpp>$' argv)" \
"<-g><-std=c++14><-stdlib=libc++-e><-fno-jump-tables><-Os><-Wall><-Werror><-Wno-c99-designator><-mcoproc><-MMD><-MP><-fpic><-mlongcalls><-c><--xtensa-core=ncore2gp><--xtensa-system=/opt/aws/neuron/gpsimd/tools/ncore2gp/config><-DMSG=\"a b\"><-I$WORK/my sdk><-I$WORK/my sdk/torch/include><-I$WORK/my sdk/c10/include><-Iinc dir><-o><b d/k;rm -rf x.o><dir with \$(touch pwned) and spaces/k;rm -rf x.cpp>"

rm -rf build log
run_bco -j 1 --multicore --ldflag -Wl,-z,now --ldflag '-L/opt/my libs' --name relu \
	--op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp
check_eq "--ldflag goes at the end of every link, and nowhere else" "$(grep -c -- '-Wl,-z,now -L/opt/my libs$' log):$(grep -c -- '-Wl,-z,now' log)" "8:8"

rm -rf build log
run_bco -j 1 --launcher 'fake-launcher --flag' --name relu --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp
check_eq "the launcher's words come before each compile, not the link or the pack" "$(cut -d' ' -f1-4 log)" \
"fake-launcher --flag xt-clang++ -g
xt-clang++ -g -std=c++14 -stdlib=libc++-e
fake-launcher --flag xt-clang++ -g
xt-clang++ -g -std=c++14 -stdlib=libc++-e
xt-clang++ -g -std=c++14 -stdlib=libc++-e
xt-pkg-loadlib -e lib_func --xtensa-core=ncore2gp"
rm -rf build log
run_bco -n --launcher 'ccache -x' --name relu --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp
check_eq "a dry run shows the launcher before the compiler" "$(printf '%s\n' "$out" | cut -d' ' -f1-3 | head -3)" \
"ccache -x xt-clang++
ccache -x xt-clang++
xt-clang++ -g -std=c++14"
rm -rf build
CUSTOM_OP_LAUNCHER=distcc run_bco -n --name relu --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp
check_eq "CUSTOM_OP_LAUNCHER is the default launcher" "$(printf '%s\n' "$out" | head -1 | cut -d' ' -f1-2)" "distcc xt-clang++"

rm -rf build log
run_bco -n -B "dry run" --name relu --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp
check_eq "a dry run exits 0 and runs nothing" "$status:$(cat log 2>/dev/null)" "0:"
check_eq "a dry run prints every command, shell-quoted" "$out" \
"xt-clang++ $CC_OPT -MMD -MP -fpic -mlongcalls -c $CORE $INC -o 'dry run/relu.o' src/relu.cpp
xt-clang++ $CC_OPT -MMD -MP -fpic -mlongcalls -c $CORE $INC -o 'dry run/wrapper.o' 'dry run/wrapper.cpp'
xt-clang++ $CC_OPT $CORE $INC -o 'dry run/relu.so' 'dry run/relu.o' 'dry run/wrapper.o' $(libs _single)
xt-pkg-loadlib -e lib_func $CORE -o 'dry run/relu.packed.so' -s 'dry run/relu.stripped.so' 'dry run/relu.so'"
check_true "a dry run writes nothing, not even the build directory" test ! -e 'dry run'

run_bco -B "dry run" --name relu --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp
check_eq "compile_commands.json" "$(cat 'dry run/compile_commands.json')" "[
  {
    \"directory\": \"$WORK\",
    \"arguments\": [\"xt-clang++\", \"-g\", \"-std=c++14\", \"-stdlib=libc++-e\", \"-fno-jump-tables\", \"-Os\", \"-Wall\", \"-Werror\", \"-Wno-c99-designator\", \"-mcoproc\", \"-MMD\", \"-MP\", \"-fpic\", \"-mlongcalls\", \"-c\", \"--xtensa-core=ncore2gp\", \"--xtensa-system=/opt/aws/neuron/gpsimd/tools/ncore2gp/config\", \"-I$SDK\", \"-I$SDK/torch/include\", \"-I$SDK/c10/include\", \"-o\", \"dry run/relu.o\", \"src/relu.cpp\"],
    \"file\": \"src/relu.cpp\",
    \"output\": \"dry run/relu.o\"
  },
  {
    \"directory\": \"$WORK\",
    \"arguments\": [\"xt-clang++\", \"-g\", \"-std=c++14\", \"-stdlib=libc++-e\", \"-fno-jump-tables\", \"-Os\", \"-Wall\", \"-Werror\", \"-Wno-c99-designator\", \"-mcoproc\", \"-MMD\", \"-MP\", \"-fpic\", \"-mlongcalls\", \"-c\", \"--xtensa-core=ncore2gp\", \"--xtensa-system=/opt/aws/neuron/gpsimd/tools/ncore2gp/config\", \"-I$SDK\", \"-I$SDK/torch/include\", \"-I$SDK/c10/include\", \"-o\", \"dry run/wrapper.o\", \"dry run/wrapper.cpp\"],
    \"file\": \"dry run/wrapper.cpp\",
    \"output\": \"dry run/wrapper.o\"
  }
]"
"$BCO" -B j --cflag '-DQ="x\y"' --name relu --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp >/dev/null 2>&1
cat >check.py <<'PY'
import json
print(json.load(open("j/compile_commands.json"))[0]["arguments"][17])
PY
check_eq "compile_commands.json escapes quotes and backslashes as JSON" "$(python3 check.py)" '-DQ="x\y"'

rm -rf build log
printf 'int a;\n' >src/wrapper.cpp
run_bco --name relu --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp src/wrapper.cpp
check_eq "a source named wrapper.* is refused" "$status:$err" \
	"1:build-custom-op: source src/wrapper.cpp would compile to build/wrapper.o, the generated wrapper's object; rename the source"
mkdir -p src2 && printf 'int b;\n' >src2/relu.cc
run_bco --name relu --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp src2/relu.cc
check_eq "two sources with one base name are refused" "$status:$err" \
	"1:build-custom-op: sources src/relu.cpp and src2/relu.cc would both compile to build/relu.o; rename one of them (objects are named after the source's base name)"
check_eq "and nothing was written" "$(ls -A build 2>/dev/null)" ""

# The host target's commands, flag order included: a dry run runs nothing,
# so a stand-in clang++ on PATH gives the commands build-custom-op makes
# for clang.  The depfile is named with -MF beside the object, so that it
# lands there also through a launcher that preprocesses without the -o.
mkdir -p host_tools
printf '#!/bin/sh\nexit 0\n' >host_tools/clang++
chmod +x host_tools/clang++
HOST_SDK=$TOP/sdk/host
HOST_CC="-std=c++14 -fPIC -O2 -g -MMD -MP"
# The warnings, then the host runtime's access checks (clang's spelling).
HOST_CHECKS="-Wall -Werror -fstack-clash-protection -Wno-error=format -Wno-error=int-to-pointer-cast -Wno-error=narrowing -Wno-error=constant-conversion -Wno-c99-designator -fsanitize=kernel-address -mllvm -asan-instrumentation-with-call-threshold=0 -mllvm -asan-stack=0 -mllvm -asan-globals=0"
host_dry_run() {
	run_capture env -u CXX -u CUSTOM_OP_LAUNCHER PATH="$WORK/host_tools:$PATH" "$BCO" -n --target host "$@"
}
host_dry_run -B hb --name relu --op 'my_ops::relu(Tensor x) -> Tensor' \
	--op 'axpy=my_ops::axpy(Tensor x, Scalar a, float b, int c) -> Tensor' \
	-I inc --cflag -O3 src/relu.cpp src/axpy.cpp
check_eq "host single-core commands, flag order included" "$status:$out" \
"0:clang++ $HOST_CC -MF hb/relu.d $HOST_CHECKS -O3 -I$HOST_SDK/include -Iinc -c -o hb/relu.o src/relu.cpp
clang++ $HOST_CC -MF hb/axpy.d $HOST_CHECKS -O3 -I$HOST_SDK/include -Iinc -c -o hb/axpy.o src/axpy.cpp
clang++ $HOST_CC -MF hb/wrapper.d $HOST_CHECKS -O3 -I$HOST_SDK/include -c -o hb/wrapper.o hb/wrapper.cpp
clang++ -shared -o hb/relu.so hb/relu.o hb/axpy.o hb/wrapper.o $HOST_SDK/lib/core_single.o $HOST_SDK/lib/libcustomop_host.a -Wl,-Bsymbolic -Wl,--no-undefined -Wl,--compress-debug-sections=zlib"
host_dry_run --multicore --launcher 'ccache' -B hm --name relu --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp
expected="ccache clang++ $HOST_CC -MF hm/relu.d $HOST_CHECKS -I$HOST_SDK/include -c -o hm/relu.o src/relu.cpp
ccache clang++ $HOST_CC -MF hm/wrapper.d $HOST_CHECKS -I$HOST_SDK/include -c -o hm/wrapper.o hm/wrapper.cpp"
for core in 0 1 2 3 4 5 6 7; do
	expected="$expected
clang++ -shared -o hm/relu_cpu$core.so hm/relu.o hm/wrapper.o $HOST_SDK/lib/core_cpu$core.o $HOST_SDK/lib/libcustomop_host.a -Wl,-Bsymbolic -Wl,--no-undefined -Wl,--compress-debug-sections=zlib"
done
check_eq "host multicore commands: compiles through the launcher, one link per core with its core object" \
	"$status:$out" "0:$expected"
finish
