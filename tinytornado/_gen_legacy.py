"""Tornado's legacy yieldables, from before coroutines yielded Futures: `Task` and the
`YieldPoint`s (`Callback`, `Wait`, `WaitAll`, `MultiYieldPoint`), re-exported by gen.

They are kept so that Tornado 4/5 code runs unchanged; new code yields Futures, and these
names give a DeprecationWarning, as in Tornado 5.1. `Task` is a plain adapter that
returns a Future. A YieldPoint is not a Future: it is started with its coroutine's
`YieldPointRunner` (what Tornado's ``start(runner)`` receives), which keeps the Callback
keys and their results. gen's Runner makes one only when a coroutine first yields a
YieldPoint (or a list or dict holding one), in its slow path: coroutines that never do
pay nothing. It then takes the generator's place in the Runner, forwarding `send` and
`throw`, so it sees the coroutine end and can report callbacks nobody waited for
(LeakedCallbackError) by failing the coroutine's Future.

A YieldPoint's outcome resumes its coroutine in the stack that produced it (the Callback
being called, or the first start, which waits for a loop pass), as Tornado's did.
"""
from __future__ import absolute_import, division, print_function

import collections
import functools
import sys
import warnings

from tinytornado._compat import raise_exc_info
from tinytornado.concurrent import Future, is_future
from tinytornado.log import app_log

__all__ = [
    'Task', 'Arguments', 'YieldPoint', 'Callback', 'Wait', 'WaitAll', 'YieldFuture',
    'MultiYieldPoint', 'YieldPointRunner', 'contains_yieldpoint', 'KeyReuseError',
    'UnknownKeyError', 'LeakedCallbackError', 'ReturnValueIgnoredError', 'configure',
]


class KeyReuseError(Exception):
    """A `Callback` key was registered again while still pending."""


class UnknownKeyError(Exception):
    """A `Wait` (or `WaitAll`) named a key no pending `Callback` has."""


class LeakedCallbackError(Exception):
    """A coroutine ended without waiting for the results of all its `Callback`s."""


class ReturnValueIgnoredError(Exception):
    """A `gen.engine` function returned a value, which nobody could receive."""


# What a callback called with several (or keyword) arguments gives as one value.
Arguments = collections.namedtuple('Arguments', ['args', 'kwargs'])


def _argument_adapter(callback):
    """A function passing its arguments to `callback` as one value: None, the only one,
    or `Arguments(args, kwargs)`."""
    def adapter(*args, **kwargs):
        if kwargs or len(args) > 1:
            callback(Arguments(args, kwargs))
        else:
            callback(args[0] if args else None)
    return adapter


def _deprecated(name):
    warnings.warn('gen.%s is deprecated: yield Futures instead' % name, DeprecationWarning,
                  stacklevel=3)


def Task(func, *args, **kwargs):
    """Call callback-style ``func(*args, callback=..., **kwargs)``; a Future of what the
    callback receives (see `Arguments`).

    An exception `func` raises before the callback is called fails the Future; one raised
    after is raised here.
    """
    _deprecated('Task')
    future = Future()

    def set_result(value):
        if not future.done():  # A second call, or a cancelled Future: nobody waits.
            future.set_result(value)
    try:
        func(*args, callback=_argument_adapter(set_result), **kwargs)
    except Exception:
        if future.done():
            raise
        future.set_exc_info(sys.exc_info())
    return future


class YieldPoint(object):
    """What coroutines yielded before Futures: started with the coroutine's
    `YieldPointRunner`, then asked `is_ready()` until its `get_result()` may be taken.

    Subclasses override all three methods.
    """

    def __init__(self):
        _deprecated('YieldPoint')

    def start(self, runner):
        """Called once, when the coroutine yields it; `runner` keeps the Callback keys."""
        raise NotImplementedError()

    def is_ready(self):
        """Whether the coroutine can resume; may be called more than once."""
        raise NotImplementedError()

    def get_result(self):
        """The value of the `yield` (or raise its error); called once, once ready."""
        raise NotImplementedError()


class _KeyedYieldPoint(YieldPoint):
    """A YieldPoint that keeps the runner it was started with, for its Callback keys."""
    runner = None

    def start(self, runner):
        self.runner = runner


