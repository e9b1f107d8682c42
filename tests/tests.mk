# tests.mk - the C unit tests and the end-to-end tests (included by Makefile).
UNIT_TESTS = tests/unit/test_schema tests/unit/test_validate tests/unit/test_codegen \
	tests/unit/test_buffer tests/unit/test_interrupt tests/unit/test_output_file
CLI_TESTS = tests/cli/test_emit.sh tests/cli/test_options.sh tests/cli/test_build_commands.sh \
	tests/cli/test_build_incremental.sh tests/cli/test_build_failures.sh tests/cli/test_build_host.sh
# End to end through the host target: build-custom-op, the host SDK, run-custom-op.
E2E_TESTS = tests/e2e/test_run_examples.sh
TESTS += $(UNIT_TESTS) $(CLI_TESTS) $(E2E_TESTS)
CLEAN += $(UNIT_TESTS)

tests/unit/%: tests/unit/%.c libbuildcustomop.a tests/unit/check.h
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< libbuildcustomop.a

include $(wildcard tests/unit/*.mk)
