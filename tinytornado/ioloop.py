"""The IOLoop: one thread's callbacks, timers and I/O readiness, run in passes.

`IOLoop` is abstract, as in Tornado 5.1: it holds what does not depend on how a loop waits
(the thread's current loop, `start`'s guards, `run_sync`, `add_future`, `call_later` and
`add_timeout` over `call_at`). ``IOLoop()`` makes the configured class: `PollIOLoop`,
tinytornado's own loop described below, unless `IOLoop.configure` chose another, such as
`tinytornado.platform.asyncio.AsyncIOLoop`, which runs on asyncio's loop instead.

Theory of operation (PollIOLoop)
--------------------------------
The loop keeps three things: a queue of callbacks ready to run, timers (a `TimerQueue` of
handles sorted by deadline with bisect, and a dict from handle to callback), and a
selector watching file descriptors. `start()` repeats one *pass* until `stop()`:

1. Poll the selector for ready descriptors. It waits not at all if callbacks are ready,
   else (`_wait`) until the first deadline if there are timers, and otherwise until I/O
   arrives (or another thread calls `add_callback`, which writes to a waker socket).
2. Count the callbacks ready now; only those run in this pass. Callbacks added while the
   pass runs (by a callback, a handler or a timer) wait for the next pass, after the next
   poll, so a callback that re-adds itself cannot starve I/O.
3. Take the timers due now, all of them, before anything runs: a timer scheduled for
   "now" during the pass (by a callback or another timer) runs in the next pass, as in
   asyncio. Equal deadlines run FIFO: a timer is queued after those with its deadline.
4. Run, in this order, those callbacks, the handlers of the ready descriptors, and the
   due timers.

Errors in callbacks, handlers and timers go to `IOLoop.handle_callback_exception`, which
logs them to ``app_log``, and the loop goes on. What a callback returns is watched if it
is a Future (its failure is reported the same way) or run if it is a native coroutine.
A cancelled timer loses its callback at once but stays in the queue, dead, and is skipped
when it comes due; when dead timers outnumber live ones the queue is rebuilt without them,
so cancelling is O(1) and the queue never fills with garbage.

The loop's clock reads as ``time.time()`` (Tornado 5.1's clock, which legacy deadlines
are computed with) but is the monotonic clock underneath: timers are kept on it, so a
step of the system clock moves none of them. The clock is injectable (`time_func`). A
clock with an ``advance(seconds)`` method is virtual: instead of sleeping until a deadline,
the loop advances it, so tests of timer logic run exactly and instantly (see
`tinytornado.testing.VirtualClock`).
"""
from __future__ import absolute_import, division, print_function

import collections
import datetime
import errno
import functools
import importlib
import itertools
import logging
import math
import multiprocessing
import numbers
import os
import random
import socket
import sys
import time

from tinytornado._compat import PY2, futures, get_ident, monotonic, overrides
from tinytornado._configurable import Configurable, import_object
from tinytornado._extension import speedups
from tinytornado._ioloop_legacy import BlockingAlarm, PolledBlockingAlarm
from tinytornado._poller import ERROR, READ, WRITE, make_poller
from tinytornado._timerqueue import TimerQueue
from tinytornado._kernel import thread_state
from tinytornado.concurrent import (
    Future, TimeoutError, future_add_done_callback, is_future, resolve_through,
)
from tinytornado.log import app_log

__all__ = ['deadline_for', 'IOLoop', 'PeriodicCallback', 'PollIOLoop', 'TimeoutError']

_COMPACT_MIN_CANCELLED = 512
_LONGEST_POLL = 86400.0
# A timer's handle is a number, unique in the process (so a handle given to another loop's
# remove_timeout cancels nothing there) and never 0. A number, not an object: a million
# pending timers then add nothing the garbage collector tracks, which on 2.7 would cost
# repeated full collections walking them all.
_timer_handles = itertools.count(1)
# PollIOLoop's add_callback in C; None without the C speedups, where add_callback pays
# for an empty dict at each call (its **kwargs).
_AddCallback = getattr(speedups, 'AddCallback', None)


