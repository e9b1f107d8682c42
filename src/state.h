/* state.h - which steps of a plan are up to date.
 *
 * A step is up to date when its outputs exist, none is older than any of
 * its inputs (the source and every header its depfile names, the objects of
 * a link, the library of a pack), its command hash equals the build log's,
 * and no step it depends on will run. */
#ifndef STATE_H
#define STATE_H

#include <stddef.h>
#include <stdint.h>

struct arena;
struct buildlog;
struct plan;
struct toolchain;

/* The command hash of step index of plan, as the build log records it. */
uint64_t state_command_hash(const struct plan *plan, size_t index, const struct toolchain *toolchain);
/* Marks every up-to-date step of plan STEP_UP_TO_DATE; returns how many will run. */
size_t state_mark_up_to_date(struct arena *arena, struct plan *plan, const struct buildlog *log,
                             const struct toolchain *toolchain);

#endif
