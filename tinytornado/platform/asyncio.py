"""Run tinytornado on an asyncio event loop, and pass Futures and coroutines both ways.

Python 3 only (2.7 never imports this module). Importing it teaches `gen` to wait for asyncio
Futures, Tasks and other awaitables, so ``@gen.coroutine`` code can ``yield`` them (native
coroutines it runs without this module); and ``async def`` code can ``await`` tinytornado
Futures (see `tinytornado._kernel_py3`).

How the loop maps onto asyncio
------------------------------
`BaseAsyncIOLoop` is an `IOLoop` whose callbacks, timers and file descriptor handlers are
asyncio's: ``add_callback`` is ``call_soon``, a handler is an asyncio reader and/or writer,
and the loop's clock is the asyncio loop's. It is a sibling of tinytornado's own
`PollIOLoop` under the abstract `IOLoop`, so it has no selector, timer queue or waker of
tinytornado's. ``IOLoop.configure(AsyncIOLoop)`` makes ``IOLoop()`` an `AsyncIOLoop` and,
as in Tornado 5.1, the loop ``IOLoop.current()`` creates an `AsyncIOMainLoop`.

Each asyncio loop has at most one IOLoop, the asyncio-backed loop built on it last (kept in
`_ioloops`). In a thread with no current loop that runs an asyncio loop (``asyncio.run()``),
``IOLoop.current()`` is that IOLoop, an `AsyncIOMainLoop` made on first use and not made
current, so legacy coroutines awaited there run on asyncio's loop, as in Tornado 5.1.
`tinytornado.ioloop` loads `_ioloop_of_running_loop` by name for this, importing this module.

Tinytornado coroutines, asyncio tasks and asyncio libraries then share one loop and one
thread. An asyncio pass runs the callbacks that were ready, then the I/O handlers, then
the due timers: the order of tinytornado's own pass. Two things are kept that asyncio
alone does not promise:

- Timers with equal deadlines run in the order they were added: asyncio's heap compares
  deadlines only, so each distinct deadline gets one asyncio timer that runs its group.
- A callback or handler that raises is logged to ``app_log`` and the loop goes on.

A descriptor watched for reading and writing gets two calls, one per event, where
tinytornado's loop makes one call with both bits set.

Who drives a native coroutine that a ``gen.coroutine`` yields (or `run_sync` is given)?
On an asyncio-backed loop, an asyncio Task, so that asyncio code inside it finds a current
task. On tinytornado's own loop, the `gen.Runner`, as in Tornado 4: it may await tinytornado
Futures and ``asyncio.sleep(0)`` but nothing that needs an asyncio loop.

Cancellation crosses the bridge both ways: cancelling the Future on one side cancels the
other, and inside ``async def`` code it arrives as ``asyncio.CancelledError`` (a different
class from tinytornado's `CancelledError` on Python 3.8+).
"""
from __future__ import absolute_import, division, print_function

import asyncio
import functools
import inspect

from tinytornado import gen
from tinytornado._compat import selectors
from tinytornado._kernel import copy_outcome
from tinytornado._kernel_py3 import asyncio_future_for
from tinytornado.concurrent import Future
from tinytornado.ioloop import IOLoop, bind_keywords, epoch_aligned, fileno_of

__all__ = [
    'BaseAsyncIOLoop', 'AsyncIOLoop', 'AsyncIOMainLoop', 'to_asyncio_future',
    'to_tinytornado_future', 'to_tornado_future', 'AnyThreadEventLoopPolicy',
]


class _Timeout(object):
    """A handle for a scheduled call; pass it to `remove_timeout`."""
    __slots__ = ('group', 'callback', 'args')

    def __init__(self, group, callback, args):
        self.group = group
        self.callback = callback
        self.args = args


class _TimerGroup(object):
    """The timers of one deadline, run in the order added by one asyncio timer."""
    __slots__ = ('deadline', 'timeouts', 'live', 'handle')

    def __init__(self, deadline):
        self.deadline = deadline
        self.timeouts = []
        self.live = 0
        self.handle = None


