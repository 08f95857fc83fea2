"""tinytornado.testing against the habits of Tornado 5.1 test suites: what its own
testing_test checks, gen_test's arguments and native coroutines, the HTTP test cases
serving their app, and main() run as a program."""
from __future__ import absolute_import, division, print_function

import os
import re
import subprocess
import sys
import unittest
import warnings

import pytest

import tinytornado
from test_testing import run_case
from test_testing_http import echo
from tinytornado import gen
from tinytornado._compat import PY2
from tinytornado.ioloop import IOLoop
from tinytornado.log import app_log
from tinytornado.testing import (
    AsyncHTTPSTestCase, AsyncHTTPTestCase, AsyncTestCase, ExpectLog, VirtualClockTestCase,
    gen_test,
)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(tinytornado.__file__)))


# -- AsyncTestCase, as Tornado's testing_test uses it ---------------------------------

def test_the_first_callback_error_fails_the_wait_and_the_next_is_logged():
    class Case(AsyncTestCase):
        def test_two_errors(self):
            def fail(message):
                raise Exception(message)
            self.io_loop.add_callback(fail, 'error one')
            self.io_loop.add_callback(fail, 'error two')
            with ExpectLog(app_log, 'multiple unhandled exceptions'):
                with self.assertRaises(Exception) as caught:
                    self.wait()
            self.assertEqual(str(caught.exception), 'error one')

    assert run_case(Case, 'test_two_errors').wasSuccessful()


def test_a_second_wait_clears_the_first_ones_timeout():
    trace = []

    class Case(VirtualClockTestCase):
        def test_waits(self):
            self.io_loop.call_later(0.01, self.stop)
            self.wait(timeout=0.02)
            trace.append(self.io_loop.time())
            self.io_loop.call_later(0.03, self.stop)
            self.wait(timeout=0.15)
            trace.append(self.io_loop.time())

    assert run_case(Case, 'test_waits').wasSuccessful()
    assert trace == [0.01, 0.04]


def test_set_up_and_tear_down_call_the_next_class_in_line():
    events = []

    class SetUpTearDown(unittest.TestCase):
        def setUp(self):
            events.append('setUp')

        def tearDown(self):
            events.append('tearDown')

    class InheritBoth(AsyncTestCase, SetUpTearDown):
        def test(self):
            events.append('test')

    assert run_case(InheritBoth, 'test').wasSuccessful()
    assert events == ['setUp', 'test', 'tearDown']


# -- gen_test -------------------------------------------------------------------------

def test_gen_test_passes_positional_and_keyword_arguments():
    calls = []

    class Case(AsyncTestCase):
        def test_calls(self):
            @gen_test
            def with_args(self, *args, **kwargs):
                yield gen.moment
                calls.append((args, kwargs))
            with_args(self, 'test')
            with_args(self, test='test')
            with_args(self, 1, 2, key='value')

    assert run_case(Case, 'test_calls').wasSuccessful()
    assert calls == [(('test',), {}), ((), {'test': 'test'}), ((1, 2), {'key': 'value'})]


def test_gen_test_runs_a_plain_function_too():
    ran = []

    class Case(AsyncTestCase):
        @gen_test
        def test_sync(self):
            ran.append(IOLoop.current() is self.io_loop)

        @gen_test
        def test_returns(self):
            return 42

    result = run_case(Case, 'test_sync', 'test_returns')
    assert ran == [True]
    assert len(result.errors) == 1 and 'Return value from test method ignored: 42' in (
        result.errors[0][1])


def test_gen_test_is_not_collected_as_a_test():
    assert gen_test.__test__ is False


# -- native coroutines (Python 3) -----------------------------------------------------

NATIVE_CASES = '''
from tinytornado import gen
from tinytornado.testing import AsyncTestCase, VirtualClockTestCase, gen_test

class Native(VirtualClockTestCase):
    @gen_test
    async def test_awaits(self):
        await gen.sleep(2)
        trace.append(('awaited', self.clock()))

    @gen_test
    async def test_fails(self):
        await gen.moment
        raise ValueError('after an await')

    @gen_test(timeout=1)
    async def test_hangs(self):
        await gen.sleep(10)

    async def test_forgot_gen_test(self):
        trace.append('ran')
'''


@pytest.fixture
def native_cases():
    if PY2:
        pytest.skip('no async def on 2.7')
    pytest.importorskip('tinytornado.platform.asyncio')
    namespace = {'trace': []}
    exec(NATIVE_CASES, namespace)
    return namespace['Native'], namespace['trace']


