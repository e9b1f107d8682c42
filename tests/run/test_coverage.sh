#!/bin/sh
# test_coverage.sh - the output checks through run-custom-op: output
# elements written by no core, by two cores, or read by one core while
# another writes them; errors by default, warnings or nothing on request
# (--output-checks, BUILD_CUSTOM_OP_OUTPUT_CHECKS); and no false finding for
# kernels that write their output in any of the ways the runtime has.
# Kernels: tests/run/kernels/coverage.cpp, one bug each.
. "$(dirname "$0")/../cli/lib.sh"
. "$TOP/tests/host/lib_host.sh"
RUN=$TOP/run-custom-op
SOURCE=$TOP/tests/run/kernels/coverage.cpp
unset BUILD_CUSTOM_OP_OUTPUT_CHECKS

check_true "the multicore coverage kernels build" host_build "$WORK/multi" coverage 8 \
	'rows=my_ops::rows(Tensor x) -> Tensor' \
	'rows_remainder_lost=my_ops::rows_remainder_lost(Tensor x) -> Tensor' \
	'rows_overlap=my_ops::rows_overlap(Tensor x) -> Tensor' \
	'rows_all_write_row_0=my_ops::rows_all_write_row_0(Tensor x) -> Tensor' \
	'rows_read_neighbour=my_ops::rows_read_neighbour(Tensor x) -> Tensor' \
	-- "$SOURCE"
sed 's/^/# /' "$WORK/multi/build.log"
check_true "the single-core coverage kernels build" host_build "$WORK/single" coverage 1 \
	'half_returned=my_ops::half_returned(Tensor x) -> Tensor' \
	'zeros_returned=my_ops::zeros_returned(Tensor x) -> Tensor' \
	'stream_relu=my_ops::stream_relu(Tensor x) -> Tensor' \
	'add_out=my_ops::add_out(Tensor x) -> Tensor' \
	'tcm_returned=my_ops::tcm_returned(Tensor x) -> Tensor' \
	'fill_returned=my_ops::fill_returned(Tensor x) -> Tensor' \
	'sum_returned=my_ops::sum_returned(Tensor x) -> Tensor' \
	'element_out=my_ops::element_out(Tensor x) -> Tensor' \
	'evens_then_odds=my_ops::evens_then_odds(Tensor x) -> Tensor' \
	'evens_only=my_ops::evens_only(Tensor x) -> Tensor' \
	-- "$SOURCE" "$TOP/tests/run/kernels/profile.cpp"
sed 's/^/# /' "$WORK/single/build.log"

# x: 37 rows of 129 values of both signs, the expected relu of it, and the
# single-core kernels' 1-D input and expectations.
python3 - "$WORK" "$TOP/tests/run" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
import npy
work = sys.argv[1]
x = [((i * 37) % 129 - 64) / 8.0 for i in range(37 * 129)]
npy.make(work + "/x.npy", "<f4", "37,129", x)
npy.make(work + "/relu.npy", "<f4", "37,129", [max(v, 0.0) for v in x])
small = [v - 4.5 for v in range(10)]
npy.make(work + "/small.npy", "<f4", "10", small)
npy.make(work + "/small_relu.npy", "<f4", "10", [max(v, 0.0) for v in small])
npy.make(work + "/small_plus_1.npy", "<f4", "10", [v + 1 for v in small])
npy.make(work + "/small_twice.npy", "<f4", "10", [2 * v for v in small])
npy.make(work + "/small_same.npy", "<f4", "10", small)
npy.make(work + "/twos.npy", "<f4", "10", [2.0] * 10)
npy.make(work + "/long.npy", "<f4", "20000", [float(v) for v in range(20000)])
PY

run_rows() {
	op=$1
	shift
	rm -f "$WORK/out.npy"
	run_capture "$RUN" --op "$op" --in "$WORK/x.npy" --out "$WORK/out.npy" "$@" "$WORK/multi/coverage"
	written=no
	[ -f "$WORK/out.npy" ] && written=yes
}

DEVICE_UNWRITTEN="(on the device they keep what the output buffer held before the op)"
DEVICE_TWICE="(on the device the last core to write wins, in no fixed order)"
DEVICE_READ="(on the device the read may come before or after the write)"

# ---- elements no core wrote ----
LOST="op rows_remainder_lost: output coverage: elements [4128, 4773) of the output (rows 32-36) were written by no core $DEVICE_UNWRITTEN"
run_rows rows_remainder_lost
check_eq "rows lost to a partition without the remainder: an error naming the elements and rows; no output" \
	"$status:$out:$err:$written" "1::run-custom-op: $LOST:no"
run_rows rows_remainder_lost --output-checks warn
check_eq "--output-checks warn: the same as a warning; the output is written" \
	"$status:$out:$err:$written" "0::run-custom-op: warning: $LOST:yes"
