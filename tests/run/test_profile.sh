#!/bin/sh
# test_profile.sh - run-custom-op --profile and --profile-svg: exact counts
# for kernels whose accesses are known, the JSON's schema, the estimate that
# ranks the official sample's three variants as the documentation does,
# and imbalance.  (tests/run/test_library.c checks run-custom-op(1)'s table
# of the cost model against the library's.)
# Kernels: tests/run/kernels/profile.cpp, examples/relu_multicore and the
# three variants of examples/mlp.
. "$(dirname "$0")/../cli/lib.sh"
. "$TOP/tests/host/lib_host.sh"
RUN=$TOP/run-custom-op
SOURCE=$TOP/tests/run/kernels/profile.cpp
unset BUILD_CUSTOM_OP_OUTPUT_CHECKS

check_true "the profile kernels build" host_build "$WORK/single" profile 1 \
	'element_relu=my_ops::element_relu(Tensor x) -> Tensor' \
	'stream_relu=my_ops::stream_relu(Tensor x) -> Tensor' \
	'tcm_relu=my_ops::tcm_relu(Tensor x) -> Tensor' -- "$SOURCE"
sed 's/^/# /' "$WORK/single/build.log"
check_true "the skewed kernel builds for 8 cores" host_build "$WORK/skewed" profile 8 \
	'rows_skewed=my_ops::rows_skewed(Tensor x) -> Tensor' -- "$SOURCE"
check_true "examples/relu_multicore builds" host_build "$WORK/even" relu 8 \
	'my_ops::relu(Tensor x) -> Tensor' -- "$TOP/examples/relu_multicore/relu.cpp"
for variant in element tcm multicore; do
	cores=1
	[ $variant = multicore ] && cores=8
	check_true "examples/mlp/$variant builds" host_build "$WORK/mlp-$variant" relu $cores \
		'relu_forward=my_ops::relu_forward(Tensor _0) -> Tensor' \
		'relu_backward=my_ops::relu_backward(Tensor _0, Tensor _1) -> Tensor' \
		-- "$TOP/examples/mlp/$variant/relu.cpp"
done

SOFTMAX=$TOP/tests/run/kernels/softmax.cpp
check_true "the softmax kernels build" host_build "$WORK/softmax" softmax 1 \
	'softmax_element=my_ops::softmax_element(Tensor x, float t) -> Tensor' \
	'softmax_t=my_ops::softmax_t(Tensor x, float t) -> Tensor' \
	'stream_five=my_ops::stream_five(Tensor x) -> Tensor' -- "$SOFTMAX"
check_true "and for 8 cores" host_build "$WORK/softmax8" softmax 8 \
	'softmax_multicore=my_ops::softmax_multicore(Tensor x, float t) -> Tensor' -- "$SOFTMAX"

python3 - "$WORK" "$TOP/tests/run" <<'PY'
import math
import random
import struct
import sys
sys.path.insert(0, sys.argv[2])
import npy
work = sys.argv[1]
# A row softmax at temperature 0.5 of 37 rows of 1000, and its result.
generator = random.Random(7)
x = [generator.uniform(-3, 3) for _ in range(37 * 1000)]
npy.make(work + "/logits.npy", "<f4", "37,1000", x)
x = [struct.unpack("<f", struct.pack("<f", value))[0] for value in x]  # as the file holds them
expected = []
for row in range(37):
    scaled = [value / 0.5 for value in x[row * 1000:(row + 1) * 1000]]
    largest = max(scaled)
    exponentials = [math.exp(value - largest) for value in scaled]
    total = sum(exponentials)
    expected += [value / total for value in exponentials]
npy.make(work + "/softmax.npy", "<f4", "37,1000", expected)
npy.make(work + "/x.npy", "<f4", "1000", [v - 500.0 for v in range(1000)])
npy.make(work + "/even.npy", "<f4", "10001", [v % 7 - 3.0 for v in range(10001)])
npy.make(work + "/rows.npy", "<f4", "15,64", [v % 5 - 2.0 for v in range(15 * 64)])
generator = random.Random(1)
for columns in (4096, 2048):
    npy.make("%s/sample%d.npy" % (work, columns), "<f4", "32,%d" % columns,
             [generator.uniform(-1, 1) for _ in range(32 * columns)])
PY

