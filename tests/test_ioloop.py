from __future__ import absolute_import, division, print_function

import datetime
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

import tinytornado
from tinytornado import gen, queues
from tinytornado._compat import monotonic
from tinytornado._extension import speedups
from tinytornado.concurrent import CancelledError, Future, TimeoutError
from tinytornado.ioloop import IOLoop, PeriodicCallback, PollIOLoop, deadline_for
from tinytornado.testing import VirtualClock


REPO = os.path.dirname(os.path.dirname(os.path.abspath(tinytornado.__file__)))


@pytest.fixture
def virtual_clock():
    return VirtualClock(start=100.0)


# Short names: `loop` runs on the real clock, `vloop` on `clock`, a virtual one.
@pytest.fixture
def loop(io_loop):
    return io_loop


@pytest.fixture
def clock(virtual_clock):
    return virtual_clock


@pytest.fixture
def vloop(io_loop, virtual_clock):
    return io_loop


def test_deadline_for_reads_a_tornado_timeout_once(vloop, clock):
    assert deadline_for(None) is None
    assert deadline_for(250) == 250 and deadline_for(7.5, vloop) == 7.5  # already deadlines
    clock.advance(20)
    vloop.make_current()
    assert deadline_for(datetime.timedelta(seconds=3)) == 123.0  # the current loop's clock
    other = IOLoop(make_current=False, time_func=VirtualClock(start=5.0))
    try:
        assert deadline_for(datetime.timedelta(milliseconds=500), other) == 5.5
    finally:
        other.close()
    with pytest.raises(TypeError):
        deadline_for('5')


def test_callbacks_added_during_a_pass_run_in_the_next(vloop):
    trace = []

    def first():
        trace.append('first')
        vloop.add_callback(lambda: trace.append('added by first'))

    vloop.add_callback(first)
    vloop.add_callback(lambda: trace.append('second'))
    vloop.add_callback(lambda: vloop.add_callback(vloop.stop))
    vloop.start()
    assert trace == ['first', 'second', 'added by first']


def test_timers_fire_at_their_deadlines_exactly(vloop, clock):
    fired = []
    for delay in (0.2, 0.1, 0.3):
        vloop.call_later(delay, lambda: fired.append(round(clock() - 100, 6)))
    vloop.call_later(0.3, vloop.stop)
    vloop.start()
    assert fired == [0.1, 0.2, 0.3]
    assert clock() == 100.3


def test_equal_deadlines_run_fifo(vloop):
    trace = []
    for i in range(50):
        vloop.call_at(101, trace.append, i)
    vloop.call_at(101, vloop.stop)
    vloop.start()
    assert trace == list(range(50))


def test_due_timers_collected_before_any_runs(vloop, clock):
    trace = []

    def first():
        trace.append('first')
        # Due "now": must wait for the next pass, after callbacks ready then.
        vloop.call_at(clock(), trace.append, 'timer added by timer')
        vloop.add_callback(trace.append, 'callback added by timer')

    vloop.call_at(101, first)
    vloop.call_at(101, trace.append, 'second')
    vloop.call_at(101.5, vloop.stop)
    vloop.start()
    assert trace == ['first', 'second', 'callback added by timer', 'timer added by timer']



def test_timers_added_by_timers_run_in_deadline_order(vloop, clock):
    trace = []

    def schedule(name, delays):
        trace.append((name, round(clock() - 100, 6)))
        for delay in delays:
            vloop.call_later(delay, schedule, '%s+%s' % (name, delay), ())

    vloop.call_later(1, schedule, 'a', (0.5, 0.25, 0.5))
    vloop.call_later(1.5, schedule, 'b', ())
    vloop.call_later(3, vloop.stop)
    vloop.start()
    assert trace == [('a', 1), ('a+0.25', 1.25), ('b', 1.5), ('a+0.5', 1.5),
                     ('a+0.5', 1.5)]


def test_timer_cancelled_by_an_earlier_timer_of_its_pass_does_not_run(vloop):
    trace = []
    later = []

    def cancel_the_rest():
        trace.append('first')
        for handle in later:
            vloop.remove_timeout(handle)

    vloop.call_at(101, cancel_the_rest)
    later.append(vloop.call_at(101, trace.append, 'cancelled'))
    vloop.call_at(101, trace.append, 'kept')
    later.append(vloop.call_at(101, trace.append, 'cancelled too'))
    vloop.call_at(102, vloop.stop)
    vloop.start()
    assert trace == ['first', 'kept']
    assert vloop.pending_work()[0] == []


