"""tinytornado.testing: AsyncTestCase, gen_test, ExpectLog, bind_unused_port and the
virtual clock, exercised by running small TestCases through unittest itself."""
from __future__ import absolute_import, division, print_function

import logging
import socket
import unittest

import pytest

from tinytornado import gen
from tinytornado.concurrent import CancelledError, Future, TimeoutError
from tinytornado.ioloop import IOLoop
from tinytornado.log import app_log
from tinytornado.testing import (
    AsyncTestCase, ExpectLog, VirtualClock, VirtualClockTestCase, bind_unused_port, gen_test,
    get_async_test_timeout,
)


def run_case(case_class, *names):
    """Run the named test methods of `case_class`; returns the unittest result."""
    result = unittest.TestResult()
    for name in names:
        case_class(name).run(result)
    return result


def only_problem(result):
    """The formatted traceback of the single error or failure in `result`."""
    problems = result.errors + result.failures
    assert len(problems) == 1, problems
    return problems[0][1]


class Records(logging.Handler):
    def __init__(self):
        logging.Handler.__init__(self)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


@pytest.fixture
def app_log_messages():
    handler = Records()
    app_log.addHandler(handler)
    yield handler.messages
    app_log.removeHandler(handler)


def is_closed(sock):
    try:
        return sock.fileno() == -1
    except socket.error:    # Python 2: a closed socket has no fileno at all
        return True


# -- VirtualClock and the timeout setting ---------------------------------------------

def test_virtual_clock_moves_only_when_advanced():
    clock = VirtualClock(start=10.0)
    assert clock() == 10.0
    clock.advance(2.5)
    assert clock() == 12.5 and clock.now == 12.5


@pytest.mark.parametrize('value, expected', [(None, 5), ('12', 12.0), ('0.5', 0.5),
                                             ('soon', 5)])
def test_async_test_timeout_comes_from_the_environment(monkeypatch, value, expected):
    if value is None:
        monkeypatch.delenv('ASYNC_TEST_TIMEOUT', raising=False)
    else:
        monkeypatch.setenv('ASYNC_TEST_TIMEOUT', value)
    assert get_async_test_timeout() == expected


# -- bind_unused_port -----------------------------------------------------------------

def test_bind_unused_port_returns_a_bound_listening_socket():
    sock, port = bind_unused_port()
    other, other_port = bind_unused_port()
    client = socket.create_connection(('127.0.0.1', port))
    try:
        assert sock.getsockname() == ('127.0.0.1', port) and port != other_port
        assert sock.gettimeout() == 0.0
        connection, address = sock.accept()
        assert address == client.getsockname()
        connection.close()
    finally:
        for s in (client, sock, other):
            s.close()


@pytest.mark.skipif(not hasattr(socket, 'SO_REUSEPORT'), reason='no SO_REUSEPORT')
def test_bind_unused_port_can_set_reuse_port():
    sock, _ = bind_unused_port(reuse_port=True)
    plain, _ = bind_unused_port()
    try:
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT)
        assert not plain.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT)
    finally:
        sock.close()
        plain.close()


# -- ExpectLog ------------------------------------------------------------------------

def test_expect_log_swallows_only_matching_records(app_log_messages):
    with ExpectLog(app_log, r'expected \d+') as expectation:
        app_log.error('expected 42')
        app_log.error('something else, expected 7')
    assert expectation.matched and not expectation.logged_stack
    assert app_log_messages == ['something else, expected 7']


def test_expect_log_takes_a_logger_name_and_notes_tracebacks(app_log_messages):
    with ExpectLog('tornado.application', 'boom') as expectation:
        try:
            raise ValueError('x')
        except ValueError:
            app_log.exception('boom')
    assert expectation.logged_stack and app_log_messages == []


def test_expect_log_fails_when_a_required_message_never_came():
    with pytest.raises(AssertionError):
        with ExpectLog(app_log, 'never'):
            pass
    with ExpectLog(app_log, 'never', required=False) as expectation:
        pass
    assert not expectation.matched


