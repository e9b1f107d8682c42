# run.mk - run-custom-op and its tests (included by Makefile).
RUN_SOURCES = run/main.c run/options.c run/opsfile.c run/arguments.c run/npy.c \
	run/cores.c run/fault.c run/console.c run/compare.c
RUN_OBJECTS = $(RUN_SOURCES:run/%.c=obj/run/%.o)
RUN_CPPFLAGS = -Isdk/host/include

PROGRAMS += run-custom-op
INSTALL_TARGETS += install-run-custom-op

obj/run/%.o: run/%.c
	@mkdir -p obj/run
	$(CC) $(ALL_CPPFLAGS) $(RUN_CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

run-custom-op: $(RUN_OBJECTS)
	$(CC) $(ALL_LDFLAGS) -pthread -o $@ $(RUN_OBJECTS) -ldl -lm

install-run-custom-op: run-custom-op
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	cp run-custom-op $(DESTDIR)$(BINDIR)/
	cp man/run-custom-op.1 $(DESTDIR)$(MANDIR)/man1/

# Tests: the npy unit test, and the runner end to end over a fake core
# library (tests/run/fake_core.c) linked once as fake.so and once per core
# as fake_cpu0.so .. fake_cpu7.so, which stands in for a host build.
RUN_FAKE_CORES = 0 1 2 3 4 5 6 7
RUN_FAKE_LIBRARIES = tests/run/fake/fake.so $(RUN_FAKE_CORES:%=tests/run/fake/fake_cpu%.so)
TESTS += tests/run/test_npy tests/run/test_opsfile tests/run/test_runner.sh
CLEAN += run-custom-op obj/run tests/run/test_npy tests/run/test_opsfile tests/run/fake

tests/run/test_npy: tests/run/test_npy.c run/npy.c run/npy.h tests/unit/check.h
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ tests/run/test_npy.c run/npy.c -lm

tests/run/test_opsfile: tests/run/test_opsfile.c run/opsfile.c run/opsfile.h tests/unit/check.h
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ tests/run/test_opsfile.c run/opsfile.c

tests/run/fake/fake.so: tests/run/fake_core.c sdk/host/include/neuron/host_abi.h
	@mkdir -p tests/run/fake
	$(CC) $(ALL_CPPFLAGS) $(RUN_CPPFLAGS) $(ALL_CFLAGS) -shared $(ALL_LDFLAGS) -o $@ tests/run/fake_core.c

tests/run/fake/fake_cpu%.so: tests/run/fake_core.c sdk/host/include/neuron/host_abi.h
	@mkdir -p tests/run/fake
	$(CC) $(ALL_CPPFLAGS) $(RUN_CPPFLAGS) -DCORE=$* $(ALL_CFLAGS) -shared $(ALL_LDFLAGS) -o $@ tests/run/fake_core.c

# The end-to-end script needs the runner and the fake libraries built.
tests/run/test_runner.sh: run-custom-op $(RUN_FAKE_LIBRARIES)

.PHONY: install-run-custom-op

-include obj/run/*.d
