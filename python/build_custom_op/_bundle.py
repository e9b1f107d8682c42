"""_bundle.py - lib<name>.so bundles: metadata.json, writing, reading,
checking and the extraction cache.

A bundle is an ar archive (see _archive.py) of the shape library, the
compute libraries and metadata.json, in that order; a host bundle also
holds the .ops record of its libraries.  metadata.json is what the
original load() writes (json.dump of a dict, keys in this order):

    {"versions": build_custom_op.versions, "shapelib": "lib<name>shapefcn.so",
     "ops": {NS: {OP: {"fn": FN, "schema": SCHEMA}}},
     "computelibs": {"names": [basenames of the compute libraries]},
     "computelib": {"id": md5 hex of the first compute library}}

plus "target": "host" for a host bundle (none means the device), and last
"sha256": {MEMBER: sha256 hex} for every other member, so that a member
changed after bundling (an edited .ops record, a patched shape library) is
refused before anything of the bundle is loaded.  Readers of the original
format read only the keys they know; a bundle without "sha256" (one the
original wrote) is checked as the original checks it.

The cache keeps a record of each bundle load() makes (record_key,
record_of), so that a load() with nothing changed keeps the file already
written when it is byte for byte the one it would write (kept).  Whether
a file is that bundle, and whether an extraction holds a bundle's
members, is known without reading the files when they are unchanged since
they were last read (their stat fingerprints, _fingerprint.py); the
members of a bundle load() makes are read only when it must be written.
"""

import errno
import hashlib
import importlib.util
import json
import os
import shutil
import stat
import tempfile
import time

from build_custom_op import _elf
from build_custom_op import _fingerprint
from build_custom_op import _ownership

METADATA = 'metadata.json'
# The key of metadata.json that records each other member's sha256.
HASHES = 'sha256'
# The key of the PyTorch version the shape library was compiled against
# (absent from the original's bundles).
TORCH = 'torch'
TARGETS = ('xtensa', 'host')
_TARGET_NAMES = {'xtensa': "the device (target='xtensa')",
                 'host': "the host's emulated cores (target='host')"}
# Where load_library() extracts a bundle, in a directory named by the md5
# of the bundle's bytes, as the original does.
EXTRACT_ROOT = '/var/tmp/neuron-custom-ops'
EXTRACT_ROOT_VARIABLE = 'BUILD_CUSTOM_OP_BUNDLES'
# The length of a hex digest as md5_hex and sha256_hex write it (_hex).
_MD5_HEX = 32
_SHA256_HEX = 64
_HEX_DIGITS = frozenset('0123456789abcdef')


class BundleError(Exception):
    """A bundle that cannot be read, checked or extracted."""


def _hex(value, length):
    """Whether value is a hex digest of length digits, as md5_hex and
    sha256_hex write them."""
    return isinstance(value, str) and len(value) == length and _HEX_DIGITS.issuperset(value)


def md5_hex(data):
    """The md5 of bytes, as md5sum prints it."""
    try:
        digest = hashlib.md5(data, usedforsecurity=False)
    except TypeError:  # Python before 3.9
        digest = hashlib.md5(data)
    return digest.hexdigest()


def sha256_hex(data):
    """The sha256 of bytes, as sha256sum prints it."""
    return hashlib.sha256(data).hexdigest()


def metadata(versions, shapelib, ops, computelibs, computelib_md5, target, hashes,
             torch_version):
    """The metadata dict.  ops: [(namespace, op, fn, schema)] in order;
    computelibs: the compute libraries' basenames; computelib_md5: the md5
    hex of the first one's bytes; hashes: {name: sha256 hex} of every other
    member of the bundle, in its order; torch_version: the PyTorch the
    shape library was compiled against (torch.__version__), which alone
    can load it."""
    table = {}
    for namespace, op, fn, schema in ops:
        table.setdefault(namespace, {})[op] = {'fn': fn, 'schema': schema}
    result = {
        'versions': dict(versions),
        'shapelib': shapelib,
        'ops': table,
        'computelibs': {'names': list(computelibs)},
        'computelib': {'id': computelib_md5},
    }
    if target == 'host':
        result['target'] = 'host'
    result[TORCH] = torch_version
    result[HASHES] = dict(hashes)
    return result


def metadata_text(value):
    """metadata.json's text, as json.dump writes it."""
    return json.dumps(value)


