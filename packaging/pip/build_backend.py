"""build_backend.py - the PEP 517 build backend of `pip install .` (see
pyproject.toml): standard library only, no build dependency.

The wheel holds whatever `make install` installs, as make install lays it
out under a prefix: the tree is built (make), the torch kit made for the
PyTorch of the interpreter that runs pip when it has one (make torch-kit,
sdk/torchneuron/torchneuron.mk), and make install staged with
PYTHONDIR=PREFIX/lib/python3/site-packages, which is as deep under the
prefix as pip's lib/python3.N/site-packages.  Then the package goes to
the wheel's root (site-packages), bin/ to its scripts (the environment's
bin/) and the rest to its data (the environment's prefix).  The
installed package finds every part from its own place
(build_custom_op/_installation.py), so the wheel needs no edit for where
it is unpacked; the programs find the host SDK from theirs.  What a
wheel cannot hold is made to fit: a link lib<name>.so -> lib<name>.so.0 is
a linker script naming it, and a pkg-config file's prefix is
${pcfiledir}/../...

config_settings (pip install . -C KEY=VALUE): torch-python=PATH, the
interpreter whose PyTorch the kit is made for (default: the one running
pip, else none); torch-kit=no, no kit.
"""

import base64
import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

_NAME = 'build_custom_op'
_DISTRIBUTION = 'build-custom-op'
# A prefix no installed file may name: the staged install's.
_STAGED_PREFIX = '/build-custom-op-wheel-prefix'
_SITE = 'lib/python3/site-packages'
_SUMMARY = ('Build, emulate and run custom operators of the GPSIMD engine of AWS '
            'Trainium and Inferentia2')


def get_requires_for_build_wheel(config_settings=None):
    return []


def _version(top):
    with open(os.path.join(top, 'include', 'buildcustomop.h')) as stream:
        found = re.search(r'^#define BCO_VERSION "([^"]+)"', stream.read(), re.M)
    if not found:
        raise RuntimeError('include/buildcustomop.h defines no BCO_VERSION')
    return found.group(1)


def _metadata(version):
    return (f'Metadata-Version: 2.1\nName: {_DISTRIBUTION}\nVersion: {version}\n'
            f'Summary: {_SUMMARY}\nRequires-Python: >=3.8\n')


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    top = os.getcwd()
    info = f'{_NAME}-{_version(top)}.dist-info'
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    with open(os.path.join(metadata_directory, info, 'METADATA'), 'w') as stream:
        stream.write(_metadata(_version(top)))
    return info


