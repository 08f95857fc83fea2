"""Run loop tests on every kind of loop: tinytornado's own, and asyncio's through AsyncIOLoop.

The ``io_loop_class`` fixture is parametrised over the kinds, so a test or fixture that
builds its loop with it runs once per kind. It is called like `IOLoop` (``make_current``,
``time_func``). Wiring: list this module in tests/conftest.py,
``pytest_plugins = [..., 'tinytornado.pytest_plugin', 'loops']``: registered after the
plugin, its ``io_loop_class`` replaces the plugin's (which the plugin's ``io_loop`` fixture
is made with), so every test using ``io_loop`` runs on each kind.

The kinds are ``tinytornado`` and, on Python 3, ``asyncio``; $TINYTORNADO_LOOPS (a
comma-separated list, e.g. ``asyncio,uvloop``) chooses others. ``uvloop`` needs uvloop
installed and has no virtual clock: a test that asks for one is skipped there.

A test that looks inside tinytornado's own loop is marked ``own_loop_only(reason)`` and
skipped on the others, with the reason. ``saved_ioloop_configuration`` and
``no_current_loop`` isolate tests of IOLoop's process-wide and per-thread state.
"""
from __future__ import absolute_import, division, print_function

import os

import pytest

from tinytornado._compat import PY2
from tinytornado.ioloop import IOLoop, PollIOLoop

__all__ = ['LOOP_KINDS', 'io_loop_class', 'loop_class_for', 'no_current_loop',
           'pytest_configure', 'saved_ioloop_configuration']

_DEFAULT_KINDS = 'tinytornado' if PY2 else 'tinytornado,asyncio'
LOOP_KINDS = [kind.strip() for kind in
              os.environ.get('TINYTORNADO_LOOPS', _DEFAULT_KINDS).split(',') if kind.strip()]


def pytest_configure(config):
    config.addinivalue_line(
        'markers', 'own_loop_only(reason): the test looks inside tinytornado\'s own IOLoop; '
                   'skipped on the asyncio-backed loops')


@pytest.fixture(params=LOOP_KINDS)
def io_loop_class(request):
    """The loop class under test, called like `IOLoop` (see the module docstring)."""
    if request.param != 'tinytornado':
        marker = request.node.get_closest_marker('own_loop_only')
        if marker is not None:
            pytest.skip('own loop only: %s' % (marker.args[0] if marker.args else
                                               'inspects IOLoop internals'))
    return loop_class_for(request.param)


def loop_class_for(kind):
    """`PollIOLoop`, or what builds the asyncio-backed loop of `kind`; skips what can't run."""
    if kind == 'tinytornado':
        return PollIOLoop
    if PY2:
        pytest.skip('asyncio is Python 3 only')
    asyncio_platform = pytest.importorskip('tinytornado.platform.asyncio')
    if kind == 'asyncio':
        return asyncio_platform.AsyncIOLoop
    if kind == 'uvloop':
        try:
            import uvloop
        except ImportError:
            pytest.skip('uvloop is not installed')
        return _uvloop_class(asyncio_platform.BaseAsyncIOLoop, uvloop)
    raise ValueError('unknown loop kind %r in $TINYTORNADO_LOOPS' % (kind,))


def _uvloop_class(base, uvloop):
    def make(make_current=None, time_func=None):
        if time_func is not None:
            pytest.skip('uvloop keeps its own clock: no virtual time')
        return base(uvloop.new_event_loop(), close_loop=True, make_current=make_current)
    return make


@pytest.fixture
def saved_ioloop_configuration():
    """The test may call IOLoop.configure; the next test finds the configuration as was."""
    saved = IOLoop._save_configuration()
    yield
    IOLoop._restore_configuration(saved)


@pytest.fixture
def no_current_loop():
    """The thread has no current loop during the test; one left current is closed."""
    previous = IOLoop.current(instance=False)
    IOLoop.clear_current()
    yield
    left = IOLoop.current(instance=False)
    if left is not None:
        left.close()
    IOLoop.clear_current()
    if previous is not None:
        previous.make_current()
