"""Futures: the messengers between coroutines and the loop.

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
import multiprocessing

from tinytornado._compat import (
    GC_CYCLE_FINALIZERS, awaitable, format_exc_info, futures, raise_exc_info,
)
from tinytornado.log import app_log

__all__ = [
    'Future', 'CancelledError', 'TimeoutError', 'InvalidStateError', 'FUTURES',
    'ReturnValueIgnoredError', 'is_future', 'chain_future',
    'future_set_result_unless_cancelled', 'future_set_exception_unless_cancelled',
    'future_set_exc_info', 'future_add_done_callback', 'run_on_executor', 'return_future',
    'DummyExecutor', 'dummy_executor',
]

# The stdlib's (or the `futures` backport's) class, so that a cancelled
# concurrent.futures.Future and a cancelled tinytornado Future raise the same thing.
CancelledError = futures.CancelledError


class TimeoutError(Exception):
    """An operation (`gen.with_timeout`, `IOLoop.run_sync`, a queue or lock wait) timed out."""


class InvalidStateError(Exception):
    """A Future was resolved twice, or asked for a result it does not have yet."""


def _no_current_loop():
    raise RuntimeError('tinytornado.ioloop is not imported: there is no IOLoop to run on')


# IOLoop.current, handed over by tinytornado.ioloop when it is imported: the loop is a
# layer above this module, which may not import it (tests/test_layering.py).
_current_loop = _no_current_loop


_PENDING, _FINISHED, _CANCELLED = 'PENDING', 'FINISHED', 'CANCELLED'

# What a Future's `_outcome` is while it has no result: pending, or failed (or
# cancelled). Objects of their own, so that no result can be mistaken for them.
_NOT_DONE = object()
_FAILED = object()


class _TracebackLogger(object):
    """Logs an exception nobody retrieved when the Future holding it is collected.

    It lives outside the Future (which may sit in a reference cycle through its own
    traceback) so that its __del__ runs as soon as the Future is cleared. On 2.7 a __del__
    in a cycle would make the cycle uncollectable, so there the text is formatted eagerly
    and no frame is kept, unless the exception is new (`_set_new_exception`): it cannot
    lead back to the logger. On 3.4+ formatting waits until it is known to be needed.
    """
    __slots__ = ('exc_info', 'text')

    def __init__(self, exc_info, new_exception=False):
        formatted_later = GC_CYCLE_FINALIZERS or new_exception
        self.exc_info = exc_info if formatted_later else None
        self.text = None if formatted_later else format_exc_info(exc_info)

    def __del__(self):
        # getattr: an __init__ cut short (a RecursionError at its very call) leaves the
        # slots unset, and an error here would only be printed as "ignored".
        text = getattr(self, 'text', None)
        exc_info = getattr(self, 'exc_info', None)
        if text is None and exc_info is not None:
            text = format_exc_info(exc_info)
        if text:
            app_log.error('Future exception was never retrieved: %s', text.rstrip())


@awaitable
class Future(object):
    """The result of an asynchronous operation, with Tornado 5.1's API.

    `cancel()` works: see the module docstring. On Python 3, ``await future`` works too.
    """
    # Class-level defaults instead of __init__: creating a Future is then one allocation
    # and no Python-level call, which matters on every coroutine call. These fields are
    # this module's alone, but for `_outcome`, which other modules of the package may
    # read (never write): the result once it succeeded, else _NOT_DONE or _FAILED. It is
    # the internal fast read of gen's Runner, which looks at a Future at every step of
    # every coroutine, where a call would cost several times the read. Writes go through
    # the functions after this class (_done_future, _pending_future, _resolve).
    _state = _PENDING
    _outcome = _NOT_DONE
    _exc_info = None
    _callbacks = None  # A list once a callback is added.
    _tb_logger = None
    _canceller = None

    def __repr__(self):
        if self._state == _FINISHED:
            if self._exc_info is not None:
                return '<Future exception=%r>' % (self._exc_info[1],)
            return '<Future result=%r>' % (self._outcome,)
        return '<Future %s>' % self._state.lower()

    def done(self):
        return self._state != _PENDING

    def running(self):
        return self._state == _PENDING

    def cancelled(self):
        return self._state == _CANCELLED

    def result(self, timeout=None):
        """The result; re-raises the exception (with its traceback) if it failed.

        `timeout` is accepted for concurrent.futures compatibility; it must be None, since
        blocking here would block the loop.
        """
        self._check_done(timeout)
        if self._exc_info is not None:
            raise_exc_info(self.exc_info())
        return self._outcome

    def exception(self, timeout=None):
        """The exception (None on success); raises CancelledError if cancelled."""
        self._check_done(timeout)
        if self._exc_info is None:
            return None
        exc_info = self.exc_info()
        if self._state == _CANCELLED:
            raise_exc_info(exc_info)
        return exc_info[1]

    def exc_info(self):
        """The (type, value, traceback) triple of the failure, or None."""
        logger = self._tb_logger
        if logger is not None:
            # Retrieved: nothing to log. Emptied in place, not through a method, as every
            # failure a coroutine receives comes here (the logger's __del__ still runs).
            self._tb_logger = None
            logger.exc_info = logger.text = None
        return self._exc_info

    def add_done_callback(self, fn):
        """Call `fn(future)` when done: at once if it already is."""
        if self._state != _PENDING:
            fn(self)
        elif self._callbacks is None:
            self._callbacks = [fn]
        else:
            self._callbacks.append(fn)

    def remove_done_callback(self, fn):
        """Remove every registration of `fn`; returns how many there were."""
        if not self._callbacks:
            return 0
        before = len(self._callbacks)
        self._callbacks = [cb for cb in self._callbacks if cb != fn]
        return before - len(self._callbacks)

    def set_result(self, result):
        if self._state != _PENDING:
            self._raise_not_pending('set_result')
        if self._callbacks is None:
            # All _resolve would do, without its call.
            self._outcome = result
            self._state = _FINISHED
            self._canceller = None
        else:
            _resolve(self, result)

    def set_exception(self, exception):
        """Fail with `exception`; it keeps the traceback it was raised with, if any."""
        self.set_exc_info((type(exception), exception, getattr(exception, '__traceback__', None)))

    def set_exc_info(self, exc_info):
        """Fail with a sys.exc_info() triple, keeping its traceback (the 2.7 way)."""
        if self._state != _PENDING:
            self._raise_not_pending('set_exc_info')
        self._exc_info = exc_info
        if isinstance(exc_info[1], CancelledError):
            _resolve(self, _FAILED, _CANCELLED)
        else:
            self._tb_logger = _TracebackLogger(exc_info)
            _resolve(self, _FAILED)

    def set_canceller(self, canceller):
        """Make `cancel()` call `canceller()` (which returns whether it accepted) instead
        of resolving at once. Used by the coroutine runner and by combinators."""
        self._canceller = canceller

    def set_cancelled(self):
        """Resolve as cancelled now: what `cancel()` does when there is no canceller."""
        # set_exc_info's work without its checks of the exception, and _cancelled_exc_info
        # without its call: each of 10,000 queued fetches timing out together comes here.
        if self._state != _PENDING:
            self._raise_not_pending('set_cancelled')
        self._exc_info = CancelledError, CancelledError(), None
        _resolve(self, _FAILED, _CANCELLED)

    def cancel(self):
        """Ask to cancel; returns False if already done.

        A coroutine's Future is not done on return: the coroutine receives CancelledError
        at its current `yield` and may clean up (or even refuse) before it ends.
        """
        if self._state != _PENDING:
            return False
        if self._canceller is not None:
            return self._canceller()
        self.set_cancelled()
        return True

    def _check_done(self, timeout):
        if self._state == _PENDING:
            if timeout is not None:
                raise InvalidStateError('Future.result(timeout) would block the loop; '
                                        'yield the Future instead')
            raise InvalidStateError('Future is not done yet: %r' % (self,))

    def _raise_not_pending(self, method):
        raise InvalidStateError('%s() on a Future that is already %s: %r' % (
            method, 'cancelled' if self._state == _CANCELLED else 'done', self))


def _cancelled_exc_info():
    # Made, not raised: a raise's traceback would hold this frame and, through it, every
    # frame that called it, the cancelled Future among their locals: a reference cycle
    # per cancellation, for the collector. A cancellation has no stack worth showing.
    return CancelledError, CancelledError(), None


# -- Internal fast paths: for gen's Runner and wrappers, _gen_legacy and iostream ---------
# Each step of every coroutine runs some of these, where the public methods would check
# what the caller knows already. They are not API: their callers are in this package.

def _done_future(result):
    """A Future already resolved with `result`, made in one call (nobody can wait on it
    yet, so no set_result bookkeeping)."""
    future = Future()
    future._outcome = result
    future._state = _FINISHED
    return future


# How `_done_future` makes a done Future, for gen's C wrapper, which makes them so too
# (the attribute that takes the result, then the (attribute, value) pairs it sets).
_DONE_FUTURE_FIELDS = ('_outcome', (('_state', _FINISHED),))


def _pending_future(canceller):
    """A pending Future that `cancel()` asks `canceller` to cancel (see set_canceller)."""
    future = Future()
    # Stored though they equal the class defaults: CPython 3.11 reads an instance's own
    # attribute in one specialised step but a class default through a generic lookup,
    # and these are read when it is waited on and when it resolves.
    future._state = _PENDING
    future._outcome = _NOT_DONE
    future._callbacks = None
    future._canceller = canceller
    return future


def _cancellable(future):
    """Whether cancelling `future` stops some work: a Future given a canceller (a
    coroutine's, a fetch's, a timer's, a queue's or lock's waiter's, a stream read's...) or
    a concurrent.futures one. A bare Future is a promise its producer keeps: cancelled, it
    would make the producer's later set_result() raise, which Tornado 5.1 code (whose
    with_timeout cancels nothing) does not expect."""
    return not isinstance(future, Future) or future._canceller is not None


def _set_new_exception(future, exception):
    """`future.set_exception(exception)` for an exception made for it just now, as
    timeouts make theirs: no traceback, held by nothing else.

    On 2.7 its text is then formatted only if nobody retrieves it, where set_exc_info
    formats every failure at once (1.9 us, a tenth of what 10,000 fetches timing out
    together cost there): until it is retrieved, which drops the logger, such an
    exception cannot lead back to its Future and make the logger part of a cycle.
    """
    if future._state != _PENDING:
        future._raise_not_pending('set_exception')
    exc_info = future._exc_info = (type(exception), exception, None)
    future._tb_logger = _TracebackLogger(exc_info, True)  # new_exception
    _resolve(future, _FAILED)


def _resolve(future, outcome, state=_FINISHED):
    """Settle `future` and run its callbacks; nothing happens if it is done already.

    gen's Runner calls ``_resolve(future, result)``: set_result without its check. Here
    set_result and set_exc_info end too (the latter with `_FAILED`, and `state`
    _CANCELLED for a cancellation).
    """
    if future._state is not _PENDING:
        return
    future._outcome = outcome
    future._state = state
    # Dropping the canceller breaks the Future <-> Runner reference cycle early.
    future._canceller = None
    callbacks = future._callbacks
    if callbacks is None:
        return
    future._callbacks = None
    for fn in callbacks:
        try:
            fn(future)
        except Exception:
            app_log.exception('Exception in callback %r for %r', fn, future)


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


def _failure_of(future):
    """A done, uncancelled Future's exception as exc_info; None if it succeeded."""
    if isinstance(future, Future):
        return future.exc_info()
    # The 2.7 `futures` backport keeps the worker's traceback only behind exception_info().
    exception_info = getattr(future, 'exception_info', None)
    if exception_info is not None:
        exception, tb = exception_info()
    else:
        exception = future.exception()
        tb = getattr(exception, '__traceback__', None)
    return None if exception is None else (type(exception), exception, tb)


