"""_shape_library.py - the shape library of custom_op.load(): built with
torch.utils.cpp_extension (torch's own flags) and kept in the cache of
_torch_build.py, keyed by what goes into it and not by the library's name,
then loaded and read through torchneuron/register.h's C functions.

Imports torch: only custom_op loads this module.
"""

import ctypes
import hashlib
import os

import torch

from build_custom_op import _torch_build
from build_custom_op import _torch_kit
from build_custom_op._library import installed, installed_directory, source_tree

INCLUDE_VARIABLE = 'BUILD_CUSTOM_OP_INCLUDE'
REGISTER_HEADER = os.path.join('torchneuron', 'register.h')
# The cache's part that holds shape libraries (each is named
# _torch_kit.SHAPE_LIBRARY_NAME there; the bundle names its member
# lib<name>shapefcn.so).
_CACHE_KIND = 'shape-libraries'
# The original reads names into 128-byte buffers; a longer name is read
# again with a buffer this large.
_NAME_BUFFER = 128
_LONG_NAME_BUFFER = 65536


class ShapeLibraryError(Exception):
    """A step of the shape library failed; the message says which file."""


def include_directory():
    """The directory that holds torchneuron/register.h: the source tree's
    sdk/torchneuron/include (in the source tree's copy of the package), the
    install's include directory, or $BUILD_CUSTOM_OP_INCLUDE."""
    candidates = []
    if source_tree() is not None:
        candidates.append(os.path.join(source_tree(), 'sdk', 'torchneuron', 'include'))
    if installed():
        candidates.append(installed_directory('INCLUDEDIR'))
    if os.environ.get(INCLUDE_VARIABLE):
        candidates.append(os.environ[INCLUDE_VARIABLE])
    for candidate in candidates:
        if os.path.isfile(os.path.join(candidate, REGISTER_HEADER)):
            return os.path.abspath(candidate)
    raise ShapeLibraryError(
        f'cannot find {REGISTER_HEADER} (looked in {", ".join(candidates)}); run make in the '
        f'build-custom-op source tree, make install, or set {INCLUDE_VARIABLE} to the '
        'directory that holds torchneuron/')


def cache_root():
    """The directory that holds the cache of shape libraries (and of the
    other libraries built against PyTorch)."""
    return _torch_build.cache_root()


# realpath -> (st_dev, st_ino) of each shape library this process loaded,
# and the sha256 of each one's contents -> its path.
_loaded = {}
_loaded_contents = {}


def _identity(path):
    info = os.stat(path)
    return (info.st_dev, info.st_ino)


def _note_loaded(path, digest):
    """Notes that this process loaded the library at path, whose contents'
    sha256 is digest."""
    _loaded[os.path.realpath(path)] = _identity(path)
    _loaded_contents[digest] = path


def load_library(path, data):
    """Loads the shape library at path (whose bytes are data) with
    torch.ops.load_library, unless this process already loaded the same
    library from elsewhere (load() loads it from the cache): a second copy
    would define its namespace a second time.  Returns the path in use."""
    digest = hashlib.sha256(data).hexdigest()
    known = _loaded_contents.get(digest)
    if known is not None and os.path.exists(known):
        return known
    try:
        torch.ops.load_library(path)
    except (OSError, RuntimeError) as error:
        raise ShapeLibraryError(f'cannot load {path}: {error}') from None
    _note_loaded(path, digest)
    return path


def build_and_load(name, sources, extra_cflags, extra_include_paths, verbose):
    """Builds the shape library of library name from the shape sources (or
    finds it in the cache), loads it with torch.ops.load_library, and
    returns (path, the sha256 of its bytes).  name is for messages only:
    libraries of other names with the same sources share the cache's
    entry."""
    include_paths = list(extra_include_paths) + [include_directory()]
    try:
        path, digest = _torch_build.build(_CACHE_KIND, _torch_kit.SHAPE_LIBRARY_NAME, sources,
                                          extra_cflags, include_paths, verbose)
    except _torch_build.TorchBuildError as error:
        raise ShapeLibraryError(str(error)) from None
    known = _loaded_contents.get(digest)
    if known is not None and os.path.exists(known):
        return known, digest   # loaded from elsewhere: a second copy would define it again
    before = _loaded.get(os.path.realpath(path))
    if before is not None and before != _identity(path):
        raise ShapeLibraryError(
            f'the shape library of {name} ({path}) was rebuilt (a header it includes changed) '
            'after this process loaded it, and a process cannot load a changed library '
            'again: start a new Python process')
    if before is None:
        try:
            torch.ops.load_library(path)
        except (OSError, RuntimeError) as error:
            raise ShapeLibraryError(f'cannot load {path}: {error}') from None
        _note_loaded(path, digest)
    return path, digest


