/* runner_overhead.c - the runner library's own cost per call, and its
 * throughput, against plain C doing the same work in the same run (case 10
 * of bench/README.md).
 *
 * usage: runner_overhead SINGLE MULTI FAKE_SINGLE FAKE_MULTI [--quick]
 *   SINGLE  a single-core host build of examples/relu (BUILD_DIR/NAME)
 *   MULTI   a multicore host build of examples/relu_multicore
 *   FAKE_SINGLE, FAKE_MULTI  the fake core library of tests/run/fake_core.c
 *           (single-core and multicore), whose first op doubles each value
 *           without the runtime: what is left is the runner's own cost
 *
 * For each build, its first op on 16 float32 values (1-D for the
 * single-core builds, 4x4 for the multicore ones):
 *   - "between work": about 1 ms of computation on the calling thread before
 *     each call (summing a 256 KiB buffer), as a model's other work would
 *     come between calls, so that any thread the runner keeps goes to sleep;
 *     only the call is timed; the median of the calls;
 *   - "back to back": the calls one after another, best of 5 batches;
 *   - the same relu as a plain C loop over the 16 values, timed the same
 *     ways (the ratio's denominator);
 *   - context switches per call between work (getrusage, the whole process).
 * Then the multicore relu over 2^24 float32 values against a C loop over the
 * same arrays (one thread), median of 9.  Prints one JSON object. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "runcustomop.h"

#define SMALL 16
#define BIG (1 << 24)
#define WORK_BYTES (256 * 1024)

static int quick;
static volatile double sink;
static double work_buffer[WORK_BYTES / sizeof(double)];

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* About a millisecond of computation that touches memory. */
static void other_work(void)
{
	double start = now(), sum = 0;
	do {
		for (size_t i = 0; i < sizeof work_buffer / sizeof work_buffer[0]; i += 8)
			sum += work_buffer[i] * 0.5 + 1.0;
	} while (now() - start < 1e-3);
	sink = sum;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *values, int count)
{
	qsort(values, (size_t)count, sizeof *values, compare_doubles);
	return count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2;
}

static long switches(void)
{
	struct rusage usage;
	getrusage(RUSAGE_SELF, &usage);
	return usage.ru_nvcsw + usage.ru_nivcsw;
}

/* ---- what is timed: the runner's call, or a C loop ---- */

struct job {
	rco_library *library;      /* NULL: the C loop */
	struct rco_argument argument;
	struct rco_tensor output;
	struct rco_error *error;
	const float *in;
	float *out;
	long count;
};

static void c_relu(const float *restrict in, float *restrict out, long count)
{
	for (long i = 0; i < count; i++)
		out[i] = in[i] > 0.0f ? in[i] : 0.0f;
}

static void run_job(struct job *job)
{
	if (!job->library) {
		c_relu(job->in, job->out, job->count);
		__asm__ __volatile__("" : : "r"(job->out) : "memory");
		return;
	}
	if (rco_run(job->library, 0, &job->argument, 1, &job->output, 0, job->error) != 0) {
		fprintf(stderr, "runner_overhead: %s\n", job->error->message);
		exit(1);
	}
}

/* Median time of one call with other work before each; *per_switch gets the
 * context switches per call. */
static double between_work(struct job *job, int calls, double *switches_per_call)
{
	double *times = malloc(sizeof *times * (size_t)calls);
	long before = switches();
	for (int i = 0; i < calls; i++) {
		other_work();
		double start = now();
		run_job(job);
		times[i] = now() - start;
	}
	*switches_per_call = (double)(switches() - before) / calls;
	double result = median(times, calls);
	free(times);
	return result;
}

static double back_to_back(struct job *job, int calls, int batches)
{
	double best = INFINITY;
	for (int b = 0; b < batches; b++) {
		double start = now();
		for (int i = 0; i < calls; i++)
			run_job(job);
		double each = (now() - start) / calls;
		if (each < best)
			best = each;
	}
	return best;
}

static rco_library *open_build(const char *path, struct rco_error *error)
{
	rco_library *library = NULL;
	if (rco_open(path, NULL, &library, error) != 0) {
		fprintf(stderr, "runner_overhead: %s\n", error->message);
		exit(1);
	}
	return library;
}

