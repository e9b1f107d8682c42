#!/bin/sh
# test_build_host.sh - the build engine on the host target, with real
# compiles and run-custom-op: a rebuild in another layout leaves no library
# of the old one to run, and the host SDK's archive and core objects are
# inputs of every link.
. "$(dirname "$0")/lib.sh"
RUN=$TOP/run-custom-op
cd "$WORK" || exit 1
unset CUSTOM_OP_LAUNCHER
# A copy of the host SDK, whose files the test may touch.
mkdir sdk
cp -r "$TOP/sdk/host/include" "$TOP/sdk/host/lib" sdk/
cat >version.cpp <<'CPP'
#include <stdio.h>
#include <torch/torch.h>
#include "neuron/neuron-utils.hpp"
#ifndef VERSION
#define VERSION 1
#endif
torch::Tensor version(const torch::Tensor &x)
{
    (void)x;
    if (get_cpu_id() == 0)
        printf("version %d\n", VERSION);
    return get_dst_tensor();
}
CPP
python3 "$TOP/tests/run/npy.py" make x.npy '<f4' 2 1 2
# build ARGS...: builds the op into build/ with the copied SDK; the steps
# that ran are in $steps.
build() {
	run_bco --target host --sdk "$WORK/sdk" -j 2 --name version --op 'my_ops::version(Tensor x) -> Tensor' \
		"$@" version.cpp
	steps=$(printf '%s\n' "$err" | sed -n 's/^\[[0-9]*\/[0-9]*\] //p' | sort | tr '\n' ',')
}

build --multicore
check_eq "a multicore build of version 1" "$status:$(printf '%s\n' "$out" | wc -l)" "0:8"
build -D VERSION=2
check_eq "rebuilt single-core as version 2" "$status:$out" "0:build/version.so"
# (The kernel prints its version and leaves the output unwritten: the
# output checks are beside the point here.)
run_capture "$RUN" --output-checks off --in x.npy build/version
check_eq "run-custom-op runs version 2, not the old per-core libraries" "$status:$out" "0:version 2"
check_eq "the per-core libraries are gone" "$(ls build | grep -c _cpu)" 0
build --multicore -D VERSION=3
run_capture "$RUN" --output-checks off --cores 1 --in x.npy build/version
check_eq "after a multicore rebuild the single-core library is gone too: --cores 1 finds nothing to run" \
	"$(ls build/version.so 2>/dev/null):$status" ":1"

build -D VERSION=2
build -D VERSION=2
check_eq "a rebuild with nothing changed runs nothing" "$status:$steps" "0:"
for file in lib/libcustomop_host.a lib/core_single.o; do
	touch "sdk/$file"
	build -D VERSION=2
	check_eq "a change of the host SDK's $file relinks, and compiles nothing" "$status:$steps" \
		"0:LINK build/version.so,"
done
touch -d '2001-01-01 00:00:00 UTC' sdk/include/torch/torch.h
build -D VERSION=2
check_eq "a header of the host SDK given an older date recompiles what includes it" "$status:$steps" \
	"0:CC build/wrapper.cpp,CC version.cpp,LINK build/version.so,"
finish