def test_compaction_by_a_timer_spares_the_timers_due_with_it(vloop):
    trace = []
    queued = [vloop.call_at(200 + i / 100.0, trace.append, 'queued %d' % i)
              for i in range(3000)]

    def cancel_many():
        trace.append('cancelling')
        for handle in queued[:2990] + [same_pass[1]]:
            vloop.remove_timeout(handle)

    vloop.call_at(101, cancel_many)
    same_pass = [vloop.call_at(101, trace.append, 'due %d' % i) for i in range(3)]
    vloop.call_at(300, vloop.stop)
    vloop.start()
    assert trace == (['cancelling', 'due 0', 'due 2'] +
                     ['queued %d' % i for i in range(2990, 3000)])


@pytest.mark.own_loop_only('hands one own loop\'s timer handle to another')
def test_a_handle_from_another_loop_cancels_nothing(vloop):
    other = IOLoop(make_current=False)
    try:
        other.call_later(1, lambda: None)
        other_handle = other.call_later(1, lambda: None)
    finally:
        other.close()
    trace = []
    vloop.call_later(1, trace.append, 'first')
    vloop.call_later(1, trace.append, 'second')
    vloop.remove_timeout(other_handle)
    vloop.call_later(2, vloop.stop)
    vloop.start()
    assert trace == ['first', 'second']


def test_pending_work_lists_the_live_timers_in_deadline_order(vloop):
    handles = [vloop.call_at(103, tuple), vloop.call_at(101, dict), vloop.call_at(102, set),
               vloop.call_at(101, list)]
    vloop.remove_timeout(handles[2])
    assert vloop.pending_work()[0] == [(101, dict), (101, list), (103, tuple)]
    for handle in handles:
        vloop.remove_timeout(handle)
    assert vloop.pending_work()[0] == []

def test_pass_order_callbacks_then_handlers_then_timers(vloop):
    trace = []
    reader, writer = socket.socketpair()
    writer.send(b'x')

    def on_read(fd, events):
        trace.append('handler')
        vloop.remove_handler(fd)
    vloop.add_handler(reader, on_read, IOLoop.READ)
    vloop.call_later(0, trace.append, 'timer')
    vloop.add_callback(trace.append, 'callback')
    vloop.call_later(0.5, vloop.stop)
    vloop.start()
    assert trace == ['callback', 'handler', 'timer']
    reader.close()
    writer.close()


def test_remove_timeout_is_harmless_twice_and_after_firing(vloop):
    trace = []
    handle = vloop.call_later(1, trace.append, 'cancelled')
    fired = vloop.call_later(0.5, trace.append, 'fired')
    vloop.remove_timeout(handle)
    vloop.remove_timeout(handle)
    vloop.call_later(2, vloop.stop)
    vloop.start()
    vloop.remove_timeout(fired)
    assert trace == ['fired']


@pytest.mark.no_leak_check
@pytest.mark.own_loop_only('reads the loop\'s timer queue')
def test_cancelled_timers_are_compacted(vloop):
    handles = [vloop.call_later(i, lambda: None) for i in range(1, 3001)]
    for handle in handles[:2500]:
        vloop.remove_timeout(handle)
    assert len(vloop._timers) < 1500
    live = [handle for _, handle in vloop._timers if handle in vloop._timer_callbacks]
    assert live == handles[2500:]


def test_cancelled_head_timer_does_not_wake_the_loop(vloop, clock):
    handle = vloop.call_later(1, lambda: None)
    vloop.call_later(5, vloop.stop)
    vloop.remove_timeout(handle)
    vloop.start()
    assert clock() == 105


def test_add_timeout_takes_deadline_or_timedelta(vloop, clock):
    fired = []
    vloop.add_timeout(datetime.timedelta(seconds=2), lambda: fired.append(clock()))
    vloop.add_timeout(101, lambda: fired.append(clock()))
    vloop.call_later(3, vloop.stop)
    vloop.start()
    assert fired == [101, 102]
    with pytest.raises(TypeError):
        vloop.add_timeout('soon', lambda: None)