class BaseAsyncIOLoop(IOLoop):
    """An `IOLoop` that runs on `asyncio_loop` (see the module docstring).

    Closing it while an adopted asyncio loop runs is allowed (this is how an asyncio
    program lets go of tinytornado); only `start()` must have returned.

    Args:
        asyncio_loop: the asyncio event loop (asyncio's own, uvloop's, ...).
        close_loop: close `asyncio_loop` too when this loop is closed.
        make_current: as for `IOLoop.initialize`.
    """

    def initialize(self, asyncio_loop, close_loop=False, make_current=None):
        self.asyncio_loop = asyncio_loop
        if isinstance(asyncio_loop, _ClockEventLoop):  # A clock of the caller's: as it is.
            self.time, self._epoch_offset = asyncio_loop.time, 0.0
        else:
            self.time, self._epoch_offset = epoch_aligned(asyncio_loop.time)
        self._close_loop = close_loop
        self._handlers = {}
        self._timer_groups = {}
        _register_ioloop_of(asyncio_loop, self)  # First: initialize asks current().
        super(BaseAsyncIOLoop, self).initialize(make_current)

    @classmethod
    def _new_current(cls):
        # As in Tornado 5.1: with asyncio configured, a thread's loop wraps the thread's
        # asyncio loop, so asyncio code (get_event_loop().run_until_complete) shares it.
        return AsyncIOMainLoop(make_current=True)

    # -- running ------------------------------------------------------------------------

    def _run_until_stopped(self):
        self.asyncio_loop.run_forever()

    def stop(self):
        if not self.is_running():
            self._stopped = True
        elif asyncio._get_running_loop() is self.asyncio_loop:
            self.asyncio_loop.stop()
        else:
            self.asyncio_loop.call_soon_threadsafe(self.asyncio_loop.stop)

    def is_running(self):
        """True while the asyncio loop runs, whether `start()` or someone else runs it."""
        return self.asyncio_loop.is_running()

    def _release(self):
        if _ioloops.get(self.asyncio_loop) is self:
            _ioloops.pop(self.asyncio_loop, None)
        for fileno in list(self._handlers):
            self.remove_handler(fileno)
        for group in self._timer_groups.values():
            group.handle.cancel()
            group.handle = None  # A later remove_timeout has nothing to cancel.
        self._timer_groups.clear()
        if self._close_loop:
            self.asyncio_loop.close()

    # -- callbacks ----------------------------------------------------------------------

    def add_callback(self, callback, *args, **kwargs):
        if kwargs:
            callback, args = bind_keywords(callback, args, kwargs)
        # Named by class: a subclass's add_callback may be its instances' _call_soon.
        BaseAsyncIOLoop._call_soon(self, callback, *args)

    def _call_soon(self, fn, *args):
        if asyncio._get_running_loop() is self.asyncio_loop:
            self.asyncio_loop.call_soon(self._run_callback, fn, args)
        else:
            self.add_callback_from_signal(fn, *args)

    def add_callback_from_signal(self, callback, *args, **kwargs):
        """`add_callback` that always wakes the asyncio loop's poll."""
        if kwargs:
            callback, args = bind_keywords(callback, args, kwargs)
        try:
            self.asyncio_loop.call_soon_threadsafe(self._run_callback, callback, args)
        except RuntimeError:
            if not self.asyncio_loop.is_closed():
                raise
            # A closed loop drops callbacks, as tinytornado's own loop does.

    # -- timers -------------------------------------------------------------------------

    def call_at(self, when, callback, *args, **kwargs):
        if kwargs:
            callback, args = bind_keywords(callback, args, kwargs)
        group = self._timer_groups.get(when)
        if group is None:
            group = self._timer_groups[when] = _TimerGroup(when)
            group.handle = self.asyncio_loop.call_at(when - self._epoch_offset,
                                                     self._run_timer_group, group)
        timeout = _Timeout(group, callback, args)
        group.timeouts.append(timeout)
        group.live += 1
        return timeout

    def remove_timeout(self, timeout):
        group = timeout.group
        if group is None:
            return
        timeout.group = timeout.callback = timeout.args = None
        group.live -= 1
        if not group.live and group.handle is not None:
            # Nothing left at this deadline: let asyncio drop its timer.
            group.handle.cancel()
            del self._timer_groups[group.deadline]

    def _run_timer_group(self, group):
        del self._timer_groups[group.deadline]
        timeouts, group.timeouts, group.handle = group.timeouts, None, None
        for timeout in timeouts:
            callback, args = timeout.callback, timeout.args
            if callback is None:
                continue  # Removed by an earlier timer of this group.
            timeout.group = timeout.callback = timeout.args = None
            self._run_callback(callback, args)

    # -- file descriptors ---------------------------------------------------------------

    def add_handler(self, fd, handler, events):
        fileno = fileno_of(fd)
        if fileno in self._handlers:
            raise KeyError('%r (fd %d) is already registered' % (fd, fileno))
        self._handlers[fileno] = (fd, handler)
        self._watch(fileno, events)

    def update_handler(self, fd, events):
        fileno = fileno_of(fd)
        if fileno not in self._handlers:
            raise KeyError('%r (fd %d) is not registered' % (fd, fileno))
        self._watch(fileno, events)

    def remove_handler(self, fd):
        fileno = fileno_of(fd)
        if self._handlers.pop(fileno, None) is not None:
            self.asyncio_loop.remove_reader(fileno)
            self.asyncio_loop.remove_writer(fileno)

    def pending_work(self):
        timers = [(group.deadline, timeout.callback)
                  for group in sorted(self._timer_groups.values(), key=_deadline)
                  for timeout in group.timeouts if timeout.callback is not None]
        return timers, [fileobj for fileobj, _ in self._handlers.values()]

    def _watch(self, fileno, events):
        asyncio_loop = self.asyncio_loop
        if events & self.READ or not events & self.WRITE:
            # Errors are reported as readability, as selectors do.
            asyncio_loop.add_reader(fileno, self._handle_events, fileno, self.READ)
        else:
            asyncio_loop.remove_reader(fileno)
        if events & self.WRITE:
            asyncio_loop.add_writer(fileno, self._handle_events, fileno, self.WRITE)
        else:
            asyncio_loop.remove_writer(fileno)

    def _handle_events(self, fileno, events):
        entry = self._handlers.get(fileno)
        if entry is not None:
            self._run_callback(entry[1], (entry[0], events))


