#!/bin/sh
# test_build_record.sh - the .ops record ties a host build's record to its
# libraries: written only once every link succeeded, naming the layout and
# each library's id, and the runner loads exactly what it names.
. "$(dirname "$0")/../cli/lib.sh"
RUN=$TOP/run-custom-op
KERNEL=$TOP/tests/run/kernels/versioned.cpp
cd "$WORK" || exit 1
NPY="python3 $TOP/tests/run/npy.py"
$NPY make x.npy '<f4' 4 -1 2 -3 4

# The builds carry DWARF 4, which every valgrind reads (make check-valgrind).
DWARF=--cflag=-gdwarf-4
# run_op ARGS...: runs run-custom-op (after $BCO_RUNNER); sets $out, $err and $status.
run_op() {
	# shellcheck disable=SC2086 # the runner is words
	run_capture ${BCO_RUNNER:-} "$RUN" "$@"
}

run_bco --target host $DWARF -B build --name scaled --op 'my_ops::scaled(Tensor x, float b) -> Tensor' "$KERNEL"
check_eq "a single-core build" "$status:$out" "0:build/scaled.so"
check_eq "its record names the layout and the library" "$(sed -n '2p;3s/ [0-9a-f]*$/ ID/p' build/scaled.ops)" \
	"cores 1
library scaled.so ID"
record=$(cat build/scaled.ops)

printf 'this does not compile\n' >broken.cpp
run_bco --target host $DWARF -B build --name scaled --op 'my_ops::scaled(Tensor x, int n) -> Tensor' broken.cpp
check_eq "a rebuild with another schema whose compile fails" "$status" 1
check_eq "leaves the record as it was: it still describes the libraries there" "$(cat build/scaled.ops)" "$record"
run_op --in x.npy --scalar 3 --out y.npy build/scaled
check_eq "so the old library runs with the argument its schema says (float 3, not int 3's bits)" \
	"$status:$err:$($NPY show y.npy)" "0::<f4 (4,): 1.0 3.0 -9.0 12.0"

run_bco --target host $DWARF -B build --multicore --name scaled --op 'my_ops::scaled(Tensor x, float b) -> Tensor' "$KERNEL"
check_eq "then a multicore build into the same directory" "$status" 0
run_op --in x.npy --scalar 0.5 --out y.npy build/scaled
check_eq "runs on 8 cores" "$status:$err:$($NPY show y.npy)" "0::<f4 (4,): 1.0 0.5 -1.5 2.0"
run_bco --target host $DWARF -B build --name scaled -D VERSION=2 --op 'my_ops::scaled(Tensor x, float b) -> Tensor' "$KERNEL"
check_eq "then single-core again, as version 2" "$status" 0
run_op --in x.npy --scalar 0.5 --out y.npy build/scaled
check_eq "the runner loads the layout the record names, whatever else is there" \
	"$status:$err:$($NPY show y.npy)" "0::<f4 (4,): 2.0 0.5 -1.5 2.0"

run_bco --target host $DWARF -B build --multicore --name scaled -D VERSION=3 --op 'my_ops::scaled(Tensor x, float b) -> Tensor' "$KERNEL"
cp build/scaled_cpu3.so saved_cpu3.so
run_bco --target host $DWARF -B build --multicore --name scaled -D VERSION=4 --op 'my_ops::scaled(Tensor x, float b) -> Tensor' "$KERNEL"
cp saved_cpu3.so build/scaled_cpu3.so
run_op --in x.npy --scalar 1 build/scaled
check_eq "a core library left from an earlier build (as when its link failed) is refused" \
	"$status:$out:$(printf '%s' "$err" | sed 's/[0-9a-f]\{16\}/ID/g')" \
	"1::run-custom-op: build/scaled_cpu3.so is not the library build/scaled.ops was written for (its id is ID, the record's ID): it changed after the build, or the last build did not finish; rebuild with build-custom-op --target host"