# core_json CORE ELEMENT_READS ELEMENT_WRITES STREAM_READS STREAM_WRITES TO FROM PEAK RESULT_COPY
#           WRITTEN HBM_US STREAM_US TCM_US COMPUTE_US RESULT_COPY_US US
core_json() {
	echo "  {\"core\": $1, \"element_reads\": $2, \"element_writes\": $3, \"stream_reads\": $4, \"stream_writes\": $5, \"tensor_to_tcm_bytes\": $6, \"tcm_to_tensor_bytes\": $7, \"tcm_peak_bytes\": $8, \"result_copy_bytes\": $9, \"output_elements_written\": ${10},
   \"estimated_us_by_kind\": {\"hbm_element\": ${11}, \"stream\": ${12}, \"tcm_copy\": ${13}, \"compute\": ${14}, \"result_copy\": ${15}}, \"estimated_device_us\": ${16}}"
}
# hint_json KIND SAVES TEXT
hint_json() {
	echo "  {\"kind\": \"$1\", \"text\": \"$3\", \"saves_us\": $2}"
}
profile_of() { # OP BUILD INPUT [OPTION...]
	op=$1 build=$2 input=$3
	shift 3
	rm -f "$WORK/profile.json" "$WORK/profile.svg"
	run_capture "$RUN" --op "$op" --in "$WORK/$input.npy" --profile "$WORK/profile.json" "$@" "$build"
	json=$(cat "$WORK/profile.json" 2>&1)
}
MULTICORE="the op runs on one core: shared by the 8 cores (build with --multicore, or multicore=True in custom_op.load(); each core takes its share by get_cpu_id() and writes it into get_dst_tensor()) it would take about"

# ---- exact counts ----
profile_of element_relu "$WORK/single/profile" x
check_eq "element accessors: 1000 reads and 1000 writes, one entry (core 0), and what to change" "$status:$json" "0:{\"op\": \"element_relu\", \"cores\": [
$(core_json 0 1000 1000 0 0 0 0 0 0 1000 485.325 0.000 0.000 0.000 0.000 485.325)],
 \"estimated_device_us\": 485.325, \"imbalance\": 1.000, \"hints\": [
$(hint_json element_access 483.556 "core 0 uses element accessors 2000 times, an HBM access each (485.325 us): copying the elements between the tensors and TCM in blocks (tensor_to_tcm, tcm_to_tensor; at most 8000 bytes, 4 a use) would take 1.769 us, and a stream accessor about as long")]}"
check_eq "the table on stderr says what it is, the estimate by kind, the op's line and the hints" \
	"$(printf '%s\n' "$err" | sed 3d)" \
	"profile of op element_relu on 1 core (device time: an estimate from the cost model of run-custom-op(1), not a measurement)
core  element r/w    stream r/w     to TCM B   from TCM B  TCM peak B    written   host us  estimated us
estimated us by kind   hbm_element        stream      tcm_copy       compute   result_copy
core 0                     485.325         0.000         0.000         0.000         0.000
op element_relu: estimated device time 485.325 us (the slowest core, core 0, plus 0 us fixed); imbalance 1.00 (the busiest core / the mean)
hints, the largest saving first (each against the op as it is; see run-custom-op(1), THE PROFILE):
  element_access, saves 483.556 us: core 0 uses element accessors 2000 times, an HBM access each (485.325 us): copying the elements between the tensors and TCM in blocks (tensor_to_tcm, tcm_to_tensor; at most 8000 bytes, 4 a use) would take 1.769 us, and a stream accessor about as long"
profile_of stream_relu "$WORK/single/profile" x
check_eq "streams: 1000 elements each way, two 4 KiB buffers at the peak; no hint" "$status:$json" "0:{\"op\": \"stream_relu\", \"cores\": [
$(core_json 0 0 0 1000 1000 0 0 8192 0 1000 0.000 1.769 0.000 0.000 0.000 1.769)],
 \"estimated_device_us\": 1.769, \"imbalance\": 1.000, \"hints\": []}"
check_eq "and the table says there is none" "$(printf '%s\n' "$err" | tail -1)" \
	"hints: none (no change the cost model prices saves 1% of the op's time)"
profile_of tcm_relu "$WORK/single/profile" x
check_eq "TCM copies: 4000 bytes each way, a 1 KiB buffer; on 8 cores, an eighth" "$status:$json" "0:{\"op\": \"tcm_relu\", \"cores\": [
$(core_json 0 0 0 0 0 4000 4000 1024 0 1000 0.000 0.000 1.769 0.000 0.000 1.769)],
 \"estimated_device_us\": 1.769, \"imbalance\": 1.000, \"hints\": [
$(hint_json multicore 1.548 "$MULTICORE 0.221 us")]}"
profile_of tcm_relu "$WORK/single/profile" x --output-checks off
check_eq "with the output checks off, the elements written are not known: null" \
	"$(printf '%s\n' "$json" | sed -n 2,3p)" "$(core_json 0 0 0 0 0 4000 4000 1024 0 null 0.000 0.000 1.769 0.000 0.000 1.769)],"

