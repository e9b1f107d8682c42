#!/bin/sh
# test_installed.sh - the Debian package of make deb, installed on this
# machine with dpkg -i and used from an empty directory with no source tree
# in sight: the programs build and run a multicore op, the libraries have
# SONAMEs, their links and pkg-config files, /usr/bin/python3 imports the
# installed package and its compile() builds for the host, custom_op.load()
# finds register.h and the host SDK.  Then dpkg --purge removes it and the
# machine is as before: no file of the package, no bytecode, no library in
# ld.so's cache.  Needs root (dpkg -i) and a machine without the package;
# make check-package runs it after make deb.
. "$(dirname "$0")/../cli/lib.sh"

package=build-custom-op
deb=$(ls "$TOP"/build-custom-op_*_*.deb 2>/dev/null | head -n 1)
status_of() { dpkg-query -W -f='${Status}' "$package" 2>/dev/null; }

if [ "$(id -u)" != 0 ] || ! command -v dpkg >/dev/null 2>&1; then
	echo "ok - the installed package works # skip needs root and dpkg to install $package with dpkg -i (make check-package as root)"
	exit 0
fi
if [ -z "$deb" ]; then
	echo "not ok - make deb made no build-custom-op_VERSION_ARCH.deb in $TOP"
	exit 1
fi
case $(status_of) in
*" installed" | *unpacked* | *half-* | *config-files*)
	echo "not ok - $package is already on this machine ($(status_of)): remove it first (dpkg --purge $package); this test installs and removes its own"
	exit 1 ;;
esac

# What the package holds, and which of those paths exist before it comes.
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|; s|/$||' | grep -v '^$' | sort >"$WORK/contents"
: >"$WORK/there-before"
while read -r path; do
	if [ -e "$path" ] || [ -L "$path" ]; then echo "$path"; fi
done <"$WORK/contents" >"$WORK/there-before"
check_eq "none of the package's files is on this machine before it is installed" \
	"$(while read -r path; do [ -d "$path" ] || echo "$path"; done <"$WORK/there-before")" ""

installed=
remove_package() {
	if [ -n "$installed" ]; then
		dpkg --purge "$package" >"$WORK/purge.log" 2>&1
		installed=
	fi
}
trap 'remove_package; rm -rf "$WORK"' EXIT
trap 'exit 1' INT TERM HUP

installed=yes
dpkg -i "$deb" >"$WORK/install.log" 2>&1
check_eq "dpkg -i installs the package" "$?:$(status_of)" "0:install ok installed"
sed 's/^/# /' "$WORK/install.log"

# An empty directory, a clean environment: nothing points at the tree.
empty=$WORK/empty
mkdir -p "$empty" "$WORK/home"
cd "$empty" || exit 1
clean() {
	env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$WORK/home" LANG=C.UTF-8 \
		BUILD_CUSTOM_OP_CACHE="$WORK/cache" BUILD_CUSTOM_OP_BUNDLES="$WORK/bundles" "$@"
}
check_eq "build-custom-op and run-custom-op are on PATH in /usr/bin" \
	"$(clean sh -c 'command -v build-custom-op; command -v run-custom-op')" \
	"/usr/bin/build-custom-op
/usr/bin/run-custom-op"
cp "$TOP/examples/relu_multicore/relu.cpp" relu.cpp
SCHEMA='my_ops::relu(Tensor x) -> Tensor'

run_capture clean build-custom-op --target host --multicore -B build --name relu --op "$SCHEMA" relu.cpp
check_eq "build-custom-op --target host --multicore builds eight libraries" "$status:$out" "0:build/relu_cpu0.so
build/relu_cpu1.so
build/relu_cpu2.so
build/relu_cpu3.so
build/relu_cpu4.so
build/relu_cpu5.so
build/relu_cpu6.so
build/relu_cpu7.so"
[ "$status" = 0 ] || printf '%s\n' "$err" | sed 's/^/# /'
check_eq "its compiles use the installed host SDK, and nothing of the source tree" \
	"$(grep -c "/usr/lib/build-custom-op/sdk/host/include" build/compile_commands.json) $(grep -c "$TOP" build/compile_commands.json)" \
	"2 0"
python3 "$TOP/tests/run/npy.py" make x.npy '<f4' 10 -4 -3 -2 -1 0 1 2 3 4 5
python3 "$TOP/tests/run/npy.py" make want.npy '<f4' 10 0 0 0 0 0 1 2 3 4 5
run_capture clean run-custom-op --in x.npy --out y.npy --expect want.npy build/relu
check_eq "run-custom-op runs it on 8 cores and the output is the expected one" "$status:$err" "0:"

# The shared libraries: file, SONAME, the link the linker uses, ld.so's cache.
for library in buildcustomop runcustomop; do
	check_eq "lib$library.so.0: its SONAME, and lib$library.so links to it" \
		"$(readelf -d /usr/lib/lib$library.so.0 | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p') $(readlink /usr/lib/lib$library.so)" \
		"lib$library.so.0 lib$library.so.0"
	check_true "ld.so's cache has lib$library.so.0" sh -c "ldconfig -p | grep -q 'lib$library.so.0 '"
done
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
if command -v pkg-config >/dev/null 2>&1; then
	flags=$(clean pkg-config --cflags --libs buildcustomop runcustomop | sed 's/ *$//')
	check_eq "pkg-config knows both libraries" "$flags" "-lbuildcustomop -lruncustomop"
