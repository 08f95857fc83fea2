"""Coroutines written as plain generators, driven by the IOLoop.

Theory of operation
-------------------
A coroutine is a generator function decorated with `@coroutine`. It waits by yielding a
Future (or a list or dict of them, or `moment`), and returns a value by raising
`Return(value)` (on 3.3+ a plain ``return value`` works too). Calling it returns a Future.

`coroutine` calls the function and runs the generator to its first `yield` at once, in
the caller's stack. A generator that finishes before waiting (or a function that is not a
generator at all) gives an already-resolved Future and no `Runner` is made: the fast path
for the common "answer from cache" case. Waiting for a Future that has already succeeded
is no wait either: the wrapper sends its result back in and runs on, in a loop, and hands
the generator to a Runner only at the first yield of anything else, so a coroutine whose
every yield was done already (it calls others that answer from cache, it waits for a
write the socket took whole) ends without one, and its callers need no check of their
own. That call and those steps are the wrapper's whole job, done in C by
``_speedups.CoroutineFunction`` where setup.py could build it (about a third of an
immediate return's cost goes) and otherwise by `_python_wrapper`; both behave alike
(test_gen*.py run each test with both), and TINYTORNADO_EXTENSION=0 in the environment
turns the C one off. The C one keeps no state: a generator that waits goes to
`_start_runner`, as from the Python one.

Otherwise a `Runner` takes the generator and the first yielded Future. `Runner.run` is a
loop, not a recursion: while the yielded Future is already done it sends the result back
(or throws the exception, with its traceback) and takes the next yield. When it meets a
pending Future it registers itself as that Future's done-callback and returns. It is
woken once, by that Future (or by the loop after a `moment`), so it never runs twice at
once. A chain of coroutines is a chain of Futures: the innermost resolves and its parent
resumes, and so on out to `IOLoop.run_sync`. A parent waiting on a coroutine that
*returns* resumes at once, in the same stack, as after a function call (`_returning`
holds the Futures being resolved so); one woken by any other Future (a queue, a lock, a
stream) resumes in the next pass, so no coroutine runs inside another's `put()`. That
loop, every coroutine's hot path, exists once, in Python (a C copy drifted from it: issue
19). It reads a Future's outcome as the kernel (_kernel) lets it, in one attribute, and
changes Futures only through the kernel's functions.

Cancelling a coroutine's Future asks its Runner to cancel: the Future being waited on is
cancelled, and CancelledError is thrown in at the `yield`. The coroutine may catch it to
clean up; its own Future ends cancelled when CancelledError escapes it. If what it waited
for had resolved already, that outcome is delivered first and CancelledError comes at the
next `yield` that waits, whatever that waits for: a cancel() accepted always reaches the
generator (issue 28: a fetch whose connection completed in the pass its timeout fired
waited for ever, holding a pool slot and a socket).
"""
from __future__ import absolute_import, division, print_function

import collections
import functools
import sys
import types
import warnings
import weakref

from tinytornado._compat import (
    ENDED_FRAMES_KEEP_CALLER, clear_frame, exc_clear, throw_exc_info, with_traceback,
)
from tinytornado._kernel import (
    CANCELLED, DONE_FUTURE_FIELDS, FAILED, NOT_DONE, call_with_result, cancellable,
    cancelled_exc_info, done_future, pending_future, resolve, set_new_exception, thread_state,
)
from tinytornado.concurrent import (
    CancelledError, Future, TimeoutError, chain_future, future_set_exc_info,
    future_set_result_unless_cancelled, is_future,
)
from tinytornado._extension import speedups as _speedups  # configured below
from tinytornado.ioloop import IOLoop, deadline_for
from tinytornado.log import app_log
from tinytornado import _gen_legacy
from tinytornado._gen_legacy import (
    Arguments, Callback, KeyReuseError, LeakedCallbackError, MultiYieldPoint,
    ReturnValueIgnoredError, Task, UnknownKeyError, Wait, WaitAll, YieldFuture, YieldPoint,
    YieldPointRunner, contains_yieldpoint,
)

__all__ = [
    'coroutine', 'is_coroutine_function', 'Return', 'Runner', 'BadYieldError',
    'TimeoutError', 'CancelledError', 'sleep', 'moment', 'multi', 'multi_future',
    'with_timeout', 'maybe_future', 'convert_yielded', 'WaitIterator',
]


class Return(Exception):
    """Raise `Return(value)` to return `value` from a coroutine (the Python 2 way)."""

    # A property over args rather than an __init__: raising it stays a C-level call.
    @property
    def value(self):
        return self.args[0] if self.args else None


# What a generator that returned raises: one tuple, not one built at each `except`.
_RETURNED = (Return, StopIteration)


class BadYieldError(Exception):
    """A coroutine yielded something that cannot be waited for."""


