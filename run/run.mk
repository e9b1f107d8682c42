# run.mk - libruncustomop, run-custom-op over it, and their tests (included by Makefile).
RCO_SOURCES = run/library.c run/check.c run/errors.c run/cores.c run/loader.c run/fault.c \
	run/dispositions.c run/monitor.c run/core_output.c run/opsfile.c run/elf_check.c \
	run/coverage.c run/cost_model.c run/profile.c run/hints.c run/profile_format.c run/runtime_fault.c \
	run/sanitized.c
# The library id is computed as the build computes it (src/library_id.c).
RCO_OBJECTS = $(RCO_SOURCES:run/%.c=obj/run/%.o) obj/library_id.o
RUN_SOURCES = run/main.c run/options.c run/arguments.c run/npy.c run/console.c run/compare.c \
	run/profile_report.c run/output.c
# The files it writes are written as every user-named output is
# (src/output_file.h, which reports into a struct diag in an arena).
RUN_OUTPUT_FILE_OBJECTS = obj/output_file.o obj/diag.o obj/arena.o
RUN_OBJECTS = $(RUN_SOURCES:run/%.c=obj/run/%.o) $(RUN_OUTPUT_FILE_OBJECTS) obj/program.o
RUN_CPPFLAGS = -Isdk/host/include
RCO_LIBS = -pthread -ldl -lm

PROGRAMS += run-custom-op libruncustomop.a libruncustomop.so
INSTALL_TARGETS += install-run-custom-op

obj/run/%.o: run/%.c
	@mkdir -p obj/run
	$(CC) $(ALL_CPPFLAGS) $(RUN_CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

libruncustomop.a: $(RCO_OBJECTS)
	rm -f $@
	$(AR) rcs $@ $(RCO_OBJECTS)

libruncustomop.so: $(RCO_OBJECTS)
	$(CC) -shared -Wl,-soname,libruncustomop.so.0 $(ALL_LDFLAGS) -o $@ $(RCO_OBJECTS) $(RCO_LIBS)

run-custom-op: $(RUN_OBJECTS) libruncustomop.a
	$(CC) $(ALL_LDFLAGS) -o $@ $(RUN_OBJECTS) libruncustomop.a $(RCO_LIBS)

install-run-custom-op: run-custom-op libruncustomop.a libruncustomop.so
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(PKGCONFIGDIR)
	cp run-custom-op $(DESTDIR)$(BINDIR)/
	cp libruncustomop.a $(DESTDIR)$(LIBDIR)/
	cp libruncustomop.so $(DESTDIR)$(LIBDIR)/libruncustomop.so.0
	ln -sf libruncustomop.so.0 $(DESTDIR)$(LIBDIR)/libruncustomop.so
	cp include/runcustomop.h $(DESTDIR)$(INCLUDEDIR)/
	cp man/run-custom-op.1 $(DESTDIR)$(MANDIR)/man1/
	cp man/runcustomop.3 $(DESTDIR)$(MANDIR)/man3/
	# Written for this PREFIX where it is installed (see install).
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCLUDEDIR)' '' \
		'Name: runcustomop' \
		'Description: run host-built GPSIMD custom operators on emulated cores' \
		'Version: $(VERSION)' \
		'Libs: -L$${libdir} -lruncustomop' \
		'Libs.private: -pthread -ldl -lm' \
		'Cflags: -I$${includedir}' >$(DESTDIR)$(PKGCONFIGDIR)/runcustomop.pc

# Tests: the npy unit test, and the runner end to end over a fake core
# library (tests/run/fake_core.c) linked once as fake.so and once per core
# as fake_cpu0.so .. fake_cpu7.so, which stands in for a host build.
RUN_FAKE_CORES = 0 1 2 3 4 5 6 7
RUN_FAKE_LIBRARIES = tests/run/fake/fake.so $(RUN_FAKE_CORES:%=tests/run/fake/fake_cpu%.so)
TESTS += tests/run/test_npy tests/run/test_opsfile tests/run/test_runner.sh tests/run/test_printf.sh
CLEAN += run-custom-op libruncustomop.a libruncustomop.so obj/run \
	tests/run/test_npy tests/run/test_opsfile tests/run/fake

# run/npy.c and what it writes its files with.
RUN_NPY_SOURCES = run/npy.c run/output.c run/errors.c src/output_file.c src/diag.c src/arena.c
tests/run/test_npy: tests/run/test_npy.c $(RUN_NPY_SOURCES) run/npy.h run/output.h run/errors.h \
		tests/unit/check.h
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ tests/run/test_npy.c \
		$(RUN_NPY_SOURCES) -lm

