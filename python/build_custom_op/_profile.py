"""_profile - device-cost profiles of host ops (libruncustomop's rco_profile).

A profile says what each emulated core did during one op call (element
accessor uses, stream elements, TCM copies, peak TCM, element-wise work,
the result's copy, output elements written, host time), what that would
cost on the device by the cost model of run-custom-op(1) (an estimate from
documented figures, not a measurement), and what to change, with what each
change would save.  Two ways to get them::

    y, profile = library.run('relu', x, profile=True)      # runner.Library
    with build_custom_op.profile() as profiles:            # any host op run inside,
        y = torch.ops.my_ops.relu(x)                        # torch.ops included
    print(profiles[0])                                      # the table run-custom-op shows

Neither imports torch.  The JSON, the table and the SVG come from the C
library, so they are those of run-custom-op --profile and --profile-svg.
"""

import ctypes
import threading

from build_custom_op import _run_binding, _run_types

__all__ = ['profile', 'Profile', 'CoreProfile', 'Hint', 'kinds']

_CORES = 8
# include/runcustomop.h: RCO_PROFILE_KINDS, RCO_PROFILE_HINTS, RCO_HINT_TEXT_SIZE.
_KIND_COUNT = 5
_HINT_COUNT = 5
_HINT_TEXT_SIZE = 512


class _CoreStruct(ctypes.Structure):
    """struct rco_core_profile."""
    _fields_ = [('core', ctypes.c_int)] + [
        (name, ctypes.c_uint64) for name in (
            'element_reads', 'element_writes', 'stream_reads', 'stream_writes',
            'buffered_stream_bytes', 'unbuffered_stream_elements', 'tensor_to_tcm_calls',
            'tensor_to_tcm_bytes', 'tcm_to_tensor_calls', 'tcm_to_tensor_bytes', 'tcm_peak_bytes',
            'elementwise_calls', 'elementwise_elements', 'elementwise_bytes',
            'result_copy_bytes')] + [
        ('output_elements_written', ctypes.c_int64), ('host_us', ctypes.c_double),
        ('estimated_us', ctypes.c_double * _KIND_COUNT), ('estimated_device_us', ctypes.c_double)]


class _HintStruct(ctypes.Structure):
    """struct rco_profile_hint."""
    _fields_ = [('kind', ctypes.c_int), ('saves_us', ctypes.c_double),
                ('text', ctypes.c_char * _HINT_TEXT_SIZE)]


class _ProfileStruct(ctypes.Structure):
    """struct rco_profile."""
    _fields_ = [('op', ctypes.c_char * _run_types._NAME_SIZE),
                ('core_count', ctypes.c_int), ('cores', _CoreStruct * _CORES),
                ('fixed_us', ctypes.c_double),
                ('estimated_device_us', ctypes.c_double), ('imbalance', ctypes.c_double),
                ('hint_count', ctypes.c_int), ('hints', _HintStruct * _HINT_COUNT)]


def kinds():
    """The kinds of estimated time, as the JSON and CoreProfile.estimated_us
    name them: ('hbm_element', 'stream', 'tcm_copy', 'compute', 'result_copy')."""
    _shared()
    return _names['kinds']


class CoreProfile:
    """One core's part of a profile: the counts of run-custom-op(1), THE
    PROFILE, as attributes (output_elements_written is None when the output
    checks were off), host_us, estimated_us (a dict by kind: see kinds())
    and estimated_device_us (their sum)."""

    def __init__(self, raw):
        for name, _ in _CoreStruct._fields_:
            setattr(self, name, getattr(raw, name))
        if self.output_elements_written < 0:
            self.output_elements_written = None
        self.estimated_us = dict(zip(kinds(), raw.estimated_us))


class Hint:
    """What to change in the kernel: kind ('result_copy', 'element_access',
    'imbalance', 'stream' or 'multicore'), text, and saves_us, the time
    the cost model says it would save (against the op as it is)."""

    def __init__(self, raw):
        _shared()
        self.kind = _names['hints'][raw.kind]
        self.text = raw.text.decode(errors='replace')
        self.saves_us = raw.saves_us

    def __repr__(self):
        return f'<Hint {self.kind}: saves {self.saves_us:.3f} us>'

    def __repr__(self):
        return (f'<CoreProfile core {self.core}: estimated {self.estimated_device_us:.3f} us '
                f'on the device>')