profile_of relu "$WORK/even/relu" even --profile-svg "$WORK/profile.svg"
expected=$(for core in 0 1 2 3 4 5 6; do
	echo "$(core_json $core 0 0 0 0 5000 5000 4096 0 1250 0.000 0.000 2.211 0.000 0.000 2.211),"
done)
check_eq "8 cores over 10001 elements: eight entries, even shares, no hint (core 7 writes no more than its share)" "$status:$json" "0:{\"op\": \"relu\", \"cores\": [
$expected
$(core_json 7 0 0 0 0 5004 5004 4096 0 1251 0.000 0.000 2.213 0.000 0.000 2.213)],
 \"estimated_device_us\": 2.213, \"imbalance\": 1.001, \"hints\": []}"
check_eq "the JSON parses, with the keys in the documented order" "$(python3 -c '
import json, sys
profile = json.load(open(sys.argv[1]), object_pairs_hook=lambda pairs: pairs)
print([key for key, _ in profile])
print([key for key, _ in profile[1][1][0]])
print([key for key, _ in dict(profile[1][1][0])["estimated_us_by_kind"]])
print(len(profile[1][1]))' "$WORK/profile.json")" "['op', 'cores', 'estimated_device_us', 'imbalance', 'hints']
['core', 'element_reads', 'element_writes', 'stream_reads', 'stream_writes', 'tensor_to_tcm_bytes', 'tcm_to_tensor_bytes', 'tcm_peak_bytes', 'result_copy_bytes', 'output_elements_written', 'estimated_us_by_kind', 'estimated_device_us']
['hbm_element', 'stream', 'tcm_copy', 'compute', 'result_copy']
8"
check_eq "the SVG is XML, with a bar for each core's TCM copies and the estimate" "$(python3 -c '
import sys, xml.etree.ElementTree as tree
svg = tree.parse(sys.argv[1]).getroot()
titles = [t.text for t in svg.iter("{http://www.w3.org/2000/svg}title")]
print(len(titles), titles[0], titles[-1])' "$WORK/profile.svg")" \
	"8 core 0, TCM copies: 2.211 us core 7, TCM copies: 2.213 us"

profile_of rows_skewed "$WORK/skewed/profile" rows
check_eq "rows / 8 a core and the remainder to the last: imbalance 4.27, and the hint names core and rows" \
	"$status:$(printf '%s\n' "$json" | tail -2)" "0: \"estimated_device_us\": 0.906, \"imbalance\": 4.271, \"hints\": [
$(hint_json imbalance 0.694 "core 7 is the busiest: 0.906 us, 4.27 times the mean of the 8 cores (0.212 us), which wrote rows 7-14 of the 15; give every core an even share (core i taking rows [rows * i / 8, rows * (i + 1) / 8), say) and the op takes about the mean")]}"

# ---- a row softmax with a temperature, as a kernel grows up ----
# Each variant's output is the softmax's, within 1e-6; its profile says
# what it costs and what to change next.
softmax_of() { # OP BUILD
	profile_of "$1" "$2" logits --scalar 0.5 --expect "$WORK/softmax.npy" --rtol 1e-6 --atol 1e-9 \
		--profile-svg "$WORK/profile.svg"
}
# hints_of: the hints of the last profile, one "KIND SAVES: TEXT" line each.
hints_of() {
	python3 -c 'import json, sys
for hint in json.load(open(sys.argv[1]))["hints"]:
    print("%s %.3f: %s" % (hint["kind"], hint["saves_us"], hint["text"]))' "$WORK/profile.json"
}
# by_kind: each core's estimate by kind, and whether the kinds add up to it.
by_kind() {
	python3 -c 'import json, sys
for core in json.load(open(sys.argv[1]))["cores"]:
    kinds = core["estimated_us_by_kind"]
    print(core["core"], " ".join("%s=%.3f" % item for item in kinds.items()),
          round(sum(kinds.values()), 3) == core["estimated_device_us"])' "$WORK/profile.json"
}
softmax_of softmax_element "$WORK/softmax/softmax"
check_eq "element accessors: the softmax, three reads of each element and a write, and the copy of its own result" \
	"$status:$(by_kind)" \
	"0:0 hbm_element=35914.066 stream=0.000 tcm_copy=0.000 compute=0.000 result_copy=65.448 True"
check_eq "the hint: TCM copies (the result's copy, under 1%, waits)" "$(hints_of)" \
	"element_access 35783.170: core 0 uses element accessors 148000 times, an HBM access each (35914.066 us): copying the elements between the tensors and TCM in blocks (tensor_to_tcm, tcm_to_tensor; at most 592000 bytes, 4 a use) would take 130.896 us, and a stream accessor about as long"
