"""build.py - builds the MLP's relu ops for this machine's emulated GPSIMD
cores: the shape library, the compute library of one kernel variant, and
the bundle BUILD_DIR/librelu.so.

    python3 build.py [element|tcm|multicore] [BUILD_DIR]

element: one core, element by element (accessor); tcm: one core, through
TCM buffers; multicore: eight cores, each writing its share straight into
the output (get_dst_tensor).  BUILD_DIR defaults to build/mlp-VARIANT.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# From the source tree, the package next to this example.
sys.path.insert(0, os.path.join(HERE, '..', '..', 'python'))
from build_custom_op import custom_op  # noqa: E402

VARIANTS = ('element', 'tcm', 'multicore')


def build(variant, build_directory, verbose=False):
    """Builds variant into build_directory; returns the bundle's path."""
    custom_op.load(
        name='relu',
        compute_srcs=[os.path.join(HERE, variant, 'relu.cpp')],
        shape_srcs=[os.path.join(HERE, 'shape.cpp')],
        build_directory=build_directory,
        multicore=variant == 'multicore',
        verbose=verbose,
        target='host',
    )
    return os.path.join(build_directory, 'librelu.so')


def main(argv):
    variant = argv[0] if argv else 'element'
    if variant not in VARIANTS or len(argv) > 2:
        sys.stderr.write(f'usage: build.py [{"|".join(VARIANTS)}] [BUILD_DIR]\n')
        return 2
    build_directory = argv[1] if len(argv) > 1 else os.path.join('build', f'mlp-{variant}')
    print(build(variant, build_directory))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
