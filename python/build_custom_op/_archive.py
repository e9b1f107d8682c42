"""_archive.py - the ar archive format of lib<name>.so bundles, in Python.

What `ar r` writes on Linux (the GNU format): the magic line, then one
60-byte header and the data of each member, padded to an even length.
Names of more than 15 bytes go into a "//" member and are referred to as
"/OFFSET".  The writer is deterministic, like `ar rD` (Debian's default):
dates, owners and groups are 0 and every mode is 644.  When a member is an
ELF object, `ar r` puts a symbol index first, the "/" member: the count of
symbols, then the offset of each one's member header, then their names,
each ending in a NUL (all numbers 32-bit big-endian).  It lists, member by
member in table order, the .symtab symbols that are global, weak or
unique and defined, and the common ones; a stripped library adds none.
So the bytes are those of `ar r`.  The reader skips an index and also
takes BSD long names ("#1/LENGTH").
"""

import struct

from build_custom_op import _elf

MAGIC = b'!<arch>\n'
_HEADER_SIZE = 60
_HEADER_END = b'`\n'
_SHORT_NAME_LIMIT = 15


class ArchiveError(Exception):
    """A file that is not a well-formed ar archive; the message says where."""


def _field(text, width):
    data = text.encode('ascii') if isinstance(text, str) else text
    if len(data) > width:
        raise ValueError(f'ar header field {text!r} is longer than {width} bytes')
    return data + b' ' * (width - len(data))


def _header(name_field, size, mode='644'):
    """A member header; the "//" member (mode None) has blank dates, owners
    and mode, the symbol index mode 0."""
    if mode is not None:
        meta = _field('0', 12) + _field('0', 6) + _field('0', 6) + _field(mode, 8)
    else:
        meta = b' ' * (12 + 6 + 6 + 8)
    return _field(name_field, 16) + meta + _field(str(size), 10) + _HEADER_END


def _indexed_names(data):
    """The names a member gives the symbol index, or None when it is not an
    object (then ar writes no index for it)."""
    if not _elf.is_object(data):
        return None
    table = _elf.symbols(data)
    if table is None:
        return None
    listed = (_elf.STB_GLOBAL, _elf.STB_WEAK, _elf.STB_GNU_UNIQUE)
    return [symbol.name for symbol in table
            if symbol.section == _elf.SHN_COMMON
            or (symbol.binding in listed and symbol.section != _elf.SHN_UNDEF)]


def _index_names(indexed_names):
    """(count, names) of the symbol index: indexed_names per member
    (_indexed_names); names each end in a NUL, padded to an even length
    (the padding, unlike a member's, is counted in the index's size)."""
    count = sum(len(names or ()) for names in indexed_names)
    names = b''.join(name + b'\0' for member_names in indexed_names
                     for name in member_names or ())
    return count, names + b'\0' * (len(names) % 2)


def check_member_name(name):
    """Raises ValueError unless name is a plain file name a member may have."""
    if not isinstance(name, str) or not name or name in ('.', '..') or '/' in name \
            or '\0' in name or '\n' in name:
        raise ValueError(f'{name!r} cannot be the name of an archive member')


