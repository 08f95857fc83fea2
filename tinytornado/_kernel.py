"""The kernel: the Future, and the internal operations on Futures gen and the loop need.

Everything a coroutine waits on is a `Future`; this module holds its class, the internal
operations the layers above need without the public methods' checks, and `copy_outcome`,
which copies a done Future's outcome onto another Future of any kind (``await`` on Python
3 is the twin `_kernel_py3`'s). It is the one place where a Future's fields are written,
and its names are the package's internal API: `concurrent` re-exports `Future` and the
exceptions (the Tornado-named, public home), gen's Runner and wrappers, the loop,
`_waiters` and tcpclient import the rest from here, never private names of one another
(tests/test_layering.py refuses those).

The Future's state
------------------
`_state` is PENDING, FINISHED or CANCELLED. `_outcome` is the result once it succeeded,
else NOT_DONE (pending) or FAILED (failed or cancelled: `_exc_info` holds why). Other
modules may *read* `future._outcome` (gen's Runner does at every step of every coroutine,
where a call would cost several times the read) and write nothing: writes go through
`done_future`, `pending_future`, `resolve` and `set_new_exception`.

The thread's current loop
-------------------------
`thread_state.instance` is the thread's current IOLoop (absent where there is none). The
loop sets it; gen reads it as IOLoop.current() without the call. `current_loop()` is
IOLoop.current() for code below the loop (concurrent's `chain_future`, the legacy
callback adapters): it loads `tinytornado.ioloop` by name the first time it is needed,
so what it finds does not depend on what was imported first.
"""
from __future__ import absolute_import, division, print_function

import importlib
import threading

from tinytornado._compat import (
    GC_CYCLE_FINALIZERS, PY2, format_exc_info, futures, raise_exc_info,
)
from tinytornado.log import app_log

__all__ = [
    'Future', 'CancelledError', 'InvalidStateError', 'PENDING', 'FINISHED', 'CANCELLED',
    'NOT_DONE', 'FAILED', 'DONE_FUTURE_FIELDS', 'done_future', 'pending_future',
    'cancellable', 'cancelled_exc_info', 'set_new_exception', 'resolve', 'call_with_result',
    'copy_outcome', 'failure_of', 'thread_state', 'current_loop',
]

# The stdlib's (or the `futures` backport's) class, so that a cancelled
# concurrent.futures.Future and a cancelled tinytornado Future raise the same thing.
CancelledError = futures.CancelledError


class InvalidStateError(Exception):
    """A Future was resolved twice, or asked for a result it does not have yet."""


PENDING, FINISHED, CANCELLED = 'PENDING', 'FINISHED', 'CANCELLED'

# What a Future's `_outcome` is while it has no result: pending, or failed (or
# cancelled). Objects of their own, so that no result can be mistaken for them.
NOT_DONE = object()
FAILED = object()


