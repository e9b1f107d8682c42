#!/bin/sh
# test_stack.sh - a kernel's locals live on the emulated core stack; too
# many overflow into its guard and are reported as that stack's overflow,
# and -DSTACK_SIZE moves the wrapper to a heap stack and back.
. "$(dirname "$0")/../cli/lib.sh"
. "$TOP/tests/host/lib_host.sh"
OP='big_locals=my_ops::big_locals(Tensor x) -> Tensor'
SOURCE=$TOP/tests/host/kernels/big_locals.cpp

# build NAME CORES CFLAG...: builds big_locals into $WORK/NAME.
build() {
	build_dir=$WORK/$1 build_cores=$2
	shift 2
	check_true "big_locals builds with $* on $build_cores core(s)" host_build "$build_dir" big "$build_cores" "$@" \
		"$OP" -- "$SOURCE"
	sed 's/^/# /' "$build_dir/build.log"
}

# printed LOCALS SWITCHED: the kernel's line (sum of i mod 256 over LOCALS bytes).
printed() {
	awk -v n="$1" -v switched="$2" 'BEGIN {
		for (i = 0; i < n; i++) sum += i % 256
		printf "%d bytes of locals, switched_stack %d, sum %d, quarter %g\n", n, switched, sum, sum / 4
	}'
}

build small 1 -DLOCALS=6144
run_driver "$WORK/small/big" big_locals f32:1 f32:1:1
check_eq "6 KiB of locals and a printf fit the default core stack" "$status $out" \
	"0 print core 0: $(printed 6144 0)
$(lines out: 0)"

build big 1 -DLOCALS=16384
run_driver "$WORK/big/big" big_locals f32:1 f32:1:1
check_eq "16 KiB of locals overflow the default core stack" "$status $out" \
	"3 overflow on core 0: the core stack (12288 bytes)"
run_driver --core-stack 65536 "$WORK/big/big" big_locals f32:1 f32:1:1
check_eq "16 KiB of locals fit a 64 KiB core stack without a switch" "$status $out" \
	"0 print core 0: $(printed 16384 0)
$(lines out: 0)"

build switched 1 -DLOCALS=16384 -DSTACK_SIZE=65536
run_driver "$WORK/switched/big" big_locals f32:1 f32:1:1
check_eq "with -DSTACK_SIZE=65536 the wrapper runs on the heap stack and comes back" "$status $out" \
	"0 print core 0: $(printed 16384 1)
$(lines out: 0)"

build switched8 8 -DLOCALS=16384 -DSTACK_SIZE=65536
run_driver --cores 8 "$WORK/switched8/big" big_locals f32:2 f32:2:1,2
expected=$(for core in 0 1 2 3 4 5 6 7; do echo "print core $core: $(printed 16384 1)"; done)
check_eq "each of 8 cores switches to its own heap stack" "$status $out" "0 $expected
$(lines out: 0 0)"

build heap_overflow 1 -DLOCALS=131072 -DSTACK_SIZE=65536
run_driver "$WORK/heap_overflow/big" big_locals f32:1 f32:1:1
check_eq "128 KiB of locals overflow a 64 KiB STACK_SIZE stack" "$status $out" \
	"3 overflow on core 0: the STACK_SIZE stack (65536 bytes)"
finish