static struct job make_job(rco_library *library, float *in, float *out, long count, int rank,
                           struct rco_error *error)
{
	struct job job;
	memset(&job, 0, sizeof job);
	job.library = library;
	job.in = in;
	job.out = out;
	job.count = count;
	job.error = error;
	struct rco_tensor tensor;
	memset(&tensor, 0, sizeof tensor);
	tensor.dtype = RCO_FLOAT32;
	tensor.rank = rank;
	if (rank == 1) {
		tensor.sizes[0] = count;
		tensor.strides[0] = 1;
	} else {
		tensor.sizes[0] = tensor.sizes[1] = 4;
		tensor.strides[0] = 4;
		tensor.strides[1] = 1;
	}
	tensor.data = in;
	job.argument.type = RCO_ARGUMENT_TENSOR;
	job.argument.tensor = tensor;
	job.output = tensor;
	job.output.data = out;
	return job;
}

/* doubled: the fake's op; else relu. */
static void check_result(const float *in, const float *out, long count, int doubled,
                         const char *what)
{
	for (long i = 0; i < count; i++) {
		if (out[i] != (doubled ? 2 * in[i] : in[i] > 0.0f ? in[i] : 0.0f)) {
			fprintf(stderr, "runner_overhead: %s: element %ld is wrong\n", what, i);
			exit(1);
		}
	}
}

/* One build's small-call numbers, as a JSON object. */
static void small_calls(const char *name, const char *path, int rank, int doubled,
                        struct rco_error *error)
{
	static float in[SMALL], out[SMALL];
	for (int i = 0; i < SMALL; i++)
		in[i] = (float)(i % 2 ? i : -i);
	rco_library *library = open_build(path, error);
	struct job runner = make_job(library, in, out, SMALL, rank, error);
	struct job loop = make_job(NULL, in, out, SMALL, rank, error);
	run_job(&runner);
	check_result(in, out, SMALL, doubled, name);
	int calls = quick ? 30 : 500, batch = quick ? 200 : 2000, batches = quick ? 2 : 5;
	double runner_switches, loop_switches;
	double runner_between = between_work(&runner, calls, &runner_switches);
	double loop_between = between_work(&loop, calls, &loop_switches);
	double runner_b2b = back_to_back(&runner, batch, batches);
	double loop_b2b = back_to_back(&loop, batch, batches);
	printf("\"%s\": {\"cores\": %d, \"between\": %.9f, \"c_between\": %.9f, \"switches\": %.2f, "
	       "\"back_to_back\": %.9f, \"c_back_to_back\": %.9f, \"calls\": %d}",
	       name, rco_core_count(library), runner_between, loop_between, runner_switches,
	       runner_b2b, loop_b2b, calls);
	rco_close(library);
}

static void throughput(const char *path, struct rco_error *error)
{
	float *in = malloc(sizeof(float) * BIG), *out = malloc(sizeof(float) * BIG);
	if (!in || !out) {
		fprintf(stderr, "runner_overhead: out of memory\n");
		exit(1);
	}
	uint32_t state = 12345;
	for (long i = 0; i < BIG; i++) {
		state = state * 1664525u + 1013904223u;
		in[i] = (float)((int32_t)state) / 2147483648.0f;
	}
	rco_library *library = open_build(path, error);
	struct job runner = make_job(library, in, out, BIG, 1, error);
	runner.argument.tensor.sizes[0] = runner.output.sizes[0] = BIG;
	struct job loop = make_job(NULL, in, out, BIG, 1, error);
	run_job(&runner);
	check_result(in, out, BIG, 0, "relu over 2^24 values");
	int runs = quick ? 3 : 9;
	double mine[9], theirs[9];
	for (int r = 0; r < runs; r++) {
		double start = now();
		run_job(&runner);
		mine[r] = now() - start;
		start = now();
		run_job(&loop);
		theirs[r] = now() - start;
	}
	printf("\"throughput\": {\"runner\": %.6f, \"c_loop\": %.6f, \"runs\": %d}",
	       median(mine, runs), median(theirs, runs), runs);
	rco_close(library);
	free(in);
	free(out);
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: runner_overhead SINGLE MULTI FAKE_SINGLE FAKE_MULTI [--quick]\n");
		return 2;
	}
	quick = argc > 5 && strcmp(argv[5], "--quick") == 0;
	static struct rco_error error;
	for (size_t i = 0; i < sizeof work_buffer / sizeof work_buffer[0]; i++)
		work_buffer[i] = (double)i;
	printf("{");
	small_calls("single", argv[1], 1, 0, &error);
	printf(", ");
	small_calls("multi", argv[2], 2, 0, &error);
	printf(", ");
	small_calls("fake_single", argv[3], 1, 1, &error);
	printf(", ");
	small_calls("fake_multi", argv[4], 2, 1, &error);
	printf(", ");
	throughput(argv[2], &error);
	printf("}\n");
	return 0;
}
