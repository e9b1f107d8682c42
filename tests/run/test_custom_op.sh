#!/bin/sh
# test_custom_op.sh - the device runtime API of custom_op.h through
# run-custom-op: kernels that move data with neuron_memcpy, neuron_translate
# and Q7PtrType::operator[] pass the output checks on 1 and 8 cores and
# match the reference (also without the access checks, and with
# AddressSanitizer); an HBM address used as a pointer, a translated pointer
# kept after its window was remapped, and copies outside a tensor or outside
# data RAM stop the op with the tensor argument named; data RAM shares the
# TCM pool and returns -1 when exhausted; HBM allocations have a per-op
# limit and leaks are reported.  Kernels: tests/run/kernels/custom_op.cpp.
. "$(dirname "$0")/../cli/lib.sh"
. "$TOP/tests/host/lib_host.sh"
RUN=$TOP/run-custom-op
SOURCE=$TOP/tests/run/kernels/custom_op.cpp
NPY="python3 $TOP/tests/run/npy.py"
export NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES=4096

RIGHT="memcpy_relu translate_relu q7_copy"
MISUSE="q7_partial untranslated stale stale_q7 translate_past memcpy_past memcpy_before memcpy_stack"
ALLOCATION="dataram hbm_limit hbm_leak hbm_twice tcm_before translate_made"
# build DIR CORES OPS [FLAG...]: builds the ops (words, each (Tensor x) ->
# Tensor) into DIR/c with the compiler flags.
build() {
	dir=$1 cores=$2 names=$3
	shift 3
	for op in $names; do
		set -- "$@" "$op=my_ops::$op(Tensor x) -> Tensor"
	done
	host_build "$WORK/$dir" c "$cores" "$@" -- "$SOURCE"
}
check_true "the right kernels build for 1 core" build one 1 "$RIGHT" -DSHARES=1
check_true "and for 8" build eight 8 "$RIGHT"
check_true "and for 8 without the access checks" build eight_plain 8 "$RIGHT" -fno-sanitize=kernel-address
check_true "the kernels with a bug build" build misuse 1 "$MISUSE"
check_true "and without the access checks" build misuse_plain 1 "$MISUSE" -fno-sanitize=kernel-address
check_true "the allocation kernels build" build allocation 1 "$ALLOCATION"
sed 's/^/# /' "$WORK/allocation/build.log"

# floats COUNT: COUNT values in [-8, 8), and relu_of the same.
floats() { awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "%g ", ((i * 37) % 129 - 64) / 8 }'; }
relu_of() { awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) { v = ((i * 37) % 129 - 64) / 8; printf "%g ", (v > 0 ? v : 0) } }'; }
for count in 1 7 1000 10001; do
	# shellcheck disable=SC2046 # the values are words
	$NPY make "$WORK/x$count.npy" '<f4' "$count" $(floats "$count")
	# shellcheck disable=SC2046
	$NPY make "$WORK/want$count.npy" '<f4' "$count" $(relu_of "$count")
done
X=$WORK/x1000.npy

# ---- right kernels: the output checks pass, and the result is the reference ----
for op in memcpy_relu translate_relu; do
	for build in one eight eight_plain; do
		results=
		for count in 1 7 1000 10001; do
			run_capture "$RUN" --op "$op" --in "$WORK/x$count.npy" --expect "$WORK/want$count.npy" "$WORK/$build/c"
			results="$results $count:$status:$err"
		done
		check_eq "$op ($build): relu of 1, 7, 1000 and 10001 elements, every element written once" "$results" \
			" 1:0: 7:0: 1000:0: 10001:0:"
	done
done
$NPY make "$WORK/neg.npy" '<f4' 3 -1 -2 -3
run_capture "$RUN" --op memcpy_relu --in "$WORK/neg.npy" --out "$WORK/zeros.npy" "$WORK/one/c"
check_eq "memcpy into the output writes it (relu of negatives: zeros)" "$status:$err:$($NPY show "$WORK/zeros.npy")" \
	"0::<f4 (3,): 0.0 0.0 0.0"