class _Waker(object):
    """A socket pair that lets another thread (or a signal handler) interrupt the poll."""

    def __init__(self):
        self.reader, self.writer = socket.socketpair()
        self.reader.setblocking(False)
        self.writer.setblocking(False)

    def fileno(self):
        return self.reader.fileno()

    def wake(self):
        try:
            self.writer.send(b'x')
        except (IOError, OSError, socket.error):
            pass  # The buffer is full: the loop is already due to wake up.

    def consume(self, fd, events):
        try:
            while self.reader.recv(4096):
                pass
        except (IOError, OSError, socket.error):
            pass

    def close(self):
        self.reader.close()
        self.writer.close()


if PY2:
    def _running_asyncio_loop():
        return None  # 2.7 has no asyncio.
else:
    from tinytornado._compat_py3 import running_asyncio_loop as _running_asyncio_loop


def _loop_for_thread_without_one(instance):
    """`IOLoop.current` in a thread with no current loop (never on its common path)."""
    asyncio_loop = _running_asyncio_loop()
    if asyncio_loop is not None:
        return (_ioloop_of_running_loop or _load_asyncio_bridge())(asyncio_loop, instance)
    return IOLoop.configured_class()._new_current() if instance else None


_ASYNCIO_BRIDGE = 'tinytornado.platform.asyncio._ioloop_of_running_loop'
_ioloop_of_running_loop = None  # What _ASYNCIO_BRIDGE names, once loaded.


def _load_asyncio_bridge():
    # Loaded by name, as configure() loads a loop class: the bridge sits above gen in the
    # layers, and importing it teaches gen to wait for asyncio's Futures, which legacy
    # coroutines running on asyncio's loop may yield. Only a thread that runs an asyncio
    # loop gets here, so a program that never runs asyncio never imports it.
    global _ioloop_of_running_loop
    _ioloop_of_running_loop = import_object(_ASYNCIO_BRIDGE)
    return _ioloop_of_running_loop


# Each thread's current loop is the kernel's `thread_state.instance`: gen reads it there
# too, as IOLoop.current() without the call.

_GEN = 'tinytornado.gen'
_gen = None  # What _GEN names, once loaded.


def _gen_module():
    # Loaded by name, as the asyncio bridge is: gen sits above the loop. run_sync's
    # function and the loop's callbacks may return anything a coroutine may yield (a list
    # of Futures, a native coroutine, which gen runs); the loop asks gen what to wait for
    # the first time one returns something other than a Future or None, so what it
    # accepts never depends on whether gen was imported first.
    global _gen
    if _gen is None:
        _gen = importlib.import_module(_GEN)
    return _gen