def test_expect_log_lets_the_blocks_own_exception_through(app_log_messages):
    with pytest.raises(KeyError):
        with ExpectLog(app_log, 'never'):
            raise KeyError('x')
    app_log.error('after')
    assert app_log_messages == ['after']


# -- AsyncTestCase --------------------------------------------------------------------

def test_stop_and_wait_pass_a_value_through_the_loop():
    class Case(AsyncTestCase):
        def test_positional(self):
            self.io_loop.add_callback(self.stop, 'done')
            self.assertEqual(self.wait(), 'done')

        def test_keywords(self):
            self.io_loop.add_callback(lambda: self.stop(a=1, b=2))
            self.assertEqual(self.wait(), {'a': 1, 'b': 2})

        def test_condition(self):
            calls = []

            def tick():
                calls.append(len(calls))
                self.stop()
                if len(calls) < 3:
                    self.io_loop.add_callback(tick)
            self.io_loop.add_callback(tick)
            self.wait(condition=lambda: len(calls) == 3)
            self.assertEqual(calls, [0, 1, 2])

    result = run_case(Case, 'test_positional', 'test_keywords', 'test_condition')
    assert result.wasSuccessful() and result.testsRun == 3


def test_each_test_gets_a_fresh_current_loop_closed_afterwards():
    loops, sockets = [], []

    class Case(AsyncTestCase):
        def test_a(self):
            loops.append(self.io_loop)
            self.assertIs(IOLoop.current(), self.io_loop)
            reader, writer = socket.socketpair()
            sockets.extend([reader, writer])
            self.io_loop.add_handler(reader, lambda fd, events: None, IOLoop.READ)

        test_b = test_a

    assert run_case(Case, 'test_a', 'test_b').wasSuccessful()
    assert loops[0] is not loops[1]
    assert IOLoop.current(instance=False) is None
    for loop in loops:
        with pytest.raises(RuntimeError):
            loop.start()
    assert [is_closed(s) for s in sockets] == [True, False, True, False]
    for s in sockets:
        s.close()


def test_wait_fails_the_test_after_its_timeout():
    class Case(VirtualClockTestCase):
        def test_nothing_stops(self):
            self.wait(timeout=3)

    problem = only_problem(run_case(Case, 'test_nothing_stops'))
    assert 'Async operation timed out after 3 seconds' in problem


def test_an_exception_in_a_callback_fails_the_test(app_log_messages):
    after_wait = []

    class Case(AsyncTestCase):
        def test_wait(self):
            self.io_loop.add_callback(lambda: 1 / 0)
            self.wait()
            after_wait.append(True)

        @gen_test
        def test_coroutine(self):
            self.io_loop.add_callback(lambda: {}['missing'])
            yield gen.moment
            yield gen.moment

    result = run_case(Case, 'test_wait', 'test_coroutine')
    assert [problem for _, problem in result.errors if 'ZeroDivisionError' in problem]
    assert [problem for _, problem in result.errors if 'KeyError' in problem]
    assert len(result.errors) == 2 and len(app_log_messages) == 2
    assert after_wait == []


def test_expect_log_keeps_an_expected_callback_error_from_failing_the_test():
    class Case(AsyncTestCase):
        @gen_test
        def test_expected(self):
            with ExpectLog(app_log, 'Exception in callback'):
                self.io_loop.add_callback(lambda: 1 / 0)
                yield gen.moment
                yield gen.moment

    assert run_case(Case, 'test_expected').wasSuccessful()


def test_an_undecorated_generator_test_is_refused_not_passed():
    ran = []

    class Case(AsyncTestCase):
        def test_forgot_gen_test(self):
            ran.append(True)
            yield gen.moment

        def test_returns_a_value(self):
            return 42

    result = run_case(Case, 'test_forgot_gen_test', 'test_returns_a_value')
    assert len(result.errors) == 2 and ran == []
    assert 'TypeError: test_forgot_gen_test is a generator' in result.errors[0][1]
    assert 'ValueError: Return value from test method ignored: 42' in result.errors[1][1]


