#!/bin/sh
# test_coherence.sh - the coherence rule of run-custom-op(1): a potentially
# incoherent access between a tensor's accessors ends the op under
# COHERENT (the default), is a warning once per op call under
# INCOHERENT_VERBOSE and is allowed silently under INCOHERENT_QUIET; what
# the rule allows runs; a stream used after close() is a violation.
. "$(dirname "$0")/../cli/lib.sh"
. "$TOP/tests/host/lib_host.sh"

check_true "the accessor kernels build" host_build "$WORK/coherence" accessors 1 \
	'accessors=my_ops::accessors(Tensor x, int which, int policy) -> Tensor' \
	-- "$TOP/tests/host/kernels/coherence.cpp"
sed 's/^/# /' "$WORK/coherence/build.log"
LIB=$WORK/coherence/accessors
FIX="close() the stream first, or allow this with set_accessor_coherence_policy(torch::CoherencyEnforcer::INCOHERENT_VERBOSE)"

# run_case N POLICY: accessors(x, N, POLICY) with x = 1 2 3 into an output of 1 2 3.
run_case() {
	run_driver "$LIB" accessors f32:3:1,2,3 f32:3:1,2,3 "i32:1:$1" "i32:1:$2"
}

# Each incoherent pattern, as an error under COHERENT.
run_case 0 0
check_eq "a read stream opened while a write stream is active" "$status $out" \
	"1 error: core 0: op accessors: coherence: read_stream_accessor<float>() opened on the output while it has an active write_stream_accessor<float>(): the read stream may miss elements the write stream still holds in its TCM buffer; $FIX"
run_case 1 0
check_eq "a write stream opened while a read stream is active" "$status $out" \
	"1 error: core 0: op accessors: coherence: write_stream_accessor<float>() opened on the output while it has an active read_stream_accessor<float>(): the read stream may already have read ahead the elements the write stream changes; $FIX"
run_case 2 0
check_eq "a write stream opened while a write stream is active" "$status $out" \
	"1 error: core 0: op accessors: coherence: write_stream_accessor<float>() opened on the output while it has an active write_stream_accessor<float>(): the two write streams' buffers may reach memory in either order; $FIX"
run_case 3 0
check_eq "an element read while a write stream is active" "$status $out" \
	"1 error: core 0: op accessors: coherence: element access through accessor<float,1>() on the output while it has an active write_stream_accessor<float>(): the element access may miss what the write stream still holds in its TCM buffer; $FIX"
run_case 4 0
check_eq "an element write while a read stream is active" "$status $out" \
	"1 error: core 0: op accessors: coherence: element access through the writable accessor<float,1>() on the output while it has an active read_stream_accessor<float>(): the read stream may already have read ahead the element written; $FIX"
run_case 8 0
check_eq "two tensors over the same memory are one (get_dst_tensor() twice)" "$status $out" \
	"1 error: core 0: op accessors: coherence: read_stream_accessor<float>() opened on the output while it has an active write_stream_accessor<float>(): the read stream may miss elements the write stream still holds in its TCM buffer; $FIX"

# INCOHERENT_VERBOSE: the op goes on, with one warning per call even in a loop.
run_case 3 1
check_eq "INCOHERENT_VERBOSE warns once for element reads in a loop, and the op goes on" "$status $out" \
	"0 warning: core 0: op accessors: coherence: element access through accessor<float,1>() on the output while it has an active write_stream_accessor<float>(): the element access may miss what the write stream still holds in its TCM buffer (allowed by INCOHERENT_VERBOSE)
$(lines out: 6 2 3)"
run_case 0 1
check_eq "INCOHERENT_VERBOSE: a read stream beside a write stream" "$status $out" \
	"0 warning: core 0: op accessors: coherence: read_stream_accessor<float>() opened on the output while it has an active write_stream_accessor<float>(): the read stream may miss elements the write stream still holds in its TCM buffer (allowed by INCOHERENT_VERBOSE)
$(lines out: 2 2 3)"

# INCOHERENT_QUIET: nothing said.
run_case 3 2
check_eq "INCOHERENT_QUIET allows it silently" "$status $out" "0 $(lines out: 6 2 3)"
run_case 2 2
check_eq "INCOHERENT_QUIET: two write streams" "$status $out" "0 $(lines out: 2 2 3)"

# What the rule allows.
run_case 5 0
check_eq "element reads beside a read stream are coherent" "$status $out" \
	"0 print core 0: read 1 and 2
$(lines out: 1 2 3)"
run_case 6 0
check_eq "a read stream after the write stream's close() is coherent; close() returns 0" "$status $out" \
	"0 print core 0: close() returns 0
print core 0: read back 10
$(lines out: 0 10 20)"
run_case 7 0
check_eq "the TCM accessor is not checked" "$status $out" "0 $(lines out: 5 2 3)"
run_case 11 0
check_eq "streams on different memory are independent" "$status $out" "0 $(lines out: 2 4 6)"

# close().
run_case 9 0
check_eq "a read after close() is a violation" "$status $out" \
	"1 error: core 0: op accessors: read_stream_accessor<float>(): read() after close()"
run_case 10 0
check_eq "close() twice is a violation" "$status $out" \
	"1 error: core 0: op accessors: write_stream_accessor<float>(): close() on a stream that is closed already"
finish