# The C views of the dtypes: runcustomop.h, host_abi.h, the library's table, npy.
TESTS += tests/run/test_dtypes
CLEAN += tests/run/test_dtypes
tests/run/test_dtypes: tests/run/test_dtypes.c libruncustomop.a include/runcustomop.h \
		$(RUN_NPY_SOURCES) run/npy.h sdk/host/include/neuron/host_abi.h tests/unit/check.h
	$(CC) $(ALL_CPPFLAGS) $(RUN_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ tests/run/test_dtypes.c \
		$(filter-out run/errors.c,$(RUN_NPY_SOURCES)) libruncustomop.a $(RCO_LIBS)

tests/run/test_opsfile: tests/run/test_opsfile.c run/opsfile.c run/opsfile.h run/errors.c run/errors.h \
		tests/unit/check.h
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ tests/run/test_opsfile.c run/opsfile.c \
		run/errors.c

tests/run/fake/fake.so: tests/run/fake_core.c sdk/host/include/neuron/host_abi.h
	@mkdir -p tests/run/fake
	$(CC) $(ALL_CPPFLAGS) $(RUN_CPPFLAGS) $(ALL_CFLAGS) -shared $(ALL_LDFLAGS) -o $@ tests/run/fake_core.c

tests/run/fake/fake_cpu%.so: tests/run/fake_core.c sdk/host/include/neuron/host_abi.h
	@mkdir -p tests/run/fake
	$(CC) $(ALL_CPPFLAGS) $(RUN_CPPFLAGS) -DCORE=$* $(ALL_CFLAGS) -shared $(ALL_LDFLAGS) -o $@ tests/run/fake_core.c


.PHONY: install-run-custom-op

-include obj/run/*.d

# The runner library's C test, over the fake build and a real one:
# tests/run/kernels/mischief.cpp built single-core and multicore, with
# DWARF 4 debugging information, which every valgrind reads (clang's DWARF 5
# stops valgrind 3.19).
RUN_MISCHIEF_OPS = --op 'my_ops::relu(Tensor x) -> Tensor' \
	--op 'my_ops::mischief(Tensor x, int how, int core) -> Tensor' \
	--op 'my_ops::chatter(Tensor x, int bytes) -> Tensor' \
	--op 'my_ops::warn(Tensor x) -> Tensor' \
	--op 'my_ops::alias_probe(Tensor x) -> Tensor'
RUN_MISCHIEF = tests/run/mischief/single/mischief.so tests/run/mischief/multi/.built
TESTS += tests/run/test_library
CLEAN += tests/run/test_library tests/run/mischief

tests/run/mischief/single/mischief.so: tests/run/kernels/mischief.cpp build-custom-op $(HOST_SDK)
	./build-custom-op --target host --name mischief -B tests/run/mischief/single --cflag=-gdwarf-4 \
		$(RUN_MISCHIEF_OPS) tests/run/kernels/mischief.cpp >/dev/null

tests/run/mischief/multi/.built: tests/run/kernels/mischief.cpp build-custom-op $(HOST_SDK)
	./build-custom-op --target host --multicore --name mischief -B tests/run/mischief/multi \
		--cflag=-gdwarf-4 $(RUN_MISCHIEF_OPS) tests/run/kernels/mischief.cpp >/dev/null
	touch $@

tests/run/test_library: tests/run/test_library.c libruncustomop.a include/runcustomop.h \
		tests/unit/check.h $(RUN_FAKE_LIBRARIES) $(RUN_MISCHIEF)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ tests/run/test_library.c \
		libruncustomop.a $(RCO_LIBS)

# The output checks, the TCM checks, the profile and the device runtime API
# of custom_op.h, over kernels built here (tests/run/kernels/coverage.cpp,
# tcm_misuse.cpp, profile.cpp, custom_op.cpp, examples/).
TESTS += tests/run/test_coverage.sh tests/run/test_tcm.sh tests/run/test_profile.sh tests/run/test_custom_op.sh
tests/run/test_coverage.sh tests/run/test_tcm.sh tests/run/test_profile.sh tests/run/test_custom_op.sh: \
	build-custom-op run-custom-op libruncustomop.so $(HOST_SDK)

# The Python binding (build_custom_op.runner) on torch tensors.
TESTS += tests/run/test_binding.py tests/run/test_build_record.sh tests/run/test_files.sh
tests/run/test_binding.py: libruncustomop.so run-custom-op $(RUN_FAKE_LIBRARIES) $(RUN_MISCHIEF)
# The end-to-end scripts need the runner and the builds.
tests/run/test_runner.sh tests/run/test_printf.sh tests/run/test_files.sh: run-custom-op $(RUN_FAKE_LIBRARIES) $(RUN_MISCHIEF)
tests/run/test_build_record.sh: build-custom-op run-custom-op $(HOST_SDK)

# run-custom-op under valgrind (make check-valgrind): the scripts whose runs
# end without a fault (a fault is an invalid access to memcheck).
VALGRIND_TESTS += tests/run/test_files.sh tests/run/test_build_record.sh
VALGRIND_PREREQUISITES += run-custom-op $(HOST_SDK) $(RUN_FAKE_LIBRARIES) $(RUN_MISCHIEF)