def host_record_name(computelibs):
    """The .ops record of a host build's libraries: libNAMEcustomop.ops for
    libNAMEcustomop.so or libNAMEcustomop_cpu0.so ... _cpu7.so."""
    name = computelibs[0]
    if name.endswith('.so'):
        name = name[:-len('.so')]
        if name[-5:-1] == '_cpu' and name[-1:] in ('0', '1', '2', '3', '4', '5', '6', '7'):
            name = name[:-5]
    return name + '.ops'


def build_archive(members):
    """The bundle's bytes from its members, [(name, bytes)] in order."""
    # Imported here: a load() that keeps its bundle neither makes nor reads one.
    from build_custom_op import _archive
    return _archive.build(members)


def write_atomically(path, data):
    """Writes data to path through a temporary file in the same directory
    and a rename: no half-written file is ever at path.  A symbolic link is
    followed (the file it names is replaced); a device or a FIFO is written
    through; a directory is refused."""
    path = os.path.realpath(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if info is not None and not stat.S_ISREG(info.st_mode):
        with open(path, 'wb') as stream:
            stream.write(data)
        return
    directory = os.path.dirname(path)
    descriptor, temporary = tempfile.mkstemp(prefix='.' + os.path.basename(path) + '.',
                                             dir=directory)
    try:
        with os.fdopen(descriptor, 'wb') as stream:
            stream.write(data)
        os.chmod(temporary, 0o644 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


# --- a bundle known without making it again ---------------------------------
#
# After load() makes a bundle, the cache keeps a record of it (see
# custom_op.py): the size, sha256 and md5 of its bytes, under a key that
# hashes everything those bytes are made from.  With the record, an
# unchanged load() need not lay the archive out again: the file already at
# the bundle's path is kept when it is, byte for byte, what would be
# written (its sha256 is the recorded one), and rewritten otherwise.

def _code_identity():
    """The sha256 of the code that lays a bundle's bytes out (the archive
    writer and the ELF symbol reader its index comes from)."""
    global _code_digest
    if _code_digest is None:
        digest = hashlib.sha256()
        for module in ('_archive', '_elf'):
            # Found, not imported (a load() that keeps its bundle does not
            # run the archive writer), and read through the loader: a zip or
            # an installation of .pyc files works too.
            spec = importlib.util.find_spec(f'build_custom_op.{module}')
            digest.update(spec.loader.get_data(spec.origin))
        _code_digest = digest.hexdigest()
    return _code_digest


_code_digest = None


def record_key(members):
    """The key of the record of the bundle of members ([(name, size,
    sha256 hex)] in order): a sha256 of the code that lays bundles out and
    of each member's name, size and sha256."""
    description = [_code_identity()]
    for name, size, sha256 in members:
        description.append([name, size, sha256])
    return sha256_hex(json.dumps(description).encode('utf-8'))


def record_of(data):
    """The record of a bundle's bytes: {"size", "sha256", "md5"}."""
    return {'size': len(data), 'sha256': sha256_hex(data), 'md5': md5_hex(data)}


def recorded(value):
    """The record value as record_of() made it, or None when it is not one
    (a damaged record is not used)."""
    if not isinstance(value, dict) or set(value) != {'size', 'sha256', 'md5'}:
        return None
    size, sha256, md5 = value['size'], value['sha256'], value['md5']
    if isinstance(size, bool) or not isinstance(size, int) or size < 0 or \
            not _hex(sha256, _SHA256_HEX) or \
            not _hex(md5, _MD5_HEX):
        return None
    return value


def kept(path, record, store):
    """Whether the file at path (a symbolic link followed, as
    write_atomically() does) is already what write_atomically(path, the
    recorded bytes) would leave there: a regular file of this user, with
    no other link, of mode 644 less the umask, whose bytes have the
    recorded size and sha256 (known by the file's fingerprint in store, a
    _fingerprint.Store, when it is unchanged since it was last read).
    Anything else is written again."""
    real = os.path.realpath(path)
    try:
        descriptor = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, 'O_CLOEXEC', 0))
    except OSError:
        return False
    with os.fdopen(descriptor, 'rb') as stream:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1 or \
                info.st_uid != os.geteuid() or info.st_size != record['size'] or \
                stat.S_IMODE(info.st_mode) != 0o644 & ~_umask():
            return False
        known = store.known(real, info)
        if known is not None:
            return known[0] == record['sha256']
        try:
            started = time.time_ns()
            data = stream.read()
            after = os.fstat(descriptor)
        except OSError:
            return False
    return len(data) == record['size'] and \
        store.note(real, info, after, started, data) == record['sha256']


# --- reading and checking ---------------------------------------------------

