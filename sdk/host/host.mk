# host.mk - the host SDK: libcustomop_host.a, the per-core link objects, the
# sanitized variant and their tests (included by Makefile).  No $(SANITIZE)
# here: the library is linked into libraries built without it (and
# -Wl,--no-undefined).
HOST_SDK_CXXFLAGS = -std=c++14 -fPIC -fvisibility=hidden -Wall -Wextra -Wpedantic -Werror -Wshadow \
	-Isdk/host/include $(CXXFLAGS)
HOST_RUNTIME_SOURCES = \
	sdk/host/runtime/access_checks.cpp sdk/host/runtime/assert.cpp sdk/host/runtime/code_address.cpp sdk/host/runtime/core_context.cpp sdk/host/runtime/element_set.cpp \
	sdk/host/runtime/elements.cpp sdk/host/runtime/elementwise.cpp sdk/host/runtime/factories.cpp \
	sdk/host/runtime/hbm.cpp sdk/host/runtime/ledger.cpp sdk/host/runtime/marshal.cpp sdk/host/runtime/neuron_utils.cpp sdk/host/runtime/op_checks.cpp sdk/host/runtime/print.cpp sdk/host/runtime/process.cpp sdk/host/runtime/putc.cpp \
	sdk/host/runtime/registration.cpp sdk/host/runtime/run.cpp sdk/host/runtime/scalar_type.cpp sdk/host/runtime/signals.cpp \
	sdk/host/runtime/stack_switch.cpp sdk/host/runtime/stacks.cpp sdk/host/runtime/streams.cpp sdk/host/runtime/tcm.cpp \
	sdk/host/runtime/tensor.cpp sdk/host/runtime/violation.cpp sdk/host/runtime/windows.cpp
HOST_RUNTIME_OBJECTS = $(HOST_RUNTIME_SOURCES:sdk/host/runtime/%.cpp=sdk/host/obj/%.o)
HOST_CORE_OBJECTS = sdk/host/lib/core_cpu0.o sdk/host/lib/core_cpu1.o sdk/host/lib/core_cpu2.o \
	sdk/host/lib/core_cpu3.o sdk/host/lib/core_cpu4.o sdk/host/lib/core_cpu5.o sdk/host/lib/core_cpu6.o \
	sdk/host/lib/core_cpu7.o sdk/host/lib/core_single.o
# The sanitized variant, beside the plain one (build-custom-op --sanitize
# chooses it): the same runtime sources built with AddressSanitizer
# (lib/address/), the library that hands each ASan report to the core whose
# thread made it, and the handlers of UBSan's checks, which end the op as a
# violation: an object rather than an archive, so that a sanitizer runtime
# that the compiler puts first on the link line cannot take their place.
# The handlers themselves are not instrumented.
HOST_ASAN_FLAGS = -fsanitize=address -fsanitize-recover=address -fno-omit-frame-pointer
HOST_ADDRESS_OBJECTS = $(HOST_RUNTIME_SOURCES:sdk/host/runtime/%.cpp=sdk/host/obj/address/%.o)
HOST_SANITIZED_SDK = sdk/host/lib/address/libcustomop_host.a sdk/host/lib/address/libcustomop_host_reports.so \
	sdk/host/lib/undefined_handlers.o
HOST_SDK = sdk/host/lib/libcustomop_host.a $(HOST_CORE_OBJECTS) $(HOST_SANITIZED_SDK)
HOST_TESTS = tests/host/test_examples.sh tests/host/test_violations.sh tests/host/test_stack.sh tests/host/test_ops.sh \
	tests/host/test_compile_errors.sh tests/host/test_api.sh tests/host/test_coherence.sh tests/host/test_limits.sh \
	tests/host/test_sanitize.sh tests/host/test_gdb.sh

PROGRAMS += $(HOST_SDK)
TESTS += $(HOST_TESTS)
CLEAN += sdk/host/obj sdk/host/lib tests/host/driver tests/host/sanitized_calls
INSTALL_TARGETS += install-host-sdk

# The access checks run at every load and store of a kernel: without line
# information, gdb's step goes over them into the kernel's next line.
sdk/host/obj/access_checks.o: HOST_SDK_CXXFLAGS += -g0

sdk/host/obj/%.o: sdk/host/runtime/%.cpp
	@mkdir -p sdk/host/obj
	$(CXX) $(HOST_SDK_CXXFLAGS) -MMD -MP -c -o $@ $<

