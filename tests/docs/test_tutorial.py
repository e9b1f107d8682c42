"""test_tutorial.py - docs/tutorial.md works when followed to the letter.

Every fenced block of the tutorial is either a file, announced by a line
<!-- file: NAME --> just before it, or a console session (```console), whose
"$ " lines are commands (a line ending in a backslash goes on on the next)
and whose other lines are the output the command gives.  The test writes
each file and runs each command in the tutorial's order, in one shell (so
cd and export carry over), from a home directory of its own that holds only
a link named build-custom-op to this tree, already built by make (the
tutorial starts in the repository after make).  Each command's output,
standard output and standard error together as a terminal shows them, must
be what the tutorial shows: a line "..." stands for any number of lines (the
middle of a traceback), and "..." inside a line for any text, with the
spaces around it (the host times of a profile).  python3 is the
interpreter that runs this test, which imports torch: the tutorial holds
on PyTorch 1.x and 2.x alike."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'python'))
import tap  # noqa: E402

TUTORIAL = os.path.join(tap.TOP, 'docs', 'tutorial.md')
# The longest the whole tutorial may take: a first load() compiles a shape
# library against PyTorch (a minute or two without the torch kit).
TIME_LIMIT = 1800


class Block:
    """A fenced block: kind is 'file' or 'console'; line is where its text
    starts in the tutorial (1-based)."""

    def __init__(self, kind, line, text, name=None):
        self.kind = kind
        self.line = line
        self.text = text
        self.name = name


class Command:
    """A command of a console block and the output the tutorial shows."""

    def __init__(self, line, text):
        self.line = line
        self.text = text
        self.expected = []


def blocks(path):
    """The tutorial's fenced blocks, and the problems of those that are
    neither a file nor a console session."""
    with open(path) as stream:
        lines = stream.read().split('\n')
    found, problems = [], []
    marker = None
    index = 0
    while index < len(lines):
        line = lines[index]
        fence = re.match(r'^(```+)(.*)$', line)
        if not fence:
            comment = re.match(r'^<!-- (file): (\S+) -->$', line.strip())
            if comment:
                marker = comment.groups()
            elif line.strip():
                marker = None
            index += 1
            continue
        info = fence.group(2).strip()
        end = index + 1
        while end < len(lines) and lines[end] != fence.group(1):
            end += 1
        text = '\n'.join(lines[index + 1:end]) + '\n'
        if marker and marker[0] == 'file':
            found.append(Block('file', index + 2, text, name=marker[1]))
        elif info == 'console':
            found.append(Block('console', index + 2, text))
        else:
            problems.append(f'line {index + 1}: a ```{info} block that is neither a file '
                            '(<!-- file: NAME --> before it) nor a console session')
        marker = None
        index = end + 1
    return found, problems


def commands(block):
    """The commands of a console block, each with its expected output."""
    result = []
    lines = block.text.rstrip('\n').split('\n')
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith('$ '):
            text = line[2:]
            start = index
            while text.endswith('\\') and index + 1 < len(lines):
                index += 1
                text = text[:-1] + '\n' + lines[index]
            result.append(Command(block.line + start, text))
        elif result:
            result[-1].expected.append(line)
        else:
            raise AssertionError(f'line {block.line + index}: output before any command')
        index += 1
    return result


def line_matches(pattern, line):
    if '...' not in pattern:
        return pattern == line
    parts = re.split(r'\s*\.\.\.\s*', pattern)
    return re.fullmatch('.*'.join(re.escape(part) for part in parts), line) is not None


# What AddressSanitizer prints of its own when make check-asan preloads it
# (the emulated cores switch stacks): not the tutorial's output.
SANITIZER_NOTICE = re.compile(r'==\d+==WARNING: ASan |False positive error reports may follow$|'
                              r'For details see https://github\.com/google/sanitizers/issues/')


def output_matches(expected, actual):
    """Whether the lines of actual are those of expected, where a line
    "..." is any number of lines."""
    memo = {}

    def match(i, j):
        if (i, j) not in memo:
            if i == len(expected):
                result = j == len(actual)
            elif expected[i] == '...':
                result = any(match(i + 1, k) for k in range(j, len(actual) + 1))
            else:
                result = j < len(actual) and line_matches(expected[i], actual[j]) and \
                    match(i + 1, j + 1)
            memo[(i, j)] = result
        return memo[(i, j)]
    return match(0, 0)


def script(steps, token):
    """A shell script that writes the files and runs the commands in order,
    printing a line with token and the step's number before each."""
    parts = []
    for number, step in enumerate(steps):
        parts.append(f"printf '\\n{token} {number}\\n'")
        if isinstance(step, Block):
            delimiter = 'END_OF_' + token
            assert delimiter not in step.text
            parts.append(f"cat >'{step.name}' <<'{delimiter}'\n{step.text}{delimiter}")
        else:
            parts.append(step.text)
    parts.append(f"printf '\\n{token} end\\n'")
    return '\n'.join(parts) + '\n'


