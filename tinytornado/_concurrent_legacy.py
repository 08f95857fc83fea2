"""Tornado 5.1's legacy adapters over Futures: `run_on_executor`, `return_future` (with its
``callback=`` arguments) and `DummyExecutor`, re-exported by concurrent.

They are thin layers over the public Future and IOLoop interfaces and warn with
DeprecationWarning where 5.1 does; new code uses coroutines and `IOLoop.run_in_executor`.
Nothing in the core imports this module: concurrent re-exports its names at its end.
"""
from __future__ import absolute_import, division, print_function

import functools
import sys
import warnings

from tinytornado._compat import positional_index
from tinytornado._kernel import current_loop
from tinytornado.concurrent import Future, future_set_result_unless_cancelled

__all__ = [
    'DummyExecutor', 'dummy_executor', 'run_on_executor', 'return_future',
    'ReturnValueIgnoredError',
]


class ReturnValueIgnoredError(Exception):
    """A `return_future` function returned a value instead of passing it to `callback`."""


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
        future = loop.run_in_executor(getattr(self, attribute),
                                      functools.partial(method, self, *args, **kwargs))
        if callback is not None:
            _warn_callback_argument()
            loop.add_future(future, lambda done: callback(done.result()))
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
