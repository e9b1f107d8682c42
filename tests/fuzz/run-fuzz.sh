#!/bin/sh
# run-fuzz.sh SECONDS TIMEOUT RSS_MB HARNESS... - runs each harness
# obj/fuzz/fuzz_HARNESS for SECONDS on a scratch copy of its seed corpus
# tests/fuzz/corpus/HARNESS (so new inputs never land in the repository).
# A crash, leak, timeout or memory blow-up keeps the input in
# fuzz-artifacts/, prints it in hex, and fails the run once every harness
# has had its turn.  The harnesses run side by side (see FUZZ_JOBS).
seconds=$1 timeout=$2 rss=$3
shift 3
artifacts=fuzz-artifacts
# The harnesses run FUZZ_JOBS at a time (default: the number of CPUs); each
# one's report is printed, in the order given, once it has ended.
jobs=${FUZZ_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
case $jobs in '' | *[!0-9]* | 0) jobs=2 ;; esac
mkdir -p obj/fuzz/work "$artifacts"

# fuzz_one HARNESS: runs it; prints its report; exits non-zero when it failed.
fuzz_one() {
	harness=$1
	scratch=obj/fuzz/work/$harness
	rm -rf "$scratch"
	mkdir -p "$scratch"
	cp tests/fuzz/corpus/"$harness"/* "$scratch"/ 2>/dev/null
	log=obj/fuzz/work/$harness.log
	echo "fuzz: $harness for ${seconds}s"
	ls "$artifacts" >"$scratch.before"
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
	UBSAN_OPTIONS=print_stacktrace=1 \
		obj/fuzz/fuzz_"$harness" -max_total_time="$seconds" -timeout="$timeout" \
		-rss_limit_mb="$rss" -malloc_limit_mb="$rss" -print_final_stats=1 \
		-artifact_prefix="$artifacts/$harness-" "$scratch" >"$log" 2>&1
	status=$?
	# Only this harness's inputs: each is named after its harness.
	new=$(ls "$artifacts" | grep -vxF -f "$scratch.before" | grep "^$harness-")
	if [ "$status" -eq 0 ] && [ -z "$new" ]; then
		grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|fuzz_[a-z]+:)' "$log" |
			sed "s/^/fuzz: $harness: /"
		return 0
	fi
	echo "fuzz: $harness FAILED (exit $status); the end of its log:"
	tail -n 60 "$log"
	for input in $new; do
		echo "fuzz: input $artifacts/$input ($(wc -c <"$artifacts/$input") bytes), first 4 KiB:"
		head -c 4096 "$artifacts/$input" | od -A x -t x1z -v
	done
	return 1
}

harnesses="$*"
failed=
running=
for harness in $harnesses; do
	( fuzz_one "$harness" >"obj/fuzz/work/$harness.report" 2>&1
	  echo $? >"obj/fuzz/work/$harness.status" ) &
	running="$running $!"
	set -- $running
	if [ $# -ge "$jobs" ]; then
		wait "$1"
		shift
		running="$*"
	fi
done
wait
for harness in $harnesses; do
	cat "obj/fuzz/work/$harness.report"
	[ "$(cat "obj/fuzz/work/$harness.status" 2>/dev/null)" = 0 ] || failed="$failed $harness"
done
if [ -n "$failed" ]; then
	echo "fuzz: failed:$failed (inputs kept in $artifacts/)"
	exit 1
fi
echo "fuzz: every harness ran ${seconds}s without a crash, leak or timeout"