class _Moment(Future):
    """The type of `moment`: a Future never resolved, that the Runner knows."""

    def __await__(self):
        # Awaited from `async def` (in an asyncio Task or under the Runner), a bare yield
        # gives up one pass, as asyncio.sleep(0) does.
        yield

    def cancel(self):
        return False  # Shared by every coroutine: never cancelled.


# Yielding `moment` (or None) gives up the rest of this loop pass: the coroutine resumes
# in the next one, after I/O has been polled.
moment = _Moment()

_resolved = Future()
_resolved.set_result(None)
_GeneratorType = types.GeneratorType
_current_loop = IOLoop.current  # A module global: found faster than a class's attribute.


def coroutine(func):
    """Decorate a generator function so that calling it runs it as a coroutine.

    The call returns a Future of the generator's return value (or exception). Tornado
    5.1's deprecated ``callback=`` keyword is taken too: see `_call_with_callback`.
    """
    if _speedups is not None:
        wrapper = _speedups.CoroutineFunction(func)
    else:
        wrapper = _python_wrapper(func)
    functools.update_wrapper(wrapper, func)
    wrapper.__wrapped__ = func
    wrapper.__tinytornado_coroutine__ = True
    return wrapper


def _python_wrapper(func, replace_callback=True):
    # _speedups.CoroutineFunction does the same in C; keep the two in step. gen.engine's
    # functions take their callback themselves: it makes one with replace_callback False.
    def wrapper(*args, **kwargs):
        try:
            # func(*args, **kwargs) copies kwargs into a new dict on every call, even empty;
            # and only a call with keywords can pass the legacy callback.
            if not kwargs:
                result = func(*args)
            elif replace_callback and 'callback' in kwargs:
                return _call_with_callback(wrapper, args, kwargs, 3)
            else:
                result = func(*args, **kwargs)
            if type(result) is _GeneratorType:  # No subclass can exist; type() is fast.
                yielded = next(result)
                # Waiting for a Future that has succeeded already is no wait: its result
                # is sent back in, as Runner.run would, in a loop (a long run of such
                # yields nests no calls). A generator that returns so makes no Runner;
                # anything else goes to one from the yield it stopped at: a failure (its
                # throw strips the Runner's frames from the traceback, see
                # _without_runner_frames), `moment`, a list, a pending Future.
                # `while True` and `continue`, as in Runner.run: CPython 3.11 specializes
                # a function after a few calls or unconditional backward jumps, and a
                # `while` test jumps back conditionally. A coroutine looping here for its
                # whole life (W1's driver) ran unspecialized: 900 instructions a step more.
                while True:
                    if yielded.__class__ is not Future:
                        break
                    outcome = yielded._outcome
                    if outcome is NOT_DONE or outcome is FAILED:
                        break
                    yielded = result.send(outcome)
                    continue
                if ENDED_FRAMES_KEEP_CALLER:
                    # The generator may end in _start_runner's stack, its frame keeping this
                    # one as a caller (see there): with its locals as they are on return,
                    # which must name neither what it yielded (a failed Future it caught,
                    # say) nor its own Future, failed. Both go by the stack alone.
                    handed = [yielded]
                    yielded = outcome = None
                    return _start_runner(result, handed.pop())
                return _start_runner(result, yielded)
        except _RETURNED as e:
            # The value without a Python call (e.value is one, for Return): both carry it
            # as their only argument, from `raise Return(x)` or 3.x's `return x`. args is
            # read once, as it is slow.
            args = e.args
            result = args[0] if args else None
            # From 3.12 a generator that ended here keeps this frame as its caller (see
            # _start_runner): it must not name the last Future it yielded nor its result.
            yielded = outcome = None
        except Exception:
            # Made by a call: the traceback holds this frame, and the Future holds the
            # traceback, so a local naming the Future would be a cycle keeping the
            # coroutine's locals until the garbage collector runs (issue 28). Tornado 5.1
            # clears its local in a finally, which every call would pay.
            return _failed_future(sys.exc_info())
        return done_future(result)
    return wrapper


def _failed_future(exc_info):
    future = Future()
    future.set_exc_info(exc_info)
    return future


def _call_with_callback(coroutine_function, args, kwargs, stacklevel):
    """``coroutine_function(*args, **kwargs)`` given Tornado 5.1's deprecated ``callback=``
    keyword: the coroutine runs without it and its Future is returned, and the callback is
    called with the result on the loop once it ends (if it fails, the loop logs the error
    instead, as Tornado 5.1 raised it into the caller's stack context). Both wrappers call
    this; `stacklevel` makes the DeprecationWarning name the caller's line.
    """
    kwargs = dict(kwargs)  # The C wrapper may hand over the caller's own dict.
    callback = kwargs.pop('callback')
    warnings.warn('callback arguments are deprecated, use the returned Future instead',
                  DeprecationWarning, stacklevel=stacklevel)
    future = coroutine_function(*args, **kwargs)
    if callback is not None:
        IOLoop.current().add_future(future, functools.partial(call_with_result, callback))
    return future


