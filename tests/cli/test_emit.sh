#!/bin/sh
# test_emit.sh - build-custom-op --emit-wrapper: output, exit codes, error texts.
. "$(dirname "$0")/lib.sh"

run_bco --emit-wrapper - --op 'relu=my_ops::relu(Tensor x) -> Tensor'
check_eq "emit to stdout exits 0" "$status" 0
check_file "emit to stdout prints the one-op wrapper" "$WORK/.out" "$TOP/tests/golden/relu.xtensa.cpp"
check_eq "emit prints nothing on stderr" "$err" ""

run_bco --emit-wrapper - --op 'my_ops::relu(Tensor x) -> Tensor'
check_file "FN= may be left out" "$WORK/.out" "$TOP/tests/golden/relu.xtensa.cpp"

run_bco --emit-wrapper "$WORK/w.cpp" --op 'relu=my_ops::relu(Tensor x) -> Tensor' \
	--op 'axpy=my_ops::axpy(Tensor x, Scalar a, float b, int c) -> Tensor'
check_eq "emit to a file exits 0 and prints nothing" "$status:$out:$err" "0::"
check_file "emit to a file writes the two-op wrapper" "$WORK/w.cpp" "$TOP/tests/golden/relu_axpy.xtensa.cpp"

touch -d '2020-01-01 00:00:00' "$WORK/w.cpp"
before=$(ls -l --time-style=+%s "$WORK/w.cpp" | awk '{print $6}')
run_bco --emit-wrapper "$WORK/w.cpp" --op 'relu=my_ops::relu(Tensor x) -> Tensor' \
	--op 'axpy=my_ops::axpy(Tensor x, Scalar a, float b, int c) -> Tensor'
after=$(ls -l --time-style=+%s "$WORK/w.cpp" | awk '{print $6}')
check_eq "an unchanged wrapper keeps its mtime" "$after" "$before"

run_bco --emit-wrapper - --target host --op 'my_ops::relu(Tensor x) -> Tensor'
check_file "the host wrapper" "$WORK/.out" "$TOP/tests/golden/relu.host.cpp"

printf 'keep me\n' >"$WORK/keep.cpp"
run_bco --emit-wrapper "$WORK/keep.cpp" --op 'my_ops::relu(Tensor[] x) -> Tensor'
check_eq "a bad schema exits 1" "$status" 1
check_eq "a bad schema is reported like a compiler error" "$err" \
"build-custom-op: schema:14: error: argument 'x' has type 'Tensor[]', which is not supported; the supported types are Tensor, Scalar, number, int, float, long long
my_ops::relu(Tensor[] x) -> Tensor
             ^"
check_eq "nothing is written on error" "$(cat "$WORK/keep.cpp")" "keep me"

run_bco --emit-wrapper - --op 'bad name=my_ops::relu(Tensor x) -> Tensor'
check_eq "a bad function name exits 1" "$status" 1
check_eq "a bad function name is named" "$err" \
"build-custom-op: op 1: function name 'bad name' is not a C identifier (letters, digits and '_', not starting with a digit)"

run_bco --emit-wrapper - --op 'a=x::relu(Tensor x) -> Tensor' --op 'a=x::relu(Tensor x) -> Tensor'
check_eq "duplicate names" "$status:$err" \
"1:build-custom-op: op 2: function name 'a' is already used by op 1; each op needs its own name"

