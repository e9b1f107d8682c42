# build-custom-op - see README.md.  POSIX make plus GNU make's include.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig

# The version has one owner: BCO_VERSION in include/buildcustomop.h
# (tests/cli/test_version.sh checks every other place that states it).
VERSION := $(shell sed -n 's/^\#define BCO_VERSION "\(.*\)"$$/\1/p' include/buildcustomop.h)

CC ?= cc
CXX ?= c++
CFLAGS ?= -O2 -g
CXXFLAGS ?= -O2 -g
WARNINGS = -Wall -Wextra -Wpedantic -Werror -Wshadow -Wmissing-prototypes -Wstrict-prototypes
ALL_CFLAGS = -std=c11 $(WARNINGS) -fPIC $(CFLAGS) $(SANITIZE)
ALL_CPPFLAGS = -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc $(CPPFLAGS)
# The library serialises its signal state with a mutex.
ALL_LDFLAGS = $(LDFLAGS) -pthread $(SANITIZE)

LIBRARY_SOURCES = \
	src/arena.c src/buffer.c src/diag.c src/fsutil.c src/output_file.c \
	src/schema.c src/validate.c src/codegen.c src/inputs.c src/shell_words.c \
	src/library_id.c src/opsrecord.c src/sanitize.c \
	src/target.c src/plan.c src/state.c src/depfile.c src/buildlog.c \
	src/interrupt.c src/exec.c src/compdb.c src/build.c
LIBRARY_OBJECTS = $(LIBRARY_SOURCES:src/%.c=obj/%.o)
# The command's own front-end, on top of the library.
COMMAND_SOURCES = src/main.c src/console.c src/bundle_command.c src/program.c
COMMAND_OBJECTS = $(COMMAND_SOURCES:src/%.c=obj/%.o)

# Fragments add to these: programs to build, tests to run, files to clean.
PROGRAMS = build-custom-op libbuildcustomop.a libbuildcustomop.so
TESTS =
CLEAN =
# Scripts that also run under valgrind (make check-valgrind), and what they need.
VALGRIND_TESTS =
VALGRIND_PREREQUISITES =
INSTALL_TARGETS =

all: programs

include tests/tests.mk
include $(wildcard sdk/host/host.mk run/run.mk python/python.mk sdk/torchneuron/torchneuron.mk tests/fuzz/fuzz.mk bench/bench.mk bench/lint.mk)

programs: $(PROGRAMS)

obj/%.o: src/%.c
	@mkdir -p obj
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

libbuildcustomop.a: $(LIBRARY_OBJECTS)
	rm -f $@
	$(AR) rcs $@ $(LIBRARY_OBJECTS)

libbuildcustomop.so: $(LIBRARY_OBJECTS)
	$(CC) -shared -Wl,-soname,libbuildcustomop.so.0 $(ALL_LDFLAGS) -o $@ $(LIBRARY_OBJECTS)

build-custom-op: $(COMMAND_OBJECTS) libbuildcustomop.a
	$(CC) $(ALL_LDFLAGS) -o $@ $(COMMAND_OBJECTS) libbuildcustomop.a

# Builds the multicore relu example for this machine and runs it on eight
# emulated cores (examples/demo.sh).
demo: programs
	sh examples/demo.sh

test: programs $(TESTS)
	sh tests/run-tests.sh $(TESTS)

install: programs $(INSTALL_TARGETS)
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(PKGCONFIGDIR)
	cp build-custom-op $(DESTDIR)$(BINDIR)/
	cp libbuildcustomop.a $(DESTDIR)$(LIBDIR)/
	cp libbuildcustomop.so $(DESTDIR)$(LIBDIR)/libbuildcustomop.so.0
	ln -sf libbuildcustomop.so.0 $(DESTDIR)$(LIBDIR)/libbuildcustomop.so
	cp include/buildcustomop.h $(DESTDIR)$(INCLUDEDIR)/
	cp man/build-custom-op.1 $(DESTDIR)$(MANDIR)/man1/
	# Written where it is installed, for this PREFIX: a copy made for an
	# earlier PREFIX would point pkg-config there.
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCLUDEDIR)' '' \
		'Name: buildcustomop' \
		'Description: build front-end for GPSIMD custom operators' \
		'Version: $(VERSION)' \
		'Libs: -L$${libdir} -lbuildcustomop' \
		'Libs.private: -pthread' \
		'Cflags: -I$${includedir}' >$(DESTDIR)$(PKGCONFIGDIR)/buildcustomop.pc

