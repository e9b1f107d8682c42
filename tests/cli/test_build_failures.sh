#!/bin/sh
# test_build_failures.sh - failed steps, missing tools and SDK files, interrupts, the lock.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/fake/sdk.sh"
cd "$WORK" || exit 1
mkdir -p src
printf 'int relu;\n' >src/relu.cpp
printf 'int axpy;\n' >src/axpy.cpp
FAKE_LOG=$WORK/log
export FAKE_LOG
CC_OPT="-g -std=c++14 -stdlib=libc++-e -fno-jump-tables -Os -Wall -Werror -Wno-c99-designator -mcoproc"
CORE="--xtensa-core=ncore2gp --xtensa-system=/opt/aws/neuron/gpsimd/tools/ncore2gp/config"
INC="-I$SDK -I$SDK/torch/include -I$SDK/c10/include"
build() {
	: >log
	run_bco --name lib --op 'my_ops::relu(Tensor x) -> Tensor' "$@" src/relu.cpp src/axpy.cpp
}

FAKE_FAIL=axpy.o build -j 1
check_eq "a failed compile exits 1" "$status" 1
check_eq "the failure shows the output, the command and the tool's output" "$err" "[1/5] CC src/relu.cpp
[2/5] CC src/axpy.cpp
FAILED: build/axpy.o
xt-clang++ $CC_OPT -MMD -MP -fpic -mlongcalls -c $CORE $INC -o build/axpy.o src/axpy.cpp
src/axpy.cpp:1:1: error: fake failure
build-custom-op: build stopped: a step failed"
check_eq "no artifact is printed" "$out" ""
check_true "the failed step's partial output is deleted" test ! -e build/axpy.o
check_eq "no new step starts after a failure" "$(wc -l <log)" 2
build -j 1
check_eq "the next build redoes only what is missing" "$status:$(sed -n 's/.* -o \([^ ]*\) .*/\1/p' log | tr '\n' ' ')" \
	"0:build/axpy.o build/wrapper.o build/lib.so build/lib.packed.so "

rm -rf build
FAKE_FAIL=relu.o build -j 1 -k
check_eq "with -k independent steps go on" "$status:$(sed -n 's/.* -o \([^ ]*\) .*/\1/p' log | tr '\n' ' ')" \
	"1:build/relu.o build/axpy.o build/wrapper.o "
check_true "and their outputs are kept" test -f build/axpy.o -a -f build/wrapper.o -a ! -e build/relu.o

rm -rf build
FAKE_UNDEFINED=relu build -j 1 --op 'axpy=my_ops::axpy(Tensor x, Scalar a, float b, int c) -> Tensor'
check_eq "an undefined kernel is explained with the declaration the schema requires" \
	"$status:$(printf '%s\n' "$err" | sed -n '/^FAILED/,$p' | sed 1,2d)" \
"1:wrapper.cpp:(.text+0x12): undefined reference to \`relu(at::Tensor const&)'
collect2: error: ld returned 1 exit status
relu must be defined as: at::Tensor relu(const at::Tensor&)
build-custom-op: build stopped: a step failed"
check_true "the failed link's output is not left behind" test ! -e build/lib.so

rm -rf build
PATH=/usr/bin:/bin build
check_eq "a missing compiler says where it looked and what provides it" "$status:$err" \
"1:build-custom-op: cannot find xt-clang++: looked in PATH, \$XTENSA_TOOLS/XtensaTools/bin (XTENSA_TOOLS is not set) and /opt/aws/neuron/gpsimd/bin.
Install the package aws-neuronx-gpsimd-tools, or set XTENSA_TOOLS to the directory that holds XtensaTools/bin, or add that directory to PATH."
check_true "and nothing is written" test ! -e build
mkdir -p xt/XtensaTools/bin
cp "$TOP/tests/fake/xt-clang++" xt/XtensaTools/bin/
PATH=/usr/bin:/bin XTENSA_TOOLS=$WORK/xt build
check_eq "a missing packer, with XTENSA_TOOLS set" "$status:$err" \
"1:build-custom-op: cannot find xt-pkg-loadlib: looked in PATH, $WORK/xt/XtensaTools/bin and /opt/aws/neuron/gpsimd/bin.
Install the package aws-neuronx-gpsimd-tools, or set XTENSA_TOOLS to the directory that holds XtensaTools/bin, or add that directory to PATH."
cp "$TOP/tests/fake/xt-pkg-loadlib" xt/XtensaTools/bin/
PATH=/usr/bin:/bin XTENSA_TOOLS=$WORK/xt build -n
check_eq "tools in \$XTENSA_TOOLS/XtensaTools/bin are used by path" "$status:$(printf '%s\n' "$out" | head -1 | cut -d' ' -f1)" \
	"0:$WORK/xt/XtensaTools/bin/xt-clang++"