def is_coroutine_function(func):
    """True if `func` was decorated with `coroutine`."""
    return getattr(func, '__tinytornado_coroutine__', False)


class Runner(object):
    """Drives one generator coroutine, resolving `result_future` when it ends.

    Made by `_start_runner(gen, first_yielded)`, which both wrappers call (Tornado's
    constructor takes the generator, the result Future and the first yielded): one Python
    call sets the Runner up, where CPython 3.11 would run an ``__init__`` through a
    generic call.
    """
    __slots__ = ('gen', 'result_future', 'future', 'io_loop', 'must_cancel')

    def run(self, done=None):
        """Resume the generator for as long as what it yields is already done; then wait
        for the first Future that is not.

        The loop calls it with no argument; the Future it waits for calls it back with
        itself as `done`. When that Future is a coroutine's that is returning, in this very
        stack, the generator resumes here, as after a function call, rather than a loop
        pass later (see `_settle_returning` for the bound on that nesting); any other is
        run a pass later.
        """
        # No guard against running twice at once, or after the generator ended: a Runner
        # has one wake-up pending at most, made just before run returns.
        if done is None:
            future = self.future
            if future is _resolved:
                # A moment has passed: None is sent in, or CancelledError (see
                # _cancellation).
                result = FAILED if self.must_cancel else None
            else:
                result = future._outcome
        else:
            # The top read in one step: another thread may push or pop meanwhile.
            if done is not _returning[-1] or len(_returning) > _MAX_RETURN_DEPTH:
                self.io_loop._call_soon(self.run)
                return
            future = done
            result = future._outcome
        # The hot path of every coroutine: `future` is the Future in hand and `result`
        # its outcome; self.future is what the generator waits for once it must wait.
        while True:
            if result is NOT_DONE:
                if self.must_cancel:  # cancel() came since the last wait: see _cancel_wait
                    future = self._cancel_wait(future)
                    result = future._outcome
                    if result is not NOT_DONE:
                        continue
                # Wait. run goes on only once what it waited for is done (or first
                # from _start_runner), so each Future is waited for once.
                self.future = future
                future.add_done_callback(self.run)
                return
            try:
                # A cancel() that came meanwhile waits for the next yield that must
                # wait: a done Future's outcome comes first.
                if result is not FAILED:
                    yielded = self.gen.send(result)
                else:
                    # A generator that catches what is thrown in and ends keeps this
                    # frame as its caller from 3.12, as it is when run returns: then it
                    # must name nothing that holds the failure (see _start_runner).
                    yielded = done = self.future = None
                    if future is not _resolved and future._state is not CANCELLED:
                        # The failure of what it waited for: every timeout a coroutine
                        # hears of comes here.
                        yielded = throw_exc_info(self.gen, future.exc_info())
                    else:
                        # A moment that passed, or a cancellation: see _cancellation.
                        yielded = throw_exc_info(self.gen, self._cancellation(future))
            except _RETURNED as e:
                args = e.args  # As in the wrapper.
                value = args[0] if args else None
            except Exception:
                exc_info = sys.exc_info()
                break  # To fail outside this clause: see below.
            else:
                if yielded.__class__ is Future:
                    future = yielded
                    result = future._outcome
                    continue
                if yielded is moment:
                    # handle_yield's first case without its call: every switch of a
                    # coroutine that gives up the loop pass comes here.
                    self.future = _resolved
                    self.io_loop._call_soon(self.run)
                elif self.handle_yield(yielded):
                    future = self.future
                    result = future._outcome
                    continue
                return
            self.gen = None
            future = self.result_future
            # _settle_returning(future, resolve, value) without its call: every
            # coroutine that waited once ends here.
            _returning.append(future)
            try:
                resolve(future, value)
            finally:
                _returning.pop()
            return
        # The generator raised. Its Future's callbacks may run here: they must see no
        # exception being handled, as when the loop runs them (and as in Tornado).
        exc_clear()
        self._fail(_without_runner_frames(exc_info))
        # From 3.12 the generator's ended frame keeps this one as its caller (f_back), as
        # long as the traceback lives: this frame must name nothing that holds it.
        exc_info = future = done = self = None

    def _cancel_wait(self, future):
        """The Future to wait on for `future`, the generator having yielded it after
        cancel() was accepted: `future` itself, cancelled (it ends with CancelledError, or
        its producer refused and it ends as it will, and the next wait is cancelled in
        turn); or, if it refuses to be cancelled, a cancelled Future in its place, so that
        the CancelledError comes in at this yield and `future` is left to its producer.
        """
        if future.cancel():
            return future
        cancelled = Future()
        cancelled.set_cancelled()
        return cancelled

    def _cancellation(self, future):
        """The exc_info to throw into the generator, what it waited for having been
        cancelled (or in place of a moment, cancel() having come meanwhile).

        The CancelledError of `future` if it has a traceback: a cancelled coroutine's,
        which shows the yields it went through (gen_test's timeout message lists them).
        Else a new one: thrown in, an exception takes the generator's frame into its
        traceback, and that frame often names the Future (``yield waited``), which holds
        its exception: a cycle per cancelled coroutine, its locals kept until the garbage
        collector runs (issue 28).
        """
        self.must_cancel = False
        exc_info = future.exc_info()
        if exc_info is None or exc_info[2] is None:
            exc_info = cancelled_exc_info()
        return exc_info

    def handle_yield(self, yielded):
        """Take what the generator yielded as the Future to wait for; False if it gave up
        a loop pass instead (`moment`), and `run` must stop until the next."""
        if yielded is None or yielded is moment:
            self.future = _resolved
            self.io_loop._call_soon(self.run)
            return False
        if yielded.__class__ is Future:
            future = yielded
        else:
            try:
                future = convert_yielded(yielded)
            except BadYieldError:
                # Legacy YieldPoints are no yieldables convert_yielded knows: they need
                # this coroutine's state. Looked for only now, they cost the rest nothing.
                future = _wait_for_legacy(self, yielded, sys.exc_info())
        self.future = future
        return True

    def cancel(self):
        """The coroutine's Future was cancelled: cancel what it waits for.

        True means a CancelledError will reach the generator: must_cancel stays set until
        one does. If what it waited for has already resolved (or refuses the cancel, or
        was a coroutine that ended all the same), that outcome is delivered first (a lock
        acquired or an item taken is never lost) and CancelledError is thrown in at the
        next `yield` that has to wait, whatever that waits for (see _cancel_wait). A
        generator that returns before it waits again ends with its value.
        """
        if self.gen is None:  # It has ended.
            return False
        # Set first: cancelling what it waits for may resume the generator in this stack.
        self.must_cancel = True
        if self.future is not None:
            self.future.cancel()
        return True

    __call__ = cancel  # The result Future's canceller.

    def _fail(self, exc_info):
        """The generator raised: fail its Future with `exc_info`.

        The Runner then lets go of its Futures: the frames of the traceback may hold the
        Runner (see _without_runner_frames).
        """
        self.gen = None
        result_future, self.result_future, self.future = self.result_future, None, None
        _settle_returning(result_future, future_set_exc_info, exc_info)
        if ENDED_FRAMES_KEEP_CALLER:
            _clear_settling_frames(exc_info[1].__traceback__)
            # This frame too is some ended frame's caller by now.
            exc_info = result_future = None


