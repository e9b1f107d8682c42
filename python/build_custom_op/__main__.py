"""python3 -m build_custom_op: the build-custom-op command (see main())."""

import sys

from build_custom_op import main

sys.exit(main())
