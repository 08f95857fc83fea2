"""Tornado 5.1's IOLoop API that legacy code uses: configure, the abstract IOLoop and its
PollIOLoop, initialize, the Tornado 5 aliases, and PeriodicCallback's schedule."""
from __future__ import absolute_import, division, print_function

import random

import pytest

from tinytornado._compat import PY2
from tinytornado.ioloop import IOLoop, PeriodicCallback, PollIOLoop
from tinytornado.testing import VirtualClock


pytestmark = pytest.mark.usefixtures('saved_ioloop_configuration')


class TracingLoop(PollIOLoop):
    """A legacy subclass: it extends initialize() and close(), as Tornado 5.1 lets it."""

    def initialize(self, label='default', trace=None, **kwargs):
        self.trace = [] if trace is None else trace
        self.label = label
        super(TracingLoop, self).initialize(**kwargs)

    def close(self, all_fds=False):
        self.trace.append(('close', self.label))
        super(TracingLoop, self).close(all_fds)


class Sibling(IOLoop):
    """An IOLoop subclass that is not a PollIOLoop."""


# -- configure -------------------------------------------------------------------------

def test_ioloop_is_abstract_and_makes_the_own_loop_by_default():
    assert IOLoop.configurable_base() is IOLoop
    assert IOLoop.configurable_default() is PollIOLoop
    assert IOLoop.configured_class() is PollIOLoop
    io_loop = IOLoop(make_current=False)
    try:
        assert type(io_loop) is PollIOLoop
    finally:
        io_loop.close()


@pytest.mark.parametrize('impl', [TracingLoop, 'test_ioloop_legacy.TracingLoop'])
def test_configure_takes_a_subclass_or_its_dotted_name(impl):
    IOLoop.configure(impl, label='configured')
    assert IOLoop.configured_class() is TracingLoop
    io_loop = IOLoop(make_current=False)
    io_loop.close()
    assert (type(io_loop), io_loop.trace) == (TracingLoop, [('close', 'configured')])


@pytest.mark.parametrize('name', ['tinytornado.ioloop.PollIOLoop', 'tornado.ioloop.PollIOLoop'])
def test_configure_reads_tornado_dotted_names_as_tinytornado_ones(name):
    IOLoop.configure(TracingLoop)
    IOLoop.configure(name)
    assert IOLoop.configured_class() is PollIOLoop


def test_configured_arguments_are_defaults_for_ioloop_calls_only():
    clock, other_clock = VirtualClock(), VirtualClock()
    IOLoop.configure(TracingLoop, label='configured', time_func=clock)
    made = [IOLoop(make_current=False), IOLoop(make_current=False, time_func=other_clock),
            TracingLoop(make_current=False)]
    for io_loop in made:
        io_loop.close()
    assert [(loop.label, loop.time) for loop in made[:2]] == [
        ('configured', clock), ('configured', other_clock)]
    assert (made[2].label, made[2].time is clock) == ('default', False)
    IOLoop.configure(None)
    io_loop = IOLoop(make_current=False)
    io_loop.close()
    assert type(io_loop) is PollIOLoop and io_loop.time is not clock


@pytest.mark.parametrize('impl, error, words', [
    (42, TypeError, ['42']),
    (dict, ValueError, ['Invalid subclass of IOLoop', 'dict']),
    (IOLoop, ValueError, ['Invalid subclass of IOLoop', 'tinytornado.ioloop.IOLoop']),
    ('tinytornado.no_such_module.Loop', ImportError, ['tinytornado.no_such_module.Loop']),
    ('tinytornado.ioloop.NoSuchLoop', ImportError, ['tinytornado.ioloop', 'NoSuchLoop']),
    ('PollIOLoop', ImportError, ["'PollIOLoop'", 'not a dotted name']),
    ('tinytornado.ioloop.PeriodicCallback', ValueError, ['PeriodicCallback']),
])
def test_configure_refuses_what_is_not_a_loop_class_clearly(impl, error, words):
    IOLoop.configure(TracingLoop)
    with pytest.raises(error) as caught:
        IOLoop.configure(impl)
    assert [word for word in words if word not in str(caught.value)] == []
    assert IOLoop.configured_class() is TracingLoop


def test_configure_on_a_subclass_takes_its_subclasses_only():
    with pytest.raises(ValueError) as caught:
        PollIOLoop.configure(Sibling)
    assert 'Invalid subclass of PollIOLoop' in str(caught.value)
    assert 'Sibling' in str(caught.value)
    PollIOLoop.configure(TracingLoop)
    assert IOLoop.configured_class() is TracingLoop


@pytest.mark.skipif(not PY2, reason='Python 3 has asyncio')
def test_configuring_the_asyncio_loop_on_python2_is_an_import_error():
    with pytest.raises(ImportError) as caught:
        IOLoop.configure('tornado.platform.asyncio.AsyncIOLoop')
    assert 'tornado.platform.asyncio.AsyncIOLoop' in str(caught.value)
    assert IOLoop.configured_class() is PollIOLoop


# -- the current loop ------------------------------------------------------------------

def test_current_makes_the_configured_class_with_its_arguments(no_current_loop):
    IOLoop.configure(TracingLoop, label='configured')
    io_loop = IOLoop.current()
    assert (type(io_loop), io_loop.label) == (TracingLoop, 'configured')
    assert IOLoop.current() is io_loop


