"""_ownership.py - the one check of the directories and files whose
libraries this package loads: the bundle extraction root (_bundle.py) and
the caches of _torch_build.py (shape libraries, the bridge, compute
builds).  A library is trusted only where no one but the current user
could have put or changed it: a directory (not a symbolic link) of this
user that no one else may write, and a regular file of this user that no
one else may write."""

import os
import stat


def directory_problem(path, create=True):
    """None when path is a directory of this user that no one else may
    write, else what is wrong with it.  With create, a missing path (and
    its missing parents) is created first, mode 755 at most."""
    if create:
        try:
            os.makedirs(path, mode=0o755, exist_ok=True)
        except FileExistsError:
            pass
        except OSError as error:
            return f'{path} cannot be created: {error.strerror}'
    try:
        info = os.lstat(path)
    except OSError as error:
        return f'{path} cannot be read: {error.strerror}'
    if stat.S_ISLNK(info.st_mode):
        return (f'{path} is a symbolic link (to {os.readlink(path)}), which another user could '
                'have made point elsewhere')
    if not stat.S_ISDIR(info.st_mode):
        return f'{path} is not a directory'
    return _owner_problem(path, info)


def file_problem(path, info):
    """None when info (os.fstat of the open file at path) is that of a
    regular file of this user that no one else may write, else what is
    wrong with it."""
    if not stat.S_ISREG(info.st_mode):
        return f'{path} is not a regular file'
    return _owner_problem(path, info)


def _owner_problem(path, info):
    if info.st_uid != os.geteuid():
        return f'{path} belongs to another user (uid {info.st_uid})'
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f'others can write {path} (mode {stat.S_IMODE(info.st_mode):o})'
    return None


def chain_problem(root, relative, create=True):
    """directory_problem of root and of each directory from it down to
    root/relative (relative: a path of plain names), the first found."""
    path = root
    for part in [''] + relative.split(os.sep):
        path = os.path.join(path, part) if part else path
        problem = directory_problem(path, create)
        if problem is not None:
            return problem
    return None


def private_mode(mode):
    """mode without the write bits of group and others (a file this
    package writes and later trusts, whatever the umask)."""
    return mode & ~(stat.S_IWGRP | stat.S_IWOTH)