softmax_of softmax_t "$WORK/softmax/softmax"
check_eq "TCM (softmax_t): each element copied in and out once, and the result's copy as much again" \
	"$status:$(by_kind)" \
	"0:0 hbm_element=0.000 stream=0.000 tcm_copy=65.448 compute=0.000 result_copy=65.448 True"
check_eq "the hints: 8 cores, and get_dst_tensor()" "$(hints_of)" \
	"multicore 122.715: $MULTICORE 8.181 us
result_copy 65.448: the kernel returns a tensor of its own, which customop_return_tensor copies into the output (296000 bytes read and written, 65.448 us): write the result into get_dst_tensor() and return that"
check_eq "the JSON counts the copy" "$(printf '%s\n' "$json" | sed -n 's/.*"result_copy_bytes": \([0-9]*\),.*/\1/p')" 296000
check_eq "the table shows the estimate by kind" "$(printf '%s\n' "$err" | sed -n '/^estimated us by kind/,/^op /p')" \
	"estimated us by kind   hbm_element        stream      tcm_copy       compute   result_copy
core 0                       0.000         0.000        65.448         0.000        65.448
op softmax_t: estimated device time 130.896 us (the slowest core, core 0, plus 0 us fixed); imbalance 1.00 (the busiest core / the mean)"
check_eq "the SVG shows the result's copy as its own part" "$(python3 -c '
import sys, xml.etree.ElementTree as tree
svg = tree.parse(sys.argv[1]).getroot()
print([t.text for t in svg.iter("{http://www.w3.org/2000/svg}title")])
print([t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")][-6:-1])' "$WORK/profile.svg")" \
	"['core 0, TCM copies: 65.448 us', 'core 0, result copy: 65.448 us']
['HBM element accesses', 'stream', 'TCM copies', 'compute', 'result copy']"
softmax_of softmax_multicore "$WORK/softmax8/softmax"
check_eq "8 cores, into get_dst_tensor(): 4 or 5 rows a core, nothing copied twice" "$status:$(by_kind)" \
	"0:0 hbm_element=0.000 stream=0.000 tcm_copy=7.075 compute=0.000 result_copy=0.000 True
1 hbm_element=0.000 stream=0.000 tcm_copy=8.844 compute=0.000 result_copy=0.000 True
2 hbm_element=0.000 stream=0.000 tcm_copy=7.075 compute=0.000 result_copy=0.000 True
3 hbm_element=0.000 stream=0.000 tcm_copy=8.844 compute=0.000 result_copy=0.000 True
4 hbm_element=0.000 stream=0.000 tcm_copy=8.844 compute=0.000 result_copy=0.000 True
5 hbm_element=0.000 stream=0.000 tcm_copy=7.075 compute=0.000 result_copy=0.000 True
6 hbm_element=0.000 stream=0.000 tcm_copy=8.844 compute=0.000 result_copy=0.000 True
7 hbm_element=0.000 stream=0.000 tcm_copy=8.844 compute=0.000 result_copy=0.000 True"
check_eq "no hint: the rows are shared as evenly as rows go" "$(hints_of):$(printf '%s\n' "$err" | tail -1)" \
	":hints: none (no change the cost model prices saves 1% of the op's time)"

profile_of stream_five "$WORK/softmax/softmax" x
check_eq "five read streams and a write stream: two without a buffer, and the hint" "$(hints_of)" \
	"stream 483.556: on core 0, 2000 elements went through stream accessors opened while 4 others were active, which get no TCM buffer and go at the element accessor's speed (485.325 us); through a buffer they would take 1.769 us: close a stream before opening the fifth, or copy through TCM"

run_capture "$RUN" --op tcm_relu --in "$WORK/x.npy" --profile /dev/full "$WORK/single/profile"
check_eq "a profile that cannot be written: said, and exit 1" "$status:$(printf '%s\n' "$err" | tail -1)" \
	"1:run-custom-op: cannot write /dev/full: No space left on device"

# ---- the official sample's three variants on its shapes ----
for variant in element tcm multicore; do
	total=0
	for columns in 4096 2048; do
		profile_of relu_forward "$WORK/mlp-$variant/relu" "sample$columns"
		total=$(python3 -c 'import json, sys; print(float(sys.argv[2]) + json.load(open(sys.argv[1]))["estimated_device_us"])' \
			"$WORK/profile.json" "$total")
	done
	eval "estimate_$variant=$total"
done
# shellcheck disable=SC2154 # set by eval
check_eq "ranked as documented: element >> TCM > 8-core TCM, element / TCM at least 27.2 / 2" "$(python3 -c '
import sys
element, tcm, multicore = map(float, sys.argv[1:])
print(element > tcm > multicore, element / tcm >= 27.2 / 2)' "$estimate_element" "$estimate_tcm" "$estimate_multicore")" "True True"

finish
