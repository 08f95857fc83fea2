"""Tornado 5.1's ``callback=`` argument of a server connection's `write_headers` and
`write`, deprecated there: `call_when_written` runs the callback once the write is done.

Only httpserver imports this module (at its top: it needs nothing of httpserver); new code
waits for the Future that `write_headers` and `write` return instead.
"""
from __future__ import absolute_import, division, print_function

import warnings

__all__ = ['call_when_written']


def call_when_written(io_loop, future, callback):
    """Call ``callback()`` on `io_loop` once `future` (of a write) is done, as 5.1 did:
    also when the connection closed under the write; with 5.1's DeprecationWarning."""
    warnings.warn('callback argument is deprecated, use returned Future instead',
                  DeprecationWarning, stacklevel=3)
    io_loop.add_future(future, lambda _: callback())
