# rooms.mk - unit tests of the build-pipeline rooms: exec, depfile, buildlog, state,
# and the build sequence through the C API (included by tests/tests.mk; built
# by its tests/unit/% rule).
ROOM_TESTS = tests/unit/test_exec tests/unit/test_depfile tests/unit/test_buildlog tests/unit/test_state \
	tests/unit/test_build
TESTS += $(ROOM_TESTS)
CLEAN += $(ROOM_TESTS)
