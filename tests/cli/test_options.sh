#!/bin/sh
# test_options.sh - build-custom-op's options: help, version, usage errors.
. "$(dirname "$0")/lib.sh"

run_bco --help
check_eq "--help exits 0 with nothing on stderr" "$status:$err" "0:"
check_eq "--help starts with the usage line" "$(printf '%s\n' "$out" | head -1)" \
	"Usage: build-custom-op [OPTIONS] --name NAME --op [FN=]SCHEMA... SOURCE..."
check_true "--help teaches with an example" \
	grep -q "build-custom-op --name relu --op 'my_ops::relu(Tensor x) -> Tensor' relu.cpp" "$WORK/.out"
for option in --op --name --build-dir --cflag --ldflag --multicore --target --sanitize --launcher \
	--emit-wrapper --dry-run --keep-going --verbose --sdk --core --xtensa-system --version; do
	check_true "--help documents $option" grep -q -- "$option" "$WORK/.out"
done
run_bco -h
check_eq "-h is --help" "$status" 0

run_bco --version
check_eq "--version" "$status:$out" "0:build-custom-op $(sed -n 's/^#define BCO_VERSION "\(.*\)"$/\1/p' "$TOP/include/buildcustomop.h")
compatible with build_custom_op.py 0.21.2.0 (ulib_to_ucode_version 1.21.1.0, ulib_to_isa_version 1.0.2520.0)"

run_bco --frobnicate
check_eq "an unknown option is a usage error" "$status" 2
check_eq "an unknown option is named" "$err" "build-custom-op: unrecognized option '--frobnicate'
Try 'build-custom-op --help' for more information."

run_bco --name relu relu.cpp
check_eq "no --op is a usage error" "$status:$err" "2:build-custom-op: no ops: give at least one --op, such as --op 'my_ops::relu(Tensor x) -> Tensor'
Try 'build-custom-op --help' for more information."

run_bco --op 'x::relu(Tensor x) -> Tensor' relu.cpp
check_eq "no --name is a usage error" "$status:$err" "2:build-custom-op: no library name: give --name NAME
Try 'build-custom-op --help' for more information."

run_bco --name relu --op 'x::relu(Tensor x) -> Tensor'
check_eq "no SOURCE is a usage error" "$status:$err" "2:build-custom-op: no SOURCE: give the kernel's C++ files
Try 'build-custom-op --help' for more information."

run_bco -j 0 --name relu --op 'x::relu(Tensor x) -> Tensor' relu.cpp
check_eq "-j 0 is a usage error" "$status:$err" "2:build-custom-op: -j needs a positive number of jobs, not '0'
Try 'build-custom-op --help' for more information."
run_bco -j 2x --name relu --op 'x::relu(Tensor x) -> Tensor' relu.cpp
check_eq "-j 2x is a usage error" "$status" 2

run_bco --target arm --name relu --op 'x::relu(Tensor x) -> Tensor' relu.cpp
check_eq "an unknown target is a usage error" "$status:$err" "2:build-custom-op: unknown target 'arm': use xtensa or host
Try 'build-custom-op --help' for more information."

run_bco -n --target host --sanitize=address,thread --name relu --op 'x::relu(Tensor x) -> Tensor' relu.cpp
check_eq "an unknown sanitizer is a usage error that names the ones there are" "$status:$err" \
	"2:build-custom-op: sanitize 'address,thread': unknown sanitizer 'thread'; the host target has address (AddressSanitizer) and undefined (UndefinedBehaviorSanitizer), or both as address,undefined
Try 'build-custom-op --help' for more information."
run_bco -n --target host --sanitize=address, --name relu --op 'x::relu(Tensor x) -> Tensor' relu.cpp
check_eq "an empty sanitizer name is a usage error" "$status:$err" \
	"2:build-custom-op: sanitize 'address,': an empty name; list address, undefined or both, separated by a comma (address,undefined)
Try 'build-custom-op --help' for more information."
run_bco -n --target host --sanitize= --name relu --op 'x::relu(Tensor x) -> Tensor' relu.cpp
check_eq "an empty --sanitize is a usage error" "$status:$err" \
	"2:build-custom-op: --sanitize needs a list of sanitizers: address, undefined or address,undefined
Try 'build-custom-op --help' for more information."
run_bco -n --sanitize=undefined --name relu --op 'x::relu(Tensor x) -> Tensor' relu.cpp
check_eq "the sanitizers are refused on the device, saying what to do" "$status:$err" \
	"2:build-custom-op: sanitize 'undefined': the sanitizers run on the host target only (the device has no sanitizer runtime); build with --target host (target='host' in Python) and run the op with run-custom-op, or leave the sanitizers out
Try 'build-custom-op --help' for more information."

run_bco --name relu --op 'x::relu(Tensor x) -> Tensor' "$WORK/missing.cpp"
check_eq "a missing source is an input error" "$status:$err" \
	"1:build-custom-op: cannot read source $WORK/missing.cpp: No such file or directory"

run_bco --name a/b --op 'x::relu(Tensor x) -> Tensor' "$WORK/missing.cpp"
check_eq "a library name with a slash is refused" "$status:$err" \
	"1:build-custom-op: library name 'a/b' must be a file name, without '/' or control characters"
finish
