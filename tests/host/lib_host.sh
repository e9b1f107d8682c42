# lib_host.sh - builds host ops for the tests in tests/host; source it after
# tests/cli/lib.sh.
#
# Ops are built with build-custom-op --target host, so the tests compile
# kernels with the flags and the compiler a user gets.
SDK=$TOP/sdk/host
DRIVER=$TOP/tests/host/driver
# The compiler build-custom-op chooses: $CXX, else clang++ when installed, else c++.
if [ -n "${CXX:-}" ]; then
	HOST_CXX=$CXX
elif command -v clang++ >/dev/null 2>&1; then
	HOST_CXX=clang++
else
	HOST_CXX=c++
fi

# The family of $HOST_CXX as build-custom-op tells it (clang, gcc or other):
# from the names of its words, with links resolved.
HOST_FAMILY=other
for word in $HOST_CXX; do
	resolved=$(command -v "$word" 2>/dev/null) && resolved=$(realpath "$resolved")
	case "$(basename "$word") $(basename "${resolved:-none}")" in
	*clang*) HOST_FAMILY=clang; break ;;
	*g++* | *gcc*) HOST_FAMILY=gcc ;;
	esac
done

# host_build DIR NAME CORES ARG... -- SOURCE...: builds DIR/NAME.so (CORES 1)
# or DIR/NAME_cpu0.so .. DIR/NAME_cpu7.so (CORES 8).  An ARG starting with
# '-' is a compiler flag, any other an op ([FN=]SCHEMA).  With no op, one
# of the SOURCEs must be a hand-written wrapper, and the sources are
# compiled and linked here as build-custom-op would.  Returns non-zero, with
# the messages in DIR/build.log, on failure.
host_build() {
	dir=$1 name=$2 cores=$3
	shift 3
	mkdir -p "$dir"
	: >"$dir/build.log"
	cflags= has_op=
	set -- "$@" --end-of-sources
	while [ "$1" != -- ]; do
		case $1 in
		-*) cflags="$cflags $1"; set -- "$@" "--cflag=$1" ;;
		*) set -- "$@" --op "$1"; has_op=1 ;;
		esac
		shift
	done
	shift
	sources=
	while [ "$1" != --end-of-sources ]; do
		sources="$sources $1"
		shift
	done
	shift
	multicore=
	[ "$cores" = 8 ] && multicore=--multicore
	if [ -n "$has_op" ]; then
		# shellcheck disable=SC2086 # sources are words
		"$BCO" --target host -B "$dir" --name "$name" $multicore "$@" $sources >>"$dir/build.log" 2>&1
		return
	fi
	objects=
	for source in $sources; do
		base=$(basename "$source" .cpp)
		# shellcheck disable=SC2086 # cflags are words
		"$HOST_CXX" -std=c++14 -fPIC -O2 -g -Wall -Werror -fstack-clash-protection $cflags -I"$SDK/include" \
			-c -o "$dir/$base.o" "$source" >>"$dir/build.log" 2>&1 || return 1
		objects="$objects $dir/$base.o"
	done
	if [ "$cores" = 8 ]; then
		for core in 0 1 2 3 4 5 6 7; do
			host_link "$dir/${name}_cpu$core.so" "$objects" "$SDK/lib/core_cpu$core.o" || return 1
		done
	else
		host_link "$dir/$name.so" "$objects" "$SDK/lib/core_single.o"
	fi
}

# host_link OUTPUT OBJECTS CORE_OBJECT
host_link() {
	# shellcheck disable=SC2086 # objects are words
	"$HOST_CXX" -shared -o "$1" $2 "$3" "$SDK/lib/libcustomop_host.a" \
		-Wl,-Bsymbolic -Wl,--no-undefined -Wl,--compress-debug-sections=zlib \
		>>"$dir/build.log" 2>&1
}

# run_driver ARGS...: runs the test driver; sets $out (stdout and stderr)
# and $status.
run_driver() {
	out=$("$DRIVER" "$@" 2>&1)
	status=$?
}

# relu_of START COUNT: the driver's output for relu of START, START+1, ..
relu_of() {
	awk -v start="$1" -v count="$2" 'BEGIN {
		print "out:"
		for (i = 0; i < count; i++) { v = start + i; print (v > 0 ? v : 0) }
	}'
}

# lines WORD...: the words, one a line.
lines() {
	printf '%s\n' "$@"
}
