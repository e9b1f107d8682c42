"""installation.py - writes build_custom_op/_installation.py for make install:
where the install puts each part, relative to the package's directory (see
build_custom_op/_library.py).

Usage: python3 python/installation.py OUTPUT PACKAGE_DIR NAME=DIRECTORY...
PACKAGE_DIR and each DIRECTORY are where the install puts them (without
DESTDIR); OUTPUT is the file to write (with it)."""

import os
import sys


def main(arguments):
    if len(arguments) < 3 or not all('=' in argument for argument in arguments[2:]):
        sys.exit('usage: installation.py OUTPUT PACKAGE_DIR NAME=DIRECTORY...')
    output, package = arguments[0], arguments[1]
    lines = ['# _installation.py - written by make install: where the install put each',
             "# part, relative to this package's directory (see _library.py).", '']
    for argument in arguments[2:]:
        name, directory = argument.split('=', 1)
        if not name.isidentifier() or not os.path.isabs(directory) or \
                not os.path.isabs(package):
            sys.exit(f'installation.py: {argument}: give NAME=/absolute/directory, and an '
                     'absolute package directory')
        lines.append(f'{name} = {os.path.relpath(directory, package)!r}')
    with open(output, 'w') as stream:
        stream.write('\n'.join(lines) + '\n')


if __name__ == '__main__':
    main(sys.argv[1:])
