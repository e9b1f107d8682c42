#!/bin/sh
# test_sanitize.sh - kernels built with --sanitize: each bug is reported as
# an error of its core and op, at the kernel's file:line, through
# run-custom-op and libruncustomop's C API, and the next call works; a
# correct kernel runs without a word from the sanitizers on 1 and 8 cores.
. "$(dirname "$0")/../cli/lib.sh"
. "$TOP/tests/host/lib_host.sh"
RUN=$TOP/run-custom-op
CALLS=$TOP/tests/host/sanitized_calls
KERNEL=$TOP/tests/host/kernels/sanitize.cpp
NPY="python3 $TOP/tests/run/npy.py"
cd "$WORK" || exit 1
unset CUSTOM_OP_LAUNCHER LD_PRELOAD ASAN_OPTIONS RUN_CUSTOM_OP_PRELOADED

# A program built with AddressSanitizer (make check-asan) has its runtime
# already, and a sanitized kernel must use that one: the kernels are then
# compiled by the compiler that built the program.
# (Its runtime also warns of the plain runtime's stack switches, in a
# build with --sanitize=undefined alone: run_capture leaves that out.)
runner_asan=
if readelf -d "$RUN" 2>/dev/null | grep -q 'libasan\.so'; then
	CXX=g++ HOST_CXX=g++ HOST_FAMILY=gcc runner_asan=1
	export CXX
fi

RELU='relu=my_ops::relu(Tensor x, int cores) -> Tensor'
STACK='stack_overrun=my_ops::stack_overrun(Tensor x) -> Tensor'
OVERFLOW='signed_overflow=my_ops::signed_overflow(Tensor x) -> Tensor'
TCM='tcm_over_read=my_ops::tcm_over_read(Tensor x) -> Tensor'
FOUR='tcm_over_read_four=my_ops::tcm_over_read_four(Tensor x) -> Tensor'
NULL_WRITE='null_write=my_ops::null_write(Tensor x) -> Tensor'
# sanitized DIR CORES SANITIZERS OP...: builds the kernels into DIR/k.
sanitized() {
	dir=$1 cores=$2 sanitizers=$3
	shift 3
	multicore=
	[ "$cores" = 8 ] && multicore=--multicore
	for op; do
		case $op in
		-*) set -- "$@" --cflag "$op" ;;
		*) set -- "$@" --op "$op" ;;
		esac
		shift
	done
	run_bco --target host -B "$dir" --name k $multicore --sanitize="$sanitizers" "$@" "$KERNEL"
	check_eq "a build with --sanitize=$sanitizers on $cores core(s)" "$status" 0
	[ "$status" = 0 ] || printf '%s\n' "$err" | sed 's/^/# /'
}
sanitized address 1 address "$RELU" "$STACK" "$TCM" "$NULL_WRITE" "$FOUR"
sanitized both 1 address,undefined "$RELU" "$STACK" "$OVERFLOW" "$TCM"
sanitized both8 8 address,undefined "$RELU" "$TCM"
sanitized undefined 1 undefined "$RELU" "$OVERFLOW"
# The wrapper on a STACK_SIZE stack of its own (the core stack is 12 KiB).
sanitized heap 1 address -DSTACK_SIZE=65536 "$RELU" "$STACK"

$NPY make x.npy '<f4' 10 -3 -2 -1 0 1 2 3 4 5 6
$NPY make relu.npy '<f4' 10 0 0 0 0 1 2 3 4 5 6
$NPY make nine.npy '<f4' 9 1 2 3 4 5 6 7 8 9
$NPY make sum.npy '<i4' 2 2147483647 1