def test_initialize_becomes_current_as_make_current_says(no_current_loop):
    trace = []
    first = TracingLoop(label='first', trace=trace)
    second = TracingLoop(label='second', trace=trace)
    assert IOLoop.current() is first
    with pytest.raises(RuntimeError) as caught:
        TracingLoop(label='refused', trace=trace, make_current=True)
    assert 'already has a current IOLoop' in str(caught.value)
    assert IOLoop.current() is first
    second.close()
    first.close()
    assert IOLoop.current(instance=False) is None
    third = TracingLoop(label='third', trace=trace, make_current=False)
    assert IOLoop.current(instance=False) is None
    third.close()
    assert trace == [('close', 'refused'), ('close', 'second'), ('close', 'first'),
                     ('close', 'third')]


def test_tornado_5_aliases_of_the_current_loop(no_current_loop):
    assert IOLoop.initialized() is False
    io_loop = IOLoop(make_current=False)
    io_loop.install()
    assert IOLoop.initialized() is True
    assert IOLoop.instance() is IOLoop.current() is io_loop
    IOLoop.clear_instance()
    assert IOLoop.current(instance=False) is None
    io_loop.close()


def test_start_and_close_are_refused_while_running_and_start_once_closed(io_loop_class):
    io_loop = io_loop_class(make_current=False)
    errors = []

    def while_running():
        for method in (io_loop.start, io_loop.close):
            with pytest.raises(RuntimeError) as caught:
                method()
            errors.append(str(caught.value))
        io_loop.stop()

    io_loop.add_callback(while_running)
    io_loop.start()
    io_loop.close()
    io_loop.close()  # Harmless twice.
    with pytest.raises(RuntimeError) as caught:
        io_loop.start()
    assert errors + [str(caught.value)] == [
        'IOLoop is already running', 'cannot close a running IOLoop; stop it first',
        'IOLoop is closed']


# -- PeriodicCallback ------------------------------------------------------------------

@pytest.fixture
def virtual_clock():
    return VirtualClock(start=1000.0)


def run_periodic(io_loop, clock, durations, jitter=0):
    """Run a 10-second PeriodicCallback whose runs take `durations` (seconds, negative for
    a clock that goes back during the run); the clock's reading at each run."""
    runs = []

    def tick():
        runs.append(clock())
        if len(runs) == len(durations):
            periodic.stop()
            io_loop.stop()
        clock.advance(durations[len(runs) - 1])

    periodic = PeriodicCallback(tick, 10000, jitter=jitter)
    periodic.start()
    io_loop.start()
    return runs


def test_periodic_callback_runs_every_period(io_loop, virtual_clock):
    assert run_periodic(io_loop, virtual_clock, [0] * 5) == [1010, 1020, 1030, 1040, 1050]


def test_periodic_callback_skips_the_periods_a_run_overran(io_loop, virtual_clock):
    durations = [9, 9, 10, 11, 20, 20, 35, 35, 0, 0, 0]
    assert run_periodic(io_loop, virtual_clock, durations) == [
        1010, 1020, 1030,  # On schedule.
        1050, 1070,  # 10 and 11 seconds: one period missed.
        1100, 1130,  # 20 seconds: two.
        1170, 1210,  # 35 seconds: three.
        1220, 1230,  # Back to one period.
    ]


def test_periodic_callback_advances_when_the_clock_goes_back(io_loop, virtual_clock):
    assert run_periodic(io_loop, virtual_clock, [-2, -1, -3, -2, 0]) == [
        1010, 1020, 1030, 1040, 1050]


def test_periodic_callback_after_a_long_step_back_waits_it_out(io_loop, virtual_clock):
    # The run at 1010 sets the clock to 910; the next comes a period on, at 1020.
    assert run_periodic(io_loop, virtual_clock, [-100, 0, 0]) == [1010, 1020, 1030]


def test_periodic_callback_jitter_varies_each_period(io_loop, virtual_clock, monkeypatch):
    draws = [0.5, 1, 0, 0.75]  # Periods: 10, 12.5, 7.5, 11.25 seconds.
    monkeypatch.setattr(random, 'random', lambda: draws.pop(0))
    runs = run_periodic(io_loop, virtual_clock, [0] * 4, jitter=0.5)
    assert (runs, draws) == ([1010, 1022.5, 1030, 1041.25], [])


@pytest.mark.parametrize('callback_time', [0, -1, -0.5])
def test_periodic_callback_time_must_be_positive(callback_time):
    with pytest.raises(ValueError) as caught:
        PeriodicCallback(lambda: None, callback_time)
    assert repr(callback_time) in str(caught.value)


def test_periodic_callback_stops_and_starts_again_from_then(io_loop, virtual_clock):
    runs = []

    def tick():
        runs.append(virtual_clock())
        if len(runs) == 2:
            periodic.stop()
            io_loop.call_later(25, restart)
        if len(runs) == 5:  # Two runs, the restart, two runs.
            periodic.stop()
            io_loop.stop()

    def restart():
        runs.append(('restart', virtual_clock()))
        periodic.start()

    periodic = PeriodicCallback(tick, 500)
    assert periodic.is_running() is False
    periodic.start()
    assert periodic.is_running() is True
    io_loop.start()
    assert periodic.is_running() is False
    assert runs == [1000.5, 1001, ('restart', 1026), 1026.5, 1027]
    assert io_loop.pending_work()[0] == []