def _recorder(trace, label):
    """A callback that appends (label, args, sorted keyword items) to `trace`."""
    def record(*args, **kwargs):
        trace.append((label, args, sorted(kwargs.items())))
    return record


def test_keyword_arguments_reach_every_way_of_scheduling_a_call(vloop, clock):
    # As Tornado 5.1: legacy code passes keywords through the loop's scheduling calls.
    # Scheduled before start() and again from a running callback: the asyncio-backed loop
    # takes a different path in each.
    trace = []

    def schedule(when):
        vloop.add_callback(_recorder(trace, when + ' add_callback'), 1, b=2)
        vloop.spawn_callback(_recorder(trace, when + ' spawn_callback'), c=3)
        vloop.add_callback_from_signal(_recorder(trace, when + ' from_signal'), 4, d=5)
        vloop.call_later(1, _recorder(trace, when + ' call_later'), 6, e=7)
        vloop.call_at(clock() + 2, _recorder(trace, when + ' call_at'), f=8)
        vloop.add_timeout(clock() + 3, _recorder(trace, when + ' add_timeout'), 9, g=10)
        vloop.add_timeout(datetime.timedelta(seconds=4),
                          _recorder(trace, when + ' add_timeout(timedelta)'), h=11)
        # 5.1's parameter names, which legacy code passes as keywords too.
        vloop.add_callback(callback=_recorder(trace, when + ' callback='))
        vloop.call_later(delay=5, callback=_recorder(trace, when + ' delay='), i=12)
    schedule('before')
    vloop.call_later(10, schedule, when='during')
    vloop.call_later(30, vloop.stop)
    vloop.start()
    for when, calls in (('before', trace[:9]), ('during', trace[9:])):
        assert calls == [
            (when + ' add_callback', (1,), [('b', 2)]),
            (when + ' spawn_callback', (), [('c', 3)]),
            (when + ' from_signal', (4,), [('d', 5)]),
            (when + ' callback=', (), []),
            (when + ' call_later', (6,), [('e', 7)]),
            (when + ' call_at', (), [('f', 8)]),
            (when + ' add_timeout', (9,), [('g', 10)]),
            (when + ' add_timeout(timedelta)', (), [('h', 11)]),
            (when + ' delay=', (), [('i', 12)]),
        ]


def test_keywords_named_as_the_loops_own_parameters_reach_the_callback(vloop, clock):
    # Bound where they arrive: call_later passing them on to call_at(when, ...) must not
    # take `when` for its own.
    trace = []
    vloop.call_later(1, _recorder(trace, 'call_later'), when='w', deadline='d')
    vloop.add_timeout(clock() + 2, _recorder(trace, 'add_timeout'), when='w', delay='x')
    vloop.call_at(clock() + 3, _recorder(trace, 'call_at'), deadline='d', delay='x')
    vloop.spawn_callback(_recorder(trace, 'spawn_callback'), args='a', kwargs='k')
    vloop.call_later(4, vloop.stop)
    vloop.start()
    assert trace == [
        ('spawn_callback', (), [('args', 'a'), ('kwargs', 'k')]),
        ('call_later', (), [('deadline', 'd'), ('when', 'w')]),
        ('add_timeout', (), [('delay', 'x'), ('when', 'w')]),
        ('call_at', (), [('deadline', 'd'), ('delay', 'x')]),
    ]


def test_add_callback_and_call_soon_bind_arguments_and_need_a_callback(loop):
    # PollIOLoop's are one C object where the speedups are built, which hands a call
    # given keywords, or too few arguments, to the Python add_callback.
    trace = []
    loop.add_callback(_recorder(trace, 'bare'))
    loop.add_callback(_recorder(trace, 'positional'), 1, 2)
    loop.add_callback(_recorder(trace, 'keywords'), 3, k=4)
    loop.add_callback(callback=_recorder(trace, 'named'))
    loop.add_callback(*(_recorder(trace, 'unpacked'), 5), **{})
    loop._call_soon(_recorder(trace, 'call_soon'), 6)
    for wrong in (loop.add_callback, loop._call_soon):
        with pytest.raises(TypeError):
            wrong()
    loop.add_callback(loop.stop)
    loop.start()
    assert trace == [('bare', (), []), ('positional', (1, 2), []), ('keywords', (3,), [('k', 4)]),
                     ('named', (), []), ('unpacked', (5,), []), ('call_soon', (6,), [])]


