# bench.mk - the benchmarks (included by Makefile; not part of make test).
# `make bench` prints the results and writes them to obj/bench/results.md;
# `make bench BENCH_FLAGS=--record` also puts them in bench/README.md.
BENCH_FLAGS =

bench: programs obj/bench/runner_overhead $(RUN_FAKE_LIBRARIES)
	python3 bench/bench.py $(BENCH_FLAGS)

# Case 10: the runner library's own cost, in C (bench/runner_overhead.c).
obj/bench/runner_overhead: bench/runner_overhead.c libruncustomop.a include/runcustomop.h
	@mkdir -p obj/bench
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -O3 $(ALL_LDFLAGS) -o $@ bench/runner_overhead.c \
		libruncustomop.a $(RCO_LIBS)

.PHONY: bench
