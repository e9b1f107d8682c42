# build-custom-op - see README.md.  POSIX make plus GNU make's include.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig

CC ?= cc
CXX ?= c++
CFLAGS ?= -O2 -g
CXXFLAGS ?= -O2 -g
WARNINGS = -Wall -Wextra -Wpedantic -Werror -Wshadow -Wmissing-prototypes -Wstrict-prototypes
ALL_CFLAGS = -std=c11 $(WARNINGS) -fPIC $(CFLAGS) $(SANITIZE)
ALL_CPPFLAGS = -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc $(CPPFLAGS)
ALL_LDFLAGS = $(LDFLAGS) $(SANITIZE)

LIBRARY_SOURCES = \
	src/arena.c src/buffer.c src/diag.c src/fsutil.c \
	src/schema.c src/validate.c src/codegen.c \
	src/target.c src/plan.c src/state.c src/depfile.c src/buildlog.c \
	src/exec.c src/compdb.c src/build.c
LIBRARY_OBJECTS = $(LIBRARY_SOURCES:src/%.c=obj/%.o)

# Fragments add to these: programs to build, tests to run, files to clean.
PROGRAMS = build-custom-op libbuildcustomop.a libbuildcustomop.so
TESTS =
CLEAN =
INSTALL_TARGETS =

all: programs

include tests/tests.mk
include $(wildcard sdk/host/host.mk run/run.mk python/python.mk)

programs: $(PROGRAMS)

obj/%.o: src/%.c
	@mkdir -p obj
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

libbuildcustomop.a: $(LIBRARY_OBJECTS)
	rm -f $@
	$(AR) rcs $@ $(LIBRARY_OBJECTS)

libbuildcustomop.so: $(LIBRARY_OBJECTS)
	$(CC) -shared -Wl,-soname,libbuildcustomop.so.0 $(ALL_LDFLAGS) -o $@ $(LIBRARY_OBJECTS)

build-custom-op: obj/main.o libbuildcustomop.a
	$(CC) $(ALL_LDFLAGS) -o $@ obj/main.o libbuildcustomop.a

buildcustomop.pc: Makefile
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCLUDEDIR)' '' \
		'Name: buildcustomop' \
		'Description: build front-end for GPSIMD custom operators' \
		'Version: 0.1.0' \
		'Libs: -L$${libdir} -lbuildcustomop' \
		'Cflags: -I$${includedir}' >$@

test: programs $(TESTS)
	sh tests/run-tests.sh $(TESTS)

install: programs buildcustomop.pc $(INSTALL_TARGETS)
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(PKGCONFIGDIR)
	cp build-custom-op $(DESTDIR)$(BINDIR)/
	cp libbuildcustomop.a $(DESTDIR)$(LIBDIR)/
	cp libbuildcustomop.so $(DESTDIR)$(LIBDIR)/libbuildcustomop.so.0
	ln -sf libbuildcustomop.so.0 $(DESTDIR)$(LIBDIR)/libbuildcustomop.so
	cp include/buildcustomop.h $(DESTDIR)$(INCLUDEDIR)/
	cp man/build-custom-op.1 $(DESTDIR)$(MANDIR)/man1/
	cp buildcustomop.pc $(DESTDIR)$(PKGCONFIGDIR)/

clean:
	rm -rf obj build-custom-op libbuildcustomop.a libbuildcustomop.so buildcustomop.pc $(CLEAN)

.PHONY: all programs test install clean

-include obj/*.d