sdk/host/lib/libcustomop_host.a: $(HOST_RUNTIME_OBJECTS)
	@mkdir -p sdk/host/lib
	rm -f $@
	$(AR) rcs $@ $(HOST_RUNTIME_OBJECTS)

sdk/host/obj/address/%.o: sdk/host/runtime/%.cpp
	@mkdir -p sdk/host/obj/address
	$(CXX) $(HOST_SDK_CXXFLAGS) $(HOST_ASAN_FLAGS) -MMD -MP -c -o $@ $<

sdk/host/lib/address/libcustomop_host.a: $(HOST_ADDRESS_OBJECTS)
	@mkdir -p sdk/host/lib/address
	rm -f $@
	$(AR) rcs $@ $(HOST_ADDRESS_OBJECTS)

sdk/host/lib/address/libcustomop_host_reports.so: sdk/host/runtime/asan_reports.cpp sdk/host/runtime/asan_reports.h
	@mkdir -p sdk/host/lib/address
	$(CXX) $(HOST_SDK_CXXFLAGS) -shared -Wl,-soname,libcustomop_host_reports.so -Wl,--no-undefined \
		-o $@ sdk/host/runtime/asan_reports.cpp

sdk/host/lib/undefined_handlers.o: sdk/host/runtime/ubsan_handlers.cpp
	@mkdir -p sdk/host/lib
	$(CXX) $(HOST_SDK_CXXFLAGS) -c -o $@ sdk/host/runtime/ubsan_handlers.cpp

# Each core object carries the gdb pretty-printers (see linked_core.cpp).
HOST_GDB_SCRIPT = sdk/host/gdb/customop_host_printers.py
HOST_CORE_CXXFLAGS = $(HOST_SDK_CXXFLAGS) -DCUSTOMOP_HOST_GDB_SCRIPT='"$(HOST_GDB_SCRIPT)"'

sdk/host/lib/core_cpu%.o: sdk/host/runtime/linked_core.cpp $(HOST_GDB_SCRIPT)
	@mkdir -p sdk/host/lib
	$(CXX) $(HOST_CORE_CXXFLAGS) -DCUSTOMOP_HOST_CORE=$* -c -o $@ sdk/host/runtime/linked_core.cpp

sdk/host/lib/core_single.o: sdk/host/runtime/linked_core.cpp $(HOST_GDB_SCRIPT)
	@mkdir -p sdk/host/lib
	$(CXX) $(HOST_CORE_CXXFLAGS) -DCUSTOMOP_HOST_CORE=-1 -c -o $@ sdk/host/runtime/linked_core.cpp

# The tests' driver: dlopens core libraries and runs an op on them.
tests/host/driver: tests/host/driver.cpp sdk/host/include/neuron/host_abi.h
	$(CXX) -std=c++14 -Wall -Wextra -Wpedantic -Werror -Isdk/host/include $(CXXFLAGS) \
		-o $@ tests/host/driver.cpp -ldl -lpthread

# test_sanitize.sh's program: calls ops through libruncustomop's C API.
tests/host/sanitized_calls: tests/host/sanitized_calls.c libruncustomop.a include/runcustomop.h
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ tests/host/sanitized_calls.c libruncustomop.a \
		$(RCO_LIBS)

$(HOST_TESTS): tests/host/driver $(HOST_SDK)
tests/host/test_sanitize.sh: tests/host/sanitized_calls build-custom-op run-custom-op

install-host-sdk: $(HOST_SDK)
	mkdir -p $(DESTDIR)$(PREFIX)/lib/build-custom-op/sdk/host/lib/address
	cp -R sdk/host/include $(DESTDIR)$(PREFIX)/lib/build-custom-op/sdk/host/
	cp sdk/host/lib/libcustomop_host.a sdk/host/lib/undefined_handlers.o $(HOST_CORE_OBJECTS) \
		$(DESTDIR)$(PREFIX)/lib/build-custom-op/sdk/host/lib/
	cp sdk/host/lib/address/libcustomop_host.a sdk/host/lib/address/libcustomop_host_reports.so \
		$(DESTDIR)$(PREFIX)/lib/build-custom-op/sdk/host/lib/address/
	mkdir -p $(DESTDIR)$(PREFIX)/lib/build-custom-op/sdk/host/gdb
	cp $(HOST_GDB_SCRIPT) $(DESTDIR)$(PREFIX)/lib/build-custom-op/sdk/host/gdb/

.PHONY: install-host-sdk

-include sdk/host/obj/*.d sdk/host/obj/address/*.d