def _deadline(group):
    return group.deadline


class AsyncIOLoop(BaseAsyncIOLoop):
    """An IOLoop on a new asyncio loop of its own, closed with it.

    The asyncio loop comes from ``asyncio.new_event_loop()``, so uvloop's event loop policy
    makes it a uvloop loop.

    Args:
        make_current: as for `IOLoop.initialize`.
        time_func: a clock to run on instead (a selector loop is made to read it); a clock
            with ``advance(seconds)``, such as `tinytornado.testing.VirtualClock`, is
            moved to the next deadline instead of sleeping, as on tinytornado's own loop.
    """

    def initialize(self, make_current=None, time_func=None):
        if time_func is None:
            asyncio_loop = asyncio.new_event_loop()
        else:
            asyncio_loop = _ClockEventLoop(time_func)
        super(AsyncIOLoop, self).initialize(asyncio_loop, close_loop=True,
                                            make_current=make_current)


class AsyncIOMainLoop(BaseAsyncIOLoop):
    """An IOLoop on the asyncio loop in use: the running one, else asyncio's current one.

    Closing it leaves the asyncio loop open. Inside an asyncio program ``IOLoop.current()``
    makes one when first asked (see the module docstring); one made by hand replaces it.
    """

    def initialize(self, make_current=None):
        asyncio_loop = asyncio._get_running_loop() or asyncio.get_event_loop()
        super(AsyncIOMainLoop, self).initialize(asyncio_loop, make_current=make_current)


# The IOLoop of each asyncio loop: the asyncio-backed loop built on it last, and not closed.
# An asyncio loop closed by asyncio (asyncio.run() ends) leaves its entry behind, dropped
# when the next one is built: the asyncio loop cannot tell its users it closed.
_ioloops = {}


def _register_ioloop_of(asyncio_loop, ioloop):
    for loop in list(_ioloops):  # A copy: other threads may register theirs meanwhile.
        if loop.is_closed():
            _ioloops.pop(loop, None)
    _ioloops[asyncio_loop] = ioloop


def _ioloop_of_running_loop(asyncio_loop, instance):
    """`IOLoop.current()` in a thread that has no current loop but runs `asyncio_loop`:
    its IOLoop, made (not current) if it has none and `instance`."""
    loop = _ioloops.get(asyncio_loop)
    if loop is None and instance:
        loop = AsyncIOMainLoop(make_current=False)
    return loop


class _ClockEventLoop(asyncio.SelectorEventLoop):
    """An asyncio selector loop whose clock is `time_func`."""

    def __init__(self, time_func):
        advance = getattr(time_func, 'advance', None)
        selector = None if advance is None else _AdvancingSelector(advance)
        asyncio.SelectorEventLoop.__init__(self, selector)
        self._tinytornado_clock = time_func

    def time(self):
        return self._tinytornado_clock()


class _AdvancingSelector(selectors.BaseSelector):
    """A selector that, asked to wait for a timer, advances a virtual clock instead."""

    def __init__(self, advance):
        self._advance = advance
        self._selector = selectors.DefaultSelector()

    def register(self, fileobj, events, data=None):
        return self._selector.register(fileobj, events, data)

    def unregister(self, fileobj):
        return self._selector.unregister(fileobj)

    def modify(self, fileobj, events, data=None):
        return self._selector.modify(fileobj, events, data)

    def select(self, timeout=None):
        if not timeout:
            return self._selector.select(timeout)  # Polling, or waiting for I/O only.
        ready = self._selector.select(0)
        if not ready:
            self._advance(timeout)
        return ready

    def close(self):
        self._selector.close()

    def get_map(self):
        return self._selector.get_map()


# -- Futures and coroutines across the bridge ---------------------------------------------