rm -rf build
mv "$SDK/c10/lib/libc10.a" "$WORK/libc10.a"
build
check_eq "a missing SDK file is named with the way to set the SDK" "$status:$err" \
"1:build-custom-op: the Neuron custom-op SDK at $SDK is incomplete: $SDK/c10/lib/libc10.a is missing; set NEURON_CUSTOM_OP or pass --sdk DIR"
mv "$WORK/libc10.a" "$SDK/c10/lib/libc10.a"
build --sdk "$WORK/nowhere"
check_eq "a missing SDK directory" "$status:$err" \
"1:build-custom-op: the Neuron custom-op SDK directory $WORK/nowhere does not exist; set NEURON_CUSTOM_OP or pass --sdk DIR (the package aws-neuronx-gpsimd-customop-lib installs it)"

printf 'a file\n' >blocker
build -B blocker/build
check_eq "a build directory that cannot be created" "$status:$err" \
	"1:build-custom-op: cannot create build directory blocker/build: Not a directory"

# Interrupts: the running tools are stopped and their partial outputs
# deleted, then the command ends by the same signal.
for signal in INT TERM HUP; do
	rm -rf build stamps
	FAKE_STAMPS=$WORK/stamps FAKE_HANG=relu.o start_reporting_end ended "$BCO" -j 2 --name lib \
		--op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp src/axpy.cpp >out.txt 2>err.txt
	tries=0
	while ! grep -q '^hang relu.o' stamps 2>/dev/null && [ $tries -lt 600 ]; do sleep 0.1; tries=$((tries + 1)); done
	kill -$signal "$pid"
	wait_for_end ended
	check_eq "SIG$signal: the command cleans up, then ends by SIG$signal" "$(cat ended)" "signal $signal"
	check_true "SIG$signal: the hung step's partial output is deleted" test ! -e build/relu.o
	check_eq "SIG$signal: no tool is left running" "$(pgrep -f "xt-clang.*-I$SDK" | wc -l)" "0"
	check_eq "SIG$signal: the message" "$(tail -1 err.txt)" "build-custom-op: interrupted by SIG$signal"
done
# An ignored SIGINT (a shell's background job) stays ignored; SIGTERM still stops it.
rm -rf build stamps
FAKE_STAMPS=$WORK/stamps FAKE_HANG=relu.o "$BCO" -j 2 --name lib --op 'my_ops::relu(Tensor x) -> Tensor' \
	src/relu.cpp src/axpy.cpp >out.txt 2>err.txt &
pid=$!
tries=0
while ! grep -q '^hang relu.o' stamps 2>/dev/null && [ $tries -lt 600 ]; do sleep 0.1; tries=$((tries + 1)); done
kill -INT $pid
sleep 0.3
check_true "an ignored SIGINT does not stop a build" kill -0 $pid
kill -TERM $pid
wait $pid
check_eq "SIGTERM stops it" "$?" 143

build -j 2
check_eq "the build after an interrupt succeeds" "$status:$out" "0:build/lib.packed.so"
mkdir clean && cp -r src clean/ && (cd clean && "$BCO" --name lib --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp src/axpy.cpp >/dev/null 2>&1)
for f in relu.o axpy.o wrapper.cpp wrapper.o lib.so lib.packed.so lib.stripped.so; do
	check_file "after an interrupt, $f is what a clean build writes" build/$f clean/build/$f
done

# The lock: a second build of the same directory waits for the first.
rm -rf build stamps
FAKE_STAMPS=$WORK/stamps FAKE_HANG=relu.o "$BCO" --name lib --op 'my_ops::relu(Tensor x) -> Tensor' \
	src/relu.cpp src/axpy.cpp >/dev/null 2>&1 &
first=$!
tries=0
while ! grep -q '^hang relu.o' stamps 2>/dev/null && [ $tries -lt 600 ]; do sleep 0.1; tries=$((tries + 1)); done
"$BCO" --name lib --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp src/axpy.cpp >out2.txt 2>err2.txt &
second=$!
tries=0
while ! grep -q waiting err2.txt 2>/dev/null && [ $tries -lt 600 ]; do sleep 0.1; tries=$((tries + 1)); done
check_eq "a second build of the directory waits for the first" "$(head -1 err2.txt)" \
	"waiting for another build of build to finish"
env --default-signal=INT "$BCO" --name lib --op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp src/axpy.cpp \
	>out3.txt 2>err3.txt &
third=$!
tries=0
while ! grep -q waiting err3.txt 2>/dev/null && [ $tries -lt 600 ]; do sleep 0.1; tries=$((tries + 1)); done
kill -INT $third
wait $third
check_eq "Ctrl-C while waiting for the lock stops the waiting build" "$?:$(tail -1 err3.txt)" \
	"130:build-custom-op: interrupted by SIGINT"
kill -9 $first
wait $first 2>/dev/null
kill -- -"$(sed -n 's/^hang relu.o //p' stamps)" # the orphaned tool of the killed build, and its children
wait $second
check_eq "a build killed with -9 leaves no stale lock: the waiting build goes on" "$?:$(cat out2.txt)" \
	"0:build/lib.packed.so"

