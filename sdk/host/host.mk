# host.mk - the host SDK: libcustomop_host.a, the per-core link objects and
# their tests (included by Makefile).  No $(SANITIZE) here: the library is
# linked into libraries built without it (and -Wl,--no-undefined).
HOST_SDK_CXXFLAGS = -std=c++14 -fPIC -fvisibility=hidden -Wall -Wextra -Wpedantic -Werror -Wshadow \
	-Isdk/host/include $(CXXFLAGS)
HOST_RUNTIME_SOURCES = \
	sdk/host/runtime/assert.cpp sdk/host/runtime/elements.cpp sdk/host/runtime/elementwise.cpp sdk/host/runtime/factories.cpp \
	sdk/host/runtime/marshal.cpp sdk/host/runtime/neuron_utils.cpp sdk/host/runtime/op_checks.cpp sdk/host/runtime/print.cpp sdk/host/runtime/process.cpp sdk/host/runtime/putc.cpp \
	sdk/host/runtime/registration.cpp sdk/host/runtime/run.cpp sdk/host/runtime/scalar_type.cpp sdk/host/runtime/signals.cpp \
	sdk/host/runtime/stack_switch.cpp sdk/host/runtime/stacks.cpp sdk/host/runtime/streams.cpp sdk/host/runtime/tcm.cpp \
	sdk/host/runtime/tensor.cpp sdk/host/runtime/violation.cpp
HOST_RUNTIME_OBJECTS = $(HOST_RUNTIME_SOURCES:sdk/host/runtime/%.cpp=sdk/host/obj/%.o)
HOST_CORE_OBJECTS = sdk/host/lib/core_cpu0.o sdk/host/lib/core_cpu1.o sdk/host/lib/core_cpu2.o \
	sdk/host/lib/core_cpu3.o sdk/host/lib/core_cpu4.o sdk/host/lib/core_cpu5.o sdk/host/lib/core_cpu6.o \
	sdk/host/lib/core_cpu7.o sdk/host/lib/core_single.o
HOST_SDK = sdk/host/lib/libcustomop_host.a $(HOST_CORE_OBJECTS)
HOST_TESTS = tests/host/test_examples.sh tests/host/test_violations.sh tests/host/test_stack.sh tests/host/test_ops.sh \
	tests/host/test_compile_errors.sh tests/host/test_api.sh tests/host/test_coherence.sh tests/host/test_limits.sh

PROGRAMS += $(HOST_SDK)
TESTS += $(HOST_TESTS)
CLEAN += sdk/host/obj sdk/host/lib tests/host/driver
INSTALL_TARGETS += install-host-sdk

sdk/host/obj/%.o: sdk/host/runtime/%.cpp
	@mkdir -p sdk/host/obj
	$(CXX) $(HOST_SDK_CXXFLAGS) -MMD -MP -c -o $@ $<

sdk/host/lib/libcustomop_host.a: $(HOST_RUNTIME_OBJECTS)
	@mkdir -p sdk/host/lib
	rm -f $@
	$(AR) rcs $@ $(HOST_RUNTIME_OBJECTS)

sdk/host/lib/core_cpu%.o: sdk/host/runtime/linked_core.cpp
	@mkdir -p sdk/host/lib
	$(CXX) $(HOST_SDK_CXXFLAGS) -DCUSTOMOP_HOST_CORE=$* -c -o $@ sdk/host/runtime/linked_core.cpp

sdk/host/lib/core_single.o: sdk/host/runtime/linked_core.cpp
	@mkdir -p sdk/host/lib
	$(CXX) $(HOST_SDK_CXXFLAGS) -DCUSTOMOP_HOST_CORE=-1 -c -o $@ sdk/host/runtime/linked_core.cpp

# The tests' driver: dlopens core libraries and runs an op on them.
tests/host/driver: tests/host/driver.cpp sdk/host/include/neuron/host_abi.h
	$(CXX) -std=c++14 -Wall -Wextra -Wpedantic -Werror -Isdk/host/include $(CXXFLAGS) \
		-o $@ tests/host/driver.cpp -ldl -lpthread

$(HOST_TESTS): tests/host/driver $(HOST_SDK)

install-host-sdk: $(HOST_SDK)
	mkdir -p $(DESTDIR)$(PREFIX)/lib/build-custom-op/sdk/host/lib
	cp -R sdk/host/include $(DESTDIR)$(PREFIX)/lib/build-custom-op/sdk/host/
	cp $(HOST_SDK) $(DESTDIR)$(PREFIX)/lib/build-custom-op/sdk/host/lib/

.PHONY: install-host-sdk

-include sdk/host/obj/*.d