run_rows rows_remainder_lost --output-checks off
check_eq "--output-checks off: nothing said" "$status:$out:$err:$written" "0:::yes"
BUILD_CUSTOM_OP_OUTPUT_CHECKS=warn run_rows rows_remainder_lost
check_eq "BUILD_CUSTOM_OP_OUTPUT_CHECKS=warn: a warning" "$status:$err" "0:run-custom-op: warning: $LOST"
BUILD_CUSTOM_OP_OUTPUT_CHECKS=off run_rows rows_remainder_lost
check_eq "BUILD_CUSTOM_OP_OUTPUT_CHECKS=off: nothing" "$status:$err" "0:"
BUILD_CUSTOM_OP_OUTPUT_CHECKS=warn run_rows rows_remainder_lost --output-checks error
check_eq "--output-checks error wins over the environment" "$status:$err" "1:run-custom-op: $LOST"
BUILD_CUSTOM_OP_OUTPUT_CHECKS=error run_rows rows_remainder_lost
check_eq "BUILD_CUSTOM_OP_OUTPUT_CHECKS=error: as the default" "$status:$err" "1:run-custom-op: $LOST"
BUILD_CUSTOM_OP_OUTPUT_CHECKS=maybe run_rows rows
check_eq "another value of BUILD_CUSTOM_OP_OUTPUT_CHECKS is a usage error" "$status:$err" \
	"2:run-custom-op: BUILD_CUSTOM_OP_OUTPUT_CHECKS=maybe: expected error (the default), warn or off"
run_rows rows --output-checks maybe
check_eq "--output-checks maybe is a usage error" "$status:$err" \
	"2:run-custom-op: --output-checks maybe: expected error, warn or off"

# ---- elements two cores wrote ----
twice() { # ROWS CORES: the line for one row written by two cores
	echo "op rows_overlap: output coverage: elements [$(($1 * 129)), $(($1 * 129 + 129))) of the output (row $1) were written by cores $2 $DEVICE_TWICE"
}
run_rows rows_overlap
check_eq "shares that overlap by a row: each row named with its two cores, four lines, then a count" \
	"$status:$err" "1:run-custom-op: $(twice 4 '0 and 1')
run-custom-op: $(twice 9 '1 and 2')
run-custom-op: $(twice 13 '2 and 3')
run-custom-op: $(twice 18 '3 and 4')
run-custom-op: op rows_overlap: output coverage: and 3 more ranges written by more than one core (903 elements in the 7 ranges)"
run_rows rows_all_write_row_0
check_eq "every core writes row 0" "$status:$err" \
	"1:run-custom-op: op rows_all_write_row_0: output coverage: elements [0, 129) of the output (row 0) were written by cores 0-7 $DEVICE_TWICE"

# ---- an element one core read while another writes it ----
run_rows rows_read_neighbour
check_eq "core 0 reads back the first row core 1 writes" "$status:$err" \
	"1:run-custom-op: op rows_read_neighbour: output coverage: core 0 read elements [516, 645) of the output (row 4), which core 1 writes $DEVICE_READ"

# ---- the returned tensor of a single-core kernel ----
run_capture "$RUN" --op half_returned --in "$WORK/small.npy" "$WORK/single/coverage"
check_eq "a tensor from empty(), half written and returned" "$status:$err" \
	"1:run-custom-op: op half_returned: output coverage: elements [5, 10) of the output were written by no core $DEVICE_UNWRITTEN"

# ---- scattered single writes (a bitmap in the ledger) ----
run_capture "$RUN" --op evens_only --in "$WORK/long.npy" "$WORK/single/coverage"
check_eq "every other element of 20000 written: the first four, then a count" "$status:$err" \
	"1:run-custom-op: op evens_only: output coverage: element 1 of the output was written by no core (on the device it keeps what the output buffer held before the op)
run-custom-op: op evens_only: output coverage: element 3 of the output was written by no core (on the device it keeps what the output buffer held before the op)
run-custom-op: op evens_only: output coverage: element 5 of the output was written by no core (on the device it keeps what the output buffer held before the op)
run-custom-op: op evens_only: output coverage: element 7 of the output was written by no core (on the device it keeps what the output buffer held before the op)
run-custom-op: op evens_only: output coverage: and 9996 more ranges written by no core (10000 elements in the 10000 ranges)"
run_capture "$RUN" --op evens_only --in "$WORK/small.npy" "$WORK/single/coverage"
check_eq "every other element of 10 written: the first four, then one more" "$status:$err" \
	"1:run-custom-op: op evens_only: output coverage: element 1 of the output was written by no core (on the device it keeps what the output buffer held before the op)
run-custom-op: op evens_only: output coverage: element 3 of the output was written by no core (on the device it keeps what the output buffer held before the op)
run-custom-op: op evens_only: output coverage: element 5 of the output was written by no core (on the device it keeps what the output buffer held before the op)
run-custom-op: op evens_only: output coverage: element 7 of the output was written by no core (on the device it keeps what the output buffer held before the op)
run-custom-op: op evens_only: output coverage: and 1 more range written by no core (5 elements in the 5 ranges)"
run_capture "$RUN" --op evens_then_odds --in "$WORK/long.npy" --expect "$WORK/long.npy" "$WORK/single/coverage"
check_eq "the even elements, then the odd ones: all written" "$status:$out:$err" "0::"

# ---- right kernels: nothing said, in every mode ----
for mode in error warn off; do
	run_rows rows --output-checks "$mode" --expect "$WORK/relu.npy"
	check_eq "8 cores, each its share of the rows (--output-checks $mode): silent" "$status:$out:$err" "0::"
	# (test_profile.sh runs profile.cpp's element and TCM kernels too.)
	for case in zeros_returned:small_relu stream_relu:small_relu add_out:small_plus_1 \
		tcm_returned:small_same fill_returned:twos sum_returned:small_twice element_out:small_relu; do
		op=${case%%:*}
		run_capture "$RUN" --op "$op" --in "$WORK/small.npy" --expect "$WORK/${case#*:}.npy" \
			--output-checks "$mode" "$WORK/single/coverage"
		check_eq "$op writes the whole output (--output-checks $mode): silent" "$status:$out:$err" "0::"
	done
done
finish