class Bundle:
    """A bundle read from a file and checked (metadata, member names, and
    that every member metadata.json names is there), or one load() makes.

    members: [(name, bytes)] in archive order, where bytes is None for a
    member known by a file: files then maps its name to (path, size,
    sha256), and its bytes are read when asked for (member()).  store: the
    _fingerprint.Store that knows those files' digests."""

    def __init__(self, path, data, members, meta, md5=None, files=None, store=None):
        self.path = path
        self.data = data                # None for a bundle known by its record
        self.md5 = md5_hex(data) if md5 is None else md5
        self.members = list(members)
        self.files = dict(files or {})
        self.store = store or _fingerprint.store(None)
        # name -> (size, sha256 hex), as known or computed.
        self.digests = {name: (size, sha256) for name, (_, size, sha256) in self.files.items()}
        self.metadata = meta
        self.target = meta.get('target', 'xtensa')
        self.shapelib = meta['shapelib']
        self.computelibs = list(meta['computelibs']['names'])

    def ops(self):
        """[(namespace, op, fn, schema)] in the metadata's order."""
        return [(namespace, op, entry['fn'], entry['schema'])
                for namespace, table in self.metadata['ops'].items()
                for op, entry in table.items()]

    def names(self):
        return [name for name, _ in self.members]

    def member(self, name):
        """The member's bytes (read from its file, and checked against the
        size and sha256 it was known by), or None when there is none."""
        for index, (member_name, data) in enumerate(self.members):
            if member_name != name:
                continue
            if data is None:
                path, size, sha256 = self.files[name]
                try:
                    with open(path, 'rb') as stream:
                        data = stream.read()
                except OSError as error:
                    raise BundleError(f'cannot read {path}: {error.strerror}') from None
                if len(data) != size or sha256_hex(data) != sha256:
                    raise BundleError(f'{path} changed while the bundle {self.path} was made '
                                      'from it: make it again (run load() again)')
                self.members[index] = (name, data)
            return data
        return None

    def digest(self, name):
        """(size, sha256 hex) of a member."""
        if name not in self.digests:
            data = self.member(name)
            self.digests[name] = (len(data), sha256_hex(data))
        return self.digests[name]

    def incomplete(self, name):
        """_elf.incomplete() of the member; of a member known by a file that
        is unchanged since (its fingerprint in self.store), the file's
        headers alone are read."""
        if dict(self.members).get(name) is None and name in self.files:
            path, _, sha256 = self.files[name]
            try:
                with open(path, 'rb') as stream:
                    known = self.store.known(path, os.fstat(stream.fileno()))
                    if known is not None and known[0] == sha256:
                        return _elf.incomplete_file(stream.fileno())
            except OSError:
                pass
        return _elf.incomplete(self.member(name))


def _metadata_problem(meta):
    """What is wrong with the metadata's structure, or None."""
    if not isinstance(meta, dict):
        return f'it holds a JSON {type(meta).__name__}, not an object'
    for key in ('versions', 'shapelib', 'ops', 'computelibs', 'computelib'):
        if key not in meta:
            return f'it has no "{key}"'
    versions = meta['versions']
    if not isinstance(versions, dict) or not all(
            isinstance(versions.get(key), str)
            for key in ('ulib_to_ucode_version', 'ulib_to_isa_version')):
        return '"versions" must hold the strings ulib_to_ucode_version and ulib_to_isa_version'
    if not isinstance(meta['shapelib'], str):
        return '"shapelib" must be a file name'
    ops = meta['ops']
    if not isinstance(ops, dict) or not ops:
        return '"ops" must map at least one namespace to its ops'
    for namespace, table in ops.items():
        if not isinstance(table, dict) or not table:
            return f'"ops"."{namespace}" must map op names to their fn and schema'
        for op, entry in table.items():
            if not isinstance(entry, dict) or not isinstance(entry.get('fn'), str) \
                    or not isinstance(entry.get('schema'), str):
                return f'"ops"."{namespace}"."{op}" must hold the strings "fn" and "schema"'
    names = meta['computelibs'].get('names') if isinstance(meta['computelibs'], dict) else None
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        return '"computelibs" must hold "names", a list of file names'
    identity = meta['computelib'].get('id') if isinstance(meta['computelib'], dict) else None
    if not _hex(identity, _MD5_HEX):
        return '"computelib" must hold "id", the md5 of the first compute library'
    hashes = meta.get(HASHES, {})
    if not isinstance(hashes, dict) or not all(
            isinstance(name, str) and _hex(value, _SHA256_HEX)
            for name, value in hashes.items()):
        return f'"{HASHES}" must map member names to the sha256 of their bytes'
    if not isinstance(meta.get(TORCH, ''), str):
        return f'"{TORCH}" must be the version of PyTorch the shape library was built against'
    target = meta.get('target', 'xtensa')
    if target not in TARGETS:
        return f'"target" is {target!r}; it can be "host" (or absent, for the device)'
    return None


