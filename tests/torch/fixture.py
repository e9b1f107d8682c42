"""fixture.py - what the PyTorch-level tests share: the fixture library's
sources and arguments, the expected schemas, and a fresh bundle directory.

The shape libraries are built once per machine: load() keeps them in its
cache (~/.cache/build-custom-op, or $BUILD_CUSTOM_OP_CACHE), keyed by the
sources' paths and contents, so every test and every run of the suite after
the first finds them built."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'python'))
import tap  # noqa: E402  (puts python/ on sys.path)

# load() keys its cache by the C++ compiler too, and a shape library takes
# about 20 s to compile against libtorch.  The suite runs once more with
# CXX=clang++ (make CC=clang CXX=clang++ test); these tests build with the
# default c++ whatever CXX says, so that every run shares one build of each
# shape library.  The compilers are covered by tests/host and make lint.
os.environ.pop('CXX', None)

TOP = tap.TOP
HERE = os.path.join(TOP, 'tests', 'torch')
FIXTURES = os.path.join(HERE, 'fixtures')
MLP = os.path.join(TOP, 'examples', 'mlp')

# The fixture library: two shape sources, three namespaces' worth of ops.
SHAPES = [os.path.join(FIXTURES, 'shape_ops.cpp'), os.path.join(FIXTURES, 'shape_more.cpp')]
FLAGS = ['-DFIXTURE_FLAG=1']
INCLUDES = [os.path.join(FIXTURES, 'include')]
OTHER_SHAPES = [os.path.join(FIXTURES, 'shape_other.cpp')]
LONG_OP = 'a_name_of_one_hundred_and_forty_bytes_' + 'x' * 102

# (namespace, op, compute function, schema as the original formats it), in
# registration order.
OPS = [
    ('test_ops', 'scale', 'scale',
     'test_ops::scale(Tensor _0, number _1, float _2, int _3) -> (Tensor _0)'),
    ('test_ops', 'row_sums', 'row_sums', 'test_ops::row_sums(Tensor _0) -> (Tensor _0)'),
    ('test_ops', 'fault', 'fault', 'test_ops::fault(Tensor _0, int _1) -> (Tensor _0)'),
    ('test_ops', 'twice', 'twice', 'test_ops::twice(Tensor _0) -> (Tensor _0)'),
    ('test_more', 'negate', 'negate', 'test_more::negate(Tensor _0) -> (Tensor _0)'),
    ('test_more', LONG_OP, 'long_named', f'test_more::{LONG_OP}(Tensor _0) -> (Tensor _0)'),
]


def load(compute_srcs, build_directory=None, **options):
    """custom_op.load() of the fixture library."""
    from build_custom_op import custom_op
    return custom_op.load('fixture', compute_srcs, SHAPES, extra_cflags=FLAGS,
                          extra_include_paths=INCLUDES, build_directory=build_directory,
                          **options)


def running(pid):
    """Whether process pid exists and is not a zombie."""
    try:
        with open(f'/proc/{pid}/stat') as stream:
            return stream.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False


def line_of(path, text):
    """The 1-based number of the line of path that holds text."""
    with open(path) as stream:
        for number, line in enumerate(stream, 1):
            if text in line:
                return number
    raise AssertionError(f'{text!r} is not in {path}')