# -- gen_test -------------------------------------------------------------------------

def test_gen_test_runs_the_generator_bare_or_with_a_timeout():
    trace = []

    class Case(VirtualClockTestCase):
        @gen_test
        def test_bare(self):
            yield gen.sleep(1)
            trace.append(('bare', self.clock()))

        @gen_test(timeout=100)
        def test_with_timeout(self):
            yield gen.sleep(60)
            trace.append(('timeout', self.clock()))

        @gen_test
        @gen.coroutine
        def test_coroutine(self):
            yield gen.moment
            trace.append(('coroutine', self.clock()))

    result = run_case(Case, 'test_bare', 'test_with_timeout', 'test_coroutine')
    assert result.wasSuccessful()
    assert trace == [('bare', 1), ('timeout', 60), ('coroutine', 0)]


def test_gen_test_reports_a_failing_assertion():
    class Case(AsyncTestCase):
        @gen_test
        def test_fails(self):
            yield gen.moment
            self.assertEqual(1, 2)

    assert '1 != 2' in only_problem(run_case(Case, 'test_fails'))


@gen.coroutine
def wait_forever():
    yield Future()


wait_forever_line = wait_forever.__wrapped__.__code__.co_firstlineno


def test_a_timed_out_test_names_the_yields_it_hung_at():
    cleaned_up = []

    class Case(VirtualClockTestCase):
        @gen_test(timeout=2)
        def test_hangs(self):
            try:
                yield wait_forever()
            finally:
                cleaned_up.append(self.clock())

    test_hangs_line = Case.test_hangs.__wrapped__.__code__.co_firstlineno
    problem = only_problem(run_case(Case, 'test_hangs'))
    assert 'TimeoutError: Test timed out after 2 seconds, waiting at:\n' in problem
    waiting_at = problem.split('waiting at:\n')[1].splitlines()
    assert [line.split(', ')[1:] for line in waiting_at[::2]] == [
        ['line %d' % (test_hangs_line + 3), 'in test_hangs'],
        ['line %d' % (wait_forever_line + 2), 'in wait_forever']]
    assert [line.strip() for line in waiting_at[1::2]] == [
        'yield wait_forever()', 'yield Future()']
    assert cleaned_up == [2]


def test_the_default_timeout_is_read_when_the_test_runs(monkeypatch):
    class Case(VirtualClockTestCase):
        @gen_test
        def test_hangs(self):
            yield Future()

    monkeypatch.setenv('ASYNC_TEST_TIMEOUT', '7')
    assert 'timed out after 7.0 seconds' in only_problem(run_case(Case, 'test_hangs'))


def test_a_timeout_error_of_the_tests_own_passes_through_unchanged():
    class Case(VirtualClockTestCase):
        @gen_test
        def test_own_timeout(self):
            yield gen.with_timeout(self.io_loop.time() + 1, Future())

    problem = only_problem(run_case(Case, 'test_own_timeout'))
    assert 'TimeoutError: Timeout' in problem and 'Test timed out' not in problem


def test_a_test_that_ignores_its_cancellation_still_ends():
    class Case(VirtualClockTestCase):
        @gen_test(timeout=1)
        def test_stubborn(self):
            try:
                yield Future()
            except CancelledError:
                yield Future()

    problem = only_problem(run_case(Case, 'test_stubborn'))
    assert 'Test timed out after 1 seconds and ignored its cancellation' in problem


def test_run_time_errors_other_than_timeouts_are_not_rewritten():
    class Case(VirtualClockTestCase):
        @gen_test
        def test_raises(self):
            yield gen.sleep(1)
            raise TimeoutError('my own')

    problem = only_problem(run_case(Case, 'test_raises'))
    assert 'TimeoutError: my own' in problem
