"""relu_profile.py - the device-cost profile of the MLP's relu_forward, on the
shapes of the official inference sample ([32, 4096] and [32, 2048]), with
the throughput the cost model gives the whole MLP beside the documented one.

    python3 relu_profile.py BUNDLE VARIANT

BUNDLE is the librelu.so that build.py wrote for VARIANT (element, tcm or
multicore).  The device times are an estimate from the cost model of
run-custom-op(1), not a measurement.
"""
import ctypes
import sys

import torch

import my_ops
import build_custom_op
from build_custom_op import runner

# The documented throughput of each variant, as the cost model names it.
DOCUMENTED = {'element': 'element-accessor sample', 'tcm': 'TCM sample',
              'multicore': '8-core TCM sample'}


def cost_constant(name):
    """A constant of the cost model (rco_cost_model), by name."""
    class Constant(ctypes.Structure):
        _fields_ = [('name', ctypes.c_char_p), ('value', ctypes.c_double),
                    ('unit', ctypes.c_char_p), ('source', ctypes.c_char_p)]
    library = ctypes.CDLL(runner.library_path())
    library.rco_cost_model.restype = ctypes.POINTER(Constant)
    count = ctypes.c_size_t()
    table = library.rco_cost_model(ctypes.byref(count))
    return next(table[i].value for i in range(count.value) if table[i].name.decode() == name)


def main(argv):
    if len(argv) != 2 or argv[1] not in DOCUMENTED:
        sys.stderr.write(f'usage: relu_profile.py BUNDLE {"|".join(DOCUMENTED)}\n')
        return 2
    my_ops.load(argv[0])
    generator = torch.Generator().manual_seed(1)
    inputs = [torch.rand(32, columns, generator=generator) * 2 - 1 for columns in (4096, 2048)]
    with build_custom_op.profile() as profiles:
        for x in inputs:
            torch.ops.my_ops.relu_forward(x)
    for profile in profiles:
        print(profile)
    estimate = sum(profile.estimated_device_us for profile in profiles)
    rest = cost_constant("rest of the sample's MLP")
    print(f'{argv[1]}: relu_forward on [32, 4096] and [32, 2048]: an estimated {estimate:.1f} us '
          f'on the device; with the rest of the MLP ({rest:.0f} us), {1e6 / (rest + estimate):.1f} '
          f'it/s by the model, {cost_constant(DOCUMENTED[argv[1]]):.1f} it/s documented on trn1')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
