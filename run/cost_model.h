/* cost_model.h - what a core's ledger would cost on the device: the cost
 * model's constants, each with its source, and the price of a ledger. */
#ifndef COST_MODEL_H
#define COST_MODEL_H

#include <neuron/host_abi.h>

#include "runcustomop.h"

/* The estimated device time of a core's ledger, in microseconds, by kind
 * (enum rco_profile_kind), each to the nanosecond; returns their sum.  A
 * hint prices the ledger it proposes with it too. */
double cost_model_price(const struct customop_host_ledger *ledger, double estimated_us[RCO_PROFILE_KINDS]);
/* An op's own cost beyond its slowest core, in microseconds. */
double cost_model_fixed_us(void);
/* The estimate of an op whose slowest core takes slowest_core_us. */
double cost_model_op_us(double slowest_core_us);

#endif
