"""test_device.py - custom_op.load() and load_library() for the device
target, against the fake Xtensa toolchain and SDK of tests/fake: the
compute build's commands, the bundle, multicore, a missing compute
function, and bundles that load_library() must refuse."""

import glob
import hashlib
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture  # noqa: E402
import tap  # noqa: E402

FUNCTIONS = [fn for _, _, fn, _ in fixture.OPS]
SCHEMAS = [schema for _, _, _, schema in fixture.OPS]
VERSIONS = {'ulib_to_ucode_version': '1.21.1.0', 'ulib_to_isa_version': '1.0.2520.0'}


def expected_metadata(computelibs, contents):
    """The metadata of the fixture's bundle; contents: its members' bytes
    by name."""
    ops = {}
    for namespace, op, fn, schema in fixture.OPS:
        ops.setdefault(namespace, {})[op] = {'fn': fn, 'schema': schema}
    hashed = ['libfixtureshapefcn.so'] + computelibs
    return {'versions': VERSIONS, 'shapelib': 'libfixtureshapefcn.so', 'ops': ops,
            'computelibs': {'names': computelibs},
            'computelib': {'id': hashlib.md5(contents[computelibs[0]]).hexdigest()},
            'torch': torch_version(),
            'sha256': {name: hashlib.sha256(contents[name]).hexdigest() for name in hashed}}


def torch_version():
    import torch
    return torch.__version__


def rehashed(members):
    """members with metadata.json's sha256 of each member made anew: a
    bundle whose members are what its metadata records."""
    meta = json.loads(dict(members)['metadata.json'])
    meta['sha256'] = {name: hashlib.sha256(data).hexdigest()
                      for name, data in members if name != 'metadata.json'}
    return [(name, json.dumps(meta).encode() if name == 'metadata.json' else data)
            for name, data in members]


