"""The Python-3-only half of `_compat`: the asyncio loop running in this thread, if any.

Imported on Python 3 only (by `ioloop` and the kernel's `_kernel_py3`); like `_compat` it
imports nothing from tinytornado, and it does not import asyncio either (that costs more
than the rest of the package): an asyncio loop can only be running if asyncio has been
imported already.
"""
from __future__ import absolute_import, division, print_function

import sys

__all__ = ['running_asyncio_loop']


def running_asyncio_loop():
    """The asyncio loop running in this thread, or None."""
    asyncio = sys.modules.get('asyncio')
    return None if asyncio is None else asyncio._get_running_loop()
