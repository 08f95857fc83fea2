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

Tornado 5.1's legacy ``callback=`` adapters are here too, as thin layers over Futures:
`run_on_executor` and `return_future`. They warn with DeprecationWarning, as 5.1 does.
"""
from __future__ import absolute_import, division, print_function

import functools
import sys
import warnings

from tinytornado._compat import futures, positional_index
# The Future and its internals are the kernel's (see _kernel); re-exported here, where
# Tornado 5.1 code looks for them.
from tinytornado._kernel import (
    CancelledError, Future, InvalidStateError, call_with_result, current_loop,
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


class ReturnValueIgnoredError(Exception):
    """A `return_future` function returned a value instead of passing it to `callback`."""


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
        current_loop().add_future(source, copy)


# -- executors ---------------------------------------------------------------------------

def resolve_through(loop, submitted):
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


class DummyExecutor(object):
    """An executor that runs each call at once, in the caller's thread (Tornado 5.1's)."""

    def submit(self, fn, *args, **kwargs):
        future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception:
            future.set_exc_info(sys.exc_info())
        return future

    def shutdown(self, wait=True):
        """Nothing to release: no thread was started."""


dummy_executor = DummyExecutor()


# -- Tornado 5.1's legacy callback= adapters ---------------------------------------------

def _warn_callback_argument():
    # stacklevel 3: the warning names the line that called the decorated function.
    warnings.warn('callback arguments are deprecated, use the returned Future instead',
                  DeprecationWarning, stacklevel=3)


def run_on_executor(*args, **kwargs):
    """Decorator: the method runs on ``self.executor``, and calling it returns a Future.

    Used bare (``@run_on_executor``) or naming the executor's attribute
    (``@run_on_executor(executor='_thread_pool')``). The Future is resolved on the
    calling thread's current IOLoop; as in Tornado 5.0+, ``self.io_loop`` is not used, and
    an ``io_loop=`` name (4.x code) is accepted and ignored. A ``callback=`` keyword in the
    call (deprecated in 5.1) is called on the loop with the result; the call still
    returns the Future.

    Raises:
        ValueError: positional and keyword arguments mixed, or more than one positional.
        TypeError: a keyword other than ``executor`` and ``io_loop``.
    """
    if args and kwargs:
        raise ValueError('cannot combine positional and keyword args')
    if len(args) > 1:
        raise ValueError('expected 1 argument, got %d' % len(args))
    unknown = sorted(set(kwargs) - set(['executor', 'io_loop']))
    if unknown:
        raise TypeError('run_on_executor() got unexpected keyword arguments: %s'
                        % ', '.join(unknown))
    decorate = functools.partial(_run_on_executor, kwargs.get('executor', 'executor'))
    return decorate(args[0]) if args else decorate


def _run_on_executor(attribute, method):
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        callback = kwargs.pop('callback', None)
        loop = current_loop()
        future = resolve_through(loop, getattr(self, attribute).submit(
            method, self, *args, **kwargs))
        if callback is not None:
            _warn_callback_argument()
            loop.add_future(future, functools.partial(call_with_result, callback))
        return future
    return wrapper


_NO_VALUE = object()


def return_future(f):
    """Decorator (deprecated in Tornado 5.1): `f` reports through a ``callback`` argument,
    and calling it returns a Future of what it reports.

    `f` is given a ``callback`` (positionally if its signature names one there) that
    resolves the Future with its argument, or None if called without one. An exception
    `f` raises reaches the caller, as a plain function's would, and a value it returns
    raises ReturnValueIgnoredError. A ``callback`` the caller passes (deprecated) is
    called with the result (with none if `f` called back with none): at once if `f`
    called back before returning, else on the current IOLoop once it does (not at all
    if the caller cancelled the Future meanwhile).

    Tornado 5.1 also failed the Future with an exception raised later in a callback `f`
    had scheduled, through its stack_context; tinytornado has no stack_context, so such
    an exception is only logged by the loop.
    """
    warnings.warn('@return_future is deprecated, use coroutines instead',
                  DeprecationWarning, stacklevel=2)
    position = positional_index(f, 'callback')

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        reporter = _Reporter()
        callback, args, kwargs = _swap_callback(position, reporter, args, kwargs)
        if f(*args, **kwargs) is not None:
            raise ReturnValueIgnoredError(
                '@return_future should not be used with functions that return values')
        if callback is not None:
            _warn_callback_argument()
            reporter.call_back(callback)
        return reporter.future
    return wrapper


def _swap_callback(position, reporter, args, kwargs):
    """Put `reporter` where the caller's callback goes: ``(that callback, args, kwargs)``."""
    if position is not None and position < len(args):
        return args[position], args[:position] + (reporter,) + args[position + 1:], kwargs
    callback = kwargs.get('callback')
    kwargs['callback'] = reporter
    return callback, args, kwargs


class _Reporter(object):
    """The ``callback`` a `return_future` function is given: it resolves `future`."""
    __slots__ = ('future', 'without_value')

    def __init__(self):
        self.future = Future()
        self.without_value = False

    def __call__(self, value=_NO_VALUE):
        if value is _NO_VALUE:
            self.without_value = True
            value = None
        future_set_result_unless_cancelled(self.future, value)

    def call_back(self, callback):
        """Give the caller's `callback` the result: now if there is one, else on the loop."""
        if self.future.done():
            self._run(callback, self.future)
        else:
            current_loop().add_future(self.future, functools.partial(self._run, callback))

    def _run(self, callback, future):
        if future.cancelled():
            return  # The caller gave up on the result.
        if self.without_value:
            callback()
        else:
            callback(future.result())