# The Runner's frames an exception thrown into, or raised by, its generator passes through.
_RUNNER_CODE = frozenset([Runner.__dict__['run'].__code__, throw_exc_info.__code__])


def _without_runner_frames(exc_info):
    """`exc_info` without the Runner's own frames at the head of its traceback.

    Those frames hold the Runner and the Future it waited on, and the traceback is stored
    in the Runner's result Future: a reference cycle for every coroutine that fails (or is
    cancelled), which only the garbage collector frees; 10,000 fetches timing out in
    flight left some 300,000 objects to it, its passes stalling the loop. They show
    nothing of the user's code either: the coroutine's own frame and those below it are
    kept. From 3.12 the coroutine's frame still reaches them as its caller (f_back), so
    those that have ended lose their locals.
    """
    # The head is Runner.run's own frame, still running (it drops its locals itself).
    tb = exc_info[2].tb_next
    while tb is not None and tb.tb_frame.f_code in _RUNNER_CODE:
        if ENDED_FRAMES_KEEP_CALLER:
            clear_frame(tb.tb_frame)
        tb = tb.tb_next
    return with_traceback(exc_info, tb)


def _clear_settling_frames(tb):
    """From 3.12: drop the locals of the ended frames that settled a failure, along the
    callers of each frame of its traceback `tb`.

    A coroutine that fails resumes its waiting parent in the same stack (see
    _settle_returning), and the parent may fail with the same exception. Its generator's
    ended frame, in that exception's traceback, keeps its callers as f_back: the frames
    that resolved the child's Future, which name that Future or the exception itself. A
    cycle per nested failure, its coroutines' locals kept until the garbage collector runs
    (issue 28). Those frames are this package's own and have ended: their locals show
    nothing a traceback needs. A frame still running is left alone.
    """
    while tb is not None:
        frame = tb.tb_frame.f_back
        while frame is not None and frame.f_code in _SETTLING_CODE:
            clear_frame(frame)
            frame = frame.f_back
        tb = tb.tb_next