run_op --cores 1 --in x.npy --scalar 1 build/scaled
check_eq "the record's layout decides: --cores 1 on a multicore build" "$status:$err" \
	"1:run-custom-op: build/scaled is a multicore build (build/scaled.ops names 8 core libraries): --cores 1 needs a single-core build; leave out --cores, or rebuild without --multicore"

rm build/scaled_cpu3.so
run_op --in x.npy --scalar 1 build/scaled
check_eq "a core library the record names and that is gone" "$status:$err" \
	"1:run-custom-op: build/scaled_cpu3.so does not exist, but build/scaled.ops names it; rebuild with build-custom-op --target host"

run_bco --target host $DWARF -B build --name scaled --op 'my_ops::scaled(Tensor x, float b) -> Tensor' "$KERNEL"
size=$(wc -c <build/scaled.so)
head -c $((size / 2)) build/scaled.so >half.so
mv half.so build/scaled.so
run_op --in x.npy --scalar 1 build/scaled
check_eq "a truncated library is an error naming it, not a SIGBUS" "$status:$err" \
	"1:run-custom-op: build/scaled.so is damaged: it has $((size / 2)) bytes, but its ELF headers describe $size; rebuild it with build-custom-op --target host"

run_bco --target host $DWARF -B build --name scaled --op 'my_ops::scaled(Tensor x, float b) -> Tensor' "$KERNEL"
printf '# build-custom-op ops 1\nscaled\tTf\t(Tensor x, float b)\n' >build/scaled.ops
run_op --in x.npy --scalar 1 build/scaled
check_eq "a record of an earlier build-custom-op (version 1) is refused" "$status:$err" \
	"1:run-custom-op: build/scaled.ops was written by an earlier build-custom-op and does not say which libraries it describes; rebuild with build-custom-op --target host"
# A build with nothing to do reads its libraries to write the record only
# when one of them, or the record, changed since the build log vouched for
# them; it does so once they have settled (their ctimes more than 2 s old).
OP='my_ops::scaled(Tensor x, float b) -> Tensor'
run_bco --target host $DWARF -B settled --name scaled --op "$OP" "$KERNEL"
sleep 2.2
run_bco --target host $DWARF -B settled --name scaled --op "$OP" "$KERNEL"
check_eq "once its files have settled, the build log vouches for the record" \
	"$status:$(grep -c '	scaled[.]ops$' settled/.build-custom-op.log)" "0:1"
record=$(cat settled/scaled.ops)
run_bco --target host $DWARF -B settled --name scaled --op "$OP" "$KERNEL"
check_eq "a build with nothing to do then leaves it as it is" "$status:$(cat settled/scaled.ops)" "0:$record"
python3 - settled/scaled.so <<'EOF'
import os, sys
path = sys.argv[1]
info = os.stat(path)
with open(path, 'r+b') as stream:
    stream.seek(-3, os.SEEK_END)
    byte = stream.read(1)
    stream.seek(-3, os.SEEK_END)
    stream.write(bytes([byte[0] ^ 1]))   # in a section header, which the loader does not read
os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
EOF
run_bco --target host $DWARF -B settled --name scaled --op "$OP" "$KERNEL"
check_eq "a library changed in place, its size and mtime put back, is read again" \
	"$status:$(sed -n 3p settled/scaled.ops | sed 's/ [0-9a-f]*$//')" "0:library scaled.so"
[ "$(cat settled/scaled.ops)" != "$record" ]
check_eq "and the record has its new id" "$?" 0
run_op --in x.npy --scalar 3 --out y.npy settled/scaled
check_eq "which the runner finds right" "$status:$err:$($NPY show y.npy)" "0::<f4 (4,): 1.0 3.0 -9.0 12.0"
sleep 2.2
run_bco --target host $DWARF -B settled --name scaled --op "$OP" "$KERNEL"
record=$(cat settled/scaled.ops)
sed 's/^cores 1$/cores 2/' settled/scaled.ops >edited.ops
cp edited.ops settled/scaled.ops
run_bco --target host $DWARF -B settled --name scaled --op "$OP" "$KERNEL"
check_eq "an edited record is written again" "$status:$(cat settled/scaled.ops)" "0:$record"
finish