else
	flags="-lbuildcustomop -lruncustomop"
	echo "ok - pkg-config knows both libraries # skip pkg-config is not installed (Debian: apt-get install pkg-config)"
fi
# shellcheck disable=SC2086 # the flags are words
clean cc -o version version.c $flags >"$WORK/cc.log" 2>&1
check_eq "a program builds against the installed headers and libraries, and runs" \
	"$(clean ./version 2>&1) $(readelf -d version | sed -n 's/.*(NEEDED).*\[\(lib[br].*\)\]/\1/p' | tr '\n' ' ')" \
	"$(sed -n 's/^#define BCO_VERSION "\(.*\)"/\1/p' "$TOP/include/buildcustomop.h") $(sed -n 's/^#define RCO_VERSION "\(.*\)"/\1/p' "$TOP/include/runcustomop.h") libbuildcustomop.so.0 libruncustomop.so.0 "
check_eq "the man pages are in the package, compressed" \
	"$(for page in man1/build-custom-op.1 man1/run-custom-op.1 man3/runcustomop.3; do
		dpkg-deb --fsys-tarfile "$deb" | tar -xOf - "./usr/share/man/$page.gz" | gzip -dc | sed -n 's/^\.TH \([^ ]*\) .*/\1/p'
	done)" "BUILD-CUSTOM-OP
RUN-CUSTOM-OP
RUNCUSTOMOP"

# Python: /usr/bin/python3 finds the installed package, which finds the
# installed library and program; compile() builds for the host.
run_capture clean /usr/bin/python3 -c '
import build_custom_op
print(build_custom_op.__file__)
print(build_custom_op.library_path())
print(build_custom_op.program_path())
libs = build_custom_op.compile("relu", ["relu"], ["relu.cpp"], ["my_ops::relu(Tensor x) -> Tensor"],
                               "pybuild", multicore=True, target="host")
print(" ".join(libs))
'
check_eq "/usr/bin/python3 imports the installed package; compile(..., target='host') builds" \
	"$status:$out" "0:/usr/lib/python3/dist-packages/build_custom_op/__init__.py
/usr/lib/libbuildcustomop.so.0
/usr/bin/build-custom-op
pybuild/relu_cpu0.so pybuild/relu_cpu1.so pybuild/relu_cpu2.so pybuild/relu_cpu3.so pybuild/relu_cpu4.so pybuild/relu_cpu5.so pybuild/relu_cpu6.so pybuild/relu_cpu7.so"
[ "$status" = 0 ] || printf '%s\n' "$err" | sed 's/^/# /'
run_capture clean run-custom-op --in x.npy --out y2.npy --expect want.npy pybuild/relu
check_eq "and the library compile() built runs" "$status:$err" "0:"
run_capture clean /usr/bin/python3 -m build_custom_op --version
check_eq "python3 -m build_custom_op is the installed program" "$status:$out" \
	"0:$(clean /usr/bin/build-custom-op --version)"

# The PyTorch level: custom_op.load() builds the shape library against the
# installed register.h, the compute library against the installed host SDK.
if clean /usr/bin/python3 -c 'import torch' >/dev/null 2>&1; then
	cp "$TOP/examples/mlp/shape.cpp" shape.cpp
	cp "$TOP/examples/mlp/element/relu.cpp" relu2d.cpp
	run_capture clean /usr/bin/python3 -c '
import torch
from build_custom_op import custom_op, _shape_library
print(_shape_library.include_directory())
custom_op.load("relu", ["relu2d.cpp"], ["shape.cpp"], build_directory="torchbuild", target="host")
custom_op.load_library("torchbuild/librelu.so", target="host")
x = torch.tensor([[-1.0, 2.0], [3.0, -4.0]])
print(torch.ops.my_ops.relu_forward(x).tolist())
'
	check_eq "custom_op.load(..., target='host') finds the installed register.h and host SDK; the op runs" \
		"$status:$out" "0:/usr/include
[[0.0, 2.0], [3.0, 0.0]]"
	[ "$status" = 0 ] || printf '%s\n' "$err" | sed 's/^/# /'
	run_capture clean build-custom-op bundle --target host -B bundled --name relu --shape shape.cpp relu2d.cpp
	check_eq "build-custom-op bundle runs the installed Python package" "$status:$out" "0:bundled/librelu.so"
	[ "$status" = 0 ] || printf '%s\n' "$err" | sed 's/^/# /'
else
	echo "ok - custom_op.load(..., target='host') with the installed package # skip PyTorch is not installed for /usr/bin/python3 (Debian: apt-get install python3-torch libtorch-dev python3-dev pybind11-dev ninja-build)"
fi

# Removed with --purge: the machine is as it was.
cd "$WORK" || exit 1
remove_package
check_eq "dpkg --purge removes the package" "$(status_of)" ""
sed 's/^/# /' "$WORK/purge.log"
left=$(while read -r path; do
	if { [ -e "$path" ] || [ -L "$path" ]; } && ! grep -qx "$path" "$WORK/there-before"; then echo "$path"; fi
done <"$WORK/contents")
check_eq "none of its files or directories is left, bytecode included" "$left" ""
check_eq "ld.so's cache no longer has its libraries" "$(ldconfig -p | grep -c 'lib\(build\|run\)customop')" 0
finish
