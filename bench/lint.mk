# lint.mk - static analysis of src/ and run/ (included by Makefile).  cppcheck with
# the checks that find bugs (not style), then clang-tidy with the checks
# listed and justified in .clang-tidy.  A finding fails; fix it, or suppress
# it inline with a reason (cppcheck-suppress ID, NOLINT(check)).
CPPCHECK = cppcheck
CLANG_TIDY = clang-tidy
LINT_SOURCES = $(LIBRARY_SOURCES) $(COMMAND_SOURCES) $(RCO_SOURCES) $(RUN_SOURCES)
LINT_CPPFLAGS = -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc -Irun $(RUN_CPPFLAGS)
# cppcheck 2.10 ignores C11's _Noreturn, so it would take the code after
# "if (!p) arena_fail(...)" to run with p NULL; the attribute it knows.
CPPCHECK_NORETURN = '-D_Noreturn=__attribute__((noreturn))'

lint:
	$(CPPCHECK) --quiet --std=c11 --enable=warning,performance,portability \
		--error-exitcode=1 --inline-suppr $(CPPCHECK_NORETURN) \
		$(LINT_CPPFLAGS) $(LINT_SOURCES)
	@# One file per run: clang-tidy 14's va_list check carries state from one
	@# file to the next, and then flags every vprintf call of the second.
	@# The files run side by side, one per CPU.
	@printf '%s\n' $(LINT_SOURCES) | xargs -P "$$(getconf _NPROCESSORS_ONLN)" -n 1 \
		sh -c '$(CLANG_TIDY) --quiet "$$0" -- -std=c11 $(LINT_CPPFLAGS)'

.PHONY: lint
