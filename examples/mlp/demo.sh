#!/bin/sh
# demo.sh - make demo-torch: the MLP of the official customop_mlp samples
# on this machine.  For each kernel variant (element accessor, TCM,
# multicore), build.py builds the relu ops for the emulated GPSIMD cores
# (custom_op.load(..., target='host')) and train.py trains the MLP with them
# and with torch.relu and checks the parameters are equal bit for bit.
set -eu
cd "$(dirname "$0")"
python=
for candidate in /usr/bin/python3 python3; do
	if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import torch' 2>/dev/null; then
		python=$candidate
		break
	fi
done
if [ -z "$python" ]; then
	echo "demo-torch needs PyTorch: apt-get install python3-torch pybind11-dev ninja-build" >&2
	exit 1
fi
out=../../build/mlp
for variant in element tcm multicore; do
	echo "== $variant: python3 build.py $variant $out-$variant"
	"$python" build.py "$variant" "$out-$variant"
	echo "== $variant: python3 train.py $out-$variant/librelu.so"
	"$python" train.py "$out-$variant/librelu.so"
done