def test_gen_test_runs_async_def_methods(native_cases):
    Native, trace = native_cases
    result = run_case(Native, 'test_awaits', 'test_fails', 'test_hangs')
    assert trace == [('awaited', 2)]
    assert len(result.errors) == 2
    assert 'ValueError: after an await' in result.errors[0][1]
    assert 'Test timed out after 1 seconds' in result.errors[1][1]


def test_an_undecorated_async_def_test_is_refused_without_a_warning(native_cases):
    Native, trace = native_cases
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        result = run_case(Native, 'test_forgot_gen_test')
    assert trace == [] and [w.message for w in caught] == []
    assert len(result.errors) == 1
    assert 'should be decorated with tinytornado.testing.gen_test' in result.errors[0][1]


# -- the HTTP test cases --------------------------------------------------------------

@pytest.mark.parametrize('base', [AsyncHTTPTestCase, AsyncHTTPSTestCase])
def test_http_test_cases_serve_get_app(base):
    # Once they failed at setUp (tinytornado had no server); now they serve get_app().
    ran = []

    class Case(base):
        def get_app(self):
            ran.append('get_app')
            return echo

        def test_fetch(self):
            ran.append(self.fetch('/').code)

    result = run_case(Case, 'test_fetch')
    assert result.errors == [] and result.failures == [] and ran == ['get_app', 200]


# -- main -----------------------------------------------------------------------------

SAMPLE_TESTS = '''
import logging
import unittest

class Case(unittest.TestCase):
    def test_passes(self):
        logging.getLogger('sample').info('info from the test')
        logging.getLogger('sample').warning('warning from the test')

    def test_also_passes(self):
        pass

class Failing(unittest.TestCase):
    def test_first(self):
        self.fail('first failure')

    def test_second(self):
        self.fail('second failure')
'''

SCRIPT = '''
import unittest
import tinytornado.testing

def all():
    return unittest.defaultTestLoader.loadTestsFromName('sample_tests.Case')

if __name__ == '__main__':
    tinytornado.testing.main()
'''


@pytest.fixture
def run_program(tmpdir):
    """``run_program(*args)``: (exit status, output) of Python run with `args` in a
    directory holding sample_tests.py and script.py. unittest writes to stderr (2.7's
    usage message to stdout): the output is both."""
    tmpdir.join('sample_tests.py').write(SAMPLE_TESTS)
    tmpdir.join('script.py').write(SCRIPT)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO, str(tmpdir)]))

    def run(*args):
        process = subprocess.Popen([sys.executable] + list(args), cwd=str(tmpdir), env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        output, _ = process.communicate()
        return process.returncode, output.decode('utf-8', 'replace')
    return run


def test_main_runs_the_named_tests_with_tornados_log_format(run_program):
    status, stderr = run_program('-m', 'tinytornado.testing', 'sample_tests.Case')
    assert status == 0 and 'Ran 2 tests' in stderr
    # Logging is set up (root at INFO, LogFormatter on stderr) before the tests run.
    assert '] info from the test' in stderr and '] warning from the test' in stderr


def test_main_takes_tornados_options(run_program):
    status, stderr = run_program('-m', 'tinytornado.testing', '--verbose',
                                 '--logging=warning', 'sample_tests.Case')
    assert status == 0 and re.search(r'test_also_passes \(sample_tests.Case.*\) ... ok',
                                     stderr)
    assert 'info from the test' not in stderr
    assert '] warning from the test' in stderr


def test_main_failfast_and_failures(run_program):
    status, stderr = run_program('-m', 'tinytornado.testing', 'sample_tests.Failing')
    assert status == 1 and 'Ran 2 tests' in stderr and 'failures=2' in stderr
    status, stderr = run_program('-m', 'tinytornado.testing', '--failfast',
                                 'sample_tests.Failing')
    assert status == 1 and 'Ran 1 test' in stderr and 'failures=1' in stderr


def test_main_with_nothing_named_runs_all_or_says_there_is_nothing(run_program):
    status, stderr = run_program('script.py')
    assert status == 0 and 'Ran 2 tests' in stderr
    status, stderr = run_program('-m', 'tinytornado.testing')
    assert status == 1 and stderr.strip() == 'No tests specified'


def test_main_leaves_other_options_to_unittest(run_program):
    status, stderr = run_program('-m', 'tinytornado.testing', '--no-such-option',
                                 'sample_tests.Case')
    assert status == 2 and 'no-such-option' in stderr
    status, stderr = run_program('-m', 'tinytornado.testing', '-q', 'sample_tests.Case')
    assert status == 0 and 'Ran 2 tests' in stderr
