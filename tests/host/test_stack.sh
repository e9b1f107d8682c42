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

# leak CORE: the warning of a switched call whose result is get_dst_tensor().
leak() {
	echo "warning: core $1: op big_locals: the op's result leaks on every call that switches stacks: switchBack() skips the destructor of the wrapper's \`output\`, so the tensor's handle is never freed (the device leaks it too); see run-custom-op(1), THE STACK SWITCH"
}

build switched 1 -DLOCALS=16384 -DSTACK_SIZE=65536
run_driver "$WORK/switched/big" big_locals f32:1 f32:1:1
check_eq "with -DSTACK_SIZE=65536 the wrapper runs on the heap stack and comes back, and its result's handle leaks" \
	"$status $out" "0 print core 0: $(printed 16384 1)
$(leak 0)
$(lines out: 0)"

build switched8 8 -DLOCALS=16384 -DSTACK_SIZE=65536
run_driver --cores 8 "$WORK/switched8/big" big_locals f32:2 f32:2:1,2
expected=$(for core in 0 1 2 3 4 5 6 7; do echo "print core $core: $(printed 16384 1)"; leak "$core"; done)
check_eq "each of 8 cores switches to its own heap stack, and says once that it leaks" "$status $out" "0 $expected
$(lines out: 0 0)"

build owned 1 -DLOCALS=16384 -DSTACK_SIZE=65536 -DRETURN_OWN
run_driver "$WORK/owned/big" big_locals f32:2x3 f32:2x3:1
check_eq "a switched call leaks the tensor the kernel made, and says how big it is" "$status $out" \
	"0 print core 0: $(printed 16384 1)
warning: core 0: op big_locals: the op's result leaks on every call that switches stacks: switchBack() skips the destructor of the wrapper's \`output\`, so the Float [2, 3] tensor of 24 bytes the kernel made is never freed (the device leaks it too); see run-custom-op(1), THE STACK SWITCH
$(lines out: 7 7 7 7 7 7)"
run_driver --core-stack 1048576 "$WORK/owned/big" big_locals f32:2x3 f32:2x3:1
check_eq "without a switch (a 1 MiB core stack) nothing leaks and nothing is said" "$status $out" \
	"0 print core 0: $(printed 16384 0)
$(lines out: 7 7 7 7 7 7)"

build heap_overflow 1 -DLOCALS=131072 -DSTACK_SIZE=65536
run_driver "$WORK/heap_overflow/big" big_locals f32:1 f32:1:1
check_eq "128 KiB of locals overflow a 64 KiB STACK_SIZE stack" "$status $out" \
	"3 overflow on core 0: the STACK_SIZE stack (65536 bytes)"

# A 64 MiB frame jumps far below the stack; the host compile probes each
# page of it (-fstack-clash-protection), so the first probe past the end
# faults in the guard: reported as the overflow every time.
build huge 1 -DLOCALS=67108864
for attempt in 1 2 3 4 5 6; do
	run_driver "$WORK/huge/big" big_locals f32:1 f32:1:1
	check_eq "a 64 MiB frame is the core stack's overflow (run $attempt of 6)" "$status $out" \
		"3 overflow on core 0: the core stack (12288 bytes)"
done
build huge_switched 1 -DLOCALS=67108864 -DSTACK_SIZE=65536
for attempt in 1 2 3; do
	run_driver "$WORK/huge_switched/big" big_locals f32:1 f32:1:1
	check_eq "a 64 MiB frame is the STACK_SIZE stack's overflow (run $attempt of 3)" "$status $out" \
		"3 overflow on core 0: the STACK_SIZE stack (65536 bytes)"
done
finish
