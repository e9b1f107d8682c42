/* profile.h - the profile of a call, counted from the cores' ledgers and
 * priced by the cost model, and the process-wide collection of profiles
 * (runcustomop.h). */
#ifndef PROFILE_H
#define PROFILE_H

#include "cores.h"
#include "runcustomop.h"

/* The profile of the team's last call of op (every core done). */
void profile_build(struct rco_profile *profile, const struct core_team *team, const char *op);
/* The index in profile->cores of the core with the largest estimate. */
int profile_busiest(const struct rco_profile *profile);
/* Whether a collection is open: a call's profile is then built at its end
 * and collected (else when it is asked for). */
int profile_collecting(void);
/* Appends profile to the collection when one is open (left out when memory
 * runs out). */
void profile_collect(const struct rco_profile *profile);

#endif
