"""tinytornado.pytest_plugin, exercised by running small test suites through pytest itself
(`pytester`, or `testdir` on pytest 4.6)."""
from __future__ import absolute_import, division, print_function

import textwrap

import pytest

PLUGIN = 'tinytornado.pytest_plugin'
_OUTCOMES = ('passed', 'failed', 'errors', 'skipped', 'xfailed', 'xpassed')


@pytest.fixture
def suite(request):
    """A scratch directory to write a test suite in and run pytest on."""
    try:
        return request.getfixturevalue('pytester')
    except LookupError:     # pytest 4.6 has only testdir
        return request.getfixturevalue('testdir')


def run(suite, source, *args):
    suite.makepyfile(test_suite=textwrap.dedent(source))
    return suite.runpytest('-p', PLUGIN, '-p', 'no:cacheprovider', *args)


def outcomes(result):
    """Outcome counts, with pytest 4.6's singular 'error' spelt as today."""
    counts = dict(('errors' if noun == 'error' else noun, count)
                  for noun, count in result.parseoutcomes().items())
    return dict((noun, counts[noun]) for noun in _OUTCOMES if noun in counts)


def test_io_loop_is_fresh_current_and_closed_after_each_test(suite):
    result = run(suite, """
        import pytest
        from tinytornado.ioloop import IOLoop

        loops = []

        def test_first(io_loop):
            assert IOLoop.current() is io_loop
            loops.append(io_loop)

        def test_second(io_loop):
            assert io_loop is not loops[0]
            with pytest.raises(RuntimeError):
                loops[0].start()    # closed

        def test_without_the_fixture():
            assert IOLoop.current(instance=False) not in loops
    """)
    assert outcomes(result) == {'passed': 3}


def test_a_generator_test_runs_as_a_coroutine(suite):
    result = run(suite, """
        from tinytornado import gen

        def test_passes(io_loop):
            value = yield gen.maybe_future(42)
            assert value == 42

        def test_fails_after_a_yield():
            yield gen.moment
            assert False, 'ran past the yield'
    """)
    assert outcomes(result) == {'passed': 1, 'failed': 1}
    result.stdout.fnmatch_lines(['*AssertionError: ran past the yield*'])


def test_generator_tests_take_fixtures_parameters_and_classes(suite):
    result = run(suite, """
        import pytest
        from tinytornado import gen

        @pytest.fixture
        def number():
            return 21

        @pytest.mark.parametrize('factor, product', [(2, 42), (3, 63)])
        def test_parametrized(number, factor, product):
            yield gen.moment
            assert number * factor == product

        class TestGroup(object):
            def test_method(self, number, io_loop):
                yield gen.moment
                assert number == 21
    """, '-v')
    assert outcomes(result) == {'passed': 3}
    result.stdout.fnmatch_lines(['*test_parametrized?2-42? PASSED*',
                                 '*test_parametrized?3-63? PASSED*',
                                 '*TestGroup::test_method PASSED*'])


HANGING_SUITE = """
    import pytest
    from tinytornado import gen

    @pytest.mark.gen_test(timeout=0.5)
    def test_marked(io_loop, virtual_clock):
        yield gen.sleep(3)

    def test_default(io_loop, virtual_clock):
        yield gen.sleep(10)
        assert virtual_clock() == 10
"""


def test_the_timeout_comes_from_the_marker_and_names_the_yield(suite, monkeypatch):
    monkeypatch.delenv('ASYNC_TEST_TIMEOUT', raising=False)
    result = run(suite, HANGING_SUITE)
    assert outcomes(result) == {'failed': 2}
    result.stdout.fnmatch_lines([
        '*TimeoutError: Test timed out after 0.5 seconds, waiting at:',
        '*line 6, in test_marked',
        '*yield gen.sleep(3)',
    ])
    result.stdout.fnmatch_lines(['*Test timed out after 5 seconds*'])


def test_the_default_timeout_comes_from_the_environment(suite, monkeypatch):
    monkeypatch.setenv('ASYNC_TEST_TIMEOUT', '20')
    assert outcomes(run(suite, HANGING_SUITE)) == {'passed': 1, 'failed': 1}


LEAKING_SUITE = """
    import socket

    import pytest
    from tinytornado import gen

    def test_leaves_a_timer(io_loop, virtual_clock):
        io_loop.call_later(10, len, 'x')

    def test_leaves_a_handler(io_loop):
        reader, writer = socket.socketpair()
        writer.close()
        io_loop.add_handler(reader, lambda fd, events: None, io_loop.READ)

    def test_generator_leaves_a_timer(io_loop):
        io_loop.call_later(7, len, 'y')
        yield gen.moment

    @pytest.mark.no_leak_check
    def test_allowed_to_leave_a_timer(io_loop):
        io_loop.call_later(10, len, 'x')

    def test_cancels_its_timer(io_loop):
        io_loop.remove_timeout(io_loop.call_later(10, len, 'x'))

    def test_fails_and_leaves_a_timer(io_loop):
        io_loop.call_later(10, len, 'x')
        assert False

    @pytest.fixture
    def timer(io_loop):
        handle = io_loop.call_later(10, len, 'x')
        yield handle
        io_loop.remove_timeout(handle)

    def test_a_fixture_cleans_up_before_the_check(timer):
        pass
"""


def test_the_leak_check_fails_tests_that_leave_work_on_the_loop(suite):
    result = run(suite, LEAKING_SUITE, '--strict-markers')
    assert outcomes(result) == {'passed': 6, 'failed': 1, 'errors': 3}
    result.stdout.fnmatch_lines([
        '*ERROR at teardown of test_leaves_a_timer*',
        '*the test left work on io_loop (mark it no_leak_check to allow that):',
        '*timer due in 10.000s: <built-in function len>',
    ])
    result.stdout.fnmatch_lines(['*ERROR at teardown of test_leaves_a_handler*',
                                 '*handler for <socket*'])
    result.stdout.fnmatch_lines(['*ERROR at teardown of test_generator_leaves_a_timer*'])


def test_the_leak_check_can_be_turned_off_in_the_ini_file(suite):
    suite.makeini('[pytest]\ntinytornado_leak_check = false\n')
    result = run(suite, LEAKING_SUITE)
    assert outcomes(result) == {'passed': 6, 'failed': 1}


def test_loading_the_plugin_twice_by_its_name_is_harmless(suite):
    suite.makeconftest("pytest_plugins = ['%s']" % PLUGIN)
    result = run(suite, """
        from tinytornado import gen

        def test_uses_the_plugin(io_loop):
            yield gen.moment
    """)
    assert outcomes(result) == {'passed': 1}