# run_raw COMMAND ARGS...: as run_capture, but $err is all of stderr (the
# sanitizer's warnings included).
run_raw() {
	"$@" >"$WORK/.out" 2>"$WORK/.err"
	status=$?
	out=$(cat "$WORK/.out")
	err=$(cat "$WORK/.err")
}
# The lines run-custom-op printed itself, and how many reports the
# sanitizer made (its own lines are addresses and stacks).
ours() { printf '%s\n' "$err" | grep '^run-custom-op: '; }
reports() { printf '%s\n' "$err" | grep -c 'ERROR: AddressSanitizer'; }
# The kernel's file:line[:column] as each compiler's tools give it.
at() {
	if [ "$HOST_FAMILY" = clang ]; then echo "$KERNEL:$1:$2"; else echo "$KERNEL:$1${3:+:$3}"; fi
}

for build in address both undefined; do
	run=run_raw
	[ "$build" = undefined ] && run=run_capture
	$run "$RUN" --op relu --in x.npy --scalar 1 --expect relu.npy "$build/k"
	check_eq "a correct kernel built with $build runs on 1 core, with no word from the sanitizers" \
		"$status:$out:$err" "0::"
done
run_raw "$RUN" --op relu --in x.npy --scalar 8 --expect relu.npy both8/k
check_eq "and on 8 cores" "$status:$out:$err" "0::"
leak="run-custom-op: warning: core 0: op OP: the op's result leaks on every call that switches stacks: switchBack() skips the destructor of the wrapper's \`output\`, so the tensor's handle is never freed (the device leaks it too); see run-custom-op(1), THE STACK SWITCH"
run_raw "$RUN" --op relu --in x.npy --scalar 1 --expect relu.npy heap/k
check_eq "and on the STACK_SIZE stack, with only the runtime's warning of every switch" "$status:$out:$err" \
	"0::$(printf '%s\n' "$leak" | sed 's/ OP:/ relu:/')"

report_tail="(1 AddressSanitizer report during the op; the first is on stderr, with its stack)"
run_raw "$RUN" --op stack_overrun --in nine.npy address/k
check_eq "a local array written past its end, under ASan (which knows the core stack's frames)" "$status:$(ours)" \
	"1:run-custom-op: core 0: op stack_overrun: AddressSanitizer: stack-buffer-overflow: WRITE of size 4 at $(at 41 18) in stack_overrun(at::Tensor const&); the access overflows the variable 'local' (line 38) $report_tail"
check_eq "ASan's report is on stderr, once" "$(reports)" 1
run_raw "$RUN" --op stack_overrun --in nine.npy heap/k
check_eq "the same on the STACK_SIZE stack" "$status:$(ours)" \
	"1:$(printf '%s\n' "$leak" | sed 's/ OP:/ stack_overrun:/')
run-custom-op: core 0: op stack_overrun: AddressSanitizer: stack-buffer-overflow: WRITE of size 4 at $(at 41 18) in stack_overrun(at::Tensor const&); the access overflows the variable 'local' (line 38) $report_tail"
run_raw "$RUN" --op tcm_over_read --in x.npy address/k
check_eq "a TCM block read one element past its end, under ASan" "$status:$(ours)" \
	"1:run-custom-op: core 0: op tcm_over_read: AddressSanitizer: use-after-poison: READ of size 4 at $(at 67 19) in tcm_over_read(at::Tensor const&) $report_tail"
# Past a block whose size is a multiple of 64, the next byte is on a page
# no access may touch: ASan reports the read, which then faults, and the
# fault is the op's error; it says where the kernel's line is.
$NPY make sixteen.npy '<f4' 16 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16
run_raw "$RUN" --op tcm_over_read --in sixteen.npy address/k
check_eq "a read one element past a 64-byte block, under ASan: the fault says where ASan named the line" \
	"$status:$(ours)" \
	"1:run-custom-op: core 0: op tcm_over_read: a read or write at byte 64 of the 64-byte TCM block allocated by tcm_malloc in tcm_over_read(at::Tensor const&), past its end (on the device it reaches another block or a stream accessor's buffer; AddressSanitizer's report of the access, on stderr, names the kernel's line)"
check_eq "and the report on stderr does" "$(reports):$(printf '%s\n' "$err" | grep -c "^SUMMARY: AddressSanitizer: use-after-poison $(at 67 19) in tcm_over_read")" "1:1"