run_bco --emit-wrapper - --op 'x::f(Tensor x, int y=[1,2) -> Tensor'
check_eq "a bad default" "$status:$err" "1:build-custom-op: schema:26: error: expected ',' or ']' in the default list, found ')'
x::f(Tensor x, int y=[1,2) -> Tensor
                         ^"

run_bco --emit-wrapper - --op 'x::f(Tensor x) -> Tensor' relu.cpp
check_eq "emit-wrapper with a SOURCE is a usage error" "$status:$err" \
"2:build-custom-op: --emit-wrapper takes no SOURCE, but 'relu.cpp' was given
Try 'build-custom-op --help' for more information."

run_bco --emit-wrapper "$WORK/no/such/dir/w.cpp" --op 'x::f(Tensor x) -> Tensor'
check_eq "an unwritable file exits 1 and says why" "$status:$err" \
	"1:build-custom-op: cannot write $WORK/no/such/dir/w.cpp: cannot create a temporary file beside it: No such file or directory"

# What the user owns is never replaced: a device, a FIFO or a link.
RELU_OP='relu=my_ops::relu(Tensor x) -> Tensor'
if mknod "$WORK/node" c 1 3 2>/dev/null; then
	node=$WORK/node # a device node like /dev/null, made here
else
	ln -s /dev/null "$WORK/node" # no right to make one: a link to one
fi
run_bco --emit-wrapper "$WORK/node" --op "$RELU_OP"
check_eq "a device node is written through" "$status:$err" "0:"
check_true "and is still a device" test -c "$WORK/node"
mkfifo "$WORK/fifo"
timeout 20 cat "$WORK/fifo" >"$WORK/from_fifo" & # bounded: a replaced FIFO gets no writer
reader=$!
run_bco --emit-wrapper "$WORK/fifo" --op "$RELU_OP"
wait $reader
check_eq "a FIFO is written through" "$status:$err" "0:"
check_file "its reader gets the wrapper" "$WORK/from_fifo" "$TOP/tests/golden/relu.xtensa.cpp"
check_true "and it is still a FIFO" test -p "$WORK/fifo"
printf 'old\n' >"$WORK/target.cpp"
ln -s target.cpp "$WORK/link.cpp"
run_bco --emit-wrapper "$WORK/link.cpp" --op "$RELU_OP"
check_eq "a symbolic link is followed" "$status:$err" "0:"
check_true "and stays a link" test -L "$WORK/link.cpp"
check_file "its target gets the wrapper" "$WORK/target.cpp" "$TOP/tests/golden/relu.xtensa.cpp"
run_capture sh -c '"$1" --emit-wrapper /proc/self/fd/1 --op "$2" | cat' sh "$BCO" "$RELU_OP"
check_eq "a pipe behind /proc/self/fd/1 (as /dev/stdout is) is written through" \
	"$status:$out" "0:$(cat "$TOP/tests/golden/relu.xtensa.cpp")"
if [ -w /dev/full ]; then
	ln -s /dev/full "$WORK/full"
	run_bco --emit-wrapper "$WORK/full" --op "$RELU_OP"
	check_eq "a full device fails with exit 1, saying why" "$status:$err" \
		"1:build-custom-op: cannot write $WORK/full: No space left on device"
	check_true "and /dev/full is still a device" test -c /dev/full
	check_true "and the link to it is still a link" test -L "$WORK/full"
else
	echo "ok - a full device fails with exit 1, saying why # skip /dev/full is not writable here"
fi
check_eq "no temporary file is left behind" "$(ls -A "$WORK" | grep -c tmp)" 0

run_bco --emit-wrapper "$WORK/many.cpp" --op 'x::a0(Tensor x) -> Tensor' --op 'x::a1(Tensor x) -> Tensor' \
	--op 'x::a2(Tensor x) -> Tensor' --op 'x::a3(Tensor x) -> Tensor' --op 'x::a4(Tensor x) -> Tensor' \
	--op 'x::a5(Tensor x) -> Tensor' --op 'x::a6(Tensor x) -> Tensor' --op 'x::a7(Tensor x) -> Tensor' \
	--op 'x::a8(Tensor x) -> Tensor' --op 'x::a9(Tensor x) -> Tensor' --op 'x::a10(Tensor x) -> Tensor'
check_eq "eleven ops build with a warning" "$status:$err" \
"0:build-custom-op: warning: 11 ops in one library; the runtime documents at most 10 functions per library"
run_bco --emit-wrapper - --target host --op 'x::a0(Tensor x) -> Tensor' --op 'x::a1(Tensor x) -> Tensor' \
	--op 'x::a2(Tensor x) -> Tensor' --op 'x::a3(Tensor x) -> Tensor' --op 'x::a4(Tensor x) -> Tensor' \
	--op 'x::a5(Tensor x) -> Tensor' --op 'x::a6(Tensor x) -> Tensor' --op 'x::a7(Tensor x) -> Tensor' \
	--op 'x::a8(Tensor x) -> Tensor' --op 'x::a9(Tensor x) -> Tensor' --op 'x::a10(Tensor x) -> Tensor'
check_eq "for the host target, whose emulator refuses them, eleven ops are an error naming the limit" \
	"$status:$out:$err" \
"1::build-custom-op: 11 ops in one library, but the device documents at most 10 functions in a library (and one custom-op library per model), and the host target's emulator refuses more; keep at most 10 ops in the library"
finish
