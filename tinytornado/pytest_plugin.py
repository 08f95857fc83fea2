"""pytest support: an ``io_loop`` fixture, generator tests run as coroutines, a leak check.

Registered through the ``pytest11`` entry point named ``tinytornado.pytest_plugin``, so
any test suite in an environment with tinytornado installed can use it. It acts only on
tests that ask for its fixtures or are written as generators.

- ``io_loop``: a fresh IOLoop, current during the test and closed (with its file
  descriptors) after it. A test that also asks for ``virtual_clock`` gets a loop running
  on that `VirtualClock`, so its timers fire in order and at once (the test's timeout
  is then virtual time too; see `testing.VirtualClockTestCase`).
- A test function written as a generator runs as a coroutine on ``io_loop`` (requested
  for it automatically), with `gen_test`'s timeout rule: ``@pytest.mark.gen_test(timeout=
  10)``, else $ASYNC_TEST_TIMEOUT, else 5 seconds.
- The leak check: a timer or a watched file still registered on ``io_loop`` once the test
  and the fixtures using the loop are done is an error (like Twisted trial's dirty
  reactor). Skipped for a test that failed anyway; turned off for one test with
  ``@pytest.mark.no_leak_check``, for a project with ``tinytornado_leak_check = false``
  in its ini file.
"""
from __future__ import absolute_import, division, print_function

import inspect

import pytest

from tinytornado.ioloop import IOLoop
from tinytornado.testing import VirtualClock, run_test_coroutine

__all__ = ['io_loop', 'virtual_clock']

_FAILED_ATTRIBUTE = '_tinytornado_call_failed'


def pytest_addoption(parser):
    parser.addini('tinytornado_leak_check', type='bool', default=True,
                  help='fail tests that leave timers or handlers on io_loop (default true)')


def pytest_configure(config):
    config.addinivalue_line(
        'markers', 'gen_test(timeout=None): the time limit, in seconds, of this generator '
                   'test function run as a coroutine on io_loop')
    config.addinivalue_line(
        'markers', 'no_leak_check: allow this test to leave timers or handlers on io_loop')


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector, name, obj):
    # pytest itself refuses generator test functions; collect them with io_loop added.
    obj = getattr(obj, '__func__', obj)
    if (collector.istestfunction(obj, name) and inspect.isgeneratorfunction(obj)
            and getattr(obj, '__test__', True)):
        pytest.mark.usefixtures('io_loop')(obj)
        return list(collector._genfunctions(name, obj))
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    if not inspect.isgeneratorfunction(pyfuncitem.obj):
        return None
    marker = pyfuncitem.get_closest_marker('gen_test')
    timeout = marker.kwargs.get('timeout') if marker is not None else None
    funcargs = pyfuncitem.funcargs
    kwargs = dict((name, funcargs[name]) for name in pyfuncitem._fixtureinfo.argnames)
    test = pyfuncitem.obj
    run_test_coroutine(funcargs['io_loop'], timeout, lambda: test(**kwargs))
    return True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if call.when == 'call' and outcome.get_result().failed:
        setattr(item, _FAILED_ATTRIBUTE, True)


@pytest.fixture
def virtual_clock():
    """A `VirtualClock` at 0.0; a test asking for it gets an ``io_loop`` running on it."""
    return VirtualClock()


@pytest.fixture
def io_loop_class():
    """What `io_loop` is made with: override it to run the tests on another loop class."""
    return IOLoop


@pytest.fixture
def io_loop(request, io_loop_class):
    """A fresh IOLoop, current during the test, closed with its file descriptors after."""
    clock = None
    if 'virtual_clock' in request.fixturenames:
        clock = request.getfixturevalue('virtual_clock')
    previous = IOLoop.current(instance=False)
    loop = io_loop_class(make_current=False, time_func=clock)
    loop.make_current()
    yield loop
    leftovers = _leftovers(loop) if _leak_check_wanted(request) else []
    IOLoop.clear_current()
    if previous is not None:
        previous.make_current()
    loop.close(all_fds=True)
    if leftovers:
        pytest.fail('the test left work on io_loop (mark it no_leak_check to allow '
                    'that):\n  ' + '\n  '.join(leftovers), pytrace=False)


def _leak_check_wanted(request):
    return (request.config.getini('tinytornado_leak_check')
            and request.node.get_closest_marker('no_leak_check') is None
            and not getattr(request.node, _FAILED_ATTRIBUTE, False))


def _leftovers(io_loop):
    timers, fileobjs = io_loop.pending_work()
    now = io_loop.time()
    return (['timer due in %.3fs: %r' % (deadline - now, callback)
             for deadline, callback in timers] +
            ['handler for %r' % (fileobj,) for fileobj in fileobjs])
