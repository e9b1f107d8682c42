/* fake_core.c - a stand-in for a host-built core library, for testing run-custom-op.
 *
 * It implements the three functions of neuron/host_abi.h itself, without
 * the host runtime, so the runner's loading, threads, output sharing, print
 * routing and fault handling can be tested on their own.  Built once per
 * core with -DCORE=I (fake_cpuI.so) and once without (fake.so, single-core).
 * Every op works on float32 tensors and writes its core's share of the
 * output: elements [n*c/8, n*(c+1)/8) on core c, all of them single-core.
 * Its writes go through plain pointers, so it keeps the core ledger itself:
 * the output elements it wrote, as the runtime records them.
 *
 * MAP_ANONYMOUS is outside POSIX.1-2008. */
#define _DEFAULT_SOURCE

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <neuron/host_abi.h>

#ifdef CORE
#define LINKED_CORE CORE
#else
#define LINKED_CORE (-1)
#endif

/* The ops in registration order; the tests' fake.ops lists the same. */
static const char *const op_names[] = {
	"scale2",       /* (Tensor x): 2 * x */
	"axpby",        /* (Tensor x, Tensor y, Scalar a, float b, int n): a*x + b*y below n, else 0 */
	"scalar_dtype", /* (Scalar s): out[0] = s's dtype number, out[1] = its value */
	"fill",         /* (long long v): every element = v (int64 output) */
	"chatter",      /* (Tensor x): 2 * x, and each core prints two lines */
	"copies",       /* (Tensor x): out[core] = how often this copy of the library ran */
	"violation",    /* (Tensor x): core 2 (or the single core) reports a violation */
	"overflow",     /* (Tensor x): core 3 (or the single core) overflows an announced guard */
	"far_overflow", /* (Tensor x): like overflow, but faults 8 KiB below the guard */
	"wild",         /* (Tensor x): core 5 (or the single core) writes through a bad pointer */
	"unguarded",    /* (Tensor x): announces a guard, withdraws it, then faults in it */
};
#define OP_COUNT ((int)(sizeof op_names / sizeof op_names[0]))

static int run_count;
/* The output elements this call wrote, for the ledger. */
static struct customop_host_range written;

int customop_host_linked_core(void)
{
	return LINKED_CORE;
}

int customop_host_register(void (*callback)(void *context, int index, const char *name),
                           void *context, char error[CUSTOMOP_HOST_ERROR_SIZE])
{
	(void)error;
	for (int i = 0; i < OP_COUNT; i++)
		callback(context, i, op_names[i]);
	return OP_COUNT;
}

static int this_core(void)
{
	return LINKED_CORE < 0 ? 0 : LINKED_CORE;
}

static int64_t element_count(const struct customop_host_tensor *tensor)
{
	int64_t count = 1;
	for (int i = 0; i < tensor->rank; i++)
		count *= tensor->sizes[i];
	return count;
}

/* This core's share [*start, *end) of n elements. */
static void share(int64_t n, int64_t *start, int64_t *end)
{
	if (LINKED_CORE < 0) {
		*start = 0;
		*end = n;
		return;
	}
	*start = n * LINKED_CORE / 8;
	*end = n * (LINKED_CORE + 1) / 8;
}

/* Notes that the call wrote output elements [begin, end). */
static void wrote(int64_t begin, int64_t end)
{
	written.begin = begin;
	written.end = end;
}

static void say(struct customop_host_call *call, const char *text)
{
	call->print(call->context, this_core(), text, strlen(text));
}

static int violation(struct customop_host_call *call, const char *rule)
{
	snprintf(call->error, sizeof call->error, "core %d: op %s: %s", this_core(),
	         call->label ? call->label : call->op, rule);
	return -1;
}

static int scale2(struct customop_host_call *call)
{
	const struct customop_host_tensor *x = &call->args[0];
	if (x->dtype != CUSTOMOP_HOST_FLOAT32 || call->output->dtype != CUSTOMOP_HOST_FLOAT32)
		return violation(call, "scale2 takes and returns float32");
	const float *in = x->data;
	float *out = call->output->data;
	int64_t start, end;
	share(element_count(x), &start, &end);
	for (int64_t i = start; i < end; i++)
		out[i] = 2 * in[i];
	wrote(start, end);
	return 0;
}

static int axpby(struct customop_host_call *call)
{
	const struct customop_host_tensor *args = call->args;
	if (args[2].dtype != CUSTOMOP_HOST_INT64 && args[2].dtype != CUSTOMOP_HOST_FLOAT32)
		return violation(call, "Scalar a is neither int64 nor float32");
	if (args[3].dtype != CUSTOMOP_HOST_FLOAT32 || args[4].dtype != CUSTOMOP_HOST_INT32)
		return violation(call, "float b must be float32 and int n int32");
	double a;
	if (args[2].dtype == CUSTOMOP_HOST_INT64)
		a = (double)*(const int64_t *)args[2].data;
	else
		a = *(const float *)args[2].data;
	float b = *(const float *)args[3].data;
	int32_t n = *(const int32_t *)args[4].data;
	const float *x = args[0].data, *y = args[1].data;
	float *out = call->output->data;
	int64_t start, end;
	share(element_count(&args[0]), &start, &end);
	for (int64_t i = start; i < end; i++)
		out[i] = i < n ? (float)(a * x[i] + b * y[i]) : 0.0f;
	wrote(start, end);
	return 0;
}