class IOLoop(Configurable, BlockingAlarm):
    """An I/O loop with callbacks and timers; abstract (see the module docstring).

    ``IOLoop()`` makes the configured class, `PollIOLoop` by default. A loop class
    implements the methods here that raise NotImplementedError, plus ``_run_until_stopped``
    (run passes until stopped) and ``_release`` (let go of what the loop holds); its
    `initialize` sets ``self.time``, its clock, and ends by calling this one. Tornado 5.1's
    blocking alarm comes from the legacy wing's mixins (_ioloop_legacy).
    """
    NONE = 0
    READ = READ
    WRITE = WRITE
    ERROR = ERROR

    def __new__(cls, *args, **kwargs):
        # The one piece of Tornado's Configurable kept, for IOLoop() to make the configured
        # class. Construction is `initialize`, called here: as in Tornado 5.1, so legacy
        # subclasses that override initialize() work. No loop class defines __init__, so
        # the object.__init__ Python calls next does nothing.
        if cls is IOLoop:
            cls = IOLoop.configured_class()
            configured_kwargs = IOLoop.configured()[1]
            if configured_kwargs:
                kwargs = dict(configured_kwargs, **kwargs)
        loop = object.__new__(cls)
        loop.initialize(*args, **kwargs)
        return loop

    def initialize(self, make_current=None):
        """Become this thread's current loop if `make_current` says so.

        Args:
            make_current: True to become current (an error if another loop is), False not
                to, None (default) to become current only if the thread has no loop.
        Raises:
            RuntimeError: `make_current` is True and another loop is current; this loop
                is closed then.
        """
        if not _call_soon_is_add_callback(type(self)):
            # The package's own callbacks go through the subclass's add_callback too.
            self._call_soon = self.add_callback
        self._running = False  # Only while start() runs.
        self._stopped = False
        self._closed = False
        current = IOLoop.current(instance=False)
        if make_current and current is not None and current is not self:
            self.close()  # Made for nothing: release what the subclass opened.
            raise RuntimeError('this thread already has a current IOLoop')
        if make_current or (make_current is None and current is None):
            self.make_current()

    # -- which class IOLoop() makes ---------------------------------------------------

    @classmethod
    def configurable_base(cls):
        return IOLoop

    @classmethod
    def configurable_default(cls):
        return PollIOLoop

    # -- current loop ---------------------------------------------------------------------

    @staticmethod
    def current(instance=True):
        """This thread's current loop; one is created if there is none and `instance`.

        A thread with no current loop that runs an asyncio loop has, as in Tornado 5.1,
        that asyncio loop's IOLoop, not made current: the one made when it was first
        asked for (an `AsyncIOMainLoop`), or any asyncio-backed loop built on it since.
        """
        loop = getattr(thread_state, 'instance', None)
        if loop is None:
            loop = _loop_for_thread_without_one(instance)
        return loop

    @classmethod
    def _new_current(cls):
        """The loop current() makes for a thread that has none, when `cls` is configured."""
        return IOLoop(make_current=True)

    @staticmethod
    def instance():
        """Alias of `current()`, as in Tornado 5."""
        return IOLoop.current()

    @staticmethod
    def initialized():
        """Whether this thread has a current loop (Tornado 5 keeps it for legacy code)."""
        return IOLoop.current(instance=False) is not None

    def make_current(self):
        thread_state.instance = self

    def install(self):
        """Alias of `make_current()`, as in Tornado 5."""
        self.make_current()

    @staticmethod
    def clear_current():
        thread_state.instance = None

    @staticmethod
    def clear_instance():
        """Alias of `clear_current()`, as in Tornado 5."""
        IOLoop.clear_current()

    # -- running ------------------------------------------------------------------------

    def start(self):
        """Run passes until `stop()`; if `stop()` came first, return at once.

        The loop is the thread's current one while it runs.
        """
        if self._closed:
            raise RuntimeError('IOLoop is closed')
        if self.is_running():
            raise RuntimeError('IOLoop is already running')
        if self._stopped:
            self._stopped = False
            return
        _setup_logging()
        previous = IOLoop.current(instance=False)
        self.make_current()
        self._running = True
        try:
            self._run_until_stopped()
        finally:
            self._running = False
            self._stopped = False
            thread_state.instance = previous

    def stop(self):
        """Stop after the current pass; safe to call from any thread."""
        raise NotImplementedError()

    def is_running(self):
        raise NotImplementedError()

    def run_sync(self, func, timeout=None, cancel_on_timeout=True):
        """Start the loop, run `func` (usually a coroutine), stop it, return its result.

        The result's exception, if any, is re-raised with its traceback.

        Args:
            timeout: relative seconds; when it expires, the coroutine is cancelled (unless
                `cancel_on_timeout` is False), allowed to finish its cleanup, for as long
                again at most, and `TimeoutError` is raised.
        Raises:
            RuntimeError: the loop is already running (yield the coroutine instead).
        """
        if self.is_running():
            raise RuntimeError('run_sync() cannot be called on a running IOLoop; '
                               'yield the coroutine from within the loop instead')
        state = {'future': None, 'timed_out': False, 'returned': False}

        def run():
            try:
                result = func()
                if result is not None and not is_future(result):
                    result = _gen_module().convert_yielded(result)
            except Exception:
                future = Future()
                future.set_exc_info(sys.exc_info())
            else:
                if is_future(result):
                    future = result
                else:
                    future = Future()
                    future.set_result(result)
            state['future'] = future
            self.add_future(future, on_done)

        def on_done(future):
            # After a timeout that left the coroutine running, its end must not stop a
            # later run of the loop.
            if not state['returned']:
                self.stop()

        def on_timeout():
            state['timed_out'] = True
            if cancel_on_timeout and state['future'].cancel():
                # A coroutine that goes on after its CancelledError (caught by an `except
                # Exception:` on 2.7 and 3.6-3.7) must not keep run_sync from returning:
                # Tornado 5.1's returns at the timeout.
                timers.append(self.call_later(timeout, self.stop))
            else:
                self.stop()

        self.add_callback(run)
        timers = [] if timeout is None else [self.call_later(timeout, on_timeout)]
        self.start()
        state['returned'] = True
        for timer in timers:
            self.remove_timeout(timer)
        future = state['future']
        if state['timed_out']:
            # A failure during the coroutine's cleanup stays unretrieved, so the Future
            # logs it when collected.
            raise TimeoutError('Operation timed out after %s seconds' % timeout)
        return future.result()

    def close(self, all_fds=False):
        """Release what the loop holds; with `all_fds`, close every watched file too.

        `start()` must have returned (after `stop()`). Harmless on a closed loop.
        """
        if self._running:
            raise RuntimeError('cannot close a running IOLoop; stop it first')
        if self._closed:
            return
        self._closed = True
        if self._own_executor is not None:
            self._own_executor.shutdown()  # Its calls still running end first, as in 5.1.
        fileobjs = self.pending_work()[1] if all_fds else ()
        self._release()
        for fileobj in fileobjs:
            _close_quietly(fileobj)
        if IOLoop.current(instance=False) is self:
            IOLoop.clear_current()

    # -- callbacks ----------------------------------------------------------------------

    # Every way to schedule a call takes keyword arguments for it, as Tornado 5.1's do
    # (legacy code passes them). Only a call given some pays for them (`bind_keywords`):
    # a call given none is kept as it was.

    def add_callback(self, callback, *args, **kwargs):
        """Run `callback(*args, **kwargs)` in the next pass. Safe from any thread."""
        raise NotImplementedError()

    def add_callback_from_signal(self, callback, *args, **kwargs):
        """`add_callback` for signal handlers: no locks taken, always wakes the poll."""
        raise NotImplementedError()

    def spawn_callback(self, callback, *args, **kwargs):
        """Run `callback(*args, **kwargs)` in the next pass, detached from the caller."""
        self.add_callback(callback, *args, **kwargs)

    def _call_soon(self, fn, *args):
        """`add_callback(fn, *args)` for the package's own hot callers (the Runner,
        `add_future`), asyncio's ``call_soon`` shape: a method that takes ``**kwargs``
        makes an empty dict at every call, which every coroutine's loop pass would pay.
        This default goes through `add_callback`, so a loop class that defines only that
        (a subclass, another package's loop) sees every callback; a loop overrides it only
        as add_callback without keywords (see `_call_soon_is_add_callback`)."""
        self.add_callback(fn, *args)

    def add_future(self, future, callback):
        """Run `callback(future)` in the pass after `future` resolves (any thread)."""
        future_add_done_callback(future, lambda f: self._call_soon(callback, f))

    # Tornado 5.0's executors. The default is the pool run_in_executor makes on first use
    # until set_default_executor names another; close() shuts down the pool it made.
    _default_executor = None
    _own_executor = None

    def run_in_executor(self, executor, func, *args):
        """Run `func(*args)` on `executor`, a concurrent.futures executor, or None for the
        loop's default (a thread pool of five threads a CPU); keyword arguments go through
        functools.partial. Returns a Future resolved on this loop's thread; cancelling it
        cancels the call if it has not started."""
        if executor is None:
            if self._default_executor is None:
                self._default_executor = self._own_executor = _default_thread_pool()
            executor = self._default_executor
        return resolve_through(self, executor.submit(func, *args))

    def set_default_executor(self, executor):
        """Make `executor` the one ``run_in_executor(None, ...)`` uses."""
        if not callable(getattr(executor, 'submit', None)):
            raise TypeError('not an executor (it has no submit method): %r' % (executor,))
        self._default_executor = executor

    # -- timers -------------------------------------------------------------------------

    def time(self):
        """The loop's clock, in seconds: what deadlines are given in.

        It reads as ``time.time()`` does (as Tornado 5.1's, so legacy code's
        ``add_timeout(time.time() + 5, ...)`` waits 5 s), but it is monotonic: set to the
        wall clock when the loop is made, it does not follow later steps of the system
        clock, and neither do the timers. A loop made with a `time_func` reads that.
        """
        raise NotImplementedError()

    def add_timeout(self, deadline, callback, *args, **kwargs):
        """Run `callback(*args, **kwargs)` at `deadline`: loop time (`self.time()`) or a
        timedelta; returns a handle for remove_timeout."""
        if kwargs:
            callback, args = bind_keywords(callback, args, kwargs)
        return self.call_at(deadline_for(deadline, self), callback, *args)

    def call_later(self, delay, callback, *args, **kwargs):
        """Run `callback(*args, **kwargs)` after `delay` seconds; returns a handle for
        remove_timeout."""
        if kwargs:
            callback, args = bind_keywords(callback, args, kwargs)
        return self.call_at(self.time() + delay, callback, *args)

    def call_at(self, when, callback, *args, **kwargs):
        """Run `callback(*args, **kwargs)` at loop time `when`; returns a handle for
        remove_timeout."""
        raise NotImplementedError()

    def remove_timeout(self, timeout):
        """Cancel a pending timer; harmless if it already ran or was already cancelled."""
        raise NotImplementedError()

    # -- file descriptors ---------------------------------------------------------------

    def add_handler(self, fd, handler, events):
        """Call `handler(fd, events)` when `fd` (an int or an object with fileno()) is ready."""
        raise NotImplementedError()

    def update_handler(self, fd, events):
        raise NotImplementedError()

    def remove_handler(self, fd):
        """Stop watching `fd`; harmless if it is not watched."""
        raise NotImplementedError()

    def split_fd(self, fd):
        """``(file descriptor, object)`` for `fd`, an int or an object with fileno()."""
        return fileno_of(fd), fd

    def close_fd(self, fd):
        """Close `fd` (an int or an object with close()), as ``close(all_fds=True)`` does."""
        _close_quietly(fd)

    def pending_work(self):
        """What is still scheduled: ``(timers, fileobjs)``.

        `timers` lists the live timers as ``(deadline, callback)`` in deadline order,
        `fileobjs` the watched files (the loop's own left out). Test helpers use it to
        report the work a test left behind.
        """
        raise NotImplementedError()

    def _run_callback(self, callback, args):
        try:
            result = callback(*args)
        except Exception:
            self.handle_callback_exception(callback)
            return
        if result is not None:
            self._watch_returned(result)

    def handle_callback_exception(self, callback):
        """Report that `callback`, run by the loop, raised: called in the ``except``
        clause, for callbacks, timers, handlers, a `PeriodicCallback`'s runs and the
        Future a callback returned that failed. Logs to ``app_log`` in Tornado 5.1's
        words; subclasses may override it to report elsewhere."""
        app_log.error('Exception in callback %r', callback, exc_info=True)

    def _watch_returned(self, result):
        """A callback returned `result`: if it is yieldable (a Future, or a native
        coroutine, which gen then runs), its failure is reported as the callback's."""
        if not is_future(result):
            result = _future_to_watch(result)
            if result is None:
                return
        future_add_done_callback(result, self._report_failure)

    def _report_failure(self, future):
        if future.cancelled():
            return
        try:
            future.result()
        except Exception:
            self.handle_callback_exception(future)