def test_the_own_loops_add_callback_is_the_c_one_where_the_speedups_are_built():
    # Its Python twin pays for an empty **kwargs dict and a frame at every callback.
    if speedups is None:
        pytest.skip('the C speedups are not built or are turned off')
    assert type(PollIOLoop.__dict__['add_callback']) is speedups.AddCallback
    assert PollIOLoop.__dict__['_call_soon'] is PollIOLoop.__dict__['add_callback']
    assert PollIOLoop.add_callback.__name__ == 'add_callback'


def test_a_subclass_add_callback_sees_the_callbacks_coroutines_schedule(io_loop_class):
    # The Runner and add_future schedule through the loop's _call_soon, which has no
    # **kwargs to pay for; a subclass that overrides add_callback alone (to count or
    # trace callbacks, as legacy code does) must still see every one of them.
    if not isinstance(io_loop_class, type):
        pytest.skip('the loop kind is made by a function: nothing to subclass')
    trace = []

    class TracingLoop(io_loop_class):
        def add_callback(self, callback, *args, **kwargs):
            owner = getattr(callback, '__self__', None)
            trace.append(callback.__name__ if owner is None
                         else type(owner).__name__ + '.' + callback.__name__)
            super(TracingLoop, self).add_callback(callback, *args, **kwargs)

    @gen.coroutine
    def main():
        yield gen.moment  # The Runner schedules itself.
        waited, relayed = Future(), Future()
        loop.add_future(waited, lambda done: relayed.set_result(done.result()))
        waited.set_result(5)
        value = yield relayed  # Resolved by a callback: the Runner resumes a pass later.
        raise gen.Return(value)

    loop = TracingLoop(make_current=False)
    try:
        assert loop.run_sync(main) == 5
    finally:
        loop.close()
    assert trace == ['run', 'Runner.run', '<lambda>', 'Runner.run', 'on_done']


def test_a_timeout_given_keyword_arguments_can_be_removed(vloop):
    trace = []
    handles = [vloop.call_later(1, _recorder(trace, 'call_later'), 1, a=2),
               vloop.call_at(vloop.time() + 1, _recorder(trace, 'call_at'), b=3),
               vloop.add_timeout(datetime.timedelta(seconds=1), _recorder(trace, 'add_timeout'),
                                 c=4)]
    vloop.call_later(1, _recorder(trace, 'kept'), d=5)
    assert len(vloop.pending_work()[0]) == 4
    for handle in handles:
        vloop.remove_timeout(handle)
    assert len(vloop.pending_work()[0]) == 1
    vloop.call_later(2, vloop.stop)
    vloop.start()
    assert trace == [('kept', (), [('d', 5)])]
    assert vloop.pending_work()[0] == []


def test_failures_of_calls_given_keyword_arguments_are_logged_as_others(vloop, app_log_records):
    def fail(label, how):
        raise ValueError('%s %s' % (how, label))
    trace = []
    vloop.add_callback(fail, 'callback', how='failing')
    vloop.add_callback(_recorder(trace, 'after the callback'), x=1)
    vloop.call_later(1, fail, how='failing', label='timer')
    vloop.call_later(1, _recorder(trace, 'after the timer'), y=2)
    vloop.call_later(2, vloop.stop)
    vloop.start()
    assert trace == [('after the callback', (), [('x', 1)]),
                     ('after the timer', (), [('y', 2)])]
    assert [str(record.exc_info[1]) for record in app_log_records] == [
        'failing callback', 'failing timer']
    # As Tornado 5.1's: the report names the call, the callback bound to its arguments
    # (a functools.partial, whose repr shows them on 3.x).
    for record in app_log_records:
        assert record.getMessage().startswith('Exception in callback')
        call = record.args[0]
        assert call.func is fail and call.keywords['how'] == 'failing'


@pytest.mark.own_loop_only('counts the polls of the loop\'s own poller')
def test_loop_sleeps_until_the_deadline_without_busy_waiting(loop):
    polls = []
    poll = loop._poller.poll

    def counting_poll(timeout):
        polls.append(timeout)
        return poll(timeout)
    loop._poller.poll = counting_poll
    start = loop.time()
    loop.call_later(0.05, loop.stop)
    loop.start()
    assert loop.time() - start >= 0.05
    assert len(polls) <= 3, polls