if [ "$HOST_FAMILY" = clang ]; then
	array="at $KERNEL:41:9: index 8 out of bounds for type 'volatile int[8]'"
else
	array="at $KERNEL:41:16: index 8 out of bounds for type 'int [8]'"
fi
run_raw "$RUN" --op stack_overrun --in nine.npy both/k
check_eq "with UBSan too, the array's bound check finds it first, and ends the op there" "$status:$(ours):$(reports)" \
	"1:run-custom-op: core 0: op stack_overrun: undefined behaviour $array [-fsanitize=bounds]:0"
overflow="undefined behaviour at $KERNEL:53:13: signed integer overflow: 2147483647 + 1 cannot be represented in type 'int' [-fsanitize=signed-integer-overflow]"
for build in both undefined; do
	run=run_raw
	[ "$build" = undefined ] && run=run_capture
	$run "$RUN" --op signed_overflow --in sum.npy "$build/k"
	check_eq "a signed overflow, built with $build" "$status:$out:$err" \
		"1::run-custom-op: core 0: op signed_overflow: $overflow"
done

run_raw "$RUN" --op tcm_over_read --in x.npy both8/k
check_eq "on 8 cores, each core's report is an error of its own, the same for all: said once" "$status
$(ours)" "1
run-custom-op: cores 0-7: op tcm_over_read: AddressSanitizer: use-after-poison: READ of size 4 at $(at 67 19) in tcm_over_read(at::Tensor const&) $report_tail"
check_eq "and ASan made one report per core, each the first of its core's call: all on stderr" "$(reports)" 8

# Reports beyond a call's first go to a file of the process, which the
# error names; stderr gets the first of each call.
mkdir -p "$WORK/tmp"
$NPY make two.npy '<f4' 2 1 2
# report_file: the file the last error names.
report_file() { printf '%s\n' "$out" "$err" | sed -n 's/.* and the others are in \([^ ]*\))$/\1/p' | tail -1; }
TMPDIR=$WORK/tmp run_raw "$RUN" --op tcm_over_read_four --in two.npy address/k
file=$(report_file)
four="run-custom-op: core 0: op tcm_over_read_four: AddressSanitizer: use-after-poison: READ of size 4 at $(at 83 19) in tcm_over_read_four(at::Tensor const&) (4 AddressSanitizer reports during the op; the first is on stderr, with its stack, and the others are in $file)"
check_eq "four bad reads: the error names the file of the other reports" "$status:$(ours)" "1:$four"
case $file in
"$WORK"/tmp/build-custom-op-asan.*/reports.[0-9]*) check_eq "in a private directory of TMPDIR" ok ok ;;
*) check_eq "in a private directory of TMPDIR" "$file" "$WORK/tmp/build-custom-op-asan.XXXXXX/reports.PID" ;;
esac
check_eq "stderr has the first report, the file the three others" \
	"$(reports):$(grep -c 'ERROR: AddressSanitizer: use-after-poison' "$file")" "1:3"
# The C API: rco_open says what to run; with it, a report fails its call
# only, and the next calls work and report again.
run_raw "$CALLS" address/k tcm_over_read=f32:1,2
runtime=$(readelf -d address/k.so | sed -n 's/.*NEEDED.*\[\(lib[a-z_.-]*asan[^]]*\)\].*/\1/p')
# Where the compiler has it: gcc names its development link libasan.so.
case $runtime in libasan*) query=libasan.so ;; *) query=$runtime ;; esac
runtime_dir=$(dirname "$(realpath "$($HOST_CXX -print-file-name="$query")")")
# (A program built with ASan has the runtime, but not the options.)
if [ -n "$runner_asan" ]; then
	reason="AddressSanitizer's runtime is loaded, but ASAN_OPTIONS lacks halt_on_error=0 or suppress_equal_pcs=0"
else
	reason="its core libraries need AddressSanitizer's runtime loaded first in the process"
