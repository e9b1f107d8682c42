# python.mk - the Python package build_custom_op (included by Makefile).
PYTHONDIR ?= $(PREFIX)/lib/python3/dist-packages
PYTHON_PACKAGE_FILES = $(wildcard python/build_custom_op/*.py)

TESTS += tests/python/test_compile.py tests/python/test_command.py
INSTALL_TARGETS += install-python

# The installed package looks for the libraries and the program where make
# install puts them.
install-python: $(PYTHON_PACKAGE_FILES)
	rm -rf $(DESTDIR)$(PYTHONDIR)/build_custom_op
	mkdir -p $(DESTDIR)$(PYTHONDIR)/build_custom_op
	cp $(PYTHON_PACKAGE_FILES) $(DESTDIR)$(PYTHONDIR)/build_custom_op/
	sed -e "s|^_INSTALLED_LIBDIR = '@LIBDIR@'$$|_INSTALLED_LIBDIR = '$(LIBDIR)'|" \
		-e "s|^_INSTALLED_BINDIR = '@BINDIR@'$$|_INSTALLED_BINDIR = '$(BINDIR)'|" \
		python/build_custom_op/_library.py >$(DESTDIR)$(PYTHONDIR)/build_custom_op/_library.py

.PHONY: install-python
