# torchneuron.mk - the PyTorch level: torchneuron/register.h, the tests of
# build_custom_op.custom_op and the MLP demo (included by Makefile).
TORCH_TESTS = tests/torch/test_archive.py tests/torch/test_register.py \
	tests/torch/test_device.py tests/torch/test_host.py tests/torch/test_mlp.py \
	tests/torch/test_bundle_command.py tests/torch/test_shape_library.py tests/torch/test_sanitize.py \
	tests/torch/test_cache.py tests/torch/test_sweep.py tests/torch/test_op_names.py \
	tests/torch/test_tracers.py tests/torch/test_autograd_modes.py
TESTS += $(TORCH_TESTS)

# The PyTorch tests, for a run of their own (.ci/run runs them again against
# the package pip installed).
print-torch-tests:
	@echo $(TORCH_TESTS)

.PHONY: print-torch-tests
INSTALL_TARGETS += install-torchneuron

# The MLP of the official customop_mlp samples, trained with its relu on the
# emulated cores and checked against torch.relu (needs PyTorch).
demo-torch: programs
	sh examples/mlp/demo.sh

# register.h goes under $(INCLUDEDIR), the source of the bridge of host ops
# (compiled against the user's PyTorch when first used) under
# $(DATADIR)/build-custom-op; the installed package finds them from its
# _installation.py (python/python.mk).
install-torchneuron: install-python
	mkdir -p $(DESTDIR)$(INCLUDEDIR)/torchneuron $(DESTDIR)$(DATADIR)/build-custom-op
	cp sdk/torchneuron/include/torchneuron/register.h $(DESTDIR)$(INCLUDEDIR)/torchneuron/
	cp sdk/torchneuron/bridge/torch_bridge.cpp $(DESTDIR)$(DATADIR)/build-custom-op/

.PHONY: demo-torch install-torchneuron

# The torch kit (python/build_custom_op/_torch_kit.py): cpp_extension's
# flags, a precompiled <torch/torch.h> and the bridge of host ops, made for
# the PyTorch of $(TORCH_PYTHON) (default: the interpreter the tests use,
# sdk/torchneuron/torch-python.sh), so that a first load() does not
# compile against PyTorch's headers from scratch.  Without PyTorch there
# is none, and load() compiles as it goes.  make makes it once (then when
# the bridge changes); make torch-kit makes it again for the PyTorch of
# TORCH_PYTHON (a kit per PyTorch: they stay side by side in torch-kit/,
# which make clean keeps and make distclean removes).  make install
# installs the last one made; TORCH_KIT=no leaves it out of both.
TORCH_KIT ?= yes
TORCH_KIT_STAMP = torch-kit/.made
TORCH_KIT_INPUTS = sdk/torchneuron/bridge/torch_bridge.cpp include/runcustomop.h \
	python/build_custom_op/_torch_kit.py python/build_custom_op/_host_ops.py
ifeq ($(TORCH_KIT),yes)
all: $(TORCH_KIT_STAMP)
$(TORCH_TESTS) bench-torch: $(TORCH_KIT_STAMP)
# make check-asan's copy of the tree uses this tree's kit.
check-asan: $(TORCH_KIT_STAMP)
INSTALL_TARGETS += install-torch-kit
endif

$(TORCH_KIT_STAMP): $(TORCH_KIT_INPUTS)
	@$(MAKE) --no-print-directory torch-kit

torch-kit:
	@python=$${TORCH_PYTHON:-$$(sh sdk/torchneuron/torch-python.sh 'the torch kit' 2>/dev/null)}; \
	mkdir -p torch-kit; \
	if [ -z "$$python" ]; then \
		echo "no PyTorch here: no torch kit (load() compiles against PyTorch as it goes)"; \
		: >$(TORCH_KIT_STAMP); \
	else \
		echo "making the torch kit for the PyTorch of $$python (a minute or two, once)"; \
		PYTHONPATH=python "$$python" -m build_custom_op._torch_kit torch-kit \
			--bridge sdk/torchneuron/bridge/torch_bridge.cpp include >$(TORCH_KIT_STAMP).new && \
		mv $(TORCH_KIT_STAMP).new $(TORCH_KIT_STAMP); \
	fi

install-torch-kit: $(TORCH_KIT_STAMP)
	@kit=$$(cat $(TORCH_KIT_STAMP)); \
	if [ -n "$$kit" ]; then \
		mkdir -p $(DESTDIR)$(PKGLIBDIR)/torch-kit && \
		rm -rf "$(DESTDIR)$(PKGLIBDIR)/torch-kit/$${kit##*/}" && \
		cp -R "$$kit" $(DESTDIR)$(PKGLIBDIR)/torch-kit/; \
	fi

distclean: clean
	rm -rf torch-kit

.PHONY: torch-kit install-torch-kit distclean

# The PyTorch-level benchmarks (bench/torch_bench.py; results in
# bench/README.md), also run by make bench.
bench-torch: programs
	python3 bench/torch_bench.py $(BENCH_FLAGS)

bench: bench-torch

.PHONY: bench-torch

# make lint also compiles register.h and the bridge with the warnings of the
# project's code.
lint: lint-torchneuron
lint-torchneuron:
	sh sdk/torchneuron/check-sources.sh

.PHONY: lint-torchneuron
