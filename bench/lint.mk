# lint.mk - static analysis of src/, run/ and the host SDK's runtime
# (sdk/host/runtime/*.cpp) (included by Makefile).  cppcheck with the checks
# that find bugs (not style), then clang-tidy with the checks listed and
# justified in .clang-tidy.  A finding fails; fix it, or suppress it inline
# with a reason (cppcheck-suppress ID, NOLINT(check)).
CPPCHECK = cppcheck
CLANG_TIDY = clang-tidy
LINT_SOURCES = $(LIBRARY_SOURCES) $(COMMAND_SOURCES) $(RCO_SOURCES) $(RUN_SOURCES)
LINT_CPPFLAGS = -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc -Irun $(RUN_CPPFLAGS)
# cppcheck 2.10 ignores C11's _Noreturn, so it would take the code after
# "if (!p) arena_fail(...)" to run with p NULL; the attribute it knows.
CPPCHECK_NORETURN = '-D_Noreturn=__attribute__((noreturn))'
# The runtime, with the flags it is built with (sdk/host/host.mk).  The core
# object (linked_core.cpp) is built once per core: core 0 stands for them.
LINT_HOST_SOURCES = $(filter-out sdk/host/runtime/linked_core.cpp,$(wildcard sdk/host/runtime/*.cpp))
LINT_HOST_CORE = sdk/host/runtime/linked_core.cpp
LINT_HOST_CORE_FLAGS = $(HOST_CORE_CXXFLAGS) -DCUSTOMOP_HOST_CORE=0
# cppcheck 2.10 forgets [[noreturn]] on a function that also has a GNU
# attribute (neuron_host::violation's format check), so it would take the
# code after "if (!p) violation(...)" to run with p NULL: it sees no GNU
# attributes.
CPPCHECK_CXX_ATTRIBUTES = '-D__attribute__(x)='

lint:
	$(CPPCHECK) --quiet --std=c11 --enable=warning,performance,portability \
		--error-exitcode=1 --inline-suppr $(CPPCHECK_NORETURN) \
		$(LINT_CPPFLAGS) $(LINT_SOURCES)
	$(CPPCHECK) --quiet --language=c++ --std=c++14 --enable=warning,performance,portability \
		--error-exitcode=1 --inline-suppr $(CPPCHECK_CXX_ATTRIBUTES) \
		$(filter -I% -D%,$(HOST_SDK_CXXFLAGS)) $(LINT_HOST_SOURCES)
	$(CPPCHECK) --quiet --language=c++ --std=c++14 --enable=warning,performance,portability \
		--error-exitcode=1 --inline-suppr $(CPPCHECK_CXX_ATTRIBUTES) \
		$(filter -I% -D%,$(LINT_HOST_CORE_FLAGS)) $(LINT_HOST_CORE)
	@# One file per run: clang-tidy 14's va_list check carries state from one
	@# file to the next, and then flags every vprintf call of the second.
	@# The files run side by side, one per CPU.
	@printf '%s\n' $(LINT_SOURCES) | xargs -P "$$(getconf _NPROCESSORS_ONLN)" -n 1 \
		sh -c '$(CLANG_TIDY) --quiet "$$0" -- -std=c11 $(LINT_CPPFLAGS)'
	@printf '%s\n' $(LINT_HOST_SOURCES) | xargs -P "$$(getconf _NPROCESSORS_ONLN)" -n 1 \
		sh -c '$(CLANG_TIDY) --quiet "$$0" -- $(HOST_SDK_CXXFLAGS)'
	$(CLANG_TIDY) --quiet $(LINT_HOST_CORE) -- $(LINT_HOST_CORE_FLAGS)

.PHONY: lint
