"""Tornado 5.1's `@web.asynchronous`, re-exported by `tinytornado.web` (at its end).

A verb method so decorated leaves the response open when it returns: the handler finishes
it later, with ``self.finish()`` from a callback. Tornado 6 removed it; legacy handlers
keep working here. Without stack contexts, an exception raised in such a callback is
logged by the loop rather than turned into a 500 (README, differences).
"""
from __future__ import absolute_import, division, print_function

import functools
import warnings

from tinytornado import gen
from tinytornado.ioloop import IOLoop

__all__ = ['asynchronous']


def asynchronous(method):
    """The response stays open after `method` returns, until the handler calls finish().

    A method that returns a Future (a `gen.coroutine`) is finished for, once it resolves,
    unless it finished the response itself.
    """
    warnings.warn('@asynchronous is deprecated, use coroutines instead', DeprecationWarning,
                  stacklevel=2)

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        self._auto_finish = False
        result = method(self, *args, **kwargs)
        if result is None:
            return None
        result = gen.convert_yielded(result)

        def finish_when_done(future):
            future.result()  # an exception goes to the loop's log, as in 5.1
            if not self._finished:
                self.finish()
        IOLoop.current().add_future(result, finish_when_done)
        return None
    return wrapper
