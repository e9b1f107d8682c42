"""fixture.py - what the PyTorch-level tests share: the fixture library's
sources and arguments, the expected schemas, and a fresh bundle directory.

The shape libraries are built once per machine: load() keeps them in its
cache (~/.cache/build-custom-op, or $BUILD_CUSTOM_OP_CACHE), keyed by the
sources' paths and contents, so every test and every run of the suite after
the first finds them built."""

import os
import shutil
import sys
import tempfile

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


_module = {}


def enter_work_directory(prefix):
    """For a test module's setUpModule: a new work directory, with
    BUILD_CUSTOM_OP_BUNDLES in it and CUSTOM_OP_TIMEOUT unset; returns it.
    leave_work_directory() removes it and puts the environment back."""
    work = _module['work'] = tempfile.mkdtemp(prefix=prefix)
    _module['environment'] = dict(os.environ)
    os.environ['BUILD_CUSTOM_OP_BUNDLES'] = os.path.join(work, 'bundles')
    os.environ.pop('CUSTOM_OP_TIMEOUT', None)
    return work


def work_directory():
    """The test module's work directory (see enter_work_directory)."""
    return _module['work']


def leave_work_directory():
    shutil.rmtree(_module['work'], ignore_errors=True)
    os.environ.clear()
    os.environ.update(_module['environment'])


class SameBits:
    """assertSameBits for a TestCase: same dtype, shape and values."""

    def assertSameBits(self, actual, expected):
        import torch
        self.assertEqual(actual.dtype, expected.dtype)
        self.assertEqual(tuple(actual.shape), tuple(expected.shape))
        self.assertTrue(torch.equal(actual, expected), f'{actual} != {expected}')


def load_examples_for_the_host(work):
    """The fixture library (ops.cpp) and examples/mlp's relu (the element
    variant) built for the host into work/fixture and work/mlp, and
    registered."""
    from build_custom_op import custom_op
    load([os.path.join(FIXTURES, 'ops.cpp')], os.path.join(work, 'fixture'), target='host')
    custom_op.load('relu', [os.path.join(MLP, 'element', 'relu.cpp')],
                   [os.path.join(MLP, 'shape.cpp')], build_directory=os.path.join(work, 'mlp'),
                   target='host')


def transform(name):
    """torch.func's transform name (functorch's on PyTorch 1.13)."""
    import torch
    if hasattr(torch, 'func'):
        return getattr(torch.func, name)
    import functorch
    return getattr(functorch, name)


def torch_version():
    import torch
    return tuple(int(part) for part in torch.__version__.split('+')[0].split('.')[:2])


def reverse_refusal(op, argument=1):
    """What a call on an input that requires grad raises."""
    if torch_version() >= (2, 4):
        todo = ('give it a derivative with torch.library.register_autograd, call it in the '
                'forward of a torch.autograd.Function whose backward computes the gradient, '
                'or call it under torch.no_grad() when no gradient is needed')
    else:
        todo = ('call it in the forward of a torch.autograd.Function whose backward computes '
                'the gradient, or under torch.no_grad() when no gradient is needed')
    return (f'{op}: argument {argument} requires grad, and {op} has no derivative, so '
            f'autograd cannot go through it: {todo}')


def forward_refusal(op, argument=1):
    """What a call on an input that has a forward-mode tangent raises."""
    return (f'{op}: argument {argument} has a forward-mode tangent (a dual tensor of '
            'torch.autograd.forward_ad, or an input of jvp or jacfwd), and '
            f'{op} has no forward-mode derivative, so forward-mode AD cannot go through it: '
            'call it in a torch.autograd.Function whose jvp computes the tangent, or pass '
            'the primal alone (torch.autograd.forward_ad.unpack_dual(x).primal) when no '
            'tangent is needed')


def files_read_again(test):
    """The paths build_custom_op reads and hashes from now on, in a list that
    grows (each call of the fingerprint store's note), with a file counted as
    settled after a tick of the clock instead of 2 s; both undone at the end
    of test."""
    from build_custom_op import _fingerprint
    test.addCleanup(setattr, _fingerprint, 'SETTLED_NS', _fingerprint.SETTLED_NS)
    _fingerprint.SETTLED_NS = 0
    read = []
    note = _fingerprint.Store.note
    test.addCleanup(setattr, _fingerprint.Store, 'note', note)

    def noting(store, path, *arguments, **options):
        read.append(path)
        return note(store, path, *arguments, **options)

    _fingerprint.Store.note = noting
    return read


def line_of(path, text):
    """The 1-based number of the line of path that holds text."""
    with open(path) as stream:
        for number, line in enumerate(stream, 1):
            if text in line:
                return number
    raise AssertionError(f'{text!r} is not in {path}')