def test_exception_in_callback_is_logged_and_loop_goes_on(vloop, app_log_records):
    trace = []

    def bad():
        raise ValueError('bad callback')
    vloop.add_callback(bad)
    vloop.add_callback(trace.append, 'after')
    vloop.call_later(1, vloop.stop)
    vloop.start()
    assert trace == ['after']
    assert [str(r.exc_info[1]) for r in app_log_records] == ['bad callback']


def test_exception_in_timer_is_logged_and_the_timers_due_with_it_run(vloop, app_log_records):
    trace = []

    def bad(label):
        raise ValueError('bad timer ' + label)
    deadline = vloop.time() + 1
    vloop.call_at(deadline, bad, 'a')
    vloop.call_at(deadline, trace.append, 'with args')
    vloop.call_at(deadline, lambda: trace.append('without'))
    vloop.call_at(deadline, bad, 'b')
    vloop.call_at(deadline + 1, vloop.stop)
    vloop.start()
    assert trace == ['with args', 'without']
    assert [str(r.exc_info[1]) for r in app_log_records] == ['bad timer a', 'bad timer b']


def test_failed_future_returned_by_timer_is_logged(vloop, app_log_records):
    def returns_failed():
        future = Future()
        future.set_exception(KeyError('in timer future'))
        return future
    vloop.call_later(1, returns_failed)
    vloop.call_later(2, vloop.stop)
    vloop.start()
    assert ['in timer future' in str(r.exc_info[1]) for r in app_log_records] == [True]


def test_failed_future_returned_by_callback_is_logged(vloop, app_log_records):
    def returns_failed():
        future = Future()
        future.set_exception(KeyError('in future'))
        return future
    vloop.add_callback(returns_failed)
    vloop.call_later(1, vloop.stop)
    vloop.start()
    assert any('in future' in str(r.exc_info[1]) for r in app_log_records)


def test_every_failure_the_loop_runs_into_goes_to_handle_callback_exception(
        vloop, app_log_records):
    # Tornado 5.1 code overrides it to report errors elsewhere (or fail a test).
    reported = []

    def report(callback):
        reported.append((callback, str(sys.exc_info()[1])))
    vloop.handle_callback_exception = report

    def fail(message):
        raise ValueError(message)

    def returns_failed():
        returned.set_exception(ValueError('returned future'))
        return returned
    returned = Future()
    reader, writer = socket.socketpair()
    writer.send(b'x')

    def handler(fd, events):
        vloop.remove_handler(reader)  # Ready for ever otherwise: the clock would never move.
        fail('handler')
    vloop.add_handler(reader, handler, IOLoop.READ)

    def periodic_run():
        periodic.stop()
        fail('periodic')
    periodic = PeriodicCallback(periodic_run, 10)
    periodic.start()
    vloop.add_callback(fail, 'callback')
    vloop.call_later(1, fail, 'timer')
    vloop.add_callback(returns_failed)
    vloop.call_later(2, vloop.stop)
    try:
        vloop.start()
    finally:
        reader.close()
        writer.close()
    assert sorted(message for _, message in reported) == [
        'callback', 'handler', 'periodic', 'returned future', 'timer']
    assert dict((message, callback) for callback, message in reported)[
        'returned future'] is returned
    assert app_log_records == []


def test_the_loop_words_every_failure_as_tornado_51_does(vloop, app_log_records):
    # Legacy suites wait for it: ExpectLog(app_log, 'Exception in callback').
    def fail():
        raise ValueError('fails')

    def returns_failed():
        returned.set_exception(ValueError('fails later'))
        return returned
    returned = Future()
    periodic = PeriodicCallback(fail, 10)
    periodic.start()
    vloop.add_callback(fail)
    vloop.add_callback(returns_failed)
    vloop.call_later(0.015, periodic.stop)
    vloop.call_later(1, vloop.stop)
    vloop.start()
    assert len(app_log_records) == 3
    assert all(record.getMessage().startswith('Exception in callback')
               for record in app_log_records), [r.getMessage() for r in app_log_records]


