/* errors.h - filling in a struct rco_error. */
#ifndef ERRORS_H
#define ERRORS_H

#include "runcustomop.h"

/* Sets error to status with the formatted message, about op (NULL: none)
 * and no core; returns status. */
int error_set(struct rco_error *error, enum rco_status status, const char *op,
              const char *format, ...) __attribute__((format(printf, 4, 5)));
/* Empties error (RCO_OK). */
void error_clear(struct rco_error *error);

#endif
