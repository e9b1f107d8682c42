#!/bin/sh
# test_gdb.sh - a kernel under gdb, as run-custom-op(1) teaches it: a
# breakpoint on one emulated core ($core() from the pretty-printers every
# core library carries), and the printers of at::Tensor, c10::Scalar and the
# accessors; and the session docs/howto/debug-a-kernel.md and the man page
# show, pasted.
. "$(dirname "$0")/../cli/lib.sh"
. "$TOP/tests/host/lib_host.sh"
RUN=$TOP/run-custom-op
KERNEL=$TOP/tests/host/kernels/gdb_probe.cpp
cd "$WORK" || exit 1
unset CUSTOM_OP_LAUNCHER

if ! command -v gdb >/dev/null 2>&1; then
	echo "ok - a gdb session stops on core 7 and prints a tensor # skip gdb is not installed: apt-get install gdb"
	exit 0
fi

check_true "the kernels build with -O0" host_build scale scale 8 -O0 'scale=my_ops::scale(Tensor x, Scalar a) -> Tensor' -- "$KERNEL"
check_true "and the single-core one" host_build probe probe 1 -O0 'probe=my_ops::probe(Tensor x) -> Tensor' -- "$KERNEL"
python3 "$TOP/tests/run/npy.py" make x.npy '<f4' 2,3 1.5 -2 3 0.25 0 7

# debug WHERE GDB-COMMAND... -- ARGS...: a gdb batch session on
# run-custom-op that stops at WHERE and runs the commands; sets $out to
# what the commands printed (gdb's own chatter left out).
debug() {
	where=$1
	shift
	set -- -ex "break $where" -ex run "$@"
	gdb -nx -batch -iex "add-auto-load-safe-path $WORK" -iex 'set breakpoint pending on' \
		-iex 'set pagination off' "$@" >gdb.out 2>gdb.err
	status=$?
	out=$(grep '^\$[0-9]* = ' gdb.out)
}
line() { grep -n "stop here: $1" "$KERNEL" | cut -d: -f1; }

debug "gdb_probe.cpp:$(line scale) if \$core() == 7" -ex 'print $core()' -ex 'print cpu' -ex 'print x' \
	-ex 'print a' -ex 'print tcm' -ex 'print out' --args "$RUN" --in x.npy --scalar 2 scale/scale
check_eq "a breakpoint on core 7 stops there, and prints the tensor's dtype, sizes and first elements" \
	"$status:$out" '0:$1 = 7
$2 = 7
$3 = at::Tensor Float [2, 3] (argument 1) = {1.5, -2, 3, 0.25, 0, 7}
$4 = c10::Scalar 2 (integral)
$5 = tcm_accessor (read-only) of Float [2, 3] (argument 1) = {1.5, -2, 3, 0.25, 0, 7}
$6 = at::Tensor Float [2, 3] (the output) = {nan, nan, nan, nan, nan, nan}'
check_eq "it stops once: only core 7 meets the condition" "$(grep -c '^Thread .* hit Breakpoint' gdb.out)" 1

debug "gdb_probe.cpp:$(line probe)" -ex 'print in' -ex 'print row' -ex 'print stream' -ex 'print half' \
	-ex 'print undefined' -ex 'print written' -ex 'print $core()' --args "$RUN" --in x.npy probe/probe
check_eq "the accessors, a tensor the kernel made and an undefined one, on a single-core build" "$status:$out" \
	'0:$1 = at::TensorAccessor<float, 2> (read-only) [2, 3] = {1.5, -2, 3, 0.25, 0, 7}
$2 = at::TensorAccessor<float, 1> (read-only) [3] = {0.25, 0, 7}
$3 = read stream of Float [2, 3]: next element 1 of 6
$4 = at::Tensor Half [3] (made by ones) = {1, 1, 1}
$5 = at::Tensor (undefined)
$6 = write stream of Half [3]: closed
$7 = 0'

# The session docs/howto/debug-a-kernel.md shows, pasted: its commands, run
# in a directory holding examples/relu_multicore/relu.cpp and the x.npy its
# output shows, stop on core 7 and print what the page shows (gdb in batch
# mode, which answers no to every question, as a user who pastes the
# commands must not be asked).
howto_block() {
	awk '/^## One core under gdb/ { on = 1 } on && seen && /^```$/ { exit }
		on && seen { print } on && /^```sh$/ { seen = 1 }' "$TOP/docs/howto/debug-a-kernel.md"
}
mkdir -p howto && cp "$TOP/examples/relu_multicore/relu.cpp" howto/ && cp x.npy howto/
gdb_command=$(howto_block | sed -n 's/^(gdb) //p')
commands=$(howto_block | sed '/^(gdb) /,$d' |
	sed 's/^gdb /gdb -nx -batch -iex "set pagination off" /; s/ -ex run / -ex run -ex "$gdb_command" /')
shown=$(howto_block | sed -n '/^\$1 = /p')
(cd howto && PATH=$TOP:$PATH && eval "$commands") >howto.out 2>&1
check_eq "the gdb session of docs/howto/debug-a-kernel.md, pasted, stops on core 7 and prints what the page shows" \
	"$(grep '^\$[0-9]* = ' howto.out)" "${shown:-the page shows no \$1}"
# words LINES: the lines joined where they end with a backslash, spaces squeezed.
words() { sed -e ':a' -e '/\\$/N; s/\\\n//; ta' | tr -s ' '; }
man_session=$(sed -n '/^\.SS One core under gdb/,/^\.RE/p' "$TOP/man/run-custom-op.1" |
	sed -n '/^\.RS/,/^\.RE/{/^\./d;p}' | sed 's/\\-/-/g; s/\\e/\\/g' | words)
check_eq "run-custom-op(1) shows the same session" "$man_session" "$(howto_block | words)"

# Without the safe-path line, gdb declines the script and says what to add.
gdb -nx -batch -iex 'set breakpoint pending on' -ex "break gdb_probe.cpp:$(line probe)" -ex run \
	-ex 'print x' --args "$RUN" --in x.npy probe/probe >gdb.out 2>&1
check_eq "without it, gdb names the line to add" "$(grep -c "add-auto-load-safe-path $WORK/probe/probe.so" gdb.out)" 1
finish
