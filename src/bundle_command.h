/* bundle_command.h - build-custom-op bundle (see bundle_command.c). */
#ifndef BUNDLE_COMMAND_H
#define BUNDLE_COMMAND_H

/* Runs "build-custom-op bundle ARGS": argv[0] is "bundle", the rest its
 * arguments.  Replaces the process with the Python implementation; returns
 * an exit status only when that cannot be started (after saying why). */
int bundle_command(int argc, char **argv);

#endif
