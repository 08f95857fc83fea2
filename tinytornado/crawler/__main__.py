"""``python -m tinytornado.crawler``: runs tinycrawl, the application (application/cli.py)."""
from __future__ import absolute_import, division, print_function

import sys

from .application.cli import main

if __name__ == '__main__':
    sys.exit(main())
