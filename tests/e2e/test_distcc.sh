#!/bin/sh
# test_distcc.sh - compiles spread over distcc, for real: a distccd on
# 127.0.0.1 takes every compile of a host build made with --launcher distcc
# (DISTCC_FALLBACK=0, so a compile it does not take fails the build), its
# log shows a COMPILE_OK for each compile step and nothing else, and the
# library it built runs right.  The daemon is stopped whatever happens.
. "$(dirname "$0")/../cli/lib.sh"
RUN=$TOP/run-custom-op
NPY="python3 $TOP/tests/run/npy.py"

if ! command -v distcc >/dev/null 2>&1 || ! command -v distccd >/dev/null 2>&1; then
	echo "ok - builds through a real distccd # skip distcc is not installed (Debian: apt-get install distcc)"
	exit 0
fi

# The daemon's log goes to a directory of its own under /tmp: as root,
# distccd runs as user distccd (or nobody), which must reach and write it
# wherever $TMPDIR is.
logs=$(mktemp -d /tmp/bco-distccd.XXXXXX)
log=$logs/distccd.log
: >"$log"
if [ "$(id -u)" = 0 ]; then
	user=nobody
	id distccd >/dev/null 2>&1 && user=distccd
	chmod 755 "$logs"
	chown "$user" "$log"
fi

daemon=
stop_daemon() {
	if [ -n "$daemon" ]; then
		# setsid made the daemon the leader of a group of its own, with its
		# workers (a background job of this non-interactive shell is no
		# group leader, so setsid did not fork).
		kill -TERM "-$daemon" 2>/dev/null
		tries=0
		while kill -0 "-$daemon" 2>/dev/null && [ $tries -lt 50 ]; do
			sleep 0.1
			tries=$((tries + 1))
		done
		kill -KILL "-$daemon" 2>/dev/null
		wait "$daemon" 2>/dev/null
		daemon=
	fi
}
trap 'stop_daemon; rm -rf "$WORK" "$logs"' EXIT
trap 'exit 1' INT TERM HUP

# A free port on 127.0.0.1, and a daemon listening there (its temporary
# files in /tmp, which its user may write).
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
TMPDIR=/tmp setsid distccd --daemon --no-detach --listen 127.0.0.1 --port "$port" --allow 127.0.0.1 \
	--log-file "$log" --log-level info --jobs 2 &
daemon=$!
tries=0
while ! grep -q "listening on 127.0.0.1:$port" "$log" && [ $tries -lt 600 ]; do
	sleep 0.1
	tries=$((tries + 1))
done
check_eq "distccd runs in a process group of its own and listens on 127.0.0.1:$port" \
	"$(ps -o pgid= -p "$daemon" | tr -d ' ') $(grep -c "listening on 127.0.0.1:$port" "$log")" "$daemon 1"
[ "$failures" = 0 ] || { sed 's/^/# /' "$log"; exit 1; }

mkdir "$WORK/distcc"
export DISTCC_HOSTS="127.0.0.1:$port" DISTCC_FALLBACK=0 DISTCC_DIR="$WORK/distcc"
cd "$WORK" || exit 1
# Two builds: the multicore relu (8 links), and relu and axpby in one
# single-core library.  Each passes on more options, such as -n.
build_multicore() {
	run_bco --target host --multicore --launcher distcc -B multi --name relu \
		--op 'my_ops::relu(Tensor x) -> Tensor' "$TOP/examples/relu_multicore/relu.cpp" "$@"
}
build_single() {
	run_bco --target host --launcher distcc -B single --name examples \
		--op 'my_ops::relu(Tensor x) -> Tensor' \
		--op 'my_ops::axpby(Tensor x, Tensor y, Scalar a, float b, int n) -> Tensor' \
		"$TOP/examples/relu/relu.cpp" "$TOP/examples/axpby/axpby.cpp" "$@"
}

# The compile steps, from dry runs: each goes through the launcher.
compiles=0
for build in build_multicore build_single; do
	$build -n
	compiles=$((compiles + $(printf '%s\n' "$out" | grep -c '^distcc ')))
	compiler=$(printf '%s\n' "$out" | sed -n 's/^distcc \([^ ]*\) .*/\1/p' | head -n 1)
done
check_eq "dry runs show five compiles through distcc (three kernels, two wrappers)" "$compiles" 5
check_true "distccd runs $compiler: /usr/lib/distcc/$compiler exists (else run update-distcc-symlinks)" \
	test -e "/usr/lib/distcc/$compiler"

for build in build_multicore build_single; do
	$build
	check_eq "$build: the build through distcc succeeds with fallbacks off" "$status" 0
	[ "$status" = 0 ] || printf '%s\n' "$err" | sed 's/^/# /'
done
# distcc preprocesses here without the -o it sends away: a depfile the
# compiler names after -o would land in the working directory, named after
# the source, and the build would never see it.
check_eq "no depfile lands in the working directory" "$(ls ./*.d 2>/dev/null)" ""
check_true "each object's depfile is beside it and lists the headers the source includes" \
	grep -q "sdk/host/include/torch/torch.h" multi/relu.d multi/wrapper.d single/axpby.d
for build in build_multicore build_single; do
	$build -n
	check_eq "$build: with nothing changed, a dry run has no step to run" "$status:$out" "0:"
done
check_eq "the daemon's log shows a COMPILE_OK for every compile step, and no other outcome" \
	"$(grep -c 'COMPILE_OK' "$log") $(grep -c '(dcc_job_summary)' "$log")" "$compiles $compiles"
for source in "$TOP/examples/relu_multicore/relu.cpp" multi/wrapper.cpp "$TOP/examples/relu/relu.cpp" \
	"$TOP/examples/axpby/axpby.cpp" single/wrapper.cpp; do
	check_eq "the daemon compiled $source" "$(grep -c "COMPILE_OK .* $source\$" "$log")" 1
done

# The libraries the daemon's objects make run right.
$NPY make x.npy '<f4' 10 -4 -3 -2 -1 0 1 2 3 4 5
run_capture "$RUN" --in x.npy --out y.npy multi/relu
check_eq "the multicore relu runs on 8 cores" "$status:$err:$($NPY show y.npy)" \
	"0::<f4 (10,): 0.0 0.0 0.0 0.0 0.0 1.0 2.0 3.0 4.0 5.0"
$NPY make xs.npy '<f4' 4 16 -16 8 0
$NPY make ys.npy '<f4' 4 0 0 256 -256
run_capture "$RUN" --op axpby --in xs.npy --in ys.npy --scalar 0.25 --scalar 0.75 --scalar 4 \
	--out z.npy single/examples
check_eq "axpby runs" "$status:$err:$($NPY show z.npy)" "0::<f4 (4,): 10.9375 -10.9375 86.46875 -81.0"

group=$daemon
stop_daemon
check_true "the daemon and its workers are stopped" sh -c "! ps -e -o pgid= | grep -qw '$group'"
finish
