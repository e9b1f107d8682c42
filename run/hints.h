/* hints.h - what a profile suggests changing in the kernel, each hint with
 * the time it would save by the cost model (run-custom-op(1), THE PROFILE). */
#ifndef HINTS_H
#define HINTS_H

#include "cores.h"
#include "runcustomop.h"

/* Fills profile's hints from the ledgers of the team's last call (every
 * core done), whose estimates profile holds: each hint prices the ledgers
 * it proposes with the cost model, and is given when it saves at least 1%
 * of the op's estimate; largest saving first. */
void hints_build(struct rco_profile *profile, const struct core_team *team);

#endif