class WrongTarget(BundleError):
    """A bundle built for the other target; target says which it was built for."""

    def __init__(self, message, target):
        super().__init__(message)
        self.target = target


def read(path, target=None):
    """Reads and checks the bundle at path; raises BundleError saying what
    is wrong and what to do, WrongTarget when target is given and the
    bundle was built for the other one."""
    try:
        # Not blocking in open(): a FIFO is refused below, not waited on.
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, 'O_CLOEXEC', 0))
    except OSError as error:
        raise BundleError(f'cannot read {path}: {error.strerror}') from None
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        kind = ('a directory' if stat.S_ISDIR(mode) else 'a FIFO' if stat.S_ISFIFO(mode)
                else 'a device' if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                else 'a socket' if stat.S_ISSOCK(mode) else 'not a file')
        raise BundleError(f'cannot read {path}: it is {kind}, not a regular file; a '
                          'bundle is the lib<name>.so file that custom_op.load() writes')
    with os.fdopen(descriptor, 'rb') as stream:
        try:
            data = stream.read()
        except OSError as error:
            raise BundleError(f'cannot read {path}: {error.strerror}') from None
    return parse(path, data, target)


def parse(path, data, target=None):
    """Checks the bytes of a bundle (path names it in messages)."""
    from build_custom_op import _archive
    try:
        members = _archive.read(data)
    except _archive.ArchiveError as error:
        raise BundleError(f'{path} is not a custom-op bundle (an ar archive made by '
                          f'custom_op.load()): {error}') from None
    names = [name for name, _ in members]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise BundleError(f'{path} holds two members named {duplicates[0]}')
    raw = dict(members).get(METADATA)
    if raw is None:
        raise BundleError(f'{path} has no {METADATA}: it is not a bundle made by '
                          f'custom_op.load(), or it was cut short (it holds: '
                          f'{", ".join(names) or "nothing"})')
    try:
        meta = json.loads(raw.decode('utf-8'))
    except (UnicodeDecodeError, ValueError) as error:
        raise BundleError(f'{METADATA} in {path} is not JSON ({error}); rebuild the bundle '
                          'with custom_op.load()') from None
    problem = _metadata_problem(meta)
    if problem:
        raise BundleError(f'{METADATA} in {path} is not a bundle\'s metadata: {problem}')
    built_for = meta.get('target', 'xtensa')
    if target is not None and built_for != target:
        raise WrongTarget(f'{path} was built for {_TARGET_NAMES[built_for]}, not for '
                          f'{_TARGET_NAMES[target]}', built_for)
    bundle = Bundle(path, data, members, meta)
    wanted = [bundle.shapelib] + bundle.computelibs
    if bundle.target == 'host':
        wanted.append(host_record_name(bundle.computelibs))
    for name in wanted:
        try:
            _archive.check_member_name(name)
        except ValueError:
            raise BundleError(f'{METADATA} in {path} names the member {name!r}, which is not '
                              'a plain file name') from None
        if bundle.member(name) is None:
            raise BundleError(f'{path} has no member {name}, which {METADATA} names; '
                              'rebuild the bundle with custom_op.load()')
    _check_hashes(path, bundle)
    first = bundle.member(bundle.computelibs[0])
    if md5_hex(first) != meta['computelib']['id']:
        raise BundleError(f'{path}: the md5 of {bundle.computelibs[0]} is {md5_hex(first)}, '
                          f'but {METADATA} records {meta["computelib"]["id"]}: the member was '
                          'changed after the bundle was made; rebuild it')
    check_whole(bundle)
    return bundle


def check_whole(bundle):
    """Refuses a bundle whose shape library or (on the host) compute
    libraries are not whole shared libraries (loading one would kill the
    process with SIGBUS)."""
    path = bundle.path
    for name in [bundle.shapelib] + (bundle.computelibs if bundle.target == 'host' else []):
        problem = bundle.incomplete(name)
        if problem is not None:
            raise BundleError(f'{path}: its member {name} is not a whole shared library: '
                              f'{problem}; rebuild the bundle with custom_op.load()')