def outputs(text, token, count):
    """What each step printed, by the lines with token."""
    pieces = re.split(rf'\n{token} (\d+|end)\n', '\n' + text)
    result = {}
    for index in range(1, len(pieces) - 1, 2):
        if pieces[index] != 'end':
            result[int(pieces[index])] = pieces[index + 1]
    return [result.get(number) for number in range(count)]


class TutorialTest(unittest.TestCase):

    def test_every_block_is_a_file_or_a_console_session(self):
        found, problems = blocks(TUTORIAL)
        self.assertEqual(problems, [])
        self.assertTrue(any(block.kind == 'file' for block in found))
        self.assertTrue(any(block.kind == 'console' for block in found))

    def test_the_matching_can_fail(self):
        self.assertTrue(output_matches(['a', '...', 'b ... c'], ['a', 'x', 'y', 'b 1 c']))
        self.assertTrue(output_matches(['b   ...   c'], ['b 12345 c']))
        self.assertTrue(output_matches(['...'], []))
        self.assertFalse(output_matches(['a', '...', 'b ... c'], ['a', 'b 1 d']))
        self.assertFalse(output_matches(['True'], ['False']))
        self.assertFalse(output_matches([], ['True']))

    def test_runs_as_written(self):
        found, _ = blocks(TUTORIAL)
        steps = []
        for block in found:
            steps.extend([block] if block.kind == 'file' else commands(block))
        home = tempfile.mkdtemp(prefix='bco-tutorial.')
        self.addCleanup(shutil.rmtree, home, ignore_errors=True)
        os.symlink(tap.TOP, os.path.join(home, 'build-custom-op'))
        shims = os.path.join(home, '.shims')
        os.mkdir(shims)
        # A script, not a link: a virtual environment's python finds its
        # environment from the path it was started by.
        shim = os.path.join(shims, 'python3')
        with open(shim, 'w') as stream:
            stream.write(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        os.chmod(shim, 0o755)
        environment = dict(os.environ)
        # The cache of shape libraries and bridges stays the user's (a
        # first build takes minutes), whatever HOME says.
        environment['BUILD_CUSTOM_OP_CACHE'] = os.environ.get('BUILD_CUSTOM_OP_CACHE') or \
            os.path.join(os.environ.get('XDG_CACHE_HOME') or
                         os.path.join(os.path.expanduser('~'), '.cache'), 'build-custom-op')
        environment.pop('XDG_CACHE_HOME', None)
        # The shared build of each shape library is g++'s (tests/torch/fixture.py).
        environment.pop('CXX', None)
        for variable in ('PYTHONPATH', 'CUSTOM_OP_TARGET', 'CUSTOM_OP_TIMEOUT',
                         'BUILD_CUSTOM_OP_OUTPUT_CHECKS', 'NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES'):
            environment.pop(variable, None)
        # TorchInductor's cache of compiled graphs (torch.compile, PyTorch 2.x)
        # is the run's own: its key names an op but not the op's kernels, so
        # a graph compiled in this machine's shared cache by another build of
        # tutorial::leaky_relu would stand in for the one the tutorial makes.
        environment.update(HOME=home, PATH=shims + os.pathsep + environment.get('PATH', ''),
                           PYTHONUNBUFFERED='1', PYTHONDONTWRITEBYTECODE='1',
                           BUILD_CUSTOM_OP_BUNDLES=os.path.join(home, '.bundles'),
                           TORCHINDUCTOR_CACHE_DIR=os.path.join(home, '.torchinductor'))
        token = '@@tutorial-step-' + os.path.basename(home).replace('.', '-')
        done = subprocess.run(['sh', '-c', script(steps, token)], cwd=home, env=environment,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=TIME_LIMIT)
        text = done.stdout.decode(errors='replace')
        printed = outputs(text, token, len(steps))
        for step, output in zip(steps, printed):
            if isinstance(step, Block):
                continue
            with self.subTest(line=step.line, command=step.text.split('\n')[0]):
                self.assertIsNotNone(output, f'the command never ran; the whole output:\n{text}')
                actual = [line.rstrip() for line in output.rstrip('\n').split('\n')
                          if not SANITIZER_NOTICE.match(line)] if output.strip('\n') else []
                expected = [line.rstrip() for line in step.expected]
                while expected and not expected[-1]:
                    expected.pop()
                self.assertTrue(output_matches(expected, actual),
                                'the tutorial shows\n' + '\n'.join(expected) +
                                '\nbut the command printed\n' + '\n'.join(actual))


if __name__ == '__main__':
    tap.main(needs_torch=True)
