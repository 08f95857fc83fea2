"""The Python-3-only half of the kernel: what lets ``await`` wait for a tinytornado Future.

`_kernel` imports it at its end, on Python 3 only, and sets `Future.__await__` to
`future_await`; this module imports `copy_outcome` from `_kernel` at its own end, so that
either can be imported first.
It does not import asyncio (that costs more than the rest of the package): an asyncio loop
can only be running if asyncio has been imported already.

An ``await future`` is driven by one of two things, and `future_await` serves both:

- an asyncio Task (``async def`` code on an asyncio loop): it accepts only asyncio Futures,
  so the await goes through an asyncio Future on the running loop, resolved like the
  tinytornado one. Cancelling the Task cancels the tinytornado Future, and the await
  ends once that has ended, as when a Task awaits a Task.
- a tinytornado `gen.Runner`, which `tinytornado.platform.asyncio` lets drive native
  coroutines on tinytornado's own loop, where no asyncio loop runs: it waits for the
  tinytornado Future itself, then sends its result or throws its failure in.
"""
from __future__ import absolute_import, division, print_function

import sys
import textwrap

from tinytornado._compat_py3 import running_asyncio_loop

__all__ = ['future_await', 'asyncio_future_for']


# `yield from` and `return value` in a generator are syntax errors on 2.7, where this
# module is never imported but `python2.7 -m compileall tinytornado` still compiles it:
# the two generators below are compiled from source on 3.x only (as Tornado 4 and 5 did).
exec(compile(textwrap.dedent('''
    def future_await(future):
        """`Future.__await__`: the result of `future`, once it is done."""
        # A failure raised here has this frame in its traceback, and `future` holds the
        # failure: the local must go, or the awaiting coroutine's locals stay in a cycle
        # until the garbage collector runs (issue 28).
        try:
            if future.done() and not future.cancelled():
                return future.result()
            asyncio_loop = running_asyncio_loop()
            if asyncio_loop is None:
                # A cancelled Future is yielded too, so that the Runner throws the
                # cancellation in the way async code expects it (see platform.asyncio).
                return (yield future)
            return (yield from _await_in_task(future, asyncio_loop))
        finally:
            future = None


    def _await_in_task(future, asyncio_loop):
        cancelled_error = sys.modules['asyncio'].CancelledError
        try:
            return (yield from _asyncio_waiter(future, asyncio_loop))
        except cancelled_error:
            # The Task was cancelled. As when a Task awaits a Task, cancel `future` and, if it
            # accepts, end the await only once it has ended, so the coroutine behind it
            # cleans up first. A Future that refuses is left alone: the Task goes on cancelled.
            if future.done() or not future.cancel():
                raise
            return (yield from _await_in_task(future, asyncio_loop))
        finally:
            future = None  # As in future_await.
'''), '<tinytornado._kernel_py3: compiled on 3.x>', 'exec'))


def asyncio_future_for(future, asyncio_loop):
    """An asyncio Future on `asyncio_loop` resolved like tinytornado `future`.

    Cancelling the asyncio Future cancels `future` (asyncio reports it one pass later).
    """
    waiter = _asyncio_waiter(future, asyncio_loop)
    waiter.add_done_callback(lambda done: _cancel_if_cancelled(done, future))
    return waiter


def _asyncio_waiter(future, asyncio_loop):
    waiter = asyncio_loop.create_future()
    future.add_done_callback(lambda done: copy_outcome(done, waiter))
    return waiter


def _cancel_if_cancelled(waiter, future):
    if waiter.cancelled() and not future.done():
        future.cancel()


# Last: imported first, this module makes _kernel run, which takes future_await from here.
from tinytornado._kernel import copy_outcome  # noqa: E402