class Callback(_KeyedYieldPoint):
    """Yields a callback: calling it makes its result available to ``Wait(key)``.

    The key must be unique among the coroutine's pending callbacks; it may be reused once
    waited for.
    """

    def __init__(self, key):
        _deprecated('Callback')
        self.key = key

    def start(self, runner):
        _KeyedYieldPoint.start(self, runner)
        runner.register_callback(self.key)

    def is_ready(self):
        return True

    def get_result(self):
        return self.runner.result_callback(self.key)


class Wait(_KeyedYieldPoint):
    """Yields what the `Callback` of `key` was called with, once it has been."""

    def __init__(self, key):
        _deprecated('Wait')
        self.key = key

    def is_ready(self):
        return self.runner.is_ready(self.key)

    def get_result(self):
        return self.runner.pop_result(self.key)


class WaitAll(_KeyedYieldPoint):
    """Yields the list of what the `Callback`s of `keys` were called with, once all have
    been: a list of `Wait`s, yielded together."""

    def __init__(self, keys):
        _deprecated('WaitAll')
        self.keys = keys

    def is_ready(self):
        return all(self.runner.is_ready(key) for key in self.keys)

    def get_result(self):
        return [self.runner.pop_result(key) for key in self.keys]


class YieldFuture(_KeyedYieldPoint):
    """A Future as a YieldPoint (what `MultiYieldPoint` makes of its Future children);
    one already done at the start needs no runner."""

    def __init__(self, future):
        _deprecated('YieldFuture')
        self.future = future
        self.key = object()

    def start(self, runner):
        if not self.future.done():
            _KeyedYieldPoint.start(self, runner)
            runner.register_callback(self.key)
            runner.io_loop.add_future(self.future, runner.result_callback(self.key))

    def is_ready(self):
        return self.runner is None or self.runner.is_ready(self.key)

    def get_result(self):
        if self.runner is not None:
            self.runner.pop_result(self.key)
        return self.future.result()


def contains_yieldpoint(children):
    """Whether a list or dict of yieldables holds a YieldPoint."""
    if isinstance(children, dict):
        children = children.values()
    elif not isinstance(children, list):
        return False
    return any(isinstance(child, YieldPoint) for child in children)


class MultiYieldPoint(YieldPoint):
    """Waits for a list or dict of YieldPoints and yieldables (what `gen.multi` takes);
    yields their results in its shape.

    If several fail, the first (in the children's order) is raised and the others are
    logged, except those of a type in `quiet_exceptions`.
    """

    def __init__(self, children, quiet_exceptions=()):
        _deprecated('MultiYieldPoint')
        self.keys = None
        if isinstance(children, dict):
            self.keys = list(children.keys())
            children = [children[key] for key in self.keys]
        self.children = [self._as_yieldpoint(child) for child in children]
        self.unfinished = list(self.children)
        self.quiet_exceptions = quiet_exceptions

    @staticmethod
    def _as_yieldpoint(child):
        if isinstance(child, YieldPoint):
            return child
        if not is_future(child):
            child = _convert_yielded(child)
        with warnings.catch_warnings():
            # Our own adapter: the caller was warned about MultiYieldPoint already.
            warnings.simplefilter('ignore', DeprecationWarning)
            return YieldFuture(child)

    def start(self, runner):
        for child in self.children:
            child.start(runner)

    def is_ready(self):
        self.unfinished = [child for child in self.unfinished if not child.is_ready()]
        return not self.unfinished

    def get_result(self):
        results, first_failure = [], None
        for child in self.children:
            try:
                results.append(child.get_result())
            except Exception as e:
                if first_failure is None:
                    first_failure = sys.exc_info()
                elif not isinstance(e, self.quiet_exceptions):
                    app_log.error('Multiple exceptions in yield list', exc_info=True)
        if first_failure is not None:
            raise_exc_info(first_failure)
        return dict(zip(self.keys, results)) if self.keys is not None else results