class _TracebackLogger(object):
    """Logs an exception nobody retrieved when the Future holding it is collected.

    It lives outside the Future (which may sit in a reference cycle through its own
    traceback) so that its __del__ runs as soon as the Future is cleared. On 2.7 a __del__
    in a cycle would make the cycle uncollectable, so there the text is formatted eagerly
    and no frame is kept, unless the exception is new (`set_new_exception`): it cannot
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


class Future(object):
    """The result of an asynchronous operation, with Tornado 5.1's API.

    `cancel()` works: see the module docstring. On Python 3, ``await future`` works too.
    """
    # Class-level defaults instead of __init__: creating a Future is then one allocation
    # and no Python-level call, which matters on every coroutine call. These fields are
    # this module's alone, but for `_outcome`, which other modules of the package may
    # read (never write): the result once it succeeded, else NOT_DONE or FAILED. It is
    # the internal fast read of gen's Runner, which looks at a Future at every step of
    # every coroutine, where a call would cost several times the read. Writes go through
    # the functions after this class (done_future, pending_future, resolve).
    _state = PENDING
    _outcome = NOT_DONE
    _exc_info = None
    _callbacks = None  # A list once a callback is added.
    _tb_logger = None
    _canceller = None

    def __repr__(self):
        if self._state == FINISHED:
            if self._exc_info is not None:
                return '<Future exception=%r>' % (self._exc_info[1],)
            return '<Future result=%r>' % (self._outcome,)
        return '<Future %s>' % self._state.lower()

    def done(self):
        return self._state != PENDING

    def running(self):
        return self._state == PENDING

    def cancelled(self):
        return self._state == CANCELLED

    def result(self, timeout=None):
        """The result; re-raises the exception (with its traceback) if it failed.

        `timeout` is accepted for concurrent.futures compatibility; it must be None, since
        blocking here would block the loop.
        """
        self._check_done(timeout)
        if self._exc_info is not None:
            try:
                raise_exc_info(self.exc_info())
            finally:
                # The traceback takes this frame, and this Future holds the traceback: a
                # cycle otherwise, the caller's locals kept until the garbage collector
                # runs (as Tornado 5.1 does).
                self = None
        return self._outcome

    def exception(self, timeout=None):
        """The exception (None on success); raises CancelledError if cancelled."""
        self._check_done(timeout)
        if self._exc_info is None:
            return None
        exc_info = self.exc_info()
        if self._state == CANCELLED:
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
        if self._state != PENDING:
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
        if self._state != PENDING:
            self._raise_not_pending('set_result')
        if self._callbacks is None:
            # All resolve would do, without its call.
            self._outcome = result
            self._state = FINISHED
            self._canceller = None
        else:
            resolve(self, result)

    def set_exception(self, exception):
        """Fail with `exception`; it keeps the traceback it was raised with, if any."""
        self.set_exc_info((type(exception), exception, getattr(exception, '__traceback__', None)))

    def set_exc_info(self, exc_info):
        """Fail with a sys.exc_info() triple, keeping its traceback (the 2.7 way)."""
        if self._state != PENDING:
            self._raise_not_pending('set_exc_info')
        self._exc_info = exc_info
        if isinstance(exc_info[1], CancelledError):
            resolve(self, FAILED, CANCELLED)
        else:
            self._tb_logger = _TracebackLogger(exc_info)
            resolve(self, FAILED)

    def set_canceller(self, canceller):
        """Make `cancel()` call `canceller()` (which returns whether it accepted) instead
        of resolving at once. Used by the coroutine runner and by combinators."""
        self._canceller = canceller

    def set_cancelled(self):
        """Resolve as cancelled now: what `cancel()` does when there is no canceller."""
        # set_exc_info's work without its checks of the exception, and cancelled_exc_info
        # without its call: each of 10,000 queued fetches timing out together comes here.
        if self._state != PENDING:
            self._raise_not_pending('set_cancelled')
        self._exc_info = CancelledError, CancelledError(), None
        resolve(self, FAILED, CANCELLED)

    def cancel(self):
        """Ask to cancel; returns False if already done.

        A coroutine's Future is not done on return: the coroutine receives CancelledError
        at its current `yield` and may clean up (or even refuse) before it ends.
        """
        if self._state != PENDING:
            return False
        if self._canceller is not None:
            return self._canceller()
        self.set_cancelled()
        return True

    def _check_done(self, timeout):
        if self._state == PENDING:
            if timeout is not None:
                raise InvalidStateError('Future.result(timeout) would block the loop; '
                                        'yield the Future instead')
            raise InvalidStateError('Future is not done yet: %r' % (self,))

    def _raise_not_pending(self, method):
        raise InvalidStateError('%s() on a Future that is already %s: %r' % (
            method, 'cancelled' if self._state == CANCELLED else 'done', self))


def cancelled_exc_info():
    # Made, not raised: a raise's traceback would hold this frame and, through it, every
    # frame that called it, the cancelled Future among their locals: a reference cycle
    # per cancellation, for the collector. A cancellation has no stack worth showing.
    return CancelledError, CancelledError(), None


# -- The fast paths: for gen's Runner and wrappers, _waiters and tcpclient ---------------
# Each step of every coroutine runs some of these, where the public methods would check
# what the caller knows already. They are the package's internal API, not the public one.

def done_future(result):
    """A Future already resolved with `result`, made in one call (nobody can wait on it
    yet, so no set_result bookkeeping)."""
    future = Future()
    future._outcome = result
    future._state = FINISHED
    return future


# How `done_future` makes a done Future, for gen's C wrapper, which makes them so too
# (the attribute that takes the result, then the (attribute, value) pairs it sets).
DONE_FUTURE_FIELDS = ('_outcome', (('_state', FINISHED),))


def pending_future(canceller):
    """A pending Future that `cancel()` asks `canceller` to cancel (see set_canceller)."""
    future = Future()
    # Stored though they equal the class defaults: CPython 3.11 reads an instance's own
    # attribute in one specialised step but a class default through a generic lookup,
    # and these are read when it is waited on and when it resolves.
    future._state = PENDING
    future._outcome = NOT_DONE
    future._callbacks = None
    future._canceller = canceller
    return future


def cancellable(future):
    """Whether cancelling `future` stops some work: a Future given a canceller (a
    coroutine's, a fetch's, a timer's, a queue's or lock's waiter's, a stream read's...) or
    a concurrent.futures one. A bare Future is a promise its producer keeps: cancelled, it
    would make the producer's later set_result() raise, which Tornado 5.1 code (whose
    with_timeout cancels nothing) does not expect."""
    return not isinstance(future, Future) or future._canceller is not None


def set_new_exception(future, exception):
    """`future.set_exception(exception)` for an exception made for it just now, as
    timeouts make theirs: no traceback, held by nothing else.

    On 2.7 its text is then formatted only if nobody retrieves it, where set_exc_info
    formats every failure at once (1.9 us, a tenth of what 10,000 fetches timing out
    together cost there): until it is retrieved, which drops the logger, such an
    exception cannot lead back to its Future and make the logger part of a cycle.
    """
    if future._state != PENDING:
        future._raise_not_pending('set_exception')
    exc_info = future._exc_info = (type(exception), exception, None)
    future._tb_logger = _TracebackLogger(exc_info, True)  # new_exception
    resolve(future, FAILED)


def resolve(future, outcome, state=FINISHED):
    """Settle `future` and run its callbacks; nothing happens if it is done already.

    gen's Runner calls ``resolve(future, result)``: set_result without its check. Here
    set_result and set_exc_info end too (the latter with `FAILED`, and `state`
    CANCELLED for a cancellation).
    """
    if future._state is not PENDING:
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


def call_with_result(callback, future):
    """``callback(future.result())``: how a legacy ``callback=`` gets a Future's result."""
    callback(future.result())