def _check_hashes(path, bundle):
    """Refuses a bundle whose members are not those its metadata records:
    a member changed, missing or added after the bundle was made."""
    hashes = bundle.metadata.get(HASHES)
    if hashes is None:
        return  # a bundle of the original format
    for name, data in bundle.members:
        if name == METADATA:
            continue
        recorded = hashes.get(name)
        if recorded is None:
            raise BundleError(f'{path} holds a member {name} that {METADATA} does not record: '
                              'it was added after the bundle was made; rebuild the bundle with '
                              'custom_op.load()')
        if sha256_hex(data) != recorded:
            raise BundleError(f'{path}: its member {name} was changed after the bundle was made '
                              f'(its sha256 is {sha256_hex(data)}, {METADATA} records {recorded}); '
                              'rebuild the bundle with custom_op.load()')
        bundle.digests[name] = (len(data), recorded)
    for name in hashes:
        if bundle.member(name) is None:
            raise BundleError(f'{path} has no member {name}, which {METADATA} records; rebuild '
                              'the bundle with custom_op.load()')


# --- the extraction cache ---------------------------------------------------

def extract_root():
    """The directory bundles are extracted into: $BUILD_CUSTOM_OP_BUNDLES,
    else /var/tmp/neuron-custom-ops as the original, unless another user
    owns it (then /var/tmp/neuron-custom-ops-UID).  A directory others can
    write is never used: what is extracted there gets loaded."""
    chosen = os.environ.get(EXTRACT_ROOT_VARIABLE)
    candidates = [chosen] if chosen else [EXTRACT_ROOT, f'{EXTRACT_ROOT}-{os.geteuid()}']
    problems = []
    for candidate in candidates:
        problem = _ownership.directory_problem(candidate)
        if problem is None:
            return candidate
        problems.append(problem)
    raise BundleError(f'cannot extract bundles into {" or ".join(candidates)}: '
                      f'{"; ".join(problems)}; the directory must be one of this user that no '
                      f'one else can write: set {EXTRACT_ROOT_VARIABLE} to such a directory')


def _complete(directory, bundle):
    """Whether directory holds every member of the bundle, byte for byte,
    as regular files no one else may write.  A file whose fingerprint
    bundle.store knows is compared by its sha256 without being read."""
    for name, _ in bundle.members:
        path = os.path.join(directory, name)
        try:
            descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, 'O_CLOEXEC', 0))
        except OSError:
            return False
        size, sha256 = bundle.digest(name)
        with os.fdopen(descriptor, 'rb') as stream:
            info = os.fstat(descriptor)
            if _ownership.file_problem(name, info) is not None or info.st_size != size:
                return False
            known = bundle.store.known(path, info)
            if known is not None:
                if known[0] != sha256:
                    return False
                continue
            try:
                started = time.time_ns()
                data = stream.read()
                after = os.fstat(descriptor)
            except OSError:
                return False
            if bundle.store.note(path, info, after, started, data) != sha256:
                return False
    return True


def extract(bundle, verbose=False):
    """The directory holding the bundle's members: ROOT/<md5 of the bundle>,
    extracted there (into a temporary directory, then renamed) unless a
    complete extraction is already there.  One that differs from the
    bundle (a member deleted, cut or changed) is replaced.  The files are
    written mode 644 at most (the umask may narrow it)."""
    root = extract_root()
    final = os.path.join(root, bundle.md5)
    if os.path.isdir(final) and _complete(final, bundle):
        return final
    try:
        temporary = tempfile.mkdtemp(prefix=f'.{bundle.md5}.', dir=root)
    except OSError as error:
        raise BundleError(f'cannot extract {bundle.path} into {root}: '
                          f'{error.strerror or error}') from None
    try:
        for name in bundle.names():
            data = bundle.member(name)
            descriptor = os.open(os.path.join(temporary, name),
                                 os.O_WRONLY | os.O_CREAT | os.O_EXCL |
                                 getattr(os, 'O_CLOEXEC', 0), 0o644)
            with os.fdopen(descriptor, 'wb') as stream:
                stream.write(data)
        os.chmod(temporary, 0o755 & ~_umask())
        if verbose:
            print(f'extracting {bundle.path} into {final}')
        try:
            os.rename(temporary, final)
        except OSError as error:
            if error.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                raise
            if _complete(final, bundle):
                return final  # another process extracted it meanwhile
            stale = tempfile.mkdtemp(prefix=f'.{bundle.md5}.stale.', dir=root)
            os.rename(final, os.path.join(stale, 'old'))
            shutil.rmtree(stale, ignore_errors=True)
            os.rename(temporary, final)
    except OSError as error:
        raise BundleError(f'cannot extract {bundle.path} into {final}: '
                          f'{error.strerror or error}') from None
    finally:
        if os.path.isdir(temporary):
            shutil.rmtree(temporary, ignore_errors=True)
    return final
