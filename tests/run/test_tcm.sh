#!/bin/sh
# test_tcm.sh - TCM misuse through run-custom-op.  With the host runtime's
# access checks (the default): every read or write outside a live block's
# bytes reported at the access, with its size, the block and the function,
# for blocks of any size, one element past the end or before the start
# included; right kernels silent.  Without them (code the checks do not
# see): a read or write outside a tcm_malloc block reported at the fault
# when it leaves the block's pages, and what page protection cannot see
# reported when the block is freed.  Fresh TCM reads as NaN, so an
# accumulator nobody zeroed shows.  Kernels: tests/run/kernels/tcm_misuse.cpp,
# one bug each, and their right versions.
. "$(dirname "$0")/../cli/lib.sh"
. "$TOP/tests/host/lib_host.sh"
RUN=$TOP/run-custom-op
SOURCE=$TOP/tests/run/kernels/tcm_misuse.cpp

set --
for op in row_max row_max_past prefix_sums prefix_before tile_far halo_before slack_past write_after_free \
	column_sums column_sums_unzeroed; do
	set -- "$@" "$op=my_ops::$op(Tensor x) -> Tensor"
done
check_true "the TCM kernels build" host_build "$WORK/tcm" tcm 1 "$@" -- "$SOURCE"
sed 's/^/# /' "$WORK/tcm/build.log"
check_true "and without the access checks of their loads and stores" \
	host_build "$WORK/plain" tcm 1 -fno-sanitize=kernel-address "$@" -- "$SOURCE"
check_true "and for 8 cores" host_build "$WORK/tcm8" tcm 8 'row_max_past=my_ops::row_max_past(Tensor x) -> Tensor' \
	-- "$SOURCE"
check_true "the edge kernels build" host_build "$WORK/edge" edge 1 \
	'edge=my_ops::edge(Tensor x, int bytes, int index, int writes) -> Tensor' \
	'scale_inclusive=my_ops::scale_inclusive(Tensor x) -> Tensor' -- "$SOURCE"

python3 - "$WORK" "$TOP/tests/run" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
import npy
work = sys.argv[1]
rows = [[float((r * 7 + j * 3) % 101 - 50) for j in range(1024)] for r in range(3)]
npy.make(work + "/rows.npy", "<f4", "3,1024", [v for row in rows for v in row])
npy.make(work + "/row_max.npy", "<f4", "3,1024", [max(row) for row in rows for _ in row])
line = [float(j % 5) for j in range(1024)]
npy.make(work + "/line.npy", "<f4", "1024", line)
sums, total = [], 0.0
for v in line:
    total += v
    sums.append(total)
npy.make(work + "/prefix.npy", "<f4", "1024", sums)
table = [float(r + j) for r in range(4) for j in range(16)]
npy.make(work + "/table.npy", "<f4", "4,16", table)
npy.make(work + "/columns.npy", "<f4", "16", [sum(r + j for r in range(4)) for j in range(16)])
thousand = [float(j % 7 - 3) for j in range(1000)]
npy.make(work + "/thousand.npy", "<f4", "1000", thousand)
npy.make(work + "/doubled.npy", "<f4", "1000", [2 * v for v in thousand])
PY

tcm_run() { # OP INPUT [OPTION...]
	op=$1 input=$2
	shift 2
	run_capture "$RUN" --op "$op" --in "$WORK/$input.npy" "$@" "$WORK/tcm/tcm"
}
plain_run() { # OP INPUT
	run_capture "$RUN" --op "$1" --in "$WORK/$2.npy" "$WORK/plain/tcm"
}
READS="(on the device it reads another block or a stream accessor's buffer)"
WRITES="(on the device it overwrites another block or a stream accessor's buffer)"
DEVICE="(on the device it reaches another block or a stream accessor's buffer; build with --sanitize=address to find the kernel's line)"
FIND="build with --sanitize=address to find the write"

# ---- the right kernels: no message ----
tcm_run row_max rows --expect "$WORK/row_max.npy"
check_eq "a row-wise max through a 4 KiB TCM buffer" "$status:$out:$err" "0::"
tcm_run prefix_sums line --expect "$WORK/prefix.npy"
check_eq "running sums in TCM" "$status:$out:$err" "0::"
tcm_run column_sums table --out-shape 16 --expect "$WORK/columns.npy"
check_eq "column sums in a zeroed TCM accumulator" "$status:$out:$err" "0::"

# ---- the access checks: at the access ----
# (row_max_past and prefix_before call tcm_malloc and read the block from a
# function without a dynamic symbol, a static one: neither is named.)
tcm_run row_max_past rows
check_eq "one element past the end of a 4 KiB block, read: reported at the read" "$status:$out:$err" \
	"1::run-custom-op: core 0: op row_max_past: the kernel read 4 bytes at byte 4096 of the 4096-byte TCM block allocated by tcm_malloc, past its end $READS"
run_capture "$RUN" --in "$WORK/rows.npy" "$WORK/tcm8/tcm"
check_eq "on 8 cores, the same error of every core is said once, naming them" "$status:$err" \
	"1:run-custom-op: cores 0-7: op row_max_past: the kernel read 4 bytes at byte 4096 of the 4096-byte TCM block allocated by tcm_malloc, past its end $READS"
tcm_run prefix_before line
check_eq "one element before the start of a 4 KiB block, read: reported at the read" "$status:$out:$err" \
	"1::run-custom-op: core 0: op prefix_before: the kernel read 4 bytes at byte -4 of the 4096-byte TCM block allocated by tcm_malloc, before its start $READS"