def _torch_python(config_settings):
    """The interpreter whose PyTorch the kit is made for, or None.  pip runs
    this backend with its own interpreter, whose site-packages it hides:
    that interpreter is asked again without pip's changes to the path."""
    chosen = (config_settings or {}).get('torch-python')
    if chosen:
        return chosen
    environment = {key: value for key, value in os.environ.items()
                   if key not in ('PYTHONPATH', 'PYTHONNOUSERSITE')}
    done = subprocess.run([sys.executable, '-c', 'import torch'], env=environment,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return sys.executable if done.returncode == 0 else None


def _make(top, arguments, environment=None):
    command = ['make', '--no-print-directory'] + arguments
    done = subprocess.run(command, cwd=top, stdout=sys.stderr, env=environment)
    if done.returncode != 0:
        raise RuntimeError(f'{" ".join(command)} failed (exit status {done.returncode}); its '
                           'output is above')


def _record_hash(data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=')
    return 'sha256=' + digest.decode('ascii')


def _tag():
    platform = sysconfig.get_platform().replace('-', '_').replace('.', '_')
    return f'py3-none-{platform}'


def _staged_files(stage):
    """(path in the stage, path in the wheel) of each staged file."""
    prefix = stage + _STAGED_PREFIX
    site = os.path.join(prefix, _SITE)
    found = []
    for directory, subdirectories, files in os.walk(prefix):
        subdirectories.sort()
        for name in sorted(files):
            path = os.path.join(directory, name)
            if path.startswith(site + os.sep):
                inside = os.path.relpath(path, site)
            elif os.path.dirname(path) == os.path.join(prefix, 'bin'):
                inside = f'DATA/scripts/{name}'
            else:
                inside = 'DATA/data/' + os.path.relpath(path, prefix)
            found.append((path, inside))
    return found


def _contents(path):
    """What the wheel holds for a staged file (see the module's text)."""
    if os.path.islink(path):
        target = os.readlink(path)
        if re.fullmatch(r'lib[\w+-]+\.so', os.path.basename(path)) and '/' not in target:
            return f'/* the link {os.path.basename(path)} -> {target} */\nINPUT({target})\n'.encode()
        raise RuntimeError(f'make install made the symbolic link {path} -> {target}, which a '
                           'wheel cannot hold')
    with open(path, 'rb') as stream:
        data = stream.read()
    if path.endswith('.pc'):
        data = data.replace(f'prefix={_STAGED_PREFIX}\n'.encode(),
                            b'prefix=${pcfiledir}/../..\n')
        data = data.replace(_STAGED_PREFIX.encode() + b'/', b'${prefix}/')
    if _STAGED_PREFIX.encode() in data:
        raise RuntimeError(f'{path} names the prefix of the staged install, '
                           f'{_STAGED_PREFIX}, which is not where the wheel is unpacked')
    return data


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    top = os.getcwd()
    version = _version(top)
    jobs = str(os.cpu_count() or 1)
    kit = (config_settings or {}).get('torch-kit', 'yes')
    python = _torch_python(config_settings) if kit != 'no' else None
    _make(top, ['-j' + jobs, 'programs'])
    make_kit = ['TORCH_KIT=no']
    if python is not None:
        _make(top, ['torch-kit', 'TORCH_PYTHON=' + python])
        make_kit = ['TORCH_KIT=yes']
    stage = tempfile.mkdtemp(prefix='build-custom-op-wheel.')
    try:
        _make(top, ['install', 'DESTDIR=' + stage, 'PREFIX=' + _STAGED_PREFIX,
                    'PYTHONDIR=' + os.path.join(_STAGED_PREFIX, _SITE)] + make_kit)
        name = f'{_NAME}-{version}-{_tag()}.whl'
        info = f'{_NAME}-{version}.dist-info'
        data_directory = f'{_NAME}-{version}.data'
        records = []
        path = os.path.join(wheel_directory, name)
        with zipfile.ZipFile(path, 'w') as wheel:
            def add(inside, data, mode=0o644, compress=True):
                entry = zipfile.ZipInfo(inside, date_time=(1980, 1, 1, 0, 0, 0))
                entry.external_attr = (stat.S_IFREG | mode) << 16
                # A precompiled header is large and barely compresses: stored.
                entry.compress_type = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
                wheel.writestr(entry, data)
                records.append(f'{inside},{_record_hash(data)},{len(data)}')

            for staged, inside in _staged_files(stage):
                inside = inside.replace('DATA/', data_directory + '/', 1)
                executable = not os.path.islink(staged) and \
                    os.stat(staged).st_mode & stat.S_IXUSR
                add(inside, _contents(staged), 0o755 if executable else 0o644,
                    compress=not staged.endswith('.gch'))
            # A file of its own in the directory of the host SDK and the
            # torch kit: pip uninstall removes a directory whole only when
            # it holds a file of the wheel.
            add(f'{data_directory}/data/lib/build-custom-op/README',
                b'The host SDK and the torch kit of build-custom-op, installed by pip.\n')
            add(f'{info}/METADATA', _metadata(version).encode())
            add(f'{info}/WHEEL', (f'Wheel-Version: 1.0\nGenerator: {_DISTRIBUTION} '
                                  f'packaging/pip\nRoot-Is-Purelib: false\nTag: {_tag()}\n'
                                  ).encode())
            add(f'{info}/top_level.txt', f'{_NAME}\n'.encode())
            records.append(f'{info}/RECORD,,')
            wheel.writestr(zipfile.ZipInfo(f'{info}/RECORD', date_time=(1980, 1, 1, 0, 0, 0)),
                           '\n'.join(records) + '\n')
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return name
