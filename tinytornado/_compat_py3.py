"""The Python-3-only half of `_compat`: what lets ``await`` wait for a tinytornado Future.

Imported by `_compat` on Python 3 only; like `_compat` it imports nothing from tinytornado,
and it does not import asyncio either (that costs more than the rest of the package): an
asyncio loop can only be running if asyncio has been imported already.

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

__all__ = ['awaitable', 'future_await', 'asyncio_future_for', 'running_asyncio_loop']


def awaitable(cls):
    """Class decorator: ``await instance`` waits for a tinytornado-style Future."""
    cls.__await__ = future_await
    return cls


# `yield from` and `return value` in a generator are syntax errors on 2.7, where this
# module is never imported but `python2.7 -m compileall tinytornado` still compiles it:
# the two generators below are compiled from source on 3.x only (as Tornado 4 and 5 did).
exec(compile(textwrap.dedent('''
    def future_await(future):
        """`Future.__await__`: the result of `future`, once it is done."""
        if future.done() and not future.cancelled():
            return future.result()
        asyncio_loop = running_asyncio_loop()
        if asyncio_loop is None:
            # A cancelled Future is yielded too, so that the Runner throws the cancellation in
            # the way async code expects it (see platform.asyncio).
            return (yield future)
        return (yield from _await_in_task(future, asyncio_loop))


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
'''), '<tinytornado._compat_py3: compiled on 3.x>', 'exec'))


def running_asyncio_loop():
    """The asyncio loop running in this thread, or None."""
    asyncio = sys.modules.get('asyncio')
    return None if asyncio is None else asyncio._get_running_loop()


def asyncio_future_for(future, asyncio_loop):
    """An asyncio Future on `asyncio_loop` resolved like tinytornado `future`.

    Cancelling the asyncio Future cancels `future` (asyncio reports it one pass later).
    """
    waiter = _asyncio_waiter(future, asyncio_loop)
    waiter.add_done_callback(lambda done: _cancel_if_cancelled(done, future))
    return waiter


def _asyncio_waiter(future, asyncio_loop):
    waiter = asyncio_loop.create_future()
    future.add_done_callback(lambda done: _copy_to_asyncio(done, waiter))
    return waiter


def _copy_to_asyncio(source, waiter):
    if waiter.done():
        return
    if source.cancelled():
        waiter.cancel()
        return
    exc_info = source.exc_info()
    if exc_info is not None:
        waiter.set_exception(exc_info[1])
    else:
        waiter.set_result(source.result())


def _cancel_if_cancelled(waiter, future):
    if waiter.cancelled() and not future.done():
        future.cancel()
