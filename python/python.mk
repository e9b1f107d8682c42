# python.mk - the Python package build_custom_op (included by Makefile).
PYTHONDIR ?= $(PREFIX)/lib/python3/dist-packages
PYTHON_PACKAGE_FILES = $(wildcard python/build_custom_op/*.py)

TESTS += tests/python/test_compile.py tests/python/test_command.py
# The ctypes structures of the package against the C headers they copy.
TESTS += tests/python/test_layouts.py
# No import cycle among the package's modules, none shadowed.
TESTS += tests/python/test_package.py
# Digests of files known by their stat fingerprints.
TESTS += tests/python/test_fingerprint.py
INSTALL_TARGETS += install-python

# The installed package finds the programs, libraries, headers and data
# through _installation.py: where this install puts each, relative to the
# package (python/installation.py).  DATADIR and PKGLIBDIR are the
# torchneuron files' and the host SDK's (sdk/torchneuron/torchneuron.mk,
# sdk/host/host.mk).
DATADIR ?= $(PREFIX)/share
PKGLIBDIR = $(PREFIX)/lib/build-custom-op
install-python: $(PYTHON_PACKAGE_FILES) python/installation.py
	rm -rf $(DESTDIR)$(PYTHONDIR)/build_custom_op
	mkdir -p $(DESTDIR)$(PYTHONDIR)/build_custom_op
	cp $(PYTHON_PACKAGE_FILES) $(DESTDIR)$(PYTHONDIR)/build_custom_op/
	python3 python/installation.py $(DESTDIR)$(PYTHONDIR)/build_custom_op/_installation.py \
		$(PYTHONDIR)/build_custom_op BINDIR=$(BINDIR) LIBDIR=$(LIBDIR) \
		INCLUDEDIR=$(INCLUDEDIR) DATADIR=$(DATADIR) PKGLIBDIR=$(PKGLIBDIR)

.PHONY: install-python
