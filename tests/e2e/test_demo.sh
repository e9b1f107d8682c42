#!/bin/sh
# test_demo.sh - make demo, the README's first command: examples/demo.sh
# builds the multicore relu, runs it on 8 emulated cores, checks it and
# shows its profile, in that order, ending with where to go next.
. "$(dirname "$0")/../cli/lib.sh"
demo=$WORK/demo
run_capture sh "$TOP/examples/demo.sh" "$demo"
check_eq "the demo succeeds, with only the build's progress on stderr" \
	"$status:$(printf '%s\n' "$err" | grep -vc '^\[[0-9]*/10\] ')" "0:0"
# The host times of the profile's table vary from run to run.  The demo
# shows run-custom-op's stderr (the table) in its output: a run-custom-op
# built with AddressSanitizer (make check-asan) adds ASan's start-up warning.
shown=$(printf '%s\n' "$out" | sed "s|$WORK|WORK|g" |
	grep -v "==[0-9]*==WARNING: ASan doesn't fully support makecontext/swapcontext" |
	awk '/^ +[0-7]  0\/0 / { $8 = "T" } { print }')
check_eq "it shows the build, the inputs, the run, the profile, then what to read next" "$shown" \
"1. Build examples/relu_multicore/relu.cpp for the host, one library per core:
     WORK/demo/relu_cpu0.so
     WORK/demo/relu_cpu1.so
     WORK/demo/relu_cpu2.so
     WORK/demo/relu_cpu3.so
     WORK/demo/relu_cpu4.so
     WORK/demo/relu_cpu5.so
     WORK/demo/relu_cpu6.so
     WORK/demo/relu_cpu7.so
2. Make 10001 float32 inputs in [-8, 8] and the expected relu of each:
     WORK/demo/x.npy, WORK/demo/want.npy
3. Run it on 8 cores and compare with the expected output (the output checks are on:
   every element written by exactly one core):
     WORK/demo/y.npy matches WORK/demo/want.npy: every one of the 10001 elements, across 8 cores
4. Its profile: what each core did, and the device time it would take (an estimate
   from the cost model of run-custom-op(1)); also in WORK/demo/profile.json and, drawn,
   WORK/demo/profile.svg:
     profile of op relu on 8 cores (device time: an estimate from the cost model of run-custom-op(1), not a measurement)
     core  element r/w    stream r/w     to TCM B   from TCM B  TCM peak B    written   host us  estimated us
0 0/0 0/0 5000 5000 4096 1250 T 2.211
1 0/0 0/0 5000 5000 4096 1250 T 2.211
2 0/0 0/0 5000 5000 4096 1250 T 2.211
3 0/0 0/0 5000 5000 4096 1250 T 2.211
4 0/0 0/0 5000 5000 4096 1250 T 2.211
5 0/0 0/0 5000 5000 4096 1250 T 2.211
6 0/0 0/0 5000 5000 4096 1250 T 2.211
7 0/0 0/0 5004 5004 4096 1251 T 2.213
     estimated us by kind   hbm_element        stream      tcm_copy       compute   result_copy
     core 0                       0.000         0.000         2.211         0.000         0.000
     core 1                       0.000         0.000         2.211         0.000         0.000
     core 2                       0.000         0.000         2.211         0.000         0.000
     core 3                       0.000         0.000         2.211         0.000         0.000
     core 4                       0.000         0.000         2.211         0.000         0.000
     core 5                       0.000         0.000         2.211         0.000         0.000
     core 6                       0.000         0.000         2.211         0.000         0.000
     core 7                       0.000         0.000         2.213         0.000         0.000
     op relu: estimated device time 2.213 us (the slowest core, core 7, plus 0 us fixed); imbalance 1.00 (the busiest core / the mean)
     hints: none (no change the cost model prices saves 1% of the op's time)

Next: ./build-custom-op --help, ./run-custom-op --help, the man pages (man ./man/run-custom-op.1),
make demo-torch for the PyTorch flow, and examples/ for more ops."
check_true "the profile's files are written" test -s "$demo/profile.json" -a -s "$demo/profile.svg"
finish
