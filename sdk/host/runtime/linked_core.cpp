/* linked_core.cpp - compiled once per core (-DCUSTOMOP_HOST_CORE=0..7, or -1
 * for a single-core build) into core_cpuI.o / core_single.o.  Linking one of
 * them fixes the library's core id, as the device's per-core linker spec
 * does; linking none fails with an undefined symbol. */
#ifndef CUSTOMOP_HOST_CORE
#error "compile with -DCUSTOMOP_HOST_CORE=N"
#endif

extern "C" const int customop_host_core_of_link;
extern "C" const int customop_host_core_of_link = CUSTOMOP_HOST_CORE;
