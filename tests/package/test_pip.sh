#!/bin/sh
# test_pip.sh - pip install . into a virtual environment with pip's
# PyTorch, then everything used from an empty directory with nothing of
# the source tree in sight: the programs on the environment's PATH, the
# host SDK they find beside them, the libraries and headers, the Python
# package, custom_op.load(..., target='host') with the bridge and
# precompiled header of the wheel's torch kit, torch.ops and torch.compile,
# build-custom-op bundle under the environment's interpreter.  Then pip
# uninstall build-custom-op leaves the environment as it was.
#
# $BUILD_CUSTOM_OP_PIP_VENV: a virtual environment where pip already
# installed torch and the project (.ci/run makes one); else this test
# makes its own in $WORK (python3 -m venv, pip install torch==2.13.0, pip
# install .: several minutes).
. "$(dirname "$0")/../cli/lib.sh"

venv=${BUILD_CUSTOM_OP_PIP_VENV:-}
if [ -z "$venv" ]; then
	venv=$WORK/venv
	if ! python3 -m venv "$venv" >"$WORK/venv.log" 2>&1; then
		echo "not ok - python3 -m venv makes a virtual environment"
		sed 's/^/# /' "$WORK/venv.log"
		exit 1
	fi
	"$venv/bin/pip" install -q torch==2.13.0 numpy >"$WORK/torch.log" 2>&1
	check_eq "pip installs torch==2.13.0 (and numpy, which it warns without) in it" "$?" 0
	"$venv/bin/pip" install -q "$TOP" >"$WORK/install.log" 2>&1
	status=$?
	check_eq "pip install . builds the wheel and installs it" "$status" 0
	[ "$status" = 0 ] || { sed 's/^/# /' "$WORK/install.log"; finish; }
fi
venv=$(cd "$venv" && pwd)
torch_version=$("$venv/bin/python" -c 'import torch; print(torch.__version__)')
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
empty=$WORK/empty
mkdir -p "$empty" "$WORK/home"
cd "$empty" || exit 1
clean() {
	env -i PATH="$venv/bin:/usr/local/bin:/usr/bin:/bin" HOME="$WORK/home" LANG=C.UTF-8 \
		BUILD_CUSTOM_OP_CACHE="$WORK/cache" BUILD_CUSTOM_OP_BUNDLES="$WORK/bundles" "$@"
}

check_eq "build-custom-op and run-custom-op are the environment's" \
	"$(clean sh -c 'command -v build-custom-op; command -v run-custom-op')" \
	"$venv/bin/build-custom-op
$venv/bin/run-custom-op"
cp "$TOP/examples/relu_multicore/relu.cpp" relu.cpp
SCHEMA='my_ops::relu(Tensor x) -> Tensor'
run_capture clean build-custom-op --target host --multicore -B build --name relu --op "$SCHEMA" relu.cpp
check_eq "build-custom-op --target host --multicore builds eight libraries" "$status:$(echo "$out" | wc -l)" "0:8"
[ "$status" = 0 ] || printf '%s\n' "$err" | sed 's/^/# /'
# (The environment may lie inside the tree, as .ci/run's obj/venv-torch does.)
check_eq "its compiles use the environment's host SDK, and nothing of the source tree" \
	"$(grep -c "$venv/lib/build-custom-op/sdk/host/include" build/compile_commands.json) $(sed "s|$venv/||g" build/compile_commands.json | grep -c "$TOP/")" \
	"2 0"
clean python3 "$TOP/tests/run/npy.py" make x.npy '<f4' 10 -4 -3 -2 -1 0 1 2 3 4 5
clean python3 "$TOP/tests/run/npy.py" make want.npy '<f4' 10 0 0 0 0 0 1 2 3 4 5
run_capture clean run-custom-op --in x.npy --out y.npy --expect want.npy build/relu
check_eq "run-custom-op runs it on 8 cores and the output is the expected one" "$status:$err" "0:"

cat >version.c <<'EOF'
#include <stdio.h>
#include <buildcustomop.h>
#include <runcustomop.h>
int main(void)
{
	printf("%s %s\n", bco_version(), rco_version());
	return 0;
}
EOF
flags=$(clean env PKG_CONFIG_PATH="$venv/lib/pkgconfig" pkg-config --cflags --libs buildcustomop runcustomop 2>&1 | sed 's/ *$//')
check_eq "pkg-config finds both libraries in the environment" "$flags" \
	"-I$venv/lib/pkgconfig/../../include -L$venv/lib/pkgconfig/../../lib -lbuildcustomop -lruncustomop"