static int scalar_dtype(struct customop_host_call *call)
{
	const struct customop_host_tensor *s = &call->args[0];
	if (call->output->dtype != CUSTOMOP_HOST_FLOAT32 || element_count(call->output) < 2)
		return violation(call, "scalar_dtype returns 2 float32 elements");
	if (this_core() != 0)
		return 0;
	float *out = call->output->data;
	out[0] = (float)s->dtype;
	out[1] = s->dtype == CUSTOMOP_HOST_INT64 ? (float)*(const int64_t *)s->data
	                                         : *(const float *)s->data;
	wrote(0, 2);
	return 0;
}

static int fill(struct customop_host_call *call)
{
	if (call->args[0].dtype != CUSTOMOP_HOST_INT64 || call->output->dtype != CUSTOMOP_HOST_INT64)
		return violation(call, "fill takes and returns int64");
	int64_t value = *(const int64_t *)call->args[0].data;
	int64_t *out = call->output->data;
	int64_t start, end;
	share(element_count(call->output), &start, &end);
	for (int64_t i = start; i < end; i++)
		out[i] = value;
	wrote(start, end);
	return 0;
}

static int chatter(struct customop_host_call *call)
{
	char line[64];
	snprintf(line, sizeof line, "core %d", this_core());
	say(call, line); /* a line printed in pieces stays one line */
	say(call, " says hello\nand ");
	say(call, "goodbye\n");
	return scale2(call);
}

static int copies(struct customop_host_call *call)
{
	run_count++;
	float *out = call->output->data;
	if (element_count(call->output) > this_core()) {
		out[this_core()] = (float)run_count;
		wrote(this_core(), this_core() + 1);
	}
	return 0;
}

/* Maps pages inaccessible; the fake "stack" sits above them. */
static char *inaccessible_pages(size_t count)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *pages = mmap(NULL, count * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return pages == MAP_FAILED ? NULL : pages;
}

static int fault_on(struct customop_host_call *call, int core, const char *op)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	if (this_core() != core && LINKED_CORE >= 0)
		return scale2(call);
	char *pages = inaccessible_pages(4);
	if (!pages)
		return violation(call, "mmap failed");
	char *guard = pages + 3 * page;
	volatile char *target;
	if (strcmp(op, "wild") == 0) {
		target = (volatile char *)(uintptr_t)16;
	} else {
		call->guard(call->context, guard, page, "the emulated core stack (4096 bytes)");
		target = strcmp(op, "far_overflow") == 0 ? guard - 2 * page : guard + 100;
		if (strcmp(op, "unguarded") == 0)
			call->guard(call->context, guard, page, NULL);
	}
	*target = 1;
	return violation(call, "the fault did not happen");
}

static int run_op(struct customop_host_call *call);

int customop_host_run(struct customop_host_call *call)
{
	if (call->abi_version != CUSTOMOP_HOST_ABI_VERSION)
		return violation(call, "wrong ABI version");
	written.begin = written.end = 0;
	int status = run_op(call);
	memset(&call->ledger, 0, sizeof call->ledger);
	call->ledger.coverage_recorded = (call->record & CUSTOMOP_HOST_RECORD_COVERAGE) != 0;
	call->ledger.written.ranges = &written;
	call->ledger.written.range_count = written.end > written.begin;
	call->ledger.written.count = written.end - written.begin;
	return status;
}

static int run_op(struct customop_host_call *call)
{
	if (strcmp(call->op, "scale2") == 0)
		return scale2(call);
	if (strcmp(call->op, "axpby") == 0)
		return axpby(call);
	if (strcmp(call->op, "scalar_dtype") == 0)
		return scalar_dtype(call);
	if (strcmp(call->op, "fill") == 0)
		return fill(call);
	if (strcmp(call->op, "chatter") == 0)
		return chatter(call);
	if (strcmp(call->op, "copies") == 0)
		return copies(call);
	if (strcmp(call->op, "violation") == 0) {
		if (this_core() == 2 || LINKED_CORE < 0)
			return violation(call, "tcm_malloc: the 16 KiB TCM pool is exhausted");
		return scale2(call);
	}
	if (strcmp(call->op, "overflow") == 0 || strcmp(call->op, "far_overflow") == 0 ||
	    strcmp(call->op, "unguarded") == 0)
		return fault_on(call, 3, call->op);
	if (strcmp(call->op, "wild") == 0)
		return fault_on(call, 5, call->op);
	return violation(call, "no such op");
}
