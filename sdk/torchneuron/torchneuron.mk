# torchneuron.mk - the PyTorch level: torchneuron/register.h, the tests of
# build_custom_op.custom_op and the MLP demo (included by Makefile).
TORCH_TESTS = tests/torch/test_archive.py tests/torch/test_register.py \
	tests/torch/test_device.py tests/torch/test_host.py tests/torch/test_mlp.py \
	tests/torch/test_bundle_command.py tests/torch/test_shape_library.py tests/torch/test_sanitize.py \
	tests/torch/test_tracers.py tests/torch/test_autograd_modes.py
TESTS += $(TORCH_TESTS)
INSTALL_TARGETS += install-torchneuron

# The MLP of the official customop_mlp samples, trained with its relu on the
# emulated cores and checked against torch.relu (needs PyTorch).
demo-torch: programs
	sh examples/mlp/demo.sh

# register.h goes under $(INCLUDEDIR), the source of the bridge of host ops
# (compiled against the user's PyTorch when first used) under
# $(DATADIR)/build-custom-op; the installed package records where.
DATADIR ?= $(PREFIX)/share
install-torchneuron: install-python
	mkdir -p $(DESTDIR)$(INCLUDEDIR)/torchneuron $(DESTDIR)$(DATADIR)/build-custom-op
	cp sdk/torchneuron/include/torchneuron/register.h $(DESTDIR)$(INCLUDEDIR)/torchneuron/
	cp sdk/torchneuron/bridge/torch_bridge.cpp $(DESTDIR)$(DATADIR)/build-custom-op/
	sed "s|^_INSTALLED_INCLUDEDIR = '@INCLUDEDIR@'$$|_INSTALLED_INCLUDEDIR = '$(INCLUDEDIR)'|" \
		python/build_custom_op/_shape_library.py \
		>$(DESTDIR)$(PYTHONDIR)/build_custom_op/_shape_library.py
	sed -e "s|^_INSTALLED_INCLUDEDIR = '@INCLUDEDIR@'$$|_INSTALLED_INCLUDEDIR = '$(INCLUDEDIR)'|" \
		-e "s|^_INSTALLED_DATADIR = '@DATADIR@'$$|_INSTALLED_DATADIR = '$(DATADIR)'|" \
		python/build_custom_op/_host_ops.py \
		>$(DESTDIR)$(PYTHONDIR)/build_custom_op/_host_ops.py

.PHONY: demo-torch install-torchneuron

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
