# fuzz.mk - libFuzzer harnesses (included by Makefile).  `make fuzz` builds
# them with clang, ASan and UBSan into obj/fuzz and runs each for
# FUZZ_SECONDS on a scratch copy of its seed corpus; see tests/fuzz/README.md.
FUZZ_CC = clang
FUZZ_SECONDS = 60
FUZZ_TIMEOUT = 10
FUZZ_RSS_MB = 2048
FUZZ_HARNESSES = schema depfile buildlog npy wrapper words
FUZZ_SANITIZE = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS = -std=c11 $(WARNINGS) -O1 -g $(FUZZ_SANITIZE)
FUZZ_CPPFLAGS = -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc -Irun -Itests/fuzz \
	-DFUZZ_STUB_DIR='"$(CURDIR)/tests/fuzz/stub"'
FUZZ_LIBRARY_OBJECTS = $(LIBRARY_SOURCES:src/%.c=obj/fuzz/lib/%.o)
FUZZ_PROGRAMS = $(FUZZ_HARNESSES:%=obj/fuzz/fuzz_%)

obj/fuzz/lib/%.o: src/%.c
	@mkdir -p obj/fuzz/lib
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

obj/fuzz/lib/npy.o obj/fuzz/lib/errors.o obj/fuzz/lib/output.o: obj/fuzz/lib/%.o: run/%.c
	@mkdir -p obj/fuzz/lib
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

obj/fuzz/fuzz_%.o: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h
	@mkdir -p obj/fuzz
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer -MMD -MP -c -o $@ $<

# run/npy.c writes its files through run/output.c and src/output_file.c, and
# reports errors through run/errors.c.
FUZZ_NPY_OBJECTS = obj/fuzz/fuzz_npy.o obj/fuzz/lib/npy.o obj/fuzz/lib/errors.o \
	obj/fuzz/lib/output.o obj/fuzz/lib/output_file.o obj/fuzz/lib/diag.o obj/fuzz/lib/arena.o
obj/fuzz/fuzz_npy: $(FUZZ_NPY_OBJECTS)
	$(FUZZ_CC) $(FUZZ_SANITIZE) -fsanitize=fuzzer -o $@ $(FUZZ_NPY_OBJECTS) -lm

obj/fuzz/fuzz_%: obj/fuzz/fuzz_%.o $(FUZZ_LIBRARY_OBJECTS)
	$(FUZZ_CC) $(FUZZ_SANITIZE) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIBRARY_OBJECTS)

fuzz-build: $(FUZZ_PROGRAMS)

# Every harness runs even when an earlier one fails; then any failure fails.
fuzz: fuzz-build
	sh tests/fuzz/run-fuzz.sh $(FUZZ_SECONDS) $(FUZZ_TIMEOUT) $(FUZZ_RSS_MB) $(FUZZ_HARNESSES)

.PHONY: fuzz fuzz-build

# Keep the objects that pattern chains would delete, so a rebuild is quick.
.SECONDARY: $(FUZZ_LIBRARY_OBJECTS) obj/fuzz/lib/npy.o obj/fuzz/lib/errors.o obj/fuzz/lib/output.o $(FUZZ_HARNESSES:%=obj/fuzz/fuzz_%.o)
-include obj/fuzz/*.d obj/fuzz/lib/*.d
