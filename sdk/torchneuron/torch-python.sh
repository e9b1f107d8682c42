#!/bin/sh
# torch-python.sh - prints the path of an interpreter that can import
# PyTorch (Debian's belongs to /usr/bin/python3, which need not be the
# python3 first on PATH), or says what to install and fails.
for candidate in /usr/bin/python3 python3; do
	if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import torch' 2>/dev/null; then
		command -v "$candidate"
		exit 0
	fi
done
echo "${1:-this}: needs PyTorch: apt-get install python3-torch pybind11-dev ninja-build" >&2
exit 1
