/* profile_report.h - run-custom-op's --profile and --profile-svg: the last
 * call's profile as a table on stderr, as JSON and as SVG files. */
#ifndef PROFILE_REPORT_H
#define PROFILE_REPORT_H

#include "runcustomop.h"

/* Shows and writes the profile of library's last call to json_path and
 * svg_path (either may be NULL); returns 0, or 1 after reporting a file
 * that cannot be written or a call that has no profile. */
int profile_report(rco_library *library, const char *json_path, const char *svg_path);

#endif