def _start_runner(gen, yielded):
    """The Future of a coroutine whose generator `gen` yielded `yielded` first, with the
    Runner that drives it on (both wrappers call this, past the Futures that had
    succeeded already: see _python_wrapper)."""
    runner = Runner()
    # The Runner is the Future's canceller: it is callable (see __call__), so no bound
    # method is made per coroutine.
    future = runner.result_future = pending_future(runner)
    runner.gen = gen  # None once the generator has ended.
    # IOLoop.current() without its call when this thread has a loop.
    runner.io_loop = getattr(thread_state, 'instance', None) or _current_loop()
    runner.must_cancel = False
    # What it yielded is taken as run's loop takes it: a Future or moment without a call.
    if yielded.__class__ is Future:
        runner.future = yielded
    elif yielded is moment:
        runner.future = _resolved
        runner.io_loop._call_soon(runner.run)
        return future
    else:
        runner.future = None  # Read by cancel(), should convert_yielded raise.
        if not runner.handle_yield(yielded):
            return future
    runner.run()
    if ENDED_FRAMES_KEEP_CALLER and runner.gen is None:
        # It ended in this very stack: its generator's frame, which a traceback may hold,
        # keeps this frame as its caller's caller, with the locals it has on returning
        # (see ENDED_FRAMES_KEEP_CALLER). So they must not name what it first yielded (a
        # failed Future it caught, say), nor its own Future if it failed: that one is
        # handed back on the stack alone. A cycle otherwise, its locals kept until the
        # garbage collector runs; a try/finally would cost every coroutine.
        yielded = None
        if runner.result_future is None:  # It failed (see _fail).
            future = [future]
            return future.pop()
    return future


# The Futures that coroutines ending in this stack are resolving, innermost last, above a
# None that stands for the loop (so [-1] always reads): a Runner woken by the last resumes
# at once, as after a function call (see Runner.run). A Future knows nothing of coroutines,
# so this is kept here. One list for all threads, as a per-thread one costs a lookup per
# step: another thread's entry on top can only make a Runner resume through the loop rather
# than in this stack, never wrongly, and each thread's pushes and pops balance.
_returning = [None]


def _settle_returning(future, settle, outcome):
    """`settle(future, outcome)`: a coroutine's Future resolved as the coroutine ends.

    Only a Runner woken by this resolution, of exactly this Future, resumes in the same
    stack. Any other Future resolved meanwhile (by a queue, a lock, a stream) wakes its
    waiter through the loop, so no coroutine ever runs inside another's put() or
    release(). _MAX_RETURN_DEPTH bounds the nesting, so a deep recursion of coroutines
    cannot overflow the stack: past it, parents resume through the loop.
    """
    _returning.append(future)
    try:
        settle(future, outcome)
    finally:
        _returning.pop()


# The frames a failure settles through, from the Runner that fails to the Runner of the
# coroutine that resumes in the same stack (see _clear_settling_frames).
_SETTLING_CODE = _RUNNER_CODE | frozenset(function.__code__ for function in (
    Runner.__dict__['_fail'], _settle_returning, future_set_exc_info,
    Future.__dict__['set_exc_info'], resolve))


def _resume_in_this_stack(future, result=None, exc_info=None):
    """Resolve the Future a coroutine waits on so that it resumes in this stack, as a
    legacy YieldPoint's outcome does (see _gen_legacy)."""
    if exc_info is not None:
        _settle_returning(future, Future.set_exc_info, exc_info)
    else:
        _settle_returning(future, Future.set_result, result)


_MAX_RETURN_DEPTH = 50


def sleep(duration):
    """A Future resolved after `duration` seconds; cancelling it removes the timer."""
    future = Future()
    io_loop = IOLoop.current()
    handle = io_loop.call_later(duration, future_set_result_unless_cancelled, future, None)

    def cancel():
        io_loop.remove_timeout(handle)
        future.set_cancelled()
        return True
    future.set_canceller(cancel)
    return future


def _convert_child(child):
    if child is None or child is moment:
        future = Future()
        IOLoop.current()._call_soon(future_set_result_unless_cancelled, future, None)
        return future
    return convert_yielded(child)


def multi(children, quiet_exceptions=()):
    """Wait for every Future in a list or dict; resolve with their results in its shape.

    If any fail, the first failure (in the children's order) is raised and the others
    are logged, except those of a type in `quiet_exceptions` and cancellations.
    Cancelling the result cancels the children that are still running.
    """
    keys = None
    if isinstance(children, dict):
        keys = list(children.keys())
        children = [children[key] for key in keys]
    children = [_convert_child(child) for child in children]
    future = Future()
    unfinished = set(children)
    if not unfinished:
        future.set_result({} if keys is not None else [])
        return future

    def on_child_done(child):
        unfinished.discard(child)
        if not unfinished:
            _resolve_multi(future, children, keys, quiet_exceptions)

    def cancel():
        for child in children:
            child.cancel()
        if not future.done():
            future.set_cancelled()
        return True

    future.set_canceller(cancel)
    for child in set(children):
        child.add_done_callback(on_child_done)
    return future