# -- One Future's outcome onto another ----------------------------------------------------

def copy_outcome(source, target):
    """Resolve `target` the way `source`, which is done, was resolved, unless `target` is
    done already.

    Either may be a tinytornado Future, a concurrent.futures one (or the 2.7 backport's) or
    an asyncio one: chain_future, the executors' hand-over, ``await`` in an asyncio Task and
    the asyncio bridge all copy through here. A failure keeps its traceback where the
    target can hold one (a tinytornado Future keeps exc_info, which 2.7 needs). A cancelled
    source cancels the target through ``target.cancel()``: a tinytornado target's canceller
    (a coroutine's, say) is asked, as a caller's cancel would ask it.
    """
    if target.done():
        return
    if source.cancelled():
        target.cancel()
        return
    exc_info = failure_of(source)
    if exc_info is None:
        target.set_result(source.result())
    elif isinstance(target, Future):
        target.set_exc_info(exc_info)
    else:
        target.set_exception(exc_info[1])


def failure_of(future):
    """A done, uncancelled Future's exception as exc_info (any kind of Future, as
    `copy_outcome` takes them); None if it succeeded."""
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


# Each thread's current loop, as `instance` (absent in a thread that has none). A module
# global rather than a class attribute: the loop is looked up for every coroutine that
# waits, and 3.11 finds a module global faster.
thread_state = threading.local()

_ioloop_current = None  # IOLoop.current, once current_loop() has loaded the loop.


def current_loop():
    """IOLoop.current(), for the layers below the loop.

    The loop sits above this module, which may not import it (tests/test_layering.py); it
    is loaded by name instead, once, the first time a caller below it needs a loop (a
    concurrent.futures Future to hand over, a legacy callback to run).
    """
    global _ioloop_current
    if _ioloop_current is None:
        _ioloop_current = importlib.import_module('tinytornado.ioloop').IOLoop.current
    return _ioloop_current()


# ``await future`` on Python 3: `Future.__await__`, whose generators are Python-3-only
# syntax, lives in the kernel's twin, which imports copy_outcome from here (defined above).
if not PY2:
    from tinytornado._kernel_py3 import future_await  # noqa: E402
    Future.__await__ = future_await