def to_tinytornado_future(asyncio_future):
    """A tinytornado Future resolved like `asyncio_future` (an asyncio Future or Task, or
    any awaitable); cancelling it cancels `asyncio_future`."""
    if asyncio.isfuture(asyncio_future):
        return _from_asyncio_future(asyncio_future)
    return gen.convert_yielded(asyncio_future)


# Tornado 5.1's name, which legacy code imports.
to_tornado_future = to_tinytornado_future


def to_asyncio_future(tinytornado_future):
    """An asyncio Future resolved like `tinytornado_future` (a Future, or anything a
    coroutine may yield); cancelling either cancels the other.

    It belongs to the running asyncio loop, else to the current IOLoop's.
    """
    if asyncio.isfuture(tinytornado_future):
        return tinytornado_future
    asyncio_loop = _bridge_loop()
    if isinstance(tinytornado_future, Future):
        future = tinytornado_future
    elif inspect.isawaitable(tinytornado_future):
        return asyncio.ensure_future(tinytornado_future, loop=asyncio_loop)
    else:
        future = gen.convert_yielded(tinytornado_future)
    return asyncio_future_for(future, asyncio_loop)


class AnyThreadEventLoopPolicy(asyncio.DefaultEventLoopPolicy):
    """An asyncio policy whose ``get_event_loop`` makes a loop in any thread that has none.

    asyncio's default makes one only in the main thread, and raises elsewhere; Tornado 5.1
    code running coroutines in worker threads installs this policy:
    ``asyncio.set_event_loop_policy(AnyThreadEventLoopPolicy())``. (tinytornado's own
    `IOLoop.current` makes a loop in any thread without it, as Tornado 4 did.)
    """

    def get_event_loop(self):
        try:
            return super(AnyThreadEventLoopPolicy, self).get_event_loop()
        except RuntimeError:  # "There is no current event loop in thread ..."
            loop = self.new_event_loop()
            self.set_event_loop(loop)
            return loop


def _bridge_loop():
    asyncio_loop = asyncio._get_running_loop()
    if asyncio_loop is None:
        asyncio_loop = getattr(IOLoop.current(instance=False), 'asyncio_loop', None)
    return asyncio.get_event_loop() if asyncio_loop is None else asyncio_loop


def _from_asyncio_future(asyncio_future):
    future = Future()
    future.set_canceller(functools.partial(_cancel_both, asyncio_future, future))
    if asyncio_future.done():
        copy_outcome(asyncio_future, future)
    else:
        asyncio_future.add_done_callback(functools.partial(copy_outcome, target=future))
    return future


def _cancel_both(asyncio_future, future):
    # `future`'s canceller. Cancelling it cancels `asyncio_future`, which asyncio reports
    # one pass later: copy_outcome then cancels `future` through here again, and since an
    # asyncio Future cannot be cancelled twice, one already cancelled cancels `future` now.
    if asyncio_future.cancelled():
        future.set_cancelled()
        return True
    return asyncio_future.cancel()


def _convert_awaitable(awaitable):
    """What `gen` waits for when a coroutine yields an asyncio Future or an awaitable."""
    if asyncio.isfuture(awaitable):
        _check_runs(_loop_of(awaitable))
        return _from_asyncio_future(awaitable)
    asyncio_loop = getattr(IOLoop.current(), 'asyncio_loop', None)
    if asyncio_loop is None:
        return gen.drive_awaitable(awaitable)
    return _from_asyncio_future(asyncio.ensure_future(awaitable, loop=asyncio_loop))


def _loop_of(asyncio_future):
    get_loop = getattr(asyncio_future, 'get_loop', None)  # Python 3.7+
    return asyncio_future._loop if get_loop is None else get_loop()


def _check_runs(asyncio_loop):
    # An asyncio Future's callbacks run on its loop: on a loop that is not running (on
    # tinytornado's own, asyncio.sleep() takes asyncio's current loop on 3.6 and 3.7) its
    # outcome would never arrive, and the coroutine would wait for ever.
    if not asyncio_loop.is_running():
        raise RuntimeError(
            'a coroutine yielded a Future of an asyncio loop that is not running: on '
            "tinytornado's own IOLoop nothing runs asyncio's. Run on asyncio's loop, as "
            "Tornado 5.1 does on Python 3: IOLoop.configure('tinytornado.platform.asyncio."
            "AsyncIOLoop'), or AsyncIOMainLoop() inside an asyncio program")


class _IsAwaitable(type):
    def __instancecheck__(cls, instance):
        return inspect.isawaitable(instance)


# What ``await`` accepts: native and generator-based coroutines, and anything with
# __await__ (asyncio Futures among them). collections.abc.Awaitable misses the
# generator-based coroutines that asyncio's own functions are on Python 3.6 and 3.7.
_Awaitable = _IsAwaitable('Awaitable', (object,), {})
gen.convert_yielded.register(_Awaitable)(_convert_awaitable)