multi_future = multi


def _resolve_multi(future, children, keys, quiet_exceptions):
    results = []
    for child in children:
        outcome = child._outcome  # the result, where result() would cost two calls
        if outcome is not FAILED:
            results.append(outcome)
            continue
        exc_info = child.exc_info()
        if not future.done():
            future_set_exc_info(future, exc_info)
        elif not isinstance(exc_info[1], _never_logged(quiet_exceptions)):
            app_log.error('Multiple exceptions in yield list', exc_info=exc_info)
    if not future.done():
        future.set_result(dict(zip(keys, results)) if keys is not None else results)


def _never_logged(quiet_exceptions):
    """Cancellations plus `quiet_exceptions` (a class or a tuple, as Tornado takes it)."""
    if not isinstance(quiet_exceptions, tuple):
        quiet_exceptions = (quiet_exceptions,)
    return (CancelledError,) + quiet_exceptions


def with_timeout(timeout, future, quiet_exceptions=(), cancel_on_timeout=True):
    """Wrap `future` so that it fails with TimeoutError if not done by `timeout`.

    Args:
        timeout: an absolute loop time (`IOLoop.time()`) or a `datetime.timedelta`. Beware:
            a plain number is a deadline, not a delay, as in Tornado.
        cancel_on_timeout: cancel `future` when it times out (the default), if cancelling
            it stops some work: a coroutine, a fetch, a sleep, a queue's or lock's wait...
            A bare Future is left to its producer, whose later set_result() would raise
            otherwise (Tornado 5.1 cancels nothing). What is not cancelled goes on, and a
            later failure is logged unless in `quiet_exceptions`.
    """
    future = convert_yielded(future)
    io_loop = IOLoop.current()
    waiter = _TimeoutWaiter()
    waiter.future = future
    waiter.result = result = Future()
    waiter.io_loop = io_loop
    waiter.quiet_exceptions = quiet_exceptions
    # Decided now rather than when it times out, where 10,000 together each pay the call.
    waiter.cancel_on_timeout = cancel_on_timeout and cancellable(future)
    waiter.timer = io_loop.call_at(deadline_for(timeout, io_loop), waiter.time_out)
    # The canceller first: a `future` done already resolves `result` at once, dropping it
    # (set afterwards, it would stay, a cycle through the waiter for the collector).
    result.set_canceller(waiter)
    future.add_done_callback(waiter.on_done)
    return result


class _TimeoutWaiter(object):
    """`with_timeout`'s state, one object whose methods are the callbacks of the timer,
    of the wrapped `future` and of the `result` Future (as its canceller).

    Not closures: three closures over these names made a cell per name, 12 objects per
    wrapped Future where this makes 4, and 10,000 fetches timing out together touch
    each of them (see benchmarks/timeouts.py).
    """
    __slots__ = ('future', 'result', 'io_loop', 'timer', 'quiet_exceptions',
                 'cancel_on_timeout')

    def time_out(self):
        self.timer = None  # None from now on: it has timed out
        # Cancel first, so the inner coroutine cleans up before the caller resumes.
        if self.cancel_on_timeout:
            self.future.cancel()
        # Not needed any more; and a future left running holds this waiter (its callback
        # logs a late failure): holding it back would make a cycle for the collector.
        self.future = None
        if self.result._outcome is NOT_DONE:  # result.done() without its call
            # Made, not raised: a traceback would keep this frame, and through it the
            # stack and `result`, alive in a cycle that only the garbage collector frees.
            set_new_exception(self.result, TimeoutError('Timeout'))

    def on_done(self, done):
        if self.timer is None:
            # The cancellation it was given, most of the time: nothing to log.
            if not done.cancelled():
                _log_late_failure(self.quiet_exceptions, done)
        else:
            self.io_loop.remove_timeout(self.timer)
            chain_future(done, self.result)

    def cancel(self):
        if cancellable(self.future):
            self.future.cancel()
        if not self.result.done():
            self.result.set_cancelled()
        return True

    __call__ = cancel  # The result Future's canceller, without a bound method to make.


def _log_late_failure(quiet_exceptions, future):
    exc_info = future.exc_info() if isinstance(future, Future) else None
    if exc_info is not None and not isinstance(exc_info[1], _never_logged(quiet_exceptions)):
        app_log.error('Exception in Future %r after timeout', future, exc_info=exc_info)