class PollIOLoop(PolledBlockingAlarm, IOLoop):
    """tinytornado's own loop: a level-triggered selector loop (see the module docstring).

    Args:
        make_current: as for `IOLoop.initialize`.
        time_func: the loop's clock, a callable returning seconds (default: the monotonic
            clock, read as the wall clock: see `IOLoop.time`). A subclass may define
            `time` instead, as in Tornado 5.1.
        impl: the poller, one of `_poller`'s (default: the best the platform has), as
            Tornado 5.1's subclasses pass it.
    """

    def initialize(self, make_current=None, time_func=None, impl=None):
        # Timers are kept on `_clock`, `time()` less `_epoch_offset`: the loop reads its
        # clock every pass and every call_later without a Python call for the sum.
        self._epoch_offset = 0.0
        if overrides(type(self), IOLoop, 'time'):
            self._clock = self.time  # A subclass's own clock, as Tornado 5.1 honours it.
        elif time_func is not None:
            self.time = self._clock = time_func
        else:
            self._clock = monotonic
            self.time, self._epoch_offset = epoch_aligned(monotonic)
        self._advance_clock = getattr(time_func, 'advance', None)
        self._callbacks = collections.deque()
        self._timers = TimerQueue()
        # handle -> callback and handle -> args (only when there are some), live timers only
        self._timer_callbacks = {}
        self._timer_args = {}
        self._poller = make_poller() if impl is None else impl
        self._handlers = {}
        self._thread_ident = None
        self._waker = _Waker()
        self.add_handler(self._waker.reader, self._waker.consume, self.READ)
        super(PollIOLoop, self).initialize(make_current)

    # -- running ------------------------------------------------------------------------

    def _run_until_stopped(self):
        self._thread_ident = get_ident()
        try:
            while not self._stopped:
                self._run_once()
        finally:
            self._thread_ident = None
            self._stop_blocking_alarm()

    def stop(self):
        self._stopped = True
        if self._running and get_ident() != self._thread_ident:
            self._waker.wake()

    def is_running(self):
        return self._running

    def _release(self):
        self.remove_handler(self._waker.reader)
        self._handlers.clear()
        self._poller.close()
        self._waker.close()
        self._callbacks.clear()
        self._timers = TimerQueue()
        self._timer_callbacks.clear()
        self._timer_args.clear()

    # -- callbacks ----------------------------------------------------------------------

    def add_callback(self, callback, *args, **kwargs):
        self._callbacks.append(
            functools.partial(callback, *args, **kwargs) if args or kwargs else callback)
        if self._thread_ident != get_ident():
            self._waker.wake()

    def _call_soon(self, fn, *args):
        # add_callback without keywords, written out again: a call from one to the other
        # would cost W4's chain of callbacks as much as the dict (3.11). Both are
        # _speedups.AddCallback where the C speedups are built, and keep in step with it.
        self._callbacks.append(functools.partial(fn, *args) if args else fn)
        if self._thread_ident != get_ident():
            self._waker.wake()

    if _AddCallback is not None:
        # Both in C for a call given no keyword (see _speedups.c): no frame, no dict.
        add_callback = _call_soon = _AddCallback(add_callback)

    def add_callback_from_signal(self, callback, *args, **kwargs):
        self._callbacks.append(
            functools.partial(callback, *args, **kwargs) if args or kwargs else callback)
        self._waker.wake()

    # -- timers -------------------------------------------------------------------------

    def call_later(self, delay, callback, *args, **kwargs):
        # call_at(self.time() + delay) without time()'s call, nor call_at's: a timer a
        # coroutine sleeps on. (A method that takes keywords makes a dict at each call.)
        if kwargs:
            callback, args = bind_keywords(callback, args, kwargs)
        return self._add_timer(self._clock() + self._epoch_offset + delay, callback, args)

    def call_at(self, when, callback, *args, **kwargs):
        if kwargs:
            callback, args = bind_keywords(callback, args, kwargs)
        return self._add_timer(when, callback, args)

    def _add_timer(self, when, callback, args):
        """Queue `callback(*args)` at loop time `when`; returns its handle."""
        handle = next(_timer_handles)
        self._timers.push(when - self._epoch_offset, handle)
        self._timer_callbacks[handle] = callback
        if args:
            self._timer_args[handle] = args
        return handle

    def remove_timeout(self, timeout):
        callbacks = self._timer_callbacks
        if callbacks.pop(timeout, None) is None:
            return
        if self._timer_args:
            self._timer_args.pop(timeout, None)
        # Queued handles without a callback are dead. While due timers run, those taken
        # but not yet run count as live and are not queued: this undercounts, never over.
        timers = self._timers
        dead = timers.length - len(callbacks)
        if dead > _COMPACT_MIN_CANCELLED and dead * 2 > timers.length:
            timers.retain(callbacks)

    # -- file descriptors ---------------------------------------------------------------

    def add_handler(self, fd, handler, events):
        fileno = fileno_of(fd)
        self._poller.register(fileno, events | ERROR)
        self._handlers[fileno] = (fd, handler)

    def update_handler(self, fd, events):
        self._poller.modify(fileno_of(fd), events | ERROR)

    def remove_handler(self, fd):
        fileno = fileno_of(fd)
        if self._handlers.pop(fileno, None) is not None:
            try:
                self._poller.unregister(fileno)
            except (KeyError, ValueError, OSError, IOError):
                pass  # Closed already: the selector forgot it, or never can ask again.

    def pending_work(self):
        callbacks = self._timer_callbacks
        timers = [(deadline + self._epoch_offset, callbacks[handle])
                  for deadline, handle in self._timers if handle in callbacks]
        fileobjs = [fileobj for fileobj, _ in self._handlers.values()
                    if fileobj is not self._waker.reader]
        return timers, fileobjs

    # -- one pass -----------------------------------------------------------------------

    def _run_once(self):
        if self._callbacks or self._stopped:
            poll = self._poller.poll  # An instance's attribute: 3.11 has no fast method call.
            ready = poll(0)  # Work is waiting: only look.
        else:
            ready = self._wait()
        # Due timers are taken now, before anything runs: one that a callback of this
        # pass schedules for "now" runs in the next pass, as in asyncio.
        due = self._timers.pop_due(self._clock()) if self._timers.length else None
        callbacks = self._callbacks
        # Only those queued before the pass: one a callback adds runs in the next pass. A
        # countdown makes no object per pass, as range() or itertools.repeat() would.
        remaining = len(callbacks)
        while remaining:
            remaining -= 1
            callback = callbacks.popleft()
            # _run_callback's call, written out: this loop runs every callback of every
            # pass, and a call per callback costs as much again as a bare loop (3.11).
            try:
                result = callback()
            except Exception:
                self.handle_callback_exception(callback)
                continue
            if result is not None:
                self._watch_returned(result)
        if ready:
            self._run_handlers(ready)
        if due:
            self._run_timers(due)

    def _wait(self):
        """Poll, waiting until the first deadline, or for I/O if there is no timer."""
        delay = self._time_to_next_timer()
        if self._advance_clock is not None and delay:
            ready = self._poller.poll(0)
            if not ready:
                self._advance_clock(delay)
            return ready
        return self._poller.poll(delay)

    def _time_to_next_timer(self):
        timers = self._timers
        while timers.length:
            deadline, handle = timers.first()
            if handle in self._timer_callbacks:
                # At most a day: a poll timeout too large for the system raises.
                return min(max(0, deadline - self._clock()), _LONGEST_POLL)
            # A dead timer at the head would wake the poll for nothing.
            timers.pop_first()
        return None

    def _run_handlers(self, ready):
        handlers = self._handlers
        for fd, events in ready:
            entry = handlers.get(fd)
            if entry is None:
                continue  # Removed by an earlier callback in this pass.
            try:
                entry[1](entry[0], events)  # No _run_callback: no call, no args tuple.
            except Exception:
                self.handle_callback_exception(entry[1])

    def _run_timers(self, due):
        take_callback = self._timer_callbacks.pop
        timer_args = self._timer_args
        for handle in due:
            callback = take_callback(handle, None)
            if callback is None:  # cancelled, maybe by a timer run before it
                continue
            # _run_callback written out, as in _run_once: 10,000 timers due together (as
            # many timeouts) each paid a call for it.
            try:
                result = callback(*timer_args.pop(handle, ())) if timer_args else callback()
            except Exception:
                self.handle_callback_exception(callback)
                continue
            if result is not None:
                self._watch_returned(result)


