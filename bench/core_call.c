/* core_call.c - the runtime's own cost of an op call, with and without the
 * output's sets recorded (bench/ledger_cases.py, case 10): one host core
 * library called on this thread through customop_host_run, with no runner,
 * no thread hand-off and no Python around it, so that little else on the
 * machine weighs on the difference.
 *
 *   core_call LIBRARY.so OP COUNT    (OP takes one 16-float tensor)
 *
 * Prints "NOTHING RECORDED SETS": µs per call, the best of 20 batches of
 * each, in turn. */
#define _GNU_SOURCE /* CLOCK_MONOTONIC, dlopen */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <neuron/host_abi.h>

static void ignore_op(void *context, int index, const char *name)
{
	(void)context;
	(void)index;
	(void)name;
}

static double seconds(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: core_call LIBRARY.so OP COUNT\n");
		return 2;
	}
	void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	void *register_symbol = library ? dlsym(library, "customop_host_register") : NULL;
	void *run_symbol = library ? dlsym(library, "customop_host_run") : NULL;
	if (!register_symbol || !run_symbol) {
		fprintf(stderr, "core_call: %s\n", dlerror());
		return 1;
	}
	int (*register_ops)(void (*)(void *, int, const char *), void *, char *);
	int (*run)(struct customop_host_call *);
	memcpy(&register_ops, &register_symbol, sizeof register_ops);
	memcpy(&run, &run_symbol, sizeof run);
	char error[CUSTOMOP_HOST_ERROR_SIZE];
	register_ops(ignore_op, NULL, error);
	float x[16], y[16];
	for (int i = 0; i < 16; i++)
		x[i] = (float)(i - 8);
	struct customop_host_tensor input = {CUSTOMOP_HOST_FLOAT32, 1, {16}, {1}, x};
	struct customop_host_tensor output = {CUSTOMOP_HOST_FLOAT32, 1, {16}, {1}, y};
	static struct customop_host_call call;
	call.abi_version = CUSTOMOP_HOST_ABI_VERSION;
	call.op = argv[2];
	call.args = &input;
	call.arg_count = 1;
	call.output = &output;
	long count = atol(argv[3]);
	double best[2] = {1e9, 1e9};
	for (int batch = 0; batch < 20; batch++) {
		for (int record = 0; record < 2; record++) {
			call.record = record ? CUSTOMOP_HOST_RECORD_COVERAGE : 0;
			double start = seconds();
			for (long k = 0; k < count; k++) {
				if (run(&call) != 0) {
					fprintf(stderr, "core_call: %s\n", call.error);
					return 1;
				}
			}
			double per_call = (seconds() - start) / (double)count * 1e6;
			best[record] = per_call < best[record] ? per_call : best[record];
		}
	}
	printf("%.3f %.3f\n", best[0], best[1]);
	return 0;
}
