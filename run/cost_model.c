/* cost_model.c - the device-cost model: the constants, each with where it
 * comes from, and the function that prices a core's ledger.
 *
 * The model is a fit of three documented figures, not a measurement: the
 * performance tutorial's whole-model throughput of the official inference
 * sample (trn1; customop_mlp, MLP 784-4096-2048-10, batch 32, relu as a
 * custom op on [32, 4096] and [32, 2048]) in its three variants.  Each
 * variant's relu.cpp says what it does per element:
 *   element (neuron/):      torch::zeros (4 bytes written); in[i][j] read
 *                           once, and again when positive (half of them,
 *                           assumed), out[i][j] written once: 2.5 HBM
 *                           accesses; customop_return_tensor copies the
 *                           result (4 bytes read, 4 written);
 *   TCM (neuron-tcm/):      torch::zeros (4), tensor_to_tcm (4),
 *                           tcm_to_tensor (4), the result's copy (8): 20
 *                           bytes moved by block;
 *   multicore (-multicore): tensor_to_tcm (4) and tcm_to_tensor (4) into
 *                           get_dst_tensor(): 8 bytes, split evenly over 8
 *                           cores.
 * Assumed: the rest of the model costs the same in all three; every byte
 * moved by block (TCM copies, fills, the result's copy) costs the same; the
 * kernel's own arithmetic on TCM data, which the emulator does not see, is
 * folded into that price.  Then, with N relu elements an iteration:
 *   TCM:       rest + 20 N byte = 1 / 220.7 s
 *   multicore: rest +    N byte = 1 / 269.9 s
 *   element:   rest + 2.5 N access + 12 N byte = 1 / 8.10 s
 * run-custom-op(1), THE COST MODEL, lists the same table (rco_cost_model). */
#include "cost_model.h"

#include <math.h>

#define ELEMENT_ITERATIONS_PER_SECOND 8.10
#define TCM_ITERATIONS_PER_SECOND 220.7
#define MULTICORE_ITERATIONS_PER_SECOND 269.9
#define RELU_ELEMENTS (32.0 * 4096 + 32.0 * 2048)
#define NS 1e9

#define BYTE_NS ((NS / TCM_ITERATIONS_PER_SECOND - NS / MULTICORE_ITERATIONS_PER_SECOND) / \
                 (19 * RELU_ELEMENTS))
#define REST_NS (NS / MULTICORE_ITERATIONS_PER_SECOND - RELU_ELEMENTS * BYTE_NS)
#define HBM_ACCESS_NS ((NS / ELEMENT_ITERATIONS_PER_SECOND - REST_NS - 12 * RELU_ELEMENTS * BYTE_NS) / \
                       (2.5 * RELU_ELEMENTS))

enum {
	ELEMENT_FIGURE, TCM_FIGURE, MULTICORE_FIGURE, ELEMENTS_FIGURE, BYTE_RATE, REST, HBM_ACCESS,
	STREAM_BYTE, UNBUFFERED_STREAM, COMPUTE_BYTE, RESULT_COPY_BYTE, FIXED, CONSTANT_COUNT
};

