# bench.mk - the benchmarks (included by Makefile; not part of make test).
# `make bench` prints the results and writes them to obj/bench/results.md;
# `make bench BENCH_FLAGS=--record` also puts them in bench/README.md.
BENCH_FLAGS =

bench: programs
	python3 bench/bench.py $(BENCH_FLAGS)

.PHONY: bench