def build(members):
    """The bytes of an archive of members, a list of (name, bytes), in order."""
    names = set()
    for name, _ in members:
        check_member_name(name)
        if name in names:
            raise ValueError(f'two archive members are named {name}')
        names.add(name)
    long_names = bytearray()
    name_fields = []
    for name, _ in members:
        encoded = name.encode('utf-8')
        if len(encoded) <= _SHORT_NAME_LIMIT:
            name_fields.append(encoded + b'/')
        else:
            name_fields.append(f'/{len(long_names)}'.encode('ascii'))
            long_names += encoded + b'/\n'
    if long_names and len(long_names) % 2:
        long_names += b'\n'  # ar counts the table's padding in its size
    indexed_names = [_indexed_names(data) for _, data in members]
    indexed = any(names is not None for names in indexed_names)
    count, index_names = _index_names(indexed_names)
    index_size = 4 + 4 * count + len(index_names)  # the count, the offsets, the names
    offset = len(MAGIC) + (_HEADER_SIZE + index_size if indexed else 0)
    offset += _HEADER_SIZE + len(long_names) if long_names else 0
    member_offsets = []
    for _, data in members:
        member_offsets.append(offset)
        offset += _HEADER_SIZE + len(data) + len(data) % 2
    if offset > 0xFFFFFFFF:
        raise ValueError('the bundle would be 4 GiB or more, beyond the offsets of its '
                         'symbol index')
    out = bytearray(MAGIC)
    if indexed:
        out += _header(b'/', index_size, mode='0') + struct.pack('>I', count)
        for member_names, member_offset in zip(indexed_names, member_offsets):
            out += struct.pack('>I', member_offset) * len(member_names or ())
        out += index_names
    if long_names:
        out += _header(b'//', len(long_names), mode=None) + long_names
    for field, (_, data) in zip(name_fields, members):
        out += _header(field, len(data)) + data
        if len(data) % 2:
            out += b'\n'
    return bytes(out)


def _decimal(field, what, offset):
    text = field.decode('ascii', 'replace').strip()
    if not text.isdigit():
        raise ArchiveError(f'the member header at byte {offset} has a bad {what} field '
                           f'{field.decode("ascii", "replace")!r}')
    return int(text)


def read(data):
    """The members of an archive as a list of (name, bytes), in order.
    Raises ArchiveError when data is not a well-formed archive."""
    if not data.startswith(MAGIC):
        raise ArchiveError('it does not start with the ar magic "!<arch>"')
    members = []
    long_names = None
    offset = len(MAGIC)
    while offset < len(data):
        if offset + _HEADER_SIZE > len(data):
            raise ArchiveError(f'it ends inside the member header at byte {offset}')
        header = data[offset:offset + _HEADER_SIZE]
        if header[58:60] != _HEADER_END:
            raise ArchiveError(f'the member header at byte {offset} is damaged')
        size = _decimal(header[48:58], 'size', offset)
        start = offset + _HEADER_SIZE
        end = start + size
        if end > len(data):
            raise ArchiveError(f'the member at byte {offset} needs {size} bytes, '
                               f'but the file ends {end - len(data)} bytes early')
        body = data[start:end]
        field = header[:16].rstrip(b' ')
        offset = end + (size % 2)
        if field in (b'/', b'/SYM64/'):
            continue  # the symbol index
        if field == b'//':
            long_names = body
            continue
        if field.startswith(b'#1/'):
            length = _decimal(field[3:], 'name length', start - _HEADER_SIZE)
            if length > size:
                raise ArchiveError(f'the BSD name at byte {start} is longer than its member')
            name, body = body[:length].rstrip(b'\0'), body[length:]
        elif field.startswith(b'/'):
            if long_names is None:
                raise ArchiveError(f'the member at byte {start - _HEADER_SIZE} refers to a long '
                                   'name, but the archive has no "//" name table')
            at = _decimal(field[1:], 'long name offset', start - _HEADER_SIZE)
            stop = long_names.find(b'/\n', at)
            if at >= len(long_names) or stop < 0:
                raise ArchiveError(f'the member at byte {start - _HEADER_SIZE} refers to long '
                                   f'name {at}, which the name table does not hold')
            name = long_names[at:stop]
        elif field.endswith(b'/'):
            name = field[:-1]
        else:
            name = field
        try:
            text = name.decode('utf-8')
            check_member_name(text)
        except (UnicodeDecodeError, ValueError):
            raise ArchiveError(f'the member at byte {start - _HEADER_SIZE} has the name '
                               f'{name!r}, which is not a plain file name') from None
        members.append((text, bytes(body)))
    return members
