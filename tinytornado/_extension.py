"""Loading the optional C speedups (``_speedups.c``), which gen and _compat use.

TINYTORNADO_EXTENSION=0 turns them off (the tests run both ways); =1 makes a missing build
an error, as TORNADO_EXTENSION does for Tornado's.
"""
from __future__ import absolute_import, division, print_function

import os

__all__ = ['speedups']


def _load():
    wanted = os.environ.get('TINYTORNADO_EXTENSION')
    if wanted == '0':
        return None
    try:
        from tinytornado import _speedups
    except ImportError:
        if wanted == '1':
            raise
        return None
    return _speedups


# The module, or None when it is not built or not wanted.
speedups = _load()
