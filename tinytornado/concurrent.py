"""Futures: the messengers between coroutines and the loop (Tornado 5.1's public module).

A `Future` starts pending and is resolved exactly once, with a result, an exception (kept
as exc_info so a Python 2 traceback survives the trip) or a cancellation. Callbacks added
with `add_done_callback` run synchronously when it resolves, or at once if it already has;
the loop and the coroutine runner decide when to *act* on a resolution (they re-schedule
themselves through the loop), so a chain of futures never recurses through user code.

Cancellation is cooperative: a Future produced by a running coroutine carries a canceller
(set by the runner) that throws `CancelledError` into the coroutine; `cancel()` on any
other pending Future resolves it as cancelled at once.

A concurrent.futures.Future resolves on another thread. What waits on one (`chain_future`,
`run_on_executor`, `IOLoop.run_in_executor`) hands its outcome over through the current
IOLoop, so that a tinytornado Future is only ever resolved on its loop's thread.

Tornado 5.1's legacy adapters (`run_on_executor`, `return_future`, `DummyExecutor`) live in
_concurrent_legacy, re-exported at the end of this module.
"""
from __future__ import absolute_import, division, print_function

import functools

from tinytornado._compat import futures
# The Future and its internals are the kernel's (see _kernel); the Future and its
# exceptions are re-exported here, where Tornado 5.1 code looks for them.
from tinytornado._kernel import (
    CancelledError, Future, InvalidStateError, copy_outcome, current_loop,
)
from tinytornado.log import app_log

__all__ = [
    'Future', 'CancelledError', 'TimeoutError', 'InvalidStateError', 'FUTURES',
    'ReturnValueIgnoredError', 'is_future', 'chain_future',
    'future_set_result_unless_cancelled', 'future_set_exception_unless_cancelled',
    'future_set_exc_info', 'future_add_done_callback', 'run_on_executor', 'return_future',
    'DummyExecutor', 'dummy_executor',
]


class TimeoutError(Exception):
    """An operation (`gen.with_timeout`, `IOLoop.run_sync`, a queue or lock wait) timed out."""




FUTURES = (Future, futures.Future)


def is_future(x):
    """True for a tinytornado Future or a concurrent.futures.Future."""
    return isinstance(x, FUTURES)


def future_add_done_callback(future, fn):
    """Call `fn(future)` when `future` is done, for either kind of Future.

    One done already calls `fn` here, so an exception it raises reaches the caller (as in
    Tornado 5.1) rather than concurrent.futures' logger. Otherwise concurrent.futures calls
    it on whatever thread resolves the Future: `fn` must be thread-safe there (the loop's
    add_callback is).
    """
    if future.done():
        fn(future)
    else:
        future.add_done_callback(fn)


def future_set_result_unless_cancelled(future, value):
    """Set the result unless the future was cancelled (the waiter is gone)."""
    if not future.cancelled():
        future.set_result(value)


def future_set_exception_unless_cancelled(future, exception):
    """Set the exception unless cancelled; log it instead, so it is not lost."""
    if not future.cancelled():
        future.set_exception(exception)
    else:
        app_log.error('Exception after Future was cancelled', exc_info=(
            type(exception), exception, getattr(exception, '__traceback__', None)))


def future_set_exc_info(future, exc_info):
    """Set exc_info unless cancelled; log it instead, so it is not lost."""
    if not future.cancelled():
        if isinstance(future, Future):
            future.set_exc_info(exc_info)
        else:
            future.set_exception(exc_info[1])
    elif not isinstance(exc_info[1], CancelledError):
        app_log.error('Exception after Future was cancelled', exc_info=exc_info)


def chain_future(source, target):
    """When `source` resolves, resolve `target` the same way (unless it is done already).

    Either may be a concurrent.futures.Future; a cancelled source cancels the target. A
    concurrent.futures source still pending hands its outcome over through the current
    IOLoop (as in Tornado 5.1), so `target`'s callbacks run on the loop's thread.
    """
    copy = functools.partial(copy_outcome, target=target)
    if isinstance(source, Future) or source.done():
        future_add_done_callback(source, copy)
    else:
        current_loop().add_future(source, copy)


# -- executors ---------------------------------------------------------------------------

def resolve_through(loop, submitted):
    """A Future resolved like `submitted` (an executor's Future), on `loop`'s thread.

    Cancelling it cancels the submitted call too, if that has not started.
    """
    future = Future()
    future.set_canceller(functools.partial(_cancel_submitted, submitted, future))
    loop.add_future(submitted, functools.partial(copy_outcome, target=future))
    return future


def _cancel_submitted(submitted, future):
    submitted.cancel()
    future.set_cancelled()
    return True


# -- Tornado 5.1's legacy adapters, re-exported (tests/test_layering.py: only here, last) --
from tinytornado._concurrent_legacy import (  # noqa: E402
    DummyExecutor, ReturnValueIgnoredError, dummy_executor, return_future, run_on_executor,
)
