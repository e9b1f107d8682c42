# python.mk - the Python module build_custom_op (included by Makefile).
PYTHONDIR ?= $(PREFIX)/lib/python3/dist-packages

TESTS += tests/python/test_compile.py tests/python/test_command.py
INSTALL_TARGETS += install-python

# The installed module looks for the library where make install puts it.
install-python: python/build_custom_op.py
	mkdir -p $(DESTDIR)$(PYTHONDIR)
	sed "s|^_INSTALLED_LIBDIR = '@LIBDIR@'$$|_INSTALLED_LIBDIR = '$(LIBDIR)'|" \
		python/build_custom_op.py >$(DESTDIR)$(PYTHONDIR)/build_custom_op.py

.PHONY: install-python