run_capture "$RUN" --op q7_copy --in "$X" --expect "$X" "$WORK/one/c"
check_eq "an output written only through Q7PtrType::operator[] passes the output checks" "$status:$err" "0:"
run_capture "$RUN" --op memcpy_relu --in "$X" --profile "$WORK/profile.json" "$WORK/one/c"
check_eq "the profile counts neuron_memcpy's copies as TCM copies" "$status:$(python3 -c '
import json, sys
core = json.load(open(sys.argv[1]))["cores"][0]
print(core["tensor_to_tcm_bytes"], core["tcm_to_tensor_bytes"], core["output_elements_written"])' "$WORK/profile.json")" \
	"0:4000 4000 1000"

# ---- the bugs, with the access checks: at the access ----
misuse() { # OP [BUILD]
	run_capture "$RUN" --op "$1" --in "$X" "$WORK/${2:-misuse}/c"
}
misuse q7_partial
check_eq "an output element left unwritten by Q7PtrType::operator[] is reported" "$status:$err" \
	"1:run-custom-op: op q7_partial: output coverage: element 999 of the output was written by no core (on the device it keeps what the output buffer held before the op)"
NOT_A_POINTER="an HBM address is not a pointer (on the device the access reads garbage); map it with neuron_translate(neuron_translate_ctx(), address), or copy between it and data RAM with neuron_memcpy"
misuse untranslated
address=$(printf '%s\n' "$err" | sed -n 's/.* at HBM address \(0x[0-9a-f]*\),.*/\1/p')
check_eq "an HBM address used as a pointer: reported at the read, naming the tensor argument" "$status:$err" \
	"1:run-custom-op: core 0: op untranslated: untranslated(at::Tensor const&) read 4 bytes at HBM address $address, byte 0 of argument 1 (Tensor x): $NOT_A_POINTER"
REMAPPED="after its window was remapped (4 translations later: the emulator takes its 4 windows round-robin, at each neuron_translate and each Q7PtrType::operator[]; on the device the pointer reaches whatever the window maps now): a translated pointer is valid until the next translation; translate the address again"
misuse stale
check_eq "a translated pointer used after 4 more translations: reported at the read" "$status:$err" \
	"1:run-custom-op: core 0: op stale: stale(at::Tensor const&) read 4 bytes through a pointer that neuron_translate returned for byte 0 of argument 1 (Tensor x), $REMAPPED"
misuse stale_q7
check_eq "Q7PtrType::operator[] takes a window too" "$status:$err" \
	"1:run-custom-op: core 0: op stale_q7: stale_q7(at::Tensor const&) wrote 4 bytes through a pointer that neuron_translate returned for byte 12 of the output, $REMAPPED"
misuse translate_past
check_eq "one element past a tensor through a translated pointer" "$status:$err" \
	"1:run-custom-op: core 0: op translate_past: translate_past(at::Tensor const&) read 4 bytes at byte 4000 of argument 1 (Tensor x), past its end (it holds 4000 bytes), through a pointer neuron_translate returned (on the device it reaches whatever follows it in HBM)"
misuse memcpy_past
check_eq "neuron_memcpy past a tensor's end, naming the argument" "$status:$err" \
	"1:run-custom-op: core 0: op memcpy_past: neuron_memcpy: 32 bytes at byte 3984 of argument 1 (Tensor x) reach 16 bytes past its end (it holds 4000 bytes; on the device the copy reaches whatever follows it in HBM)"
misuse memcpy_before
check_eq "neuron_memcpy before a tensor's start, with a signed offset" "$status:$err" \
	"1:run-custom-op: core 0: op memcpy_before: neuron_memcpy: the HBM address is byte -64 of argument 1 (Tensor x), before its start"
