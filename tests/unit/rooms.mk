# rooms.mk - unit tests of the build-pipeline rooms: exec, depfile, buildlog
# (included by tests/tests.mk; built by its tests/unit/% rule).
ROOM_TESTS = tests/unit/test_exec tests/unit/test_depfile tests/unit/test_buildlog
TESTS += $(ROOM_TESTS)
CLEAN += $(ROOM_TESTS)
