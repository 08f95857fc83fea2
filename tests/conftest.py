"""Shared test setup: tinytornado's pytest plugin (its fixtures: io_loop, virtual_clock)
and pytester, which the plugin's own tests use.

The plugin is also registered through its ``pytest11`` entry point; pytest registers a
plugin once per name, and the entry point's name is the module's, so listing it here too
is harmless and lets the suite run from a checkout that was never installed.
"""
from __future__ import absolute_import, division, print_function

import logging

import pytest

from tinytornado import gen

# `loops` (tests/loops.py) runs every test that uses io_loop on each kind of loop;
# `crawler_sites` gives the crawler tests their `serve` fixture; `redis_server` gives the
# Redis tests a real server.
pytest_plugins = ['pytester', 'tinytornado.pytest_plugin', 'loops', 'crawler_sites',
                  'redis_server']


def pytest_configure(config):
    config.addinivalue_line(
        'markers', 'slow: a long test (thousands of connections); deselect with -m "not slow"')


class _Records(logging.Handler):
    def __init__(self):
        logging.Handler.__init__(self)
        self.records = []

    def emit(self, record):
        self.records.append(record)


@pytest.fixture
def app_log_records():
    """The records logged to app_log during the test (where callback errors go)."""
    handler = _Records()
    logger = logging.getLogger('tornado.application')
    logger.addHandler(handler)
    yield handler.records
    logger.removeHandler(handler)


@pytest.fixture(params=['c', 'python'])
def wrapper_kind(request, monkeypatch):
    """Runs a test with gen.coroutine's C wrapper and with its pure-Python one, for the
    coroutines the test decorates; both hand a generator that waits to the same Runner."""
    if request.param == 'python':
        monkeypatch.setattr(gen, '_speedups', None)
    elif gen._speedups is None:
        # test_package.test_the_c_speedups_are_built says whether they should have been.
        pytest.skip('the C speedups are not built here')
    return request.param