# A build killed with -9: the lock file names its tools' process groups, so
# the next build waits for them instead of having its objects overwritten.
rm -rf build stamps gate other
mkdir other
printf 'int other;\n' >other/relu.cpp
FAKE_STAMPS=$WORK/stamps FAKE_GATE=$WORK/gate "$BCO" -j 1 --name lib --op 'my_ops::relu(Tensor x) -> Tensor' \
	src/relu.cpp >/dev/null 2>&1 &
first=$!
tries=0
# The build names the compile's process group in its lock file just after
# it starts the compile: wait for both.
while { ! grep -q '^wait relu.o' stamps || ! [ -s build/.build-custom-op.lock ]; } 2>/dev/null &&
	[ $tries -lt 600 ]; do
	sleep 0.1
	tries=$((tries + 1))
done
kill -9 $first
wait $first 2>/dev/null
# shellcheck disable=SC2086 # the runner is words
${BCO_RUNNER:-} "$BCO" -j 1 --name lib --op 'my_ops::relu(Tensor x) -> Tensor' other/relu.cpp >out2.txt 2>err2.txt &
second=$!
tries=0
while ! grep -q waiting err2.txt 2>/dev/null && kill -0 $second 2>/dev/null && [ $tries -lt 600 ]; do
	sleep 0.1
	tries=$((tries + 1))
done
: >gate
wait $second
code=$?
tries=0
while ! grep -q '^end relu.o' stamps && [ $tries -lt 600 ]; do sleep 0.1; tries=$((tries + 1)); done
check_eq "the next build waits for the tools of a build killed with -9" \
	"$(head -1 err2.txt | sed 's/group [0-9]*)$/group N)/')" \
	"waiting for the tools of a killed build of build to end (process group N)"
check_eq "and then builds its own object, which the orphaned tool does not overwrite" \
	"$code:$(cat out2.txt):$(cat build/relu.o)" "0:build/lib.packed.so:object of other/relu.cpp"

# A launcher that leaves a server running in a session of its own (as a
# compiler cache does) does not keep the next build waiting.
cat >daemon-launcher <<'SH'
#!/bin/sh
setsid sleep 60 </dev/null >/dev/null 2>&1 &
echo $! >>"$DAEMONS"
exec "$@"
SH
chmod +x daemon-launcher
rm -rf build
DAEMONS=$WORK/daemons build -j 2 --launcher "$WORK/daemon-launcher"
# shellcheck disable=SC2086 # the runner is words
DAEMONS=$WORK/daemons timeout 20 ${BCO_RUNNER:-} "$BCO" --launcher "$WORK/daemon-launcher" --name lib \
	--op 'my_ops::relu(Tensor x) -> Tensor' src/relu.cpp src/axpy.cpp >out2.txt 2>err2.txt
check_eq "a server a launcher left running does not hold the next build" "$?:$(cat out2.txt):$(cat err2.txt)" \
	"0:build/lib.packed.so:"
while read -r daemon; do kill "$daemon"; done <daemons

# The log records each step as it ends: after a build killed with -9 during
# the link, the next build does only the link and the pack.
rm -rf build stamps
FAKE_STAMPS=$WORK/stamps FAKE_HANG=lib.so "$BCO" -j 1 --name lib --op 'my_ops::relu(Tensor x) -> Tensor' \
	src/relu.cpp src/axpy.cpp >/dev/null 2>&1 &
first=$!
tries=0
while ! grep -q '^hang lib.so' stamps 2>/dev/null && [ $tries -lt 600 ]; do sleep 0.1; tries=$((tries + 1)); done
kill -9 $first
wait $first 2>/dev/null
kill -- -"$(sed -n 's/^hang lib.so //p' stamps)"
build -j 1
check_eq "a build killed during the link: the next one redoes only the link and the pack" \
	"$status:$(sed -n 's/.* -o \([^ ]*\) .*/\1/p' log | tr '\n' ' ')" "0:build/lib.so build/lib.packed.so "

# A caller with SIGCHLD blocked (a signalfd event loop) must not hang the build.
cat >blocked.py <<'PY'
import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
os.execvp(sys.argv[1], sys.argv[1:])
PY
unfinished=0
for round in 1 2 3 4 5 6 7 8 9 10; do
	rm -rf build
	# shellcheck disable=SC2086 # the runner is words
	timeout 20 python3 blocked.py ${BCO_RUNNER:-} "$BCO" -j 2 --name lib --op 'my_ops::relu(Tensor x) -> Tensor' \
		src/relu.cpp src/axpy.cpp >/dev/null 2>&1 || unfinished=$((unfinished + 1))
done
check_eq "with SIGCHLD blocked, 10 builds of 5 steps each finish" "$unfinished" 0
finish