# shellcheck disable=SC2086 # the flags are words
clean cc -o version version.c $flags -Wl,-rpath,"$venv/lib" >"$WORK/cc.log" 2>&1
check_eq "a program builds against the installed headers and libraries, and runs" \
	"$(clean ./version 2>&1)" \
	"$(sed -n 's/^#define BCO_VERSION "\(.*\)"/\1/p' "$TOP/include/buildcustomop.h") $(sed -n 's/^#define RCO_VERSION "\(.*\)"/\1/p' "$TOP/include/runcustomop.h")"

run_capture clean python -c '
import build_custom_op, os
from build_custom_op import _shape_library, _host_ops, _torch_kit
print(build_custom_op.__file__)
print(build_custom_op.library_path())
print(build_custom_op.program_path())
print(_shape_library.include_directory())
print(*_host_ops._bridge_files())
kit = _torch_kit.find()
print(os.path.dirname(kit.directory) if kit else None)
'
check_eq "the environment's python imports the installed package, which finds every part in the environment" \
	"$status:$out" "0:$site/build_custom_op/__init__.py
$venv/lib/libbuildcustomop.so.0
$venv/bin/build-custom-op
$venv/include
$venv/share/build-custom-op/torch_bridge.cpp $venv/include
$venv/lib/build-custom-op/torch-kit"
[ "$status" = 0 ] || printf '%s\n' "$err" | sed 's/^/# /'

# The PyTorch level, from an empty cache: the kit's bridge and precompiled
# header, a multicore op, torch.ops and torch.compile.
cp "$TOP/examples/mlp/shape.cpp" shape.cpp
cp "$TOP/examples/mlp/multicore/relu.cpp" relu2d.cpp
run_capture clean python -c '
import os, torch
from build_custom_op import custom_op, _host_ops, _torch_kit
custom_op.load("relu", ["relu2d.cpp"], ["shape.cpp"], build_directory="torchbuild",
               multicore=True, target="host")
x = torch.tensor([[-1.0, 2.0], [3.0, -4.0]])
print(torch.ops.my_ops.relu_forward(x).tolist())
print(os.path.dirname(_host_ops.bridge().path) == _torch_kit.find().directory)
entry = os.path.join(os.environ["BUILD_CUSTOM_OP_CACHE"], "shape-libraries")
entry = os.path.join(entry, os.listdir(entry)[0])
with open(os.path.join(entry, "shape.o.d")) as stream:
    print("torch_pch.h" in stream.read())
compiled = torch.compile(lambda t: torch.ops.my_ops.relu_forward(t) * 2, fullgraph=True)
print(list(compiled(x).shape))
'
# (What a compiled model computes is tests/torch's business; here, that it
# compiles and runs with the installed package.)
check_eq "custom_op.load(..., target='host') with the kit's bridge and precompiled header; torch.ops and torch.compile run the op" \
	"$status:$out" "0:[[0.0, 2.0], [3.0, 0.0]]
True
False
[2, 2]"
[ "$status" = 0 ] || printf '%s\n' "$err" | sed 's/^/# /'
run_capture clean build-custom-op bundle --target host -B bundled --name relu --shape shape.cpp relu2d.cpp
check_eq "build-custom-op bundle runs the installed package under the environment's interpreter" \
	"$status:$out" "0:bundled/librelu.so"
[ "$status" = 0 ] || printf '%s\n' "$err" | sed 's/^/# /'

# pip uninstall: nothing of the project is left in the environment: no
# file its RECORD names, and no directory of those files left empty.
"$venv/bin/python" - "$site" >"$WORK/recorded" <<'EOF'
import glob, os, sys
site = sys.argv[1]
record, = glob.glob(os.path.join(site, 'build_custom_op-*.dist-info', 'RECORD'))
for line in open(record):
    print(os.path.normpath(os.path.join(site, line.rsplit(',', 2)[0])))
EOF
"$venv/bin/pip" uninstall -y build-custom-op >"$WORK/uninstall.log" 2>&1
check_eq "pip uninstall build-custom-op succeeds" "$?" 0
left=$(while read -r path; do
	[ -e "$path" ] && echo "$path"
	directory=$(dirname "$path")
	while [ "${#directory}" -gt "${#venv}" ]; do
		[ -d "$directory" ] && [ -z "$(ls -A "$directory")" ] && echo "$directory/ (empty)"
		directory=$(dirname "$directory")
	done
done <"$WORK/recorded" | LC_ALL=C sort -u)
check_eq "none of its files is left in the environment, nor a directory of them" "$left" ""
check_eq "its RECORD named the whole installation" \
	"$(grep -c "^$venv/bin/build-custom-op\$\|/sdk/host/include/neuron/wrapper_api.h\$\|/torch-kit/.*/kit.json\$\|/include/torchneuron/register.h\$" "$WORK/recorded")" 4
check_eq "the environment's PyTorch is still there" \
	"$(clean python -c 'import torch; print(torch.__version__)' 2>/dev/null)" "$torch_version"
finish