misuse memcpy_stack
check_eq "neuron_memcpy into memory that is not data RAM" "$status:$err" \
	"1:run-custom-op: core 0: op memcpy_stack: neuron_memcpy: the local pointer is not in data RAM (the TCM pool): the device copies only between HBM and data RAM; allocate the local side with neuron_dataram_allocate or tcm_malloc"

# ---- without the access checks: at the fault ----
misuse untranslated misuse_plain
address=$(printf '%s\n' "$err" | sed -n 's/.* at HBM address \(0x[0-9a-f]*\),.*/\1/p')
check_eq "an HBM address used as a pointer: a fault, described" "$status:$err" \
	"1:run-custom-op: core 0: op untranslated: a read or write at HBM address $address, byte 0 of argument 1 (Tensor x): an HBM address is not a pointer (on the device the access reaches garbage); map it with neuron_translate(neuron_translate_ctx(), address), or copy between it and data RAM with neuron_memcpy"
misuse stale misuse_plain
check_eq "a translated pointer kept after its window was remapped: a fault, described" "$status:$err" \
	"1:run-custom-op: core 0: op stale: a read or write through a pointer that neuron_translate returned for byte 0 of argument 1 (Tensor x), $REMAPPED"

# ---- data RAM and HBM allocations ----
allocation() { # OP
	run_capture "$RUN" --op "$1" --in "$X" "$WORK/allocation/c"
}
allocation dataram
check_eq "data RAM shares the 16 KiB pool with tcm_malloc, in 64-byte granules; -1 when it cannot give" \
	"$status:$out:$err" "0:free at first: 16384
100 bytes: 0, then 16256 free
aligned to 4096: 12288 free
12288 bytes aligned to 4096: 0, aligned: 1
8192 more: -1, NULL
then 3968 free
tcm_malloc shares the pool: a block
all freed: 16384 free:"
allocation hbm_limit
check_eq "the op's HBM scratch: 64 MiB per core, -1 beyond it (with a warning), reusable once freed" \
	"$status:$out:$err" "0:64 MiB: 0 (size 0: 67108864), one byte more: -1
after freeing: 0, aligned: 1, size of the freed one: -1:run-custom-op: warning: core 0: op hbm_limit: neuron_hbm_allocate: 1 bytes: the op's HBM scratch holds 67108864 bytes per core on the emulator, and 67108864 are allocated; it returns -1"
allocation hbm_leak
check_eq "an HBM allocation left at the end of the op: a warning, and it is freed" "$status:$err" \
	"0:run-custom-op: warning: core 0: op hbm_leak: 1 HBM allocation made during the op was not freed by its end: 4096 bytes from neuron_hbm_allocate in hbm_leak(at::Tensor const&); the emulator frees them (its HBM scratch is per op: 67108864 bytes per core)"
allocation hbm_twice
check_eq "an HBM allocation freed twice" "$status:$err" \
	"1:run-custom-op: core 0: op hbm_twice: neuron_hbm_deallocate: a double free: the 100-byte HBM allocation made by neuron_hbm_allocate in hbm_twice(at::Tensor const&), which neuron_hbm_deallocate freed"
allocation tcm_before
check_eq "tensor_to_tcm before a tensor's start: the argument named, the offset signed" "$status:$err" \
	"1:run-custom-op: core 0: op tcm_before: tensor_to_tcm: elements [-75, 925) are outside argument 1 (Tensor x), which holds 1000 elements of 4 bytes"
$NPY make "$WORK/three.npy" '<f4' 3 1 2 -3
$NPY make "$WORK/doubled.npy" '<f4' 3 2 4 -6
run_capture "$RUN" --op translate_made --in "$WORK/three.npy" --expect "$WORK/doubled.npy" "$WORK/allocation/c"
check_eq "a tensor written through a translated pointer and returned: the copy sees what was written" \
	"$status:$err" "0:"
finish
