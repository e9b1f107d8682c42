/* coverage.h - the output checks: after an op ran on every core, the output
 * elements that no core wrote, that two cores wrote, or that one core read
 * while another writes them, from each core's ledger (host_abi.h). */
#ifndef COVERAGE_H
#define COVERAGE_H

#include <neuron/host_abi.h>

#include "cores.h"
#include "runcustomop.h"

/* The mode from options->output_checks, else from the environment
 * (RCO_OUTPUT_CHECKS_VARIABLE), else RCO_OUTPUT_CHECKS_ERROR; returns 0, or
 * RCO_ERROR_USAGE with error set for a value that is none of the modes. */
int coverage_mode(const struct rco_options *options, int *mode, struct rco_error *error);
/* The CUSTOMOP_HOST_RECORD_* flags a call of mode on output asks the
 * runtime for: the output's sets, unless the checks are off or the output
 * is empty or not contiguous (then the checks do not apply). */
int coverage_record_flags(int mode, const struct customop_host_tensor *output);
/* Checks the ledgers of the team's last call of op on output (every core
 * done).  Each finding is one line, "op LABEL: output coverage: ...": in
 * RCO_OUTPUT_CHECKS_WARN mode each goes to warn (core -1, when warn is not
 * NULL) and 0 is returned; in RCO_OUTPUT_CHECKS_ERROR mode they make the
 * message of RCO_ERROR_OP (about op), which is returned.  A call whose
 * ledgers hold no sets is not checked (0).  Allocates nothing. */
int coverage_check(const struct core_team *team, const struct customop_host_tensor *output, int mode,
                   const char *op, const char *label, rco_warn_fn warn, void *context,
                   struct rco_error *error);

#endif