fi
check_eq "without ASan's runtime, rco_open says exactly what to run" "$status:$out" \
	"2:rco_open: address/k was built with --sanitize=address: $reason; start the program as
  LD_PRELOAD=$runtime_dir/$runtime ASAN_OPTIONS=halt_on_error=0:suppress_equal_pcs=0:detect_leaks=0 PROGRAM ...
(the runtime first in the process; ASan reports and lets the kernel go on, and the op fails at its end with the first report; run-custom-op does this itself)"
preload=$(printf '%s\n' "$out" | sed -n 's/^  LD_PRELOAD=\([^ ]*\) ASAN_OPTIONS=\([^ ]*\) .*/\1/p')
options=$(printf '%s\n' "$out" | sed -n 's/^  LD_PRELOAD=\([^ ]*\) ASAN_OPTIONS=\([^ ]*\) .*/\2/p')
run_raw env LD_PRELOAD="$preload" ASAN_OPTIONS=detect_leaks=0 "$CALLS" address/k tcm_over_read=f32:1,2
check_eq "with the runtime but without the options, it names them" "$status:$(printf '%s\n' "$out" | head -1)" \
	"2:rco_open: address/k was built with --sanitize=address: AddressSanitizer's runtime is loaded, but ASAN_OPTIONS lacks halt_on_error=0 or suppress_equal_pcs=0; start the program as"
run_raw env LD_PRELOAD="$preload" ASAN_OPTIONS="$options" "$CALLS" both/k \
	tcm_over_read=f32:1,2 stack_overrun=f32:1,2,3,4,5,6,7,8,9 tcm_over_read=f32:1,2 \
	signed_overflow=i32:2147483647,1 signed_overflow=i32:1,2 tcm_over_read=f32:1,2
tcm="tcm_over_read: core 0: op tcm_over_read: AddressSanitizer: use-after-poison: READ of size 4 at $(at 67 19) in tcm_over_read(at::Tensor const&) $report_tail"
check_eq "with both, each call reports its own bug, and the calls between work" "$status:$out" "0:$tcm
stack_overrun: core 0: op stack_overrun: undefined behaviour $array [-fsanitize=bounds]
$tcm
signed_overflow: core 0: op signed_overflow: $overflow
signed_overflow: ok
$tcm"
check_eq "ASan reported the three over-reads, and nothing else" "$(reports)" 3
TMPDIR=$WORK/tmp run_raw env LD_PRELOAD="$preload" ASAN_OPTIONS="$options" "$CALLS" address/k \
	tcm_over_read_four=f32:1,2 tcm_over_read_four=f32:1,2
file=$(report_file)
tail="(4 AddressSanitizer reports during the op; the first is on stderr, with its stack, and the others are in $file)"
check_eq "two calls of four bad reads each, in one process: one file" "$status:$out" \
	"0:tcm_over_read_four: core 0: op tcm_over_read_four: AddressSanitizer: use-after-poison: READ of size 4 at $(at 83 19) in tcm_over_read_four(at::Tensor const&) $tail
tcm_over_read_four: core 0: op tcm_over_read_four: AddressSanitizer: use-after-poison: READ of size 4 at $(at 83 19) in tcm_over_read_four(at::Tensor const&) $tail"
check_eq "stderr has each call's first report, the file the seven others" \
	"$(reports):$(grep -c 'ERROR: AddressSanitizer: use-after-poison' "$file")" "2:7"
# A build opened twice (the second time as a copy of its own) and the
# first closed, as custom_op.load() then load_library() of the same bundle
# do: the copy's reports name the kernel's line, and the calls go on.
run_raw env LD_PRELOAD="$preload" ASAN_OPTIONS="$options" "$CALLS" --reopen address/k \
	tcm_over_read=f32:1,2 stack_overrun=f32:1,2,3,4,5,6,7,8 tcm_over_read=f32:1,2
