"""tap.py - runs unittest tests and prints one line per check, as
tests/run-tests.sh reads them: "ok - NAME" or "not ok - NAME", with the
details of a failure on lines starting with "#".  Exits non-zero when a
check failed.

Also the shared setup of the Python tests: the repository, the module on
sys.path, and a fresh work directory with the fake SDK and toolchain."""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
# BUILD_CUSTOM_OP_TEST_INSTALLED=1: the tests run against the package the
# interpreter has installed (pip install . in a virtual environment, say)
# and the programs on PATH, not the source tree's.  PACKAGE_DIRECTORY is
# what a child process needs on PYTHONPATH to import the package under
# test.
INSTALLED = bool(os.environ.get('BUILD_CUSTOM_OP_TEST_INSTALLED'))
if INSTALLED:
    import importlib.util
    _spec = importlib.util.find_spec('build_custom_op')
    if _spec is None or not _spec.origin:
        sys.exit(f'BUILD_CUSTOM_OP_TEST_INSTALLED is set, but {sys.executable} has no '
                 'build_custom_op installed')
    PACKAGE_DIRECTORY = os.path.dirname(os.path.dirname(_spec.origin))
else:
    PACKAGE_DIRECTORY = os.path.join(TOP, 'python')
    sys.path.insert(0, PACKAGE_DIRECTORY)


def program(name):
    """The path of the program name under test: the source tree's, or the
    one on PATH when the tests run against an installation."""
    if INSTALLED:
        found = shutil.which(name)
        if found is None:
            sys.exit(f'BUILD_CUSTOM_OP_TEST_INSTALLED is set, but {name} is not on PATH')
        return found
    return os.path.join(TOP, name)


def _name(test):
    """A test's method name; for a failed setUpModule or setUpClass, which
    unittest reports through a holder with no method, what it failed in."""
    return getattr(test, '_testMethodName', None) or str(test)


class LineResult(unittest.TestResult):
    """Prints each test's outcome as it ends."""

    def __init__(self, stream):
        super().__init__()
        self.stream = stream

    def _line(self, text):
        self.stream.write(text + '\n')
        self.stream.flush()

    def _details(self, text):
        for line in text.rstrip('\n').split('\n'):
            self._line('# ' + line)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._line(f'ok - {_name(test)}')

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._line(f'not ok - {_name(test)}')
        self._details(self.failures[-1][1])

    def addError(self, test, err):
        super().addError(test, err)
        self._line(f'not ok - {_name(test)}')
        self._details(self.errors[-1][1])

    def addSubTest(self, test, subtest, err):
        # A failed subtest is a failed check of its own; the test then
        # reports no success.
        super().addSubTest(test, subtest, err)
        if err is not None:
            self._line(f'not ok - {_name(test)} {subtest._subDescription()}')
            failures = self.failures if issubclass(err[0], test.failureException) else self.errors
            self._details(failures[-1][1])

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._line(f'ok - {_name(test)} # skip {reason}')

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._line(f'ok - {_name(test)} # expected failure')

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._line(f'not ok - {_name(test)} (unexpected success)')


# What a test that needs PyTorch says when no interpreter here can import it.
TORCH_INSTALL = 'apt-get install python3-torch pybind11-dev ninja-build'
# Debian's torch belongs to /usr/bin/python3, which need not be the python3
# first on PATH: these are tried in order.
TORCH_INTERPRETERS = ('/usr/bin/python3', 'python3')


