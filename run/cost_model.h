/* cost_model.h - what a core's ledger would cost on the device: the cost
 * model's constants, each with its source, and the price of a ledger. */
#ifndef COST_MODEL_H
#define COST_MODEL_H

#include <neuron/host_abi.h>

#include "runcustomop.h"

/* The estimated device time of a core's ledger, in microseconds, by kind
 * (enum rco_profile_kind). */
void cost_model_price(const struct customop_host_ledger *ledger, double estimated_us[RCO_PROFILE_KINDS]);
/* An op's own cost beyond its slowest core, in microseconds. */
double cost_model_fixed_us(void);

#endif