tcm_run write_after_free line
check_eq "a write after tcm_free: reported at the write" "$status:$out:$err" \
	"1::run-custom-op: core 0: op write_after_free: write_after_free(at::Tensor const&) wrote 4 bytes at byte 16 of a 64-byte TCM block allocated by tcm_malloc in write_after_free(at::Tensor const&), which tcm_free freed $WRITES"
run_capture "$RUN" --op scale_inclusive --in "$WORK/thousand.npy" "$WORK/edge/edge"
check_eq "for (j = 0; j <= n; j++) b[j] = 2 * b[j] over a 4000-byte block: the read of b[n] is reported" \
	"$status:$out:$err" \
	"1::run-custom-op: core 0: op scale_inclusive: scale_inclusive(at::Tensor const&) read 4 bytes at byte 4000 of the 4000-byte TCM block allocated by tcm_malloc in scale_inclusive(at::Tensor const&), past its end $READS"

# One element past the end and one before the start, read and written, of
# blocks of 4000, 4096 and 100 bytes (floats) and of 1 byte (a char):
# whatever the size, reported at the access.
EDGE="edge(at::Tensor const&, int, int, int)"
edge_run() { # BYTES INDEX WRITES
	run_capture "$RUN" --op edge --in "$WORK/line.npy" --scalar "$1" --scalar "$2" --scalar "$3" "$WORK/edge/edge"
}
for bytes in 4000 4096 100 1; do
	size=4 elements=$((bytes / 4))
	[ "$bytes" = 1 ] && size=1 elements=1
	edge_run "$bytes" 0 0
	first="$status:$err"
	edge_run "$bytes" $((elements - 1)) 1
	check_eq "a $bytes-byte block: its first element read and its last written, silently" "$first|$status:$err" "0:|0:"
	for writes in 0 1; do
		if [ "$writes" = 1 ]; then did="wrote" what=$WRITES verb=written; else did="read" what=$READS verb=read; fi
		unit=bytes
		[ "$size" = 1 ] && unit=byte
		edge_run "$bytes" "$elements" "$writes"
		check_eq "a $bytes-byte block, the element past its end $verb: reported at the access" "$status:$err" \
			"1:run-custom-op: core 0: op edge: $EDGE $did $size $unit at byte $bytes of the $bytes-byte TCM block allocated by tcm_malloc in $EDGE, past its end $what"
		edge_run "$bytes" -1 "$writes"
		check_eq "a $bytes-byte block, the element before its start $verb: reported at the access" "$status:$err" \
			"1:run-custom-op: core 0: op edge: $EDGE $did $size $unit at byte -$size of the $bytes-byte TCM block allocated by tcm_malloc in $EDGE, before its start $what"
	done
done

# ---- without the access checks: at the fault ----
plain_run row_max_past rows
check_eq "one element past the end of a 4 KiB block, read: a fault at the read" "$status:$out:$err" \
	"1::run-custom-op: core 0: op row_max_past: a read or write at byte 4096 of the 4096-byte TCM block allocated by tcm_malloc, past its end $DEVICE"
plain_run prefix_before line
check_eq "one element before the start of a 4 KiB block, read: a fault at the read" "$status:$out:$err" \
	"1::run-custom-op: core 0: op prefix_before: a read or write at byte -4 of the 4096-byte TCM block allocated by tcm_malloc, before its start $DEVICE"
plain_run tile_far line
check_eq "4 KiB past a 64-byte block, written: a fault at the write" "$status:$out:$err" \
	"1::run-custom-op: core 0: op tile_far: a read or write at byte 4096 of the 64-byte TCM block allocated by tcm_malloc in tile_far(at::Tensor const&), past its end $DEVICE"

# ---- without them, on the block's own page: at tcm_free ----
plain_run halo_before line
check_eq "32 bytes before a 100-byte block, written: reported at tcm_free" "$status:$out:$err" \
	"1::run-custom-op: core 0: op halo_before: wrote before the start of a 100-byte TCM block allocated by tcm_malloc in halo_before(at::Tensor const&) (32 bytes before it; found at tcm_free; on the device this overwrites the previous block or a stream accessor's buffer; $FIND)"
plain_run slack_past line
check_eq "the byte past a 100-byte block (in its 64-byte rounding), written: reported at tcm_free" "$status:$out:$err" \
	"1::run-custom-op: core 0: op slack_past: wrote past the end of a 100-byte TCM block allocated by tcm_malloc in slack_past(at::Tensor const&) (found at tcm_free; on the device this overwrites the next block or a stream accessor's buffer; $FIND)"
plain_run write_after_free line
check_eq "a write after tcm_free: reported when the pool hands the memory out again" "$status:$out:$err" \
	"1::run-custom-op: core 0: op write_after_free: wrote into TCM memory outside any block, at byte 16 of a 64-byte TCM block allocated by tcm_malloc in write_after_free(at::Tensor const&), which tcm_free freed (found at tcm_malloc; on the device this overwrites whatever the pool gives out there next; $FIND)"

# ---- fresh TCM reads as NaN ----
tcm_run column_sums_unzeroed table --out-shape 16 --expect "$WORK/columns.npy"
check_eq "an accumulator nobody zeroed sums into NaN, and the output differs" "$status:$out:$err" \
	"1::run-custom-op: output differs from $WORK/columns.npy at [0]: got nan, expected 6 (16 of 16 elements differ; rtol 1e-05, atol 1e-08)"
finish
