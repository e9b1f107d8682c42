# tests.mk - the C unit tests and the end-to-end tests (included by Makefile).
UNIT_TESTS = tests/unit/test_schema tests/unit/test_validate tests/unit/test_codegen \
	tests/unit/test_buffer tests/unit/test_arena tests/unit/test_interrupt tests/unit/test_output_file \
	tests/unit/test_shell_words tests/unit/test_library_id
CLI_TESTS = tests/cli/test_emit.sh tests/cli/test_options.sh tests/cli/test_build_commands.sh \
	tests/cli/test_build_incremental.sh tests/cli/test_build_failures.sh tests/cli/test_build_host.sh \
	tests/cli/test_standard_streams.sh tests/cli/test_build_dir.sh tests/cli/test_inputs.sh \
	tests/cli/test_op_names.sh tests/cli/test_version.sh
# End to end through the host target: build-custom-op, the host SDK, run-custom-op;
# the compiles through a real distccd and a real ccache; and make demo.
E2E_TESTS = tests/e2e/test_run_examples.sh tests/e2e/test_distcc.sh tests/e2e/test_ccache.sh \
	tests/e2e/test_demo.sh
# The test runner itself (and test_exec under nohup).
RUNNER_TESTS = tests/cli/test_run_tests.sh
# docs/tutorial.md, run as written (needs PyTorch); the entry documents' sizes.
DOCS_TESTS = tests/docs/test_tutorial.py tests/docs/test_sizes.sh
TESTS += $(UNIT_TESTS) $(CLI_TESTS) $(E2E_TESTS) $(RUNNER_TESTS) $(DOCS_TESTS)
CLEAN += $(UNIT_TESTS)

tests/unit/%: tests/unit/%.c libbuildcustomop.a tests/unit/check.h
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< libbuildcustomop.a

include $(wildcard tests/unit/*.mk)