def test_start_configures_logging_if_nobody_has():
    # As Tornado 5.1's start(): without it 2.7 drops a failed callback's report with "No
    # handlers could be found", and the program's own warnings go unformatted.
    program = ('from tinytornado.ioloop import IOLoop\n'
               'loop = IOLoop.current()\n'
               'loop.add_callback(lambda: 1 / 0)\n'
               'loop.add_callback(loop.stop)\n'
               'loop.start()\n'
               'import logging; logging.warning("the program\'s own")\n')
    process = subprocess.Popen([sys.executable, '-c', program], stderr=subprocess.PIPE,
                               env=dict(os.environ, PYTHONPATH=REPO))
    errors = process.communicate()[1].decode('utf-8')
    assert process.returncode == 0
    assert 'ERROR:tornado.application:Exception in callback' in errors, errors
    assert 'ZeroDivisionError' in errors
    assert "WARNING:root:the program's own" in errors


def test_add_callback_from_another_thread_wakes_a_sleeping_loop(loop):
    future = Future()

    def from_thread():
        threading.Event().wait(0.05)  # Let the loop block in its poll.
        loop.add_callback(future.set_result, 'woken')

    loop.add_callback(lambda: threading.Thread(target=from_thread).start())
    assert loop.run_sync(lambda: future, timeout=5) == 'woken'


def test_the_clock_reads_as_the_wall_clock_so_legacy_deadlines_work(loop):
    # Tornado 5.1's loop time is time.time(), and legacy code computes deadlines with it.
    assert abs(loop.time() - time.time()) < 0.5
    start = time.time()
    fired = []
    queue = queues.Queue()

    @gen.coroutine
    def waits():
        loop.add_timeout(time.time() + 0.05, lambda: fired.append(time.time() - start))
        with pytest.raises(gen.TimeoutError):
            yield queue.get(timeout=time.time() + 0.1)
        fired.append(time.time() - start)
    loop.run_sync(waits, timeout=5)
    assert 0.04 < fired[0] < 1 and 0.09 < fired[1] < 1, fired


def test_timers_keep_to_the_monotonic_clock_when_the_wall_clock_steps(loop, monkeypatch):
    start = time.time()
    monkeypatch.setattr(time, 'time', lambda: start + 3600)  # An hour forward.
    fired = []
    loop.call_later(0.05, fired.append, 'fired')
    loop.call_later(0.06, loop.stop)
    loop.start()
    assert fired == ['fired']
    assert abs(loop.time() - start) < 1


def test_a_subclass_clock_is_the_one_timers_keep_to():
    class Shifted(PollIOLoop):  # As Tornado 5.1 code may define it.
        def time(self):
            return monotonic() + 500

    loop = Shifted(make_current=False)
    try:
        start = loop.time()
        assert abs(start - (monotonic() + 500)) < 0.5
        fired = []
        loop.call_at(start + 0.05, lambda: fired.append(loop.time() - start))
        loop.call_later(0.1, loop.stop)
        loop.start()
        assert len(fired) == 1 and 0.04 < fired[0] < 1, fired
    finally:
        loop.close()


def test_a_deadline_years_away_waits_without_error(loop):
    # A poll timeout past the system's limit raised OverflowError in the loop.
    far = loop.call_at(loop.time() + 1e10, lambda: None)
    waker = threading.Timer(0.05, lambda: loop.add_callback(loop.stop))
    waker.start()
    try:
        loop.start()
    finally:
        waker.join()
    assert len(loop.pending_work()[0]) == 1
    loop.remove_timeout(far)


@pytest.mark.skipif(not hasattr(signal, 'setitimer'), reason='needs signal.setitimer')
def test_a_blocked_loop_logs_where_it_is_blocked():
    loop = PollIOLoop(make_current=False)
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    gen_log = logging.getLogger('tornado.general')
    gen_log.addHandler(handler)
    previous_handler = signal.getsignal(signal.SIGALRM)

    def blocks_the_loop():
        end = time.time() + 0.3
        while time.time() < end:  # Busy: a sleep would end at the signal on 2.7.
            pass
    try:
        loop.set_blocking_log_threshold(0.05)
        loop.call_later(0.1, lambda: None)  # Waiting in the poll meanwhile sets nothing off.
        loop.call_later(0.2, blocks_the_loop)
        loop.call_later(0.3, loop.stop)
        loop.start()
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # Off once it stopped.
        loop.set_blocking_log_threshold(None)
        loop.add_callback(blocks_the_loop)
        loop.add_callback(loop.stop)
        loop.start()
    finally:
        gen_log.removeHandler(handler)
        signal.signal(signal.SIGALRM, previous_handler)
        loop.close()
    assert len(records) == 1, [record.getMessage() for record in records]
    message = records[0].getMessage()
    assert message.startswith('IOLoop blocked for 0.050000 seconds in')
    assert 'in blocks_the_loop' in message