static const struct rco_cost_constant constants[CONSTANT_COUNT] = {
	[ELEMENT_FIGURE] = {"element-accessor sample", ELEMENT_ITERATIONS_PER_SECOND, "it/s",
	                    "documented: the performance tutorial, trn1, customop_mlp neuron/"},
	[TCM_FIGURE] = {"TCM sample", TCM_ITERATIONS_PER_SECOND, "it/s",
	                "documented: the same, neuron-tcm/ (1024-float blocks)"},
	[MULTICORE_FIGURE] = {"8-core TCM sample", MULTICORE_ITERATIONS_PER_SECOND, "it/s",
	                      "documented: the same, neuron-multicore/"},
	[ELEMENTS_FIGURE] = {"relu elements an iteration", RELU_ELEMENTS, "elements",
	                     "the samples' shapes: [32, 4096] and [32, 2048]"},
	[BYTE_RATE] = {"TCM copy", BYTE_NS, "ns/byte",
	               "fit: (1/220.7 - 1/269.9) s / (19 x 196608 bytes): the TCM sample moves 20 "
	               "bytes an element by block, the 8-core one 8 split over 8 cores"},
	[REST] = {"rest of the sample's MLP", REST_NS / 1e3, "us/iteration",
	          "fit: 1/269.9 s - 196608 x 1 byte x the TCM copy price (used only to compare "
	          "with the documented throughput)"},
	[HBM_ACCESS] = {"HBM element access", HBM_ACCESS_NS, "ns/access",
	                "fit: (1/8.10 s - the rest - 196608 x 12 bytes x the TCM copy price) / "
	                "(2.5 x 196608): the element sample makes 2.5 accesses an element, half "
	                "its inputs being positive (assumed)"},
	[STREAM_BYTE] = {"stream with a TCM buffer", BYTE_NS, "ns/byte",
	                 "assumed: a stream moves its elements through its TCM buffer in blocks, as "
	                 "a TCM copy does (no documented figure)"},
	[UNBUFFERED_STREAM] = {"stream without a TCM buffer", HBM_ACCESS_NS, "ns/element",
	                       "documented: streams past the first 4 active ones behave like the "
	                       "element accessor in speed"},
	[COMPUTE_BYTE] = {"element-wise op or fill", BYTE_NS, "ns/byte",
	                  "assumed: the runtime moves their operands by block, as a TCM copy does "
	                  "(bytes read and written; no documented figure)"},
	[RESULT_COPY_BYTE] = {"customop_return_tensor copy", BYTE_NS, "ns/byte",
	                      "part of the fit: the TCM sample returns a tensor it made (bytes read "
	                      "and written)"},
	[FIXED] = {"fixed cost of an op", 0, "us",
	           "not separable: the documented figures count the op's launch in the rest of "
	           "the model"},
};

const struct rco_cost_constant *rco_cost_model(size_t *count)
{
	if (count)
		*count = CONSTANT_COUNT;
	return constants;
}

/* Nanoseconds as microseconds, to the nanosecond: a profile's parts then
 * add up to its total as printed. */
static double microseconds(double nanoseconds)
{
	return round(nanoseconds) / 1e3;
}

double cost_model_price(const struct customop_host_ledger *ledger, double estimated_us[RCO_PROFILE_KINDS])
{
	double accesses = (double)(ledger->element_reads + ledger->element_writes);
	estimated_us[RCO_PROFILE_HBM_ELEMENTS] =
		microseconds(accesses * constants[HBM_ACCESS].value +
		             (double)ledger->unbuffered_stream_elements * constants[UNBUFFERED_STREAM].value);
	estimated_us[RCO_PROFILE_STREAM] =
		microseconds((double)ledger->buffered_stream_bytes * constants[STREAM_BYTE].value);
	estimated_us[RCO_PROFILE_TCM_COPIES] =
		microseconds((double)(ledger->tensor_to_tcm_bytes + ledger->tcm_to_tensor_bytes) *
		             constants[BYTE_RATE].value);
	estimated_us[RCO_PROFILE_COMPUTE] =
		microseconds((double)ledger->elementwise_bytes * constants[COMPUTE_BYTE].value);
	estimated_us[RCO_PROFILE_RESULT_COPY] =
		microseconds((double)ledger->result_copy_bytes * constants[RESULT_COPY_BYTE].value);
	double total = 0;
	for (int kind = 0; kind < RCO_PROFILE_KINDS; kind++)
		total += estimated_us[kind];
	return total;
}

double cost_model_op_us(double slowest_core_us)
{
	return slowest_core_us + constants[FIXED].value;
}

double cost_model_fixed_us(void)
{
	return constants[FIXED].value;
}
