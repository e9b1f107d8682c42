#!/bin/sh
# demo.sh - make demo: build the multicore relu example for this machine,
# run it on eight emulated GPSIMD cores, check the result and show its
# profile.  Usage: sh examples/demo.sh [DIR] (default: build/demo).
set -eu
cd "$(dirname "$0")/.."
out=${1:-build/demo}
count=10001 # not a multiple of 8: the last core's share is uneven
mkdir -p "$out"

echo "1. Build examples/relu_multicore/relu.cpp for the host, one library per core:"
./build-custom-op --target host --multicore -B "$out" --name relu \
	--op 'my_ops::relu(Tensor x) -> Tensor' examples/relu_multicore/relu.cpp |
	sed 's/^/     /'

echo "2. Make $count float32 inputs in [-8, 8] and the expected relu of each:"
python3 - "$out" "$count" <<'PY'
import sys
sys.path.insert(0, "tests/run")
import npy  # the tests' .npy writer: no numpy needed
out, count = sys.argv[1], int(sys.argv[2])
x = [((i * 37) % 129 - 64) / 8.0 for i in range(count)]
npy.make(out + "/x.npy", "<f4", str(count), x)
npy.make(out + "/want.npy", "<f4", str(count), [max(v, 0.0) for v in x])
print("     %s/x.npy, %s/want.npy" % (out, out))
PY

echo "3. Run it on 8 cores and compare with the expected output (the output checks are on:"
echo "   every element written by exactly one core):"
./run-custom-op --in "$out/x.npy" --out "$out/y.npy" --expect "$out/want.npy" "$out/relu"
echo "     $out/y.npy matches $out/want.npy: every one of the $count elements, across 8 cores"
echo "4. Its profile: what each core did, and the device time it would take (an estimate"
echo "   from the cost model of run-custom-op(1)); also in $out/profile.json and, drawn,"
echo "   $out/profile.svg:"
./run-custom-op --in "$out/x.npy" --profile "$out/profile.json" --profile-svg "$out/profile.svg" \
	"$out/relu" 2>"$out/profile.txt"
sed 's/^/     /' "$out/profile.txt"
echo
echo "Next: ./build-custom-op --help, ./run-custom-op --help, the man pages (man ./man/run-custom-op.1),"
echo "make demo-torch for the PyTorch flow, and examples/ for more ops."