def test_split_fd_and_close_fd_take_numbers_and_files(loop):
    reader, writer = socket.socketpair()
    assert loop.split_fd(reader) == (reader.fileno(), reader)
    descriptor = os.dup(writer.fileno())
    assert loop.split_fd(descriptor) == (descriptor, descriptor)
    loop.close_fd(reader)
    loop.close_fd(descriptor)
    loop.close_fd(descriptor)  # Closed already: nothing to do, as in 5.1.
    writer.close()
    assert reader.fileno() == -1
    with pytest.raises(OSError):
        os.fstat(descriptor)


def test_add_future_runs_callback_in_a_later_pass(vloop):
    trace = []
    future = Future()
    vloop.add_future(future, lambda f: trace.append(('done', f.result())))
    future.set_result(1)
    assert trace == []
    vloop.call_later(1, vloop.stop)
    vloop.start()
    assert trace == [('done', 1)]


def test_handlers_read_write_update_remove(loop):
    reader, writer = socket.socketpair()
    trace = []

    def on_writer(fd, events):
        trace.append(('writer', events))
        assert fd is writer
        writer.send(b'ping')
        loop.update_handler(writer, IOLoop.READ)

    def on_reader(fd, events):
        trace.append(('reader', events, reader.recv(10)))
        loop.remove_handler(reader)
        loop.remove_handler(writer)
        loop.stop()

    loop.add_handler(writer, on_writer, IOLoop.WRITE)
    loop.add_handler(reader.fileno(), on_reader, IOLoop.READ)
    loop.start()
    assert trace == [('writer', IOLoop.WRITE), ('reader', IOLoop.READ, b'ping')]
    loop.remove_handler(reader)  # Harmless when not watched.
    reader.close()
    writer.close()


def test_close_all_fds_closes_registered_sockets(io_loop_class):
    io_loop = io_loop_class(make_current=False)
    reader, writer = socket.socketpair()
    io_loop.add_handler(reader, lambda fd, events: None, IOLoop.READ)
    io_loop.add_handler(writer, lambda fd, events: None, IOLoop.WRITE)
    io_loop.remove_handler(writer)
    io_loop.close(all_fds=True)
    assert (reader.fileno(), writer.fileno() != -1) == (-1, True)
    writer.close()


def test_run_sync_returns_and_reraises(vloop):
    @gen.coroutine
    def ok():
        yield gen.sleep(1)
        raise gen.Return('value')

    @gen.coroutine
    def fails():
        yield gen.sleep(1)
        raise KeyError('from coroutine')

    assert vloop.run_sync(ok) == 'value'
    with pytest.raises(KeyError):
        vloop.run_sync(fails)
    assert vloop.run_sync(lambda: None) is None
    assert vloop.run_sync(lambda: [ok(), ok()]) == ['value', 'value']


def test_run_sync_timeout_cancels_the_coroutine(vloop, clock):
    trace = []

    @gen.coroutine
    def slow():
        try:
            yield gen.sleep(10)
        except CancelledError:
            trace.append(('cancelled at', clock()))
            raise
    with pytest.raises(TimeoutError):
        vloop.run_sync(slow, timeout=1)
    assert trace == [('cancelled at', 101)]
    assert vloop.pending_work()[0] == []


@pytest.mark.no_leak_check  # It leaves the coroutine running, on purpose.
def test_run_sync_timeout_gives_the_cleanup_as_long_again_at_most(vloop, clock):
    trace = []

    @gen.coroutine
    def swallows_cancellation():  # A legacy loop: CancelledError is an Exception on 2.7.
        while True:
            try:
                yield gen.sleep(10)
            except Exception as e:
                trace.append((type(e).__name__, clock()))
    with pytest.raises(TimeoutError):
        vloop.run_sync(swallows_cancellation, timeout=1)
    assert trace == [('CancelledError', 101)]
    assert clock() == 102
    assert len(vloop.pending_work()[0]) == 1  # Left running: its next sleep.


