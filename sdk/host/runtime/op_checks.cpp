/* op_checks.cpp - what the runtime checks around each op: the documented
 * limits on the tensors passed in and returned before the kernel runs, and
 * the HBM allocations, translation windows and TCM pool after it returned. */
#include <stdint.h>
#include <stdio.h>

#include "neuron/host/violation.h"
#include "runtime.h"

namespace neuron_host {
namespace {

// API reference: at most 8 dimensions, each at most 65535; the developer
// guide allows up to 4 dimensions of up to 2^32-1 each.
const size_t rank_limit = 8;
const size_t small_rank = 4;
const int64_t large_rank_dimension_limit = 65535;
const int64_t small_rank_dimension_limit = 4294967295LL;

} // namespace

// The first of the limits above that a tensor's dimensions break, and in
// which dimension (at); checked first, so that a tensor's name is written
// only for a message.
enum class DimensionProblem { none, too_many, large_with_many, too_large };

static DimensionProblem dimension_problem(const int64_t *sizes, size_t rank, size_t *at)
{
    if (rank > rank_limit)
        return DimensionProblem::too_many;
    for (size_t d = 0; d < rank; d++) {
        *at = d;
        if (rank > small_rank && sizes[d] > large_rank_dimension_limit)
            return DimensionProblem::large_with_many;
        if (sizes[d] > small_rank_dimension_limit)
            return DimensionProblem::too_large;
    }
    return DimensionProblem::none;
}

void check_dimensions(const int64_t *sizes, size_t rank, const char *which)
{
    size_t d = 0;
    switch (dimension_problem(sizes, rank, &d)) {
    case DimensionProblem::none:
        return;
    case DimensionProblem::too_many:
        violation("%s has %zu dimensions: a tensor passed in or returned has at most %zu", which, rank, rank_limit);
    case DimensionProblem::large_with_many:
        violation("%s has %zu dimensions and dimension %zu is %lld: a tensor passed in or returned with more "
                  "than %zu dimensions may have none above %lld", which, rank, d,
                  static_cast<long long>(sizes[d]), small_rank, static_cast<long long>(large_rank_dimension_limit));
    case DimensionProblem::too_large:
        violation("%s: dimension %zu is %lld: a dimension of a tensor passed in or returned is at most %lld "
                  "(2^32-1)", which, d, static_cast<long long>(sizes[d]),
                  static_cast<long long>(small_rank_dimension_limit));
    }
}

void warn_64_bit_tensor()
{
    warning("a 64-bit (kLong) tensor: the device does not support 64-bit ops generically (the API reference no "
            "longer lists kLong among the dtypes)");
}

void op_begin()
{
    streams_begin_run();
    customop_host_call *call = current_call();
    for (int i = 0; i < call->arg_count; i++) {
        const int64_t *sizes = call->args[i].sizes;
        size_t rank = static_cast<size_t>(call->args[i].rank);
        size_t at;
        if (dimension_problem(sizes, rank, &at) == DimensionProblem::none)
            continue;
        char which[32];
        snprintf(which, sizeof which, "argument %d", i + 1);
        check_dimensions(sizes, rank, which);
    }
    check_dimensions(call->output->sizes, static_cast<size_t>(call->output->rank), "the output");
}

void op_end()
{
    hbm_end_run();
    tcm_end_run();
    streams_end_run();
}

} // namespace neuron_host