def maybe_future(x):
    """`x` if it is a Future, else a Future already resolved with `x`."""
    if is_future(x):
        return x
    future = Future()
    future.set_result(x)
    return future


_converters = []


def convert_yielded(yielded):
    """The Future to wait on for something a coroutine yielded.

    Handles Futures (tinytornado's and concurrent.futures'), lists and dicts of
    yieldables, None and `moment`, and the types registered with
    ``@convert_yielded.register(cls)``.

    Raises:
        BadYieldError: `yielded` is none of those.
    """
    if yielded is None or yielded is moment:
        return moment
    if isinstance(yielded, Future):
        return yielded
    if is_future(yielded):
        future = Future()
        IOLoop.current().add_future(yielded, lambda f: chain_future(f, future))
        return future
    if isinstance(yielded, (list, dict)):
        return multi(yielded)
    for cls, converter in _converters:
        if isinstance(yielded, cls):
            return converter(yielded)
    if isinstance(yielded, _NativeCoroutine):
        # After the converters: platform.asyncio's gives it a Task on an asyncio loop.
        return drive_awaitable(yielded)
    raise BadYieldError(_bad_yield_message(yielded))


def _register_converter(cls):
    """Decorator: ``@convert_yielded.register(SomeType)`` on a function(obj) -> Future."""
    def decorator(converter):
        _converters.append((cls, converter))
        return converter
    return decorator


convert_yielded.register = _register_converter


def _bad_yield_message(yielded):
    message = 'yielded unknown object %r: yield a Future, a list or dict of them, ' \
              'None or gen.moment' % (yielded,)
    if isinstance(yielded, types.GeneratorType):
        message += ('. It is a generator: is %s() missing the @gen.coroutine decorator?'
                    % yielded.__name__)
    return message


class WaitIterator(object):
    """Yield Futures in the order they finish.

    ::

        waiter = gen.WaitIterator(fetch(a), fetch(b))
        while not waiter.done():
            result = yield waiter.next()
            print(waiter.current_index, result)

    Futures may be given positionally (`current_index` is the position) or as keywords
    (`current_index` is the keyword), not both. In ``async def`` code,
    ``async for result in waiter:`` does the same.
    """

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError('You must provide args or kwargs, not both')
        keyed = kwargs.items() if kwargs else enumerate(args)
        # Ordered, so that Futures already done come out in the arguments' order (a plain
        # dict on 2.7 would shuffle them).
        self._unfinished = collections.OrderedDict((convert_yielded(f), k) for k, f in keyed)
        self._finished = collections.deque()
        self._running_future = None
        self.current_index = self.current_future = None
        for future in list(self._unfinished):
            future.add_done_callback(self._done_callback)

    def done(self):
        """True once every Future has been returned by `next`."""
        if self._finished or self._unfinished:
            return False
        self.current_index = self.current_future = None
        return True

    def next(self):
        """A Future resolved like the next input Future to finish."""
        self._running_future = Future()
        if self._finished:
            self._return_result(self._finished.popleft())
        return self._running_future

    # ``async for result in waiter:`` (Python 3.5+), as in Tornado 5.1.
    def __aiter__(self):
        return self

    def __anext__(self):
        if self.done():
            raise StopAsyncIteration()  # noqa: F821 (a builtin from 3.5, called only there)
        return self.next()

    def _done_callback(self, done):
        if self._running_future is not None and not self._running_future.done():
            self._return_result(done)
        else:
            self._finished.append(done)

    def _return_result(self, done):
        chain_future(done, self._running_future)
        self.current_future = done
        self.current_index = self._unfinished.pop(done)


if _speedups is not None:  # The C speedups' module, when built and wanted (see _extension).
    _speedups.configure(Future, DONE_FUTURE_FIELDS, NOT_DONE, FAILED, Return,
                        _start_runner, _call_with_callback)


# -- Native coroutines: ``async def`` code yielded by a coroutine or returned by a callback

# What ``async def`` returns (Python 3.5+; 2.7 has none: no isinstance matches ``()``).
# Tornado 5.1 runs it with no import, its loop being asyncio's; here the Runner drives it.
_NativeCoroutine = getattr(types, 'CoroutineType', ())