class Profile:
    """The profile of one op call: op, cores (a CoreProfile each: one for a
    single-core build, eight for a multicore one), fixed_us,
    estimated_device_us (the slowest core plus fixed_us), imbalance (the
    busiest core's estimate over the mean) and hints (a Hint each, the
    largest saving first).  str() is the table run-custom-op --profile
    shows; json() and svg() are the files it writes."""

    def __init__(self, raw):
        self._raw = raw
        self.op = raw.op.decode(errors='replace')
        self.cores = [CoreProfile(raw.cores[i]) for i in range(raw.core_count)]
        self.fixed_us = raw.fixed_us
        self.estimated_device_us = raw.estimated_device_us
        self.imbalance = raw.imbalance
        self.hints = [Hint(raw.hints[i]) for i in range(raw.hint_count)]

    def _render(self, function):
        size = function(ctypes.byref(self._raw), None, 0)
        text = ctypes.create_string_buffer(size + 1)
        function(ctypes.byref(self._raw), text, size + 1)
        return text.value.decode(errors='replace')

    def json(self):
        """The JSON of run-custom-op --profile."""
        return self._render(_shared().rco_profile_json)

    def table(self):
        """The table run-custom-op --profile shows on stderr."""
        return self._render(_shared().rco_profile_table)

    def svg(self):
        """A standalone SVG of the estimated time per core, by kind."""
        return self._render(_shared().rco_profile_svg)

    def __str__(self):
        return self.table()

    def __repr__(self):
        return (f'<Profile of op {self.op} on {len(self.cores)} cores: estimated '
                f'{self.estimated_device_us:.3f} us on the device, imbalance {self.imbalance:.2f}>')


_declared = None
_declared_lock = threading.Lock()
# The C library's names of the kinds of time and of hints.
_names = {}


def _shared():
    """libruncustomop, the runner's, with the profile functions declared."""
    global _declared
    with _declared_lock:
        if _declared is None:
            library = _run_binding._load()
            profile_pointer = ctypes.POINTER(_ProfileStruct)
            library.rco_last_profile.argtypes = [ctypes.c_void_p, profile_pointer]
            library.rco_last_profile.restype = ctypes.c_int
            for name in ('rco_profile_json', 'rco_profile_table', 'rco_profile_svg'):
                function = getattr(library, name)
                function.argtypes = [profile_pointer, ctypes.c_char_p, ctypes.c_size_t]
                function.restype = ctypes.c_size_t
            library.rco_profile_collect_begin.argtypes = [ctypes.POINTER(ctypes.c_size_t)]
            library.rco_profile_collect_begin.restype = ctypes.c_int
            library.rco_profile_collected.argtypes = []
            library.rco_profile_collected.restype = ctypes.c_size_t
            library.rco_profile_collected_get.argtypes = [ctypes.c_size_t, profile_pointer]
            library.rco_profile_collected_get.restype = ctypes.c_int
            library.rco_profile_collect_end.argtypes = []
            library.rco_profile_collect_end.restype = ctypes.c_int
            for name in ('rco_profile_kind_name', 'rco_hint_kind_name'):
                function = getattr(library, name)
                function.argtypes = [ctypes.c_int]
                function.restype = ctypes.c_char_p
            _names['kinds'] = tuple(library.rco_profile_kind_name(k).decode()
                                    for k in range(_KIND_COUNT))
            _names['hints'] = tuple(library.rco_hint_kind_name(k).decode()
                                    for k in range(_HINT_COUNT))
            _declared = library
        return _declared


def last(handle):
    """The profile of the last call on an open library (its rco_library
    handle), or None when it has none."""
    raw = _ProfileStruct()
    if _shared().rco_last_profile(handle, ctypes.byref(raw)) != 0:
        return None
    return Profile(raw)


class profile:
    """A context manager that collects the profile of every host op called
    inside it, in this process, from any thread and through any way in
    (runner.Library.run, torch.ops on the host target)::

        with build_custom_op.profile() as profiles:
            y = torch.ops.my_ops.relu_forward(x)
        print(profiles[-1])

    The list it gives is filled when the block ends.  Collections may be
    nested; each gets the calls made while it was open."""

    def __init__(self):
        self.profiles = []
        self._first = None

    def __enter__(self):
        first = ctypes.c_size_t()
        _shared().rco_profile_collect_begin(ctypes.byref(first))
        self._first = first.value
        return self.profiles

    def __exit__(self, *exception):
        shared = _shared()
        try:
            for index in range(self._first, shared.rco_profile_collected()):
                raw = _ProfileStruct()
                if shared.rco_profile_collected_get(index, ctypes.byref(raw)) == 0:
                    self.profiles.append(Profile(raw))
        finally:
            shared.rco_profile_collect_end()
        return False