# A Debian package of whatever make install installs, in /usr:
# build-custom-op_VERSION_ARCH.deb here (packaging/build-deb.sh; needs
# dpkg-dev).  make check-package also lints it, installs it on this machine
# (as root, with dpkg -i), runs the installed tools and Python package from
# an empty directory, and removes it (tests/package/test_installed.sh).
deb: programs
	sh packaging/build-deb.sh $(MAKE)

check-package: deb
	sh tests/package/lint.sh build-custom-op_*.deb
	sh tests/run-tests.sh tests/package/test_installed.sh

# The whole suite with AddressSanitizer and UndefinedBehaviorSanitizer in
# every C object; any report fails.  Python loads the sanitized library, so
# it gets the runtimes preloaded (and no leak check of the interpreter), and
# no quarantine, so freed memory is reused as without ASan and the memory
# test still measures growth.  It builds and runs in a copy of the tree of
# its own (tests/copy-tree.sh), kept between runs: the tree's own build
# stays as it is, and a second run rebuilds only what changed.  The copy
# uses the tree's torch kit rather than making its own.
SANITIZERS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
ASAN_TREE = build/asan
check-asan:
	sh tests/copy-tree.sh $(ASAN_TREE)
	BUILD_CUSTOM_OP_TORCH_KIT=$(CURDIR)/torch-kit $(MAKE) -C $(ASAN_TREE) TORCH_KIT=no SANITIZE="$(SANITIZERS)" \
		TEST_TIMEOUT=1800 PYTHON_TEST_ENV="LD_PRELOAD=$$($(CC) -print-file-name=libasan.so):$$($(CC) -print-file-name=libubsan.so) ASAN_OPTIONS=detect_leaks=0:quarantine_size_mb=0" \
		test

# The end-to-end tests with build-custom-op (and, in the scripts listed in
# VALGRIND_TESTS, run-custom-op) under valgrind memcheck: any invalid access
# or definite or indirect leak fails.  A fresh build with DWARF 4, which
# every valgrind reads, in a copy of the tree of its own (as check-asan).
VALGRIND_LOGS = obj/valgrind
# --max-stackframe: the host runtime switches to stacks that have a 1 MiB
# guard below them; under 1 MiB, each switch is seen as one, not as a huge
# frame (which would make the kernel's reads of its own stack look invalid).
VALGRIND = valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite,indirect \
	--max-stackframe=1000000 --error-exitcode=99 --log-file=$(CURDIR)/$(VALGRIND_LOGS)/%p.log
VALGRIND_TREE = build/valgrind
check-valgrind:
	sh tests/copy-tree.sh $(VALGRIND_TREE)
	$(MAKE) -C $(VALGRIND_TREE) TORCH_KIT=no CFLAGS="-O2 -gdwarf-4" valgrind-in-this-tree

# What check-valgrind runs in its copy of the tree.
valgrind-in-this-tree: programs $(VALGRIND_PREREQUISITES)
	rm -rf $(VALGRIND_LOGS)
	mkdir -p $(VALGRIND_LOGS)
	BCO_RUNNER="$(VALGRIND)" sh tests/run-tests.sh $(CLI_TESTS) $(VALGRIND_TESTS); status=$$?; \
	runs=$$(ls $(VALGRIND_LOGS) | wc -l); \
	for log in $(VALGRIND_LOGS)/*.log; do \
		if [ -s "$$log" ]; then echo "valgrind reported:"; cat "$$log"; status=1; fi; \
	done; \
	[ $$status = 0 ] && echo "valgrind: no errors and no leaks in $$runs runs"; \
	exit $$status

clean:
	rm -rf obj build-custom-op libbuildcustomop.a libbuildcustomop.so build-custom-op_*.deb $(CLEAN)

.PHONY: all programs demo test install deb check-package clean check-asan check-valgrind \
	valgrind-in-this-tree

-include obj/*.d
