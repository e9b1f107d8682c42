#!/bin/sh
# check-sources.sh - make lint: the C++ of the PyTorch level compiled against
# PyTorch's headers with the project's warnings as errors, by g++ and by
# clang++: torchneuron/register.h in a shape source of the tests' fixture
# (two NEURON_LIBRARY blocks, one adding to a namespace defined elsewhere),
# and the bridge of host ops, in the C++ standard that PyTorch's
# cpp_extension compiles them in: C++14 for PyTorch 1.x, C++17 for 2.x,
# whose headers need it.  (load() compiles both with torch's own flags,
# which enable no warnings.)
set -eu
cd "$(dirname "$0")/../.."
python=$(sh sdk/torchneuron/torch-python.sh check-sources)
includes=$("$python" -c 'import sysconfig, torch.utils.cpp_extension as c; print(" ".join("-isystem" + p for p in c.include_paths() + [sysconfig.get_paths()["include"]]))' 2>/dev/null)
standard=$("$python" -c 'import torch; print("c++14" if torch.__version__.startswith("1.") else "c++17")')
status=0
for compiler in g++ clang++; do
	if ! command -v "$compiler" >/dev/null 2>&1; then
		echo "check-sources: $compiler is not installed" >&2
		status=1
		continue
	fi
	# shellcheck disable=SC2086 # $includes holds one word per directory
	"$compiler" -std="$standard" -fsyntax-only -Wall -Wextra -Wpedantic -Wshadow -Werror \
		$includes -Isdk/torchneuron/include -Itests/torch/fixtures/include \
		tests/torch/fixtures/shape_more.cpp || status=1
	# shellcheck disable=SC2086
	"$compiler" -std="$standard" -fsyntax-only -Wall -Wextra -Wpedantic -Wshadow -Werror \
		$includes -Iinclude sdk/torchneuron/bridge/torch_bridge.cpp || status=1
done
exit $status