class DeviceTest(tap.FakeToolchainTest):
    def setUp(self):
        super().setUp()
        from build_custom_op import _archive, custom_op
        self.archive = _archive
        self.custom_op = custom_op
        self.write('src/kernels.cpp', 'int kernels;\n')
        os.environ['BUILD_CUSTOM_OP_BUNDLES'] = os.path.join(self.work, 'bundles')
        os.mkdir('tmp')
        self.saved_tempdir = tempfile.tempdir
        tempfile.tempdir = os.path.join(self.work, 'tmp')
        self.addCleanup(setattr, tempfile, 'tempdir', self.saved_tempdir)

    def load(self, **options):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            fixture.load(['src/kernels.cpp'], **options)
        return [str(warning.message) for warning in caught]

    def members(self, path):
        with open(path, 'rb') as stream:
            return self.archive.read(stream.read())

    def temporary_directories(self):
        return os.listdir(tempfile.tempdir)

    def test_the_compute_build_runs_the_commands_of_compile(self):
        self.load(build_directory='out')
        ours = self.logged()
        self.assertEqual(self.temporary_directories(), [])
        kept = 'out/libfixturecustomop.build'
        self.assertIn(f' {kept}/wrapper.cpp', '\n'.join(ours))
        self.assertTrue(os.path.isfile(os.path.join(kept, 'compile_commands.json')))
        os.remove(self.log)
        # Built in a directory that is kept: nothing changed, nothing runs.
        self.load(build_directory='out')
        self.assertFalse(os.path.exists(self.log))
        # The call the original makes for the schemas it derives.
        import build_custom_op
        reference = os.path.join(self.work, 'reference')
        build_custom_op.compile(name='libfixturecustomop.so', fn_names=FUNCTIONS,
                                src_files=['src/kernels.cpp'], schema=SCHEMAS,
                                build_directory=reference, cflags=fixture.FLAGS)
        theirs = self.logged()
        # The compiles run in parallel: their order in the log varies.
        self.assertEqual(sorted(line.replace(kept, 'DIR') for line in ours),
                         sorted(line.replace(reference, 'DIR') for line in theirs))
        self.assertEqual(len(ours), 4)  # kernels.cpp, wrapper.cpp, the link, the pack
        self.assertIn(' -DFIXTURE_FLAG=1 ', ours[0])   # extra_cflags reach the build
        self.assertNotIn('fixtures/include', '\n'.join(ours))  # extra_include_paths do not

    def test_the_bundle_and_its_metadata(self):
        self.load(build_directory='out')
        members = self.members('out/libfixture.so')
        self.assertEqual([name for name, _ in members],
                         ['libfixtureshapefcn.so', 'libfixturecustomop.packed.so',
                          'metadata.json'])
        contents = dict(members)
        from build_custom_op import _shape_library
        shape_library = os.path.join(_shape_library.cache_root(), 'shape-libraries')
        cached = glob.glob(os.path.join(shape_library, '*', 'libshapefcn.so'))
        self.assertIn(contents['libfixtureshapefcn.so'],
                      [open(path, 'rb').read() for path in cached])
        self.assertTrue(contents['libfixturecustomop.packed.so'].startswith(b'packed '))
        expected = expected_metadata(['libfixturecustomop.packed.so'], contents)
        self.assertEqual(json.loads(contents['metadata.json']), expected)
        # The text json.dump writes: the keys in the original's order, then
        # the PyTorch of the shape library and the members' hashes.
        self.assertEqual(contents['metadata.json'].decode(), json.dumps(expected))
        self.assertEqual(list(json.loads(contents['metadata.json'])),
                         ['versions', 'shapelib', 'ops', 'computelibs', 'computelib', 'torch',
                          'sha256'])
        self.assertEqual(sorted(os.listdir('out')), ['libfixture.so', 'libfixturecustomop.build'])

    def test_the_bundle_is_written_through_a_symlink_and_never_half(self):
        os.mkdir('elsewhere')
        os.mkdir('out')
        os.symlink('../elsewhere/kept.so', 'out/libfixture.so')
        self.load(build_directory='out')
        self.assertEqual(os.readlink('out/libfixture.so'), '../elsewhere/kept.so')
        self.assertEqual(os.listdir('elsewhere'), ['kept.so'])
        self.assertEqual([name for name, _ in self.members('elsewhere/kept.so')][-1],
                         'metadata.json')
        self.write('file', 'not a directory\n')
        with self.assertRaises(self.custom_op.CustomOpError) as caught:
            self.load(build_directory='file')
        self.assertEqual(caught.exception.message,
                         "load('fixture'): the build_directory file is not a directory")
        self.assertEqual(self.temporary_directories(), [])

    def test_multicore_bundles_eight_compute_libraries(self):
        self.load(build_directory='out', multicore=True)
        members = self.members('out/libfixture.so')
        names = [f'libfixturecustomop_cpu{i}.packed.so' for i in range(8)]
        self.assertEqual([name for name, _ in members],
                         ['libfixtureshapefcn.so'] + names + ['metadata.json'])
        contents = dict(members)
        self.assertEqual(json.loads(contents['metadata.json']),
                         expected_metadata(names, contents))
        self.assertEqual(sum(1 for line in self.logged() if 'xt-pkg-loadlib' in line), 8)

    def test_no_bundle_without_a_build_directory(self):
        messages = self.load()
        self.assertEqual(sorted(os.listdir('.')), ['bundles', 'log', 'sdk', 'src', 'tmp'])
        # The compute build's directory is in the cache.
        from build_custom_op import _torch_build
        kept = re.search(r' (\S+)/wrapper\.cpp$', '\n'.join(self.logged()), re.M).group(1)
        self.assertEqual(os.path.dirname(kept),
                         os.path.join(_torch_build.cache_root(), 'compute'))
        self.assertEqual(self.temporary_directories(), [])
        self.assertEqual(len(os.listdir('bundles')), 1)   # what registering uses
        self.assertEqual(len(messages), 1)
        self.assertIn('registering the ops of the device target needs torch-neuronx',
                      messages[0])

    def test_a_compute_function_missing_from_the_sources(self):
        os.environ['FAKE_UNDEFINED'] = 'twice'
        with self.assertRaises(self.custom_op.CustomOpError) as caught:
            self.load(build_directory='out')
        where = f'{fixture.FIXTURES}/shape_more.cpp:{fixture.line_of(fixture.SHAPES[1], "twice")}'
        self.assertEqual(
            caught.exception.message,
            "load('fixture'): step 4 of 6, building the compute library [src/kernels.cpp]: "
            f'op test_ops::twice (registered at {where}) runs the compute function twice, '
            'but no compute source defines it (the link reports an undefined reference).\n'
            '  It must be defined in one of the compute sources (src/kernels.cpp) as:\n'
            '    at::Tensor twice(const at::Tensor&)')
        self.assertEqual(caught.exception.step, 'building the compute library')
        self.assertEqual(caught.exception.kind, 'step')
        self.assertEqual(os.listdir('out'), ['libfixturecustomop.build'])
        self.assertEqual(self.temporary_directories(), [])

    def test_load_library_on_our_bundle(self):
        self.load(build_directory='out')
        import torch
        os.chdir('out')   # a relative path
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            self.custom_op.load_library('libfixture.so')
        self.assertEqual(len(caught), 1)
        self.assertEqual(caught[0].filename, __file__)   # points at the caller
        with open('libfixture.so', 'rb') as stream:
            md5 = hashlib.md5(stream.read()).hexdigest()
        extracted = os.path.join(self.work, 'bundles', md5)
        self.assertEqual(sorted(os.listdir(extracted)),
                         ['libfixturecustomop.packed.so', 'libfixtureshapefcn.so',
                          'metadata.json'])
        self.assertEqual(os.listdir(os.path.join(self.work, 'bundles')), [md5])
        with self.assertRaises(self.custom_op.CustomOpError) as raised:
            torch.ops.test_ops.scale(torch.ones(2), 1, 2.0, 3)
        self.assertEqual(raised.exception.message,
                         "test_ops::scale is built for the device (target 'xtensa'), and "
                         'running it needs torch-neuronx (pip install torch-neuronx); build it '
                         "with target='host' to run it on this machine's emulated cores")
        # A second load finds the extraction and uses it as it is.
        before = os.stat(extracted).st_ino
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            self.custom_op.load_library(os.path.abspath('libfixture.so'))
        self.assertEqual(os.stat(extracted).st_ino, before)
        # One that lost a member is extracted again.
        os.remove(os.path.join(extracted, 'metadata.json'))
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            self.custom_op.load_library('libfixture.so')
        self.assertTrue(os.path.exists(os.path.join(extracted, 'metadata.json')))
        self.assertEqual(os.listdir(os.path.join(self.work, 'bundles')), [md5])

    def test_with_torch_neuronx_the_ops_are_registered_as_the_original_does(self):
        # A stand-in for torch_neuronx.xla_impl.ops.CustomCppOp that keeps
        # its arguments.
        package = os.path.join(self.work, 'fake_neuronx')
        os.makedirs(os.path.join(package, 'torch_neuronx', 'xla_impl'))
        for name in ('torch_neuronx/__init__.py', 'torch_neuronx/xla_impl/__init__.py'):
            self.write(os.path.join(package, name), '')
        self.write(os.path.join(package, 'torch_neuronx', 'xla_impl', 'ops.py'),
                   'class CustomCppOp:\n'
                   '    def __init__(self, *arguments):\n'
                   '        self.arguments = arguments\n')
        sys.path.insert(0, package)
        self.addCleanup(sys.path.remove, package)
        self.addCleanup(lambda: [sys.modules.pop(name) for name in list(sys.modules)
                                 if name.startswith('torch_neuronx')])
        import torch
        for load in (lambda: fixture.load(['src/kernels.cpp'], 'out', multicore=True),
                     lambda: self.custom_op.load_library('out/libfixture.so')):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter('always')
                load()
            self.assertEqual([str(warning.message) for warning in caught], [])
            registered = torch.ops.test_ops.scale
            self.assertEqual(type(registered).__name__, 'CustomCppOp')
            fn, shape, libraries, identity, ucode, isa = registered.arguments
            self.assertEqual(fn, 'scale')
            self.assertIsInstance(shape, torch._ops.OpOverloadPacket)
            self.assertEqual(str(shape.default._schema),
                             'test_ops::scale(Tensor _0, Scalar _1, float _2, int _3) -> '
                             'Tensor _0')
            paths = libraries.split(',')
            self.assertEqual([os.path.basename(path) for path in paths],
                             [f'libfixturecustomop_cpu{i}.packed.so' for i in range(8)])
            directory = os.path.dirname(paths[0])
            self.assertEqual(os.path.dirname(directory), os.path.join(self.work, 'bundles'))
            with open(paths[0], 'rb') as stream:
                self.assertEqual(identity, hashlib.md5(stream.read()).hexdigest())
            self.assertEqual((ucode, isa), ('1.21.1.0', '1.0.2520.0'))
            self.assertEqual(getattr(torch.ops.test_more, fixture.LONG_OP).arguments[0],
                             'long_named')

    def refused(self, data, message, target=None):
        with open('bad.so', 'wb') as stream:
            stream.write(data)
        with self.assertRaises(self.custom_op.CustomOpError) as caught:
            self.custom_op.load_library('bad.so', target=target)
        self.assertEqual(caught.exception.message,
                         "load_library('bad.so'): step 1 of 4, reading the bundle [bad.so]: "
                         + message)
        self.assertFalse(os.path.exists('bundles') and os.listdir('bundles'))

    def good_bundle(self):
        self.load(build_directory='out')
        with open('out/libfixture.so', 'rb') as stream:
            return stream.read()

    def test_a_corrupt_bundle(self):
        data = self.good_bundle()
        shutil.rmtree('bundles')
        size = len(dict(self.archive.read(data))['metadata.json'])
        self.refused(data[:-100], 'bad.so is not a custom-op bundle (an ar archive made by '
                     'custom_op.load()): the member at byte '
                     f'{data.rindex(b"metadata.json/")} needs {size} bytes, but the file '
                     f'ends {100 - size % 2} bytes early')  # an odd size has a padding byte
        self.refused(b'\x7fELF\x02\x01\x01' + bytes(100),
                     'bad.so is not a custom-op bundle (an ar archive made by '
                     'custom_op.load()): it does not start with the ar magic "!<arch>"')

    def test_a_path_that_is_not_a_file(self):
        os.mkfifo('fifo.so')  # must not wait for a writer, nor read /dev/zero for ever

        def too_long(signal_number, frame):
            raise TimeoutError('load_library() did not return within 30 s')
        previous = signal.signal(signal.SIGALRM, too_long)
        self.addCleanup(signal.signal, signal.SIGALRM, previous)
        self.addCleanup(signal.alarm, 0)
        for path, kind in ((self.work, 'a directory'), ('/dev/zero', 'a device'),
                           ('fifo.so', 'a FIFO')):
            signal.alarm(30)
            with self.subTest(path=path):
                with self.assertRaises(self.custom_op.CustomOpError) as caught:
                    self.custom_op.load_library(path)
                self.assertEqual(caught.exception.message,
                                 f"load_library('{path}'): step 1 of 4, reading the bundle "
                                 f'[{path}]: cannot read {path}: it is {kind}, not a regular '
                                 "file; a bundle is the lib<name>.so file that "
                                 'custom_op.load() writes')

    def test_a_bundle_missing_a_member(self):
        members = [m for m in self.archive.read(self.good_bundle())
                   if m[0] != 'libfixturecustomop.packed.so']
        shutil.rmtree('bundles')
        self.refused(self.archive.build(members),
                     'bad.so has no member libfixturecustomop.packed.so, which metadata.json '
                     'names; rebuild the bundle with custom_op.load()')
        self.refused(self.archive.build(members[:1]),
                     'bad.so has no metadata.json: it is not a bundle made by '
                     'custom_op.load(), or it was cut short (it holds: libfixtureshapefcn.so)')

    def test_a_member_cut_short(self):
        members = self.archive.read(self.good_bundle())
        whole = len(dict(members)['libfixtureshapefcn.so'])
        # Cut before it was bundled: the metadata records the cut bytes.
        cut = rehashed([(name, data[:whole // 2] if name == 'libfixtureshapefcn.so' else data)
                        for name, data in members])
        shutil.rmtree('bundles')
        from build_custom_op import _elf
        problem = _elf.incomplete(dict(cut)['libfixtureshapefcn.so'])
        self.assertRegex(problem, rf'^it has {whole // 2} bytes, but its ELF headers describe '
                         r'\d+$')
        self.refused(self.archive.build(cut), 'bad.so: its member libfixtureshapefcn.so is not '
                     f'a whole shared library: {problem}; rebuild the bundle with '
                     'custom_op.load()')

    def test_the_extraction_is_checked_byte_for_byte(self):
        self.load(build_directory='out')
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            old_mask = os.umask(0)
            try:
                self.custom_op.load_library('out/libfixture.so')
            finally:
                os.umask(old_mask)
        extracted = os.path.join(self.work, 'bundles', os.listdir('bundles')[0])
        for name in os.listdir(extracted):
            with self.subTest(member=name):
                self.assertEqual(os.stat(os.path.join(extracted, name)).st_mode & 0o7777, 0o644)
        self.assertEqual(os.stat(extracted).st_mode & 0o7777, 0o755)
        member = os.path.join(extracted, 'libfixturecustomop.packed.so')
        with open(member, 'rb') as stream:
            original = stream.read()
        with open(member, 'r+b') as stream:   # a flipped byte, the size unchanged
            stream.seek(len(original) // 2)
            stream.write(bytes([original[len(original) // 2] ^ 0xff]))
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            self.custom_op.load_library('out/libfixture.so')
        with open(member, 'rb') as stream:
            self.assertEqual(stream.read(), original)

    def test_an_extraction_root_that_cannot_be_used(self):
        self.load(build_directory='out')
        os.mkdir('real')
        os.symlink('real', 'link')
        cases = [
            ('link', f'{self.work}/link is a symbolic link (to real), which another user could '
                     'have made point elsewhere'),
            ('/dev/null/bundles', '/dev/null/bundles cannot be created: Not a directory'),
        ]
        for root, problem in cases:
            path = root if root.startswith('/') else os.path.join(self.work, root)
            os.environ['BUILD_CUSTOM_OP_BUNDLES'] = path
            with self.subTest(root=root):
                with self.assertRaises(self.custom_op.CustomOpError) as caught:
                    self.custom_op.load_library('out/libfixture.so')
                self.assertEqual(caught.exception.message,
                                 "load_library('out/libfixture.so'): step 2 of 4, extracting "
                                 f'the bundle [out/libfixture.so]: cannot extract bundles into '
                                 f'{path}: {problem}; the directory must be one of this user '
                                 'that no one else can write: set BUILD_CUSTOM_OP_BUNDLES to '
                                 'such a directory')

    def test_a_bundle_of_the_other_target(self):
        data = self.good_bundle()
        shutil.rmtree('bundles')
        self.refused(data, "bad.so was built for the device (target='xtensa'), not for the "
                     "host's emulated cores (target='host'): load it with target='xtensa' "
                     "(or set CUSTOM_OP_TARGET=xtensa), or build it again with "
                     "custom_op.load(..., target='host')", target='host')
        os.environ['CUSTOM_OP_TARGET'] = 'host'
        self.refused(data, "bad.so was built for the device (target='xtensa'), not for the "
                     "host's emulated cores (target='host'): load it with target='xtensa' "
                     "(or set CUSTOM_OP_TARGET=xtensa), or build it again with "
                     "custom_op.load(..., target='host')")

    def test_a_bundle_of_another_pytorch(self):
        """A shape library loads only in the PyTorch it was compiled against
        (another one may abort the process): refused before it is loaded."""
        def with_torch(version):
            members = []
            for name, data in self.archive.read(good):
                if name == 'metadata.json':
                    meta = json.loads(data)
                    meta['torch'] = version
                    data = json.dumps(meta).encode()
                members.append((name, data))
            return self.archive.build(members)
        good = self.good_bundle()
        shutil.rmtree('bundles')
        self.refused(with_torch('1.0.0'),
                     'its shape library was compiled against PyTorch 1.0.0, and this process '
                     f'runs PyTorch {torch_version()}, which cannot load it: build the bundle '
                     'again with custom_op.load() under this PyTorch')
        self.refused(with_torch(113),
                     "metadata.json in bad.so is not a bundle's metadata: \"torch\" must be the "
                     'version of PyTorch the shape library was built against')

    def test_metadata_that_is_not_json(self):
        members = [(name, b'{"versions": {' if name == 'metadata.json' else data)
                   for name, data in self.archive.read(self.good_bundle())]
        shutil.rmtree('bundles')
        self.refused(self.archive.build(members),
                     'metadata.json in bad.so is not JSON (Expecting property name enclosed '
                     'in double quotes: line 1 column 15 (char 14)); rebuild the bundle with '
                     'custom_op.load()')
        members = [(name, b'{"versions": 3}' if name == 'metadata.json' else data)
                   for name, data in members]
        self.refused(self.archive.build(members),
                     "metadata.json in bad.so is not a bundle's metadata: it has no "
                     '"shapelib"')

    def test_a_member_changed_added_or_missing_after_the_bundle_was_made(self):
        members = self.archive.read(self.good_bundle())
        shutil.rmtree('bundles')
        shape = dict(members)['libfixtureshapefcn.so']
        recorded = hashlib.sha256(shape).hexdigest()
        patched = shape[:64] + bytes(b ^ 0xff for b in shape[64:72]) + shape[72:]
        edited = [(name, patched if name == 'libfixtureshapefcn.so' else data)
                  for name, data in members]
        self.refused(self.archive.build(edited),
                     'bad.so: its member libfixtureshapefcn.so was changed after the bundle was '
                     f'made (its sha256 is {hashlib.sha256(patched).hexdigest()}, metadata.json '
                     f'records {recorded}); rebuild the bundle with custom_op.load()')
        added = members[:-1] + [('extra.so', b'more')] + members[-1:]
        self.refused(self.archive.build(added),
                     'bad.so holds a member extra.so that metadata.json does not record: it was '
                     'added after the bundle was made; rebuild the bundle with custom_op.load()')
        meta = json.loads(dict(members)['metadata.json'])
        meta['sha256']['gone.so'] = '0' * 64
        recorded_gone = [(name, json.dumps(meta).encode() if name == 'metadata.json' else data)
                         for name, data in members]
        self.refused(self.archive.build(recorded_gone),
                     'bad.so has no member gone.so, which metadata.json records; rebuild the '
                     'bundle with custom_op.load()')
        meta['sha256'] = ['not', 'a', 'map']
        self.refused(self.archive.build(
            [(name, json.dumps(meta).encode() if name == 'metadata.json' else data)
             for name, data in members]),
            "metadata.json in bad.so is not a bundle's metadata: \"sha256\" must map member "
            'names to the sha256 of their bytes')

    def test_a_bundle_of_the_original_format_without_hashes_loads(self):
        members = self.archive.read(self.good_bundle())
        shutil.rmtree('bundles')
        meta = json.loads(dict(members)['metadata.json'])
        del meta['sha256']
        original = [(name, json.dumps(meta).encode() if name == 'metadata.json' else data)
                    for name, data in members]
        with open('original.so', 'wb') as stream:
            stream.write(self.archive.build(original))
        self.custom_op.load_library('original.so')
        self.assertEqual(len(os.listdir('bundles')), 1)

    def test_a_compute_library_changed_after_the_bundle_was_made(self):
        # The metadata's hashes made anew: the md5 of the first compute
        # library, which the original records, is still checked.
        members = rehashed([(name, data + b'!' if name.endswith('.packed.so') else data)
                            for name, data in self.archive.read(self.good_bundle())])
        shutil.rmtree('bundles')
        changed = hashlib.md5(dict(members)['libfixturecustomop.packed.so']).hexdigest()
        recorded = json.loads(dict(members)['metadata.json'])['computelib']['id']
        self.refused(self.archive.build(members),
                     f'bad.so: the md5 of libfixturecustomop.packed.so is {changed}, but '
                     f'metadata.json records {recorded}: the member was changed after the '
                     'bundle was made; rebuild it')

    def test_the_target_argument(self):
        from build_custom_op import custom_op
        for value, origin in (('arm', 'target'), (None, '$CUSTOM_OP_TARGET')):
            os.environ['CUSTOM_OP_TARGET'] = 'gpu'
            with self.subTest(target=value):
                with self.assertRaises(custom_op.CustomOpError) as caught:
                    custom_op.load_library('whatever.so', target=value)
                shown = repr(value) if value else "'gpu'"
                self.assertEqual(caught.exception.message,
                                 f"{origin} is {shown}: use 'xtensa' (the device) or 'host' "
                                 '(the emulated cores of this machine)')
                self.assertEqual(caught.exception.kind, 'usage')


if __name__ == '__main__':
    tap.main(needs_torch=True)