def test_run_sync_timeout_can_leave_it_running(vloop, clock):
    trace = []

    @gen.coroutine
    def slow():
        yield gen.sleep(10)
        trace.append('finished')
    with pytest.raises(TimeoutError):
        vloop.run_sync(slow, timeout=1, cancel_on_timeout=False)
    vloop.call_later(20, vloop.stop)
    vloop.start()
    assert trace == ['finished']


def test_run_sync_on_a_running_loop_is_an_error(vloop):
    errors = []

    def nested():
        with pytest.raises(RuntimeError) as info:
            vloop.run_sync(lambda: None)
        errors.append(str(info.value))
    vloop.run_sync(nested)
    assert 'running' in errors[0]


def test_run_sync_of_undecorated_generator_explains(vloop):
    def undecorated():
        yield gen.moment
    with pytest.raises(gen.BadYieldError) as info:
        vloop.run_sync(undecorated)
    assert '@gen.coroutine' in str(info.value)


def test_current_instance_and_clear():
    IOLoop.clear_current()
    assert IOLoop.current(instance=False) is None
    created = IOLoop.current()
    assert IOLoop.current() is created is IOLoop.instance()
    other = IOLoop(make_current=False)
    assert IOLoop.current() is created
    with pytest.raises(RuntimeError):
        IOLoop(make_current=True)
    seen = []
    other.add_callback(lambda: seen.append(IOLoop.current()))
    other.add_callback(other.stop)
    other.start()
    assert seen == [other] and IOLoop.current() is created
    other.close()
    created.close()
    assert IOLoop.current(instance=False) is None


def test_stop_before_start_returns_at_once(vloop):
    trace = []
    vloop.add_callback(trace.append, 'not yet')
    vloop.stop()
    vloop.start()
    assert trace == []


def test_periodic_callback_skips_missed_runs(vloop, clock):
    runs = []

    def tick():
        runs.append(round(clock() - 100, 6))
        if len(runs) == 2:
            clock.advance(0.35)  # A slow run: 3 periods are missed.
        if len(runs) == 5:
            periodic.stop()
            vloop.stop()
    periodic = PeriodicCallback(tick, 100)
    periodic.start()
    vloop.start()
    assert runs == [0.1, 0.2, 0.6, 0.7, 0.8]
    assert not periodic.is_running()
    with pytest.raises(ValueError):
        PeriodicCallback(tick, 0)


def test_periodic_callback_logs_errors_and_continues(vloop, app_log_records):
    runs = []

    def tick():
        runs.append(1)
        if len(runs) == 3:
            periodic.stop()
            vloop.stop()
        raise ValueError('tick failed')
    periodic = PeriodicCallback(tick, 10)
    periodic.start()
    vloop.start()
    assert len(runs) == 3 and len(app_log_records) == 3


def test_periodic_callback_logs_the_failure_of_a_future_it_returns(vloop, app_log_records):
    returned = []  # Kept: a failed Future collected unretrieved would log by itself.

    def tick():
        periodic.stop()
        vloop.stop()
        returned.append(Future())
        returned[0].set_exception(ValueError('tick failed later'))
        return returned[0]
    periodic = PeriodicCallback(tick, 10)
    periodic.start()
    vloop.start()
    assert ['tick failed later' in record.getMessage() + str(record.exc_info)
            for record in app_log_records] == [True]


def test_closed_loop_cannot_start():
    io_loop = IOLoop(make_current=False)
    io_loop.close()
    with pytest.raises(RuntimeError):
        io_loop.start()


@pytest.mark.skipif(not hasattr(signal, 'SIGUSR1'), reason='needs POSIX signals')
def test_a_signal_during_the_poll_does_not_break_the_loop(loop):
    # On 2.7 the poll raises EINTR; the loop must go on and run what the handler added.
    trace = []

    def on_signal(signum, frame):
        trace.append('signal')
        loop.add_callback_from_signal(loop.stop)
    previous = signal.signal(signal.SIGUSR1, on_signal)
    try:
        # The loop sleeps in its poll (its only timer is 5 s away) when the signal comes.
        sender = threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGUSR1))
        sender.start()
        safety = loop.call_later(5, loop.stop)
        loop.start()
        loop.remove_timeout(safety)
        sender.join()
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert trace == ['signal']