# --- reading the ops through register.h's C functions ---------------------------------

def _name(function, *indices):
    """Calls char *function(indices..., char *buf, size_t max) as the
    original does, with a 128-byte buffer; a name that does not fit is
    read again with a larger one.  None when there is no such name."""
    for size in (_NAME_BUFFER, _LONG_NAME_BUFFER):
        buffer = ctypes.create_string_buffer(size)
        result = function(*[ctypes.c_int(i) for i in indices], buffer, ctypes.c_size_t(size))
        if result is not None:
            return result.decode('utf-8', 'replace')
    return None


def _declare(library):
    char_p, c_int, size_t = ctypes.c_char_p, ctypes.c_int, ctypes.c_size_t
    library.getNumNamespaces.restype = c_int
    library.getNumNamespaces.argtypes = []
    library.getNamespace.restype = char_p
    library.getNamespace.argtypes = [c_int, char_p, size_t]
    library.getNumNeuronOps.restype = c_int
    library.getNumNeuronOps.argtypes = [c_int]
    for function in ('getNeuronOpName', 'getNeuronFnName'):
        getattr(library, function).restype = char_p
        getattr(library, function).argtypes = [c_int, c_int, char_p, size_t]


class Op:
    """One op the shape library registers."""

    def __init__(self, namespace, op, fn, source):
        self.namespace = namespace
        self.op = op
        self.fn = fn
        self.source = source      # "FILE:LINE" of its m.def, or None
        self.schema = None        # the schema string, once formatted

    @property
    def qualified(self):
        return f'{self.namespace}::{self.op}'


def read_ops(path):
    """The (namespace, op, compute function) records of the loaded shape
    library at path, in registration order, as [Op]."""
    try:
        library = ctypes.CDLL(path)
    except OSError as error:
        raise ShapeLibraryError(f'cannot load {path}: {error}') from None
    try:
        _declare(library)
    except AttributeError:
        raise ShapeLibraryError(
            f'{path} does not export the functions of torchneuron/register.h: its shape '
            'sources must #include "torchneuron/register.h" and register their ops in a '
            'NEURON_LIBRARY block') from None
    extension = getattr(library, 'getNeuronRegistrationError', None)
    if extension is not None:
        extension.restype = ctypes.c_char_p
        extension.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        buffer = ctypes.create_string_buffer(4096)
        error = extension(buffer, ctypes.c_size_t(4096))
        if error is not None:
            raise ShapeLibraryError(
                f'{path}: PyTorch refused a registration: {error.decode("utf-8", "replace")}'
                '. A namespace can be defined by one shape library of a process: if another '
                'shape library defines it, give each NEURON_LIBRARY a namespace of its own (or '
                "register all of the namespace's ops in one library); if an earlier version "
                'of this shape library is loaded, start a new Python process')
    source_of = getattr(library, 'getNeuronOpSource', None)
    if source_of is not None:
        source_of.restype = ctypes.c_char_p
        source_of.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
    ops = []
    for i in range(library.getNumNamespaces()):
        namespace = _name(library.getNamespace, i)
        if namespace is None:
            raise ShapeLibraryError(f'{path}: getNamespace({i}) returned NULL')
        for j in range(library.getNumNeuronOps(i)):
            op = _name(library.getNeuronOpName, i, j)
            fn = _name(library.getNeuronFnName, i, j)
            if op is None or fn is None:
                raise ShapeLibraryError(f'{path}: the names of op {j} of namespace {namespace} '
                                        'cannot be read (NULL)')
            source = _name(source_of, i, j) if source_of is not None else None
            ops.append(Op(namespace, op, fn, source))
    if not ops:
        raise ShapeLibraryError(f'{path} registers no ops: its shape sources must register '
                                'them with m.def("op", &shape_function, "compute_function") '
                                'in a NEURON_LIBRARY block')
    return ops


def schema_string(op):
    """The schema string the original formats from PyTorch's parsed schema:
    "ns::op(TYPE NAME, ...) -> (TYPE NAME, ...)"."""
    schema = torch._C._get_schema(op.qualified, '')
    arguments = ', '.join(f'{argument.type} {argument.name}' for argument in schema.arguments)
    returns = ', '.join(f'{value.type} {value.name}' for value in schema.returns)
    return f'{schema.name}({arguments}) -> ({returns})'