class YieldPointRunner(object):
    """One coroutine's YieldPoint state: its pending Callback keys, their results, and
    the YieldPoint it waits on. Made by gen's Runner when the coroutine first yields a
    YieldPoint, it takes the generator's place in the Runner from then on.

    YieldPoints call the methods Tornado's Runner offered them: `register_callback`,
    `result_callback`, `is_ready`, `pop_result`, `set_result` (and read `io_loop`).
    """
    # What ends a generator as a return; gen adds its Return (see `configure`).
    _returns = (StopIteration,)

    def __init__(self, generator, io_loop):
        self.generator = generator
        self.io_loop = io_loop
        self.pending_callbacks = set()
        self.results = {}
        # An exception thrown in may have orphaned callbacks: no leak is reported then.
        self.had_exception = False
        self._waiting = None  # (yield point, its Future) while the coroutine waits on one.

    # -- The generator's place in the Runner ---------------------------------------------

    def send(self, value):
        return self._resume(self.generator.send, value)

    def throw(self, *exc_info):
        self.had_exception = True
        return self._resume(self.generator.throw, *exc_info)

    def _resume(self, method, *args):
        """What `method(*args)` yields or raises, but a return that leaves callbacks
        nobody waited for raises LeakedCallbackError instead."""
        try:
            return method(*args)
        except self._returns:
            if self.had_exception or not self.pending_callbacks:
                raise
        raise LeakedCallbackError('coroutine ended without waiting for callbacks %r'
                                  % (list(self.pending_callbacks),))

    # -- Waiting for a YieldPoint ----------------------------------------------------------

    def wait_for(self, yield_point, next_pass=False):
        """The Future of `yield_point`'s result (or error), started now or, if
        `next_pass`, in the next loop pass (as Tornado started a coroutine's first)."""
        future = Future()
        if next_pass:
            self.io_loop.add_callback(self._start, yield_point, future)
        else:
            self._start(yield_point, future)
        return future

    def _start(self, yield_point, future):
        if future.done():
            return  # Cancelled before it started.
        try:
            yield_point.start(self)
        except Exception:
            _resume_with(future, exc_info=sys.exc_info())
            return
        self._waiting = (yield_point, future)
        self._resume_if_ready()

    def _resume_if_ready(self):
        yield_point, future = self._waiting
        if future.done():  # Cancelled meanwhile: nobody waits.
            self._waiting = None
            return
        try:
            if not yield_point.is_ready():
                return
            outcome = (yield_point.get_result(), None)
        except Exception:
            outcome = (None, sys.exc_info())
        # Cleared first: resumed, the coroutine may wait on its next YieldPoint at once.
        self._waiting = None
        _resume_with(future, *outcome)

    # -- What YieldPoints call -------------------------------------------------------------

    def register_callback(self, key):
        """Make `key` pending: its result is awaited."""
        if key in self.pending_callbacks:
            raise KeyReuseError('key %r is already pending' % (key,))
        self.pending_callbacks.add(key)

    def result_callback(self, key):
        """A callback that sets the result of `key` (see `Arguments`)."""
        return _argument_adapter(functools.partial(self.set_result, key))

    def set_result(self, key, result):
        """Store the result of `key`; resume the coroutine if what it waits on is ready."""
        self.results[key] = result
        if self._waiting is not None:
            self._resume_if_ready()

    def is_ready(self, key):
        """Whether the pending `key` has its result."""
        if key not in self.pending_callbacks:
            raise UnknownKeyError('key %r is not pending' % (key,))
        return key in self.results

    def pop_result(self, key):
        """The result of `key`, which stops being pending."""
        self.pending_callbacks.remove(key)
        return self.results.pop(key)


def _not_configured(*args, **kwargs):
    raise TypeError('gen has not configured %s' % __name__)


# gen's, set by `configure`: see there.
_convert_yielded = _resume_with = _not_configured


def configure(return_class, convert_yielded, resume_with):
    """Called by gen, which this layer lies below: its Return ends a generator as a
    return does, `convert_yielded` makes a Future of a `MultiYieldPoint`'s child as
    `gen.multi` does (None too), and `resume_with(future, result, exc_info)` resolves a
    Future so that the coroutine waiting on it resumes in the same stack."""
    global _convert_yielded, _resume_with
    YieldPointRunner._returns = (StopIteration, return_class)
    _convert_yielded = convert_yielded
    _resume_with = resume_with