def _setup_logging():
    """Configure logging if nobody has, as Tornado 5.1's `start()` does: the loop's only
    report of a failed callback is the log, which 2.7 would drop with "No handlers could
    be found for logger"."""
    if not (logging.getLogger().handlers or logging.getLogger('tornado').handlers or
            app_log.handlers):
        logging.basicConfig()


class PeriodicCallback(object):
    """Call `callback` every `callback_time` milliseconds once started.

    Runs keep to the schedule set at `start()`: a run that overruns its period makes the
    loop skip the runs it missed (no burst to catch up), and the next one comes at the
    next whole period after the run ended. A clock that goes backwards during a run still
    moves the next run one period on.

    Args:
        jitter: the period of each run varies at random by up to ``jitter / 2`` of it
            either way (0.1: 95% to 105%), so that periodic work of many processes
            spreads out.
    Raises:
        ValueError: `callback_time` is not positive.
    """

    def __init__(self, callback, callback_time, jitter=0):
        if callback_time <= 0:
            raise ValueError('PeriodicCallback callback_time must be positive, not %r'
                             % (callback_time,))
        self.callback = callback
        self.callback_time = callback_time
        self.jitter = jitter
        self.io_loop = None
        self._running = False
        self._timeout = None
        # Tornado 5.1's names, which its tests and some legacy code read: the deadline
        # (loop time) of the next run.
        self._next_timeout = None

    def start(self):
        self.io_loop = IOLoop.current()
        self._running = True
        self._next_timeout = self.io_loop.time()
        self._schedule_next()

    def stop(self):
        self._running = False
        if self._timeout is not None:
            self.io_loop.remove_timeout(self._timeout)
            self._timeout = None

    def is_running(self):
        return self._running

    def _run(self):
        if not self._running:
            return
        try:
            result = self.callback()
        except Exception:
            self.io_loop.handle_callback_exception(self.callback)
        else:
            if result is not None:
                self.io_loop._watch_returned(result)
        finally:
            self._schedule_next()

    def _schedule_next(self):
        if self._running:
            self._update_next(self.io_loop.time())
            self._timeout = self.io_loop.call_at(self._next_timeout, self._run)

    def _update_next(self, current_time):
        """Move `_next_timeout` past `current_time`, on the schedule (see the class)."""
        period = self.callback_time / 1000.0
        if self.jitter:
            period *= 1 + self.jitter * (random.random() - 0.5)
        if self._next_timeout <= current_time:
            missed = math.floor((current_time - self._next_timeout) / period)
            self._next_timeout += (missed + 1) * period
        else:
            # The clock went back: without this the run would come again at the same
            # deadline. A small step back (a clock adjusted by NTP) is not worth a change
            # of schedule.
            self._next_timeout += period


