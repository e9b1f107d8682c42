#!/bin/sh
# test_standard_streams.sh - build-custom-op with stdin, stdout or stderr
# closed at start, and with a stdout that cannot be written (/dev/full).
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/fake/sdk.sh"
cd "$WORK" || exit 1
mkdir -p src
printf 'int relu;\n' >src/relu.cpp
RELU='my_ops::relu(Tensor x) -> Tensor'
# bco ARGS...: the binary (after $BCO_RUNNER), with the caller's redirections.
bco() {
	# shellcheck disable=SC2086 # the runner is words
	${BCO_RUNNER:-} "$BCO" "$@"
}
# bco_alone ARGS...: the binary without $BCO_RUNNER, for the runs with a
# descriptor closed: valgrind would open its log there first.
bco_alone() {
	"$BCO" "$@"
}

rm -rf build
bco_alone -j1 --name relu --op "$RELU" src/relu.cpp >out.txt 2>&-
check_eq "stderr closed: the build succeeds" "$?:$(cat out.txt)" "0:build/relu.packed.so"
check_eq "stderr closed: progress is not written into the lock file" "$(cat build/.build-custom-op.lock)" ""

rm -rf build
bco_alone -j1 --name relu --op "$RELU" src/relu.cpp >&- 2>err.txt
check_eq "stdout closed: the build succeeds" "$?:$(tail -1 err.txt)" "0:[4/4] PACK build/relu.packed.so"
check_eq "stdout closed: the artifacts are not written into the lock file" \
	"$(cat build/.build-custom-op.lock)" ""

rm -rf build
bco_alone -j1 --name relu --op "$RELU" src/relu.cpp <&- >out.txt 2>err.txt
check_eq "stdin closed: the build succeeds" "$?:$(cat out.txt)" "0:build/relu.packed.so"
check_eq "stdin closed: the lock file stays empty" "$(cat build/.build-custom-op.lock)" ""

rm -rf build
bco_alone -j1 --name relu --op "$RELU" src/relu.cpp <&- >&- 2>&-
check_eq "all three closed: the build succeeds" "$?" 0
check_eq "all three closed: the lock file stays empty" "$(cat build/.build-custom-op.lock)" ""

full="build-custom-op: cannot write to stdout: $(python3 -c 'import errno, os; print(os.strerror(errno.ENOSPC))')"
if [ -w /dev/full ]; then
	bco -j1 --name relu --op "$RELU" src/relu.cpp >/dev/full 2>err.txt
	check_eq "the artifact list to /dev/full fails with exit 1" "$?:$(tail -1 err.txt)" "1:$full"
	bco -n -B not-built --name relu --op "$RELU" src/relu.cpp >/dev/full 2>err.txt
	check_eq "-n to /dev/full fails with exit 1" "$?:$(cat err.txt)" "1:$full"
	bco --emit-wrapper - --op "$RELU" >/dev/full 2>err.txt
	check_eq "--emit-wrapper - to /dev/full fails with exit 1" "$?:$(cat err.txt)" "1:$full"
	bco --help >/dev/full 2>err.txt
	check_eq "--help to /dev/full fails with exit 1" "$?:$(cat err.txt)" "1:$full"
	bco --version >/dev/full 2>err.txt
	check_eq "--version to /dev/full fails with exit 1" "$?:$(cat err.txt)" "1:$full"
	bco --frobnicate >/dev/full 2>err.txt
	check_eq "a usage error keeps its exit code" "$?" 2
else
	echo "ok - the artifact list to /dev/full fails with exit 1 # skip /dev/full is not writable here"
fi
finish