def _copy_outcome(source, target):
    if target.done():
        return
    if source.cancelled():
        target.cancel()
        return
    exc_info = _failure_of(source)
    if exc_info is not None:
        future_set_exc_info(target, exc_info)
    else:
        target.set_result(source.result())


def chain_future(source, target):
    """When `source` resolves, resolve `target` the same way (unless it is done already).

    Either may be a concurrent.futures.Future; a cancelled source cancels the target. A
    concurrent.futures source still pending hands its outcome over through the current
    IOLoop (as in Tornado 5.1), so `target`'s callbacks run on the loop's thread.
    """
    copy = functools.partial(_copy_outcome, target=target)
    if isinstance(source, Future) or source.done():
        future_add_done_callback(source, copy)
    else:
        _current_loop().add_future(source, copy)


# -- executors ---------------------------------------------------------------------------

def _resolve_through(loop, submitted):
    """A Future resolved like `submitted` (an executor's Future), on `loop`'s thread.

    Cancelling it cancels the submitted call too, if that has not started.
    """
    future = Future()
    future.set_canceller(functools.partial(_cancel_submitted, submitted, future))
    loop.add_future(submitted, functools.partial(_copy_outcome, target=future))
    return future


def _cancel_submitted(submitted, future):
    submitted.cancel()
    future.set_cancelled()
    return True


def _default_thread_pool():
    """The pool `IOLoop.run_in_executor(None, ...)` makes: five threads a CPU, as in 5.1."""
    try:
        cpus = multiprocessing.cpu_count()
    except NotImplementedError:
        cpus = 1
    return futures.ThreadPoolExecutor(max_workers=cpus * 5)


def _call_with_result(callback, future):
    callback(future.result())


def _positional_index(fn, name):
    """Where `fn` takes `name` positionally; None for a keyword, or a signature not seen."""
    code = getattr(fn, '__code__', None)
    if code is None:
        return None
    names = code.co_varnames[:code.co_argcount]
    return names.index(name) if name in names else None


# -- Tornado 5.1's legacy adapters, re-exported (tests/test_layering.py: only here, last) --
from tinytornado._concurrent_legacy import (  # noqa: E402
    DummyExecutor, ReturnValueIgnoredError, dummy_executor, return_future, run_on_executor,
)