def _future_to_watch(value):
    """The Future to watch for what a callback returned, or None to ignore it.

    As Tornado 5.1's loop: what a callback returned is run (a native coroutine) and
    watched if it is yieldable; anything else is no error, only a return value.
    """
    gen = _gen_module()
    try:
        future = gen.convert_yielded(value)
    except gen.BadYieldError:
        return None
    return future if is_future(future) else None


def _default_thread_pool():
    """The pool `run_in_executor(None, ...)` makes: five threads a CPU, as in 5.1."""
    try:
        cpus = multiprocessing.cpu_count()
    except NotImplementedError:
        cpus = 1
    return futures.ThreadPoolExecutor(max_workers=cpus * 5)


def _call_soon_is_add_callback(cls):
    """Whether loop class `cls`'s `_call_soon` does what its `add_callback` does: False
    when a class redefines add_callback below the one that defined _call_soon (a
    subclass of a loop that overrides add_callback only)."""
    for klass in cls.__mro__:
        if '_call_soon' in vars(klass):
            return True
        if 'add_callback' in vars(klass):
            return False
    raise TypeError('%r is no IOLoop class' % (cls,))


def bind_keywords(callback, args, kwargs):
    """``(call, ())``: `callback` with `args` and `kwargs` bound (functools.partial, as
    Tornado 5.1 binds every scheduled call), for a method of the loop given keywords.

    Bound where the keywords arrive, before a method passes the call on, so a keyword
    named as the next method's parameter (``call_later(1, f, when=2)``) reaches `f`.
    """
    return functools.partial(callback, *args, **kwargs), ()


