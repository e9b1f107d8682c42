# sdk.sh - source it to get a fake Neuron SDK and the fake tools on PATH.
# Sets $SDK; needs $WORK and $TOP (see tests/cli/lib.sh).
SDK=$WORK/sdk
mkdir -p "$SDK/neuron" "$SDK/c10/lib" "$SDK/torch/include" "$SDK/c10/include" \
	"$SDK/lsp_fll_load_cpus/lsp_fll_load_cpu_single"
for core in 0 1 2 3 4 5 6 7; do mkdir -p "$SDK/lsp_fll_load_cpus/lsp_fll_load_cpu$core"; done
: >"$SDK/neuron/wrapper_api.h"
: >"$SDK/neuron/libneuroncustomop.a"
: >"$SDK/neuron/libcweak.a"
: >"$SDK/c10/lib/libc10.a"
PATH=$TOP/tests/fake:$PATH
NEURON_CUSTOM_OP=$SDK
export PATH NEURON_CUSTOM_OP
unset Q7_CORE Q7_TOOLS LM_LICENSE_FILE XTENSA_TOOLS CUSTOM_OP_LAUNCHER