@coroutine
def drive_awaitable(awaitable):
    """Run a native coroutine (or another awaitable) under a `Runner`: what it awaits is
    yielded to the Runner, so it may await tinytornado Futures and ``asyncio.sleep(0)``,
    but nothing that needs an asyncio loop. Cancellation crosses in both directions.
    """
    # A generator-based coroutine (asyncio's own before 3.8) is its own iterator.
    steps = awaitable.__await__() if hasattr(awaitable, '__await__') else awaitable
    to_send = to_throw = None
    try:
        while True:
            try:
                if to_throw is None:
                    yielded = steps.send(to_send)
                else:
                    yielded = steps.throw(to_throw)
            except StopIteration as e:
                raise Return(e.value)
            except CancelledError:
                raise
            except _asyncio_cancelled_error():
                raise CancelledError()
            to_send = to_throw = None
            try:
                to_send = yield yielded
            except CancelledError:
                # async code catches asyncio's, a class of its own from Python 3.8.
                asyncio_error = _asyncio_cancelled_error()
                to_throw = asyncio_error() if asyncio_error else CancelledError()
            except Exception as e:
                to_throw = e
    finally:
        # What was thrown in last has this frame in its traceback, and so has what
        # escapes: the frame must name neither it nor the Future it came from, whether
        # the awaitable caught it or not, or the awaitable's locals stay in a cycle until
        # the garbage collector runs (issue 28).
        to_throw = yielded = None


def _asyncio_cancelled_error():
    """asyncio.CancelledError, or () (which no ``except`` matches) if asyncio was never
    imported: then no async code can be catching it, and importing it costs more than this
    whole package."""
    asyncio = sys.modules.get('asyncio')
    return () if asyncio is None else asyncio.CancelledError


# -- Tornado's legacy interface: gen.engine and the YieldPoints --------------------------
# Tornado 4/5 code runs unchanged with them; new code yields Futures. See _gen_legacy.

__all__ += [
    'engine', 'Task', 'Arguments', 'YieldPoint', 'Callback', 'Wait', 'WaitAll', 'Multi',
    'MultiYieldPoint', 'YieldFuture', 'KeyReuseError', 'UnknownKeyError',
    'LeakedCallbackError', 'ReturnValueIgnoredError',
]

_gen_legacy.configure(Return, _convert_child, _resume_in_this_stack)


def engine(func):
    """Decorate a callback-style generator function: Tornado's interface before
    `coroutine`, which gives its results to a callback of its own rather than a Future.

    It runs as a coroutine (YieldPoints and Futures may be yielded), but the call returns
    None and the generator must return None (ReturnValueIgnoredError otherwise). Its
    exception is raised into the caller if it ends before it first waits, and otherwise
    reported as a loop callback's would be (logged; it fails an AsyncTestCase).
    """
    # The function takes its `callback` itself: the wrapper passes it through.
    start = _python_wrapper(func, replace_callback=False)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        future = start(*args, **kwargs)
        if future.done():
            _check_engine_outcome(future)
            return
        io_loop = IOLoop.current()
        # Reported at once, in the stack that ended it, as Tornado 5.1 raised into the
        # caller's stack context: a test that called stop() there still sees it.
        future.add_done_callback(
            lambda done: io_loop._run_callback(_check_engine_outcome, (done,)))
    _ENGINE_STARTS[wrapper] = start
    return wrapper


# Each gen.engine function -> what runs it to a Future (see engine_as_coroutine).
_ENGINE_STARTS = weakref.WeakKeyDictionary()


def engine_as_coroutine(func):
    """`func` as a function that returns a Future, if it is a gen.engine function (that
    very function, not one wrapped around it), else None.

    For web's @asynchronous, so that a handler's failing @gen.engine method ends in an
    error response, as Tornado 5.1's stack context made it: the Future fails with the
    method's exception (ReturnValueIgnoredError if it returned a value).
    """
    start = _ENGINE_STARTS.get(func)
    if start is None:
        return None

    @coroutine
    def as_coroutine(*args, **kwargs):
        future = start(*args, **kwargs)
        yield future
        _check_engine_outcome(future)
    return as_coroutine


def _check_engine_outcome(future):
    value = future.result()
    if value is not None:
        raise ReturnValueIgnoredError('a gen.engine function returned %r: it can only '
                                      'pass results to a callback' % (value,))


def Multi(children, quiet_exceptions=()):
    """`multi`, or a `MultiYieldPoint` if `children` (a list or dict) hold a YieldPoint."""
    if contains_yieldpoint(children):
        return MultiYieldPoint(children, quiet_exceptions)
    return multi(children, quiet_exceptions)


def _wait_for_legacy(runner, yielded, exc_info):
    """The Future for `runner` to wait on for a YieldPoint (or a list or dict holding
    one); else one failed with `exc_info`, the BadYieldError `yielded` caused."""
    try:
        if contains_yieldpoint(yielded):
            yielded = MultiYieldPoint(yielded)
        if isinstance(yielded, YieldPoint):
            state = runner.gen
            if state.__class__ is YieldPointRunner:
                return state.wait_for(yielded)
            # The coroutine's first: its state takes the generator's place from now on.
            runner.gen = YieldPointRunner(state, runner.io_loop)
            return runner.gen.wait_for(yielded, next_pass=True)
    except Exception:
        exc_info = sys.exc_info()
    future = Future()
    future.set_exc_info(exc_info)
    return future