check_eq "a build opened again, the first closed: each report names the line" "$status:$out" "0:$tcm
stack_overrun: ok
$tcm"
run_raw env LD_PRELOAD="$preload" ASAN_OPTIONS="$options" "$CALLS" address/k null_write=f32:1 \
	stack_overrun=f32:1,2,3,4,5,6,7,8 tcm_over_read=f32:1,2 null_write=f32:1 tcm_over_read=f32:1,2
segv="null_write: core 0: op null_write: segmentation fault (SIGSEGV) at address (nil); the kernel used memory it does not own"
check_eq "after a fault abandons a sanitized kernel, the next calls work and report" "$status:$out" "0:$segv
stack_overrun: ok
$tcm
$segv
$tcm"
check_eq "and ASan said nothing of the stack switches" "$(printf '%s\n' "$err" | grep -c WARNING)" 0

# The commands: the sanitizers' flags after the host target's in each
# compile, and in the link the sanitized runtime, the RUNPATH that finds
# it and names ASan's runtime, then --ldflag's flags.
sdk=$(realpath "$TOP/sdk/host")
run_raw "$BCO" -n -j 1 --target host -B address --name k --sanitize=address,undefined --ldflag=-Wl,-z,now \
	--op "$RELU" "$KERNEL"
function=
[ "$HOST_FAMILY" = clang ] && function=' -fno-sanitize=function' shared=' -shared-libsan'
check_eq "a dry run of a changed build shows every command with the sanitizers' flags" "$status:$(printf '%s\n' "$out" |
	sed -n 's/.* -fstack-clash-protection .*\( -fsanitize=address .*\) -I.* -o \([^ ]*\) .*/\2:\1/p')" \
	"0:address/sanitize.o: -fsanitize=address -fsanitize-recover=address -fno-omit-frame-pointer -fsanitize=undefined -fno-sanitize-recover=undefined -fno-sanitize=vptr$function
address/wrapper.o: -fsanitize=address -fsanitize-recover=address -fno-omit-frame-pointer -fsanitize=undefined -fno-sanitize-recover=undefined -fno-sanitize=vptr$function"
check_eq "and the link" "$(printf '%s\n' "$out" | grep -- ' -shared ')" \
	"$HOST_CXX -shared -o address/k.so address/sanitize.o address/wrapper.o $sdk/lib/core_single.o $sdk/lib/undefined_handlers.o $sdk/lib/address/libcustomop_host.a -Wl,-Bsymbolic -Wl,--no-undefined -Wl,--compress-debug-sections=zlib -fsanitize=address$shared $sdk/lib/address/libcustomop_host_reports.so -Wl,-rpath,$sdk/lib/address -Wl,-rpath,$runtime_dir -Wl,-z,now"

# A change of the sanitizers rebuilds everything they reach, both ways.
# steps ARG...: builds address/k again; the steps that ran.
steps() {
	run_raw "$BCO" -j 1 --target host -B address --name k "$@" --op "$RELU" --op "$STACK" --op "$TCM" \
		--op "$NULL_WRITE" --op "$FOUR" "$KERNEL"
	printf '%s\n' "$err" | sed -n 's/^\[[0-9]*\/[0-9]*\] \([A-Z]*\) .*/\1/p' | tr '\n' ' '
}
check_eq "the same sanitizers again: nothing runs" "$(steps --sanitize=address)" ""
check_eq "without them: both compiles and the link" "$(steps)" "CC CC LINK "
check_eq "again without: nothing" "$(steps)" ""
check_eq "that library needs no sanitizer runtime" "$(readelf -d address/k.so | grep -c 'asan\|customop_host_reports')" 0
check_eq "with them again: everything" "$(steps --sanitize=address)" "CC CC LINK "

# UBSan alone needs no runtime: the host runtime reports its checks.
run_capture "$CALLS" undefined/k signed_overflow=i32:2147483647,1 signed_overflow=i32:1,2
check_eq "a build with --sanitize=undefined alone runs in any process" "$status:$out:$err" \
	"0:signed_overflow: core 0: op signed_overflow: $overflow
signed_overflow: ok:"
finish
