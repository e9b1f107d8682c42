#!/bin/sh
# test_ccache.sh - compiles through a real ccache (a private cache): a build
# in another build directory takes the kernel's object from the cache, the
# library made from it runs right, and a rebuild of the first directory
# takes every object from the cache.
#
# The wrapper misses in another build directory: it is a file of that
# directory, and ccache hashes the path of a compile's input (direct mode)
# and the preprocessor's line markers, which name it.  -fdebug-prefix-map
# does not change that (ccache 4.7: the same 1 hit in 2); only compiling
# inside the build directory with relative paths would.
. "$(dirname "$0")/../cli/lib.sh"
RUN=$TOP/run-custom-op
NPY="python3 $TOP/tests/run/npy.py"

if ! command -v ccache >/dev/null 2>&1; then
	echo "ok - builds through a real ccache # skip ccache is not installed (Debian: apt-get install ccache)"
	exit 0
fi

# A cache of this test's own, and none of the caller's settings.
for variable in $(env | sed -n 's/^\(CCACHE_[A-Za-z_]*\)=.*/\1/p'); do
	unset "$variable"
done
export CCACHE_DIR="$WORK/cache"
cd "$WORK" || exit 1

# stats: direct hits, preprocessed hits and misses so far.
stats() {
	ccache --print-stats | awk '
		$1 == "direct_cache_hit" { direct = $2 }
		$1 == "preprocessed_cache_hit" { preprocessed = $2 }
		$1 == "cache_miss" { miss = $2 }
		END { print direct + 0, preprocessed + 0, miss + 0 }'
}
build_in() {
	run_bco --target host --launcher ccache -B "$1" --name relu \
		--op 'my_ops::relu(Tensor x) -> Tensor' "$TOP/examples/relu/relu.cpp"
}

build_in first
check_eq "a first build compiles the kernel and the wrapper, both misses" "$status:$out:$(stats)" \
	"0:first/relu.so:0 0 2"
build_in second
check_eq "in another build directory the kernel is a direct hit; the wrapper, a file of that directory, misses" \
	"$status:$out:$(stats)" "0:second/relu.so:1 0 3"
$NPY make x.npy '<f4' 5 -2 -1 0 1.5 2
run_capture "$RUN" --in x.npy --out y.npy second/relu
check_eq "the library made from the cached object runs right" "$status:$err:$($NPY show y.npy)" \
	"0::<f4 (5,): 0.0 0.0 0.0 1.5 2.0"
check_true "the cached compile restored the kernel's depfile beside its object" \
	grep -q "sdk/host/include/torch/torch.h" second/relu.d

rm -f first/relu.o first/wrapper.o first/relu.d first/wrapper.d
build_in first
check_eq "a rebuild of the first directory takes both objects from the cache" "$status:$(stats)" "0:3 0 3"
finish
