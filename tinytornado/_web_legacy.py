"""Tornado 5.1's `@web.asynchronous`, re-exported by `tinytornado.web` (at its end).

A verb method so decorated leaves the response open when it returns: the handler finishes
it later, with ``self.finish()`` from a callback. Tornado 6 removed it; legacy handlers
keep working here. A method that is a coroutine or a `gen.engine` function hands web the
Future of its run, so that its exception becomes an error response, as 5.1's stack context
made it. Without stack contexts, an exception raised in a plain callback is logged by the
loop rather than turned into a 500 (README, differences).
"""
from __future__ import absolute_import, division, print_function

import functools
import warnings

from tinytornado import gen

__all__ = ['asynchronous']


def asynchronous(method):
    """The response stays open after `method` returns, until the handler calls finish().

    A method that returns a Future (a `gen.coroutine`) is finished for, once it resolves,
    unless it finished the response itself. The wrapper returns a Future for web to wait
    on when `method` is a coroutine or a `gen.engine` function (whose failure then becomes
    an error response), else None.
    """
    warnings.warn('@asynchronous is deprecated, use coroutines instead', DeprecationWarning,
                  stacklevel=2)
    engine_run = gen.engine_as_coroutine(method)

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        self._auto_finish = False
        if engine_run is not None:  # the engine function finishes the response itself
            return engine_run(self, *args, **kwargs)
        result = method(self, *args, **kwargs)
        if result is None:
            return None
        return _finish_when_done(self, gen.convert_yielded(result))
    return wrapper


@gen.coroutine
def _finish_when_done(handler, future):
    """Wait for a coroutine method's `future` (its error goes to web, which answers with
    it), then finish the response if the method did not."""
    yield future
    if not handler._finished:
        handler.finish()