def epoch_aligned(clock):
    """``(aligned, offset)``: `clock` shifted by `offset` so that `aligned()` reads as
    ``time.time()`` reads now, and goes on as `clock` does (see `IOLoop.time`)."""
    offset = time.time() - clock()

    def aligned():
        return clock() + offset
    return aligned, offset


def deadline_for(timeout, io_loop=None):
    """The loop time a Tornado-style `timeout` argument names, or None for None: the one
    reading of a `timeout` in the package.

    The convention: a number is a deadline already (a loop time, `IOLoop.time()`), and a
    `datetime.timedelta` counts from now on `io_loop`'s clock (the current loop's by
    default). Tornado's waits (`add_timeout`, `gen.with_timeout`, queue and lock waits)
    take their `timeout` so and pass it here as it is. An API whose Tornado signature
    reads a number as seconds from now (`TCPClient.connect`) says so by passing
    ``datetime.timedelta(seconds=number)``. Everything below a public signature takes the
    `deadline` this returns.
    """
    if timeout is None or isinstance(timeout, numbers.Real):
        return timeout
    if isinstance(timeout, datetime.timedelta):
        return (io_loop or IOLoop.current()).time() + timeout.total_seconds()
    raise TypeError('unsupported timeout %r: give a number or a '
                    'datetime.timedelta' % (timeout,))


def fileno_of(fd):
    """The descriptor number of `fd`, a number or an object with fileno()."""
    return fd if isinstance(fd, int) else fd.fileno()


def _close_quietly(fileobj):
    try:
        if isinstance(fileobj, int):
            os.close(fileobj)
        else:
            fileobj.close()
    except (IOError, OSError) as e:
        if e.errno != errno.EBADF:
            app_log.error('Error closing fd %r', fileobj, exc_info=True)

