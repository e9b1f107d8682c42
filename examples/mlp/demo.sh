#!/bin/sh
# demo.sh - make demo-torch: the MLP of the official customop_mlp samples
# on this machine.  For each kernel variant (element accessor, TCM,
# multicore), build.py builds the relu ops for the emulated GPSIMD cores
# (custom_op.load(..., target='host')) and train.py trains the MLP with them
# and with torch.relu and checks the parameters are equal bit for bit; then
# relu_profile.py shows each variant's profile on the inference sample's shapes.
set -eu
cd "$(dirname "$0")"
python=$(sh ../../sdk/torchneuron/torch-python.sh demo-torch)
out=../../build/mlp
for variant in element tcm multicore; do
	echo "== $variant: python3 build.py $variant $out-$variant"
	"$python" build.py "$variant" "$out-$variant"
	echo "== $variant: python3 train.py $out-$variant/librelu.so"
	"$python" train.py "$out-$variant/librelu.so"
done
# The relu's profile in each variant, on the official inference sample's
# shapes: element >> TCM > 8-core TCM, as the documentation ranks them.
for variant in element tcm multicore; do
	echo "== $variant: python3 relu_profile.py $out-$variant/librelu.so $variant"
	"$python" relu_profile.py "$out-$variant/librelu.so" "$variant"
done