def wait_for_child(pid, seconds):
    """The wait status of child pid, or None when it has not ended within
    seconds (it is then killed): a child that hangs fails the test instead
    of hanging the suite."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None


def torch_python():
    """The path of an interpreter that can import torch, or None: this one
    when it can."""
    try:
        import torch  # noqa: F401
        return sys.executable
    except ImportError:
        pass
    for candidate in TORCH_INTERPRETERS:
        path = shutil.which(candidate)
        if path is None:
            continue
        done = subprocess.run([path, '-c', 'import torch'], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
        if done.returncode == 0:
            return path
    return None


def _run_under_torch(module_name):
    """Makes sure torch is importable here: re-executes the test under an
    interpreter that can import it, or, when there is none, reports every
    test of the module as skipped (with the install line) and exits."""
    try:
        import torch  # noqa: F401
        return
    except ImportError:
        pass
    path = torch_python()
    if path is not None and os.path.realpath(path) != os.path.realpath(sys.executable):
        sys.stdout.flush()
        os.execv(path, [path] + sys.argv)
    reason = (f'PyTorch is not importable by {" or ".join(TORCH_INTERPRETERS)}: '
              f'{TORCH_INSTALL}')
    for test in unittest.TestLoader().loadTestsFromModule(sys.modules[module_name]):
        for case in test:
            print(f'ok - {case._testMethodName} # skip {reason}')
    sys.exit(0)


def main(module_name='__main__', needs_torch=False):
    """Runs the tests of a module in their order in the file; exits.  With
    needs_torch, the tests run under an interpreter that can import torch
    (see _run_under_torch)."""
    if needs_torch:
        _run_under_torch(module_name)
    # Started in the background by a shell, a process may find SIGINT
    # ignored; the tests need Python's own handler (and children that get
    # the default disposition).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    module = sys.modules[module_name]
    loader = unittest.TestLoader()
    # Source order: the file reads top to bottom as its output does.
    order = {}
    for name, value in vars(module).items():
        code = getattr(value, '__code__', None)
        if code is not None:
            order[name] = code.co_firstlineno
    for value in list(vars(module).values()):
        if isinstance(value, type):
            for name, member in vars(value).items():
                code = getattr(member, '__code__', None)
                if code is not None:
                    order[name] = code.co_firstlineno
    loader.sortTestMethodsUsing = lambda a, b: (order.get(a, 0) > order.get(b, 0)) - (
        order.get(a, 0) < order.get(b, 0))
    suite = loader.loadTestsFromModule(module)
    result = LineResult(sys.stdout)
    suite.run(result)
    sys.exit(0 if result.wasSuccessful() else 1)


class FakeToolchainTest(unittest.TestCase):
    """A test in a fresh directory, with the fake SDK of tests/fake/sdk.sh
    and the fake tools on PATH; the environment is restored afterwards."""

    def setUp(self):
        self.saved_environment = dict(os.environ)
        self.saved_directory = os.getcwd()
        self.work = tempfile.mkdtemp(prefix='bco-python-test.')
        self.addCleanup(self._clean_up)
        # The fake SDK as the shell tests make it: source sdk.sh, keep its environment.
        script = '. "$TOP/tests/fake/sdk.sh" && env -0'
        output = subprocess.run(['sh', '-c', script], check=True, stdout=subprocess.PIPE,
                                env=dict(os.environ, TOP=TOP, WORK=self.work)).stdout
        environment = dict(entry.split('=', 1) for entry in
                           output.decode().split('\0') if '=' in entry)
        os.environ.clear()
        os.environ.update(environment)
        for variable in ('TOP', 'WORK', 'FAKE_LOG', 'FAKE_ARGV', 'FAKE_FAIL', 'FAKE_HANG',
                         'FAKE_STAMPS', 'FAKE_UNDEFINED', 'BUILD_CUSTOM_OP_LIBRARY'):
            os.environ.pop(variable, None)
        self.sdk = os.environ['NEURON_CUSTOM_OP']
        os.chdir(self.work)
        os.mkdir('src')
        self.write('src/relu.cpp', 'int relu;\n')
        self.write('src/axpy.cpp', 'int axpy;\n')
        self.log = os.path.join(self.work, 'log')
        os.environ['FAKE_LOG'] = self.log

    def _clean_up(self):
        os.chdir(self.saved_directory)
        os.environ.clear()
        os.environ.update(self.saved_environment)
        shutil.rmtree(self.work, ignore_errors=True)

    def write(self, path, text):
        with open(path, 'w') as stream:
            stream.write(text)

    def read(self, path):
        with open(path) as stream:
            return stream.read()

    def logged(self):
        """The tool calls recorded in FAKE_LOG, one per line."""
        return self.read(self.log).splitlines() if os.path.exists(self.log) else []
