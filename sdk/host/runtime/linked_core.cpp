/* linked_core.cpp - compiled once per core (-DCUSTOMOP_HOST_CORE=0..7, or -1
 * for a single-core build) into core_cpuI.o / core_single.o.  Linking one of
 * them fixes the library's core id, as the device's per-core linker spec
 * does; linking none fails with an undefined symbol. */
#ifndef CUSTOMOP_HOST_CORE
#error "compile with -DCUSTOMOP_HOST_CORE=N"
#endif

extern "C" const int customop_host_core_of_link;
extern "C" const int customop_host_core_of_link = CUSTOMOP_HOST_CORE;

// The host SDK's gdb pretty-printers and $core(), inlined in the section
// from which gdb runs a library's scripts (type 4: a Python script, named by
// its first line), so every core library brings them along.
#ifdef CUSTOMOP_HOST_GDB_SCRIPT
__asm__(".pushsection .debug_gdb_scripts, \"MS\", @progbits, 1\n"
        ".byte 4\n"
        ".ascii \"customop_host_printers.py\\n\"\n"
        ".incbin \"" CUSTOMOP_HOST_GDB_SCRIPT "\"\n"
        ".byte 0\n"
        ".popsection\n");
#endif
