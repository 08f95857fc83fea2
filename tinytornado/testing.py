"""Helpers for testing code built on tinytornado, named as Tornado 5.1 names them.

A Tornado test suite's imports keep working: `AsyncTestCase` (a fresh loop per test,
`stop`/`wait`), `gen_test`, `ExpectLog`, `bind_unused_port`, `get_async_test_timeout`,
and `main` (``python -m tinytornado.testing tests.test_module``), and `AsyncHTTPTestCase`
and `AsyncHTTPSTestCase`, which serve ``get_app()`` with an `HTTPServer` and fetch from it.

Beyond Tornado, `VirtualClock` makes timer tests exact and instant: give it to
``IOLoop(time_func=...)`` (or use `VirtualClockTestCase`) and the loop, instead of
sleeping until the next deadline, jumps the clock there. For pytest, the plugin
`tinytornado.pytest_plugin` offers the same as fixtures.
"""
from __future__ import absolute_import, division, print_function

import functools
import inspect
import linecache
import logging
import os
import re
import socket
import sys
import traceback
import types
import unittest

from tinytornado import gen, ioloop, netutil
from tinytornado._compat import raise_exc_info, string_types
from tinytornado.concurrent import Future, TimeoutError, is_future
from tinytornado.httpclient import AsyncHTTPClient
from tinytornado.httpserver import HTTPServer
from tinytornado.ioloop import IOLoop
from tinytornado.log import app_log, enable_pretty_logging, logging_options

__all__ = [
    'VirtualClock', 'AsyncTestCase', 'VirtualClockTestCase', 'AsyncHTTPTestCase',
    'AsyncHTTPSTestCase', 'gen_test', 'run_test_coroutine', 'ExpectLog', 'bind_unused_port',
    'get_async_test_timeout', 'main',
]

# The self-signed certificate AsyncHTTPSTestCase serves (never valid for a real server).
_TEST_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'testdata')
# How long a timed-out test coroutine may take to finish its cleanup once cancelled.
_CANCEL_GRACE = 1.0


class VirtualClock(object):
    """A loop clock that moves only when advanced: by a test, or by the loop when it
    has nothing to run before the next deadline."""

    def __init__(self, start=0.0):
        self.now = start

    def __call__(self):
        return self.now

    def advance(self, seconds):
        self.now += seconds


def get_async_test_timeout():
    """Seconds an asynchronous test may run: $ASYNC_TEST_TIMEOUT, else 5."""
    try:
        return float(os.environ.get('ASYNC_TEST_TIMEOUT'))
    except (TypeError, ValueError):
        return 5


def bind_unused_port(reuse_port=False):
    """A listening, non-blocking TCP socket on 127.0.0.1 and a free port: ``(sock, port)``.

    The socket stays bound (hand it to the server under test), so no other process can
    take the port between choosing it and using it.
    """
    sock = netutil.bind_sockets(0, '127.0.0.1', family=socket.AF_INET,
                                reuse_port=reuse_port)[0]
    return sock, sock.getsockname()[1]


class ExpectLog(logging.Filter):
    """A context manager that swallows the log records matching `regex`.

    ::

        with ExpectLog(app_log, 'Exception in callback'):
            trigger_the_error()

    Args:
        logger: a Logger or its name. Only records logged on that very logger are seen,
            not those propagated from its children.
        regex: matched (`re.match`, so from the start) against each formatted message.
        required: fail at exit if no record matched.
    """

    def __init__(self, logger, regex, required=True):
        logging.Filter.__init__(self)
        if isinstance(logger, string_types):
            logger = logging.getLogger(logger)
        self.logger = logger
        self.regex = re.compile(regex)
        self.required = required
        self.matched = False
        self.logged_stack = False

    def filter(self, record):
        if record.exc_info:
            self.logged_stack = True
        if self.regex.match(record.getMessage()):
            self.matched = True
            return False
        return True

    def __enter__(self):
        self.logger.addFilter(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.logger.removeFilter(self)
        if exc_type is None and self.required and not self.matched:
            raise AssertionError('did not get expected log message %r on %r'
                                 % (self.regex.pattern, self.logger.name))


class _TestMethodWrapper(object):
    """Refuses what a test method returns, so a generator test cannot pass unrun."""

    def __init__(self, method):
        self.method = method

    def __call__(self, *args, **kwargs):
        result = self.method(*args, **kwargs)
        # A native coroutine (async def) is told by its cr_frame; 2.7 has none.
        if isinstance(result, types.GeneratorType) or hasattr(result, 'cr_frame'):
            result.close()  # else a coroutine never awaited warns about it
            raise TypeError('%s is a generator or coroutine function: such test methods '
                            'should be decorated with tinytornado.testing.gen_test'
                            % self.method.__name__)
        if result is not None:
            raise ValueError('Return value from test method ignored: %r' % (result,))

    def __getattr__(self, name):
        # unittest and pytest read the method's name, docstring and markers through us.
        return getattr(self.method, name)


def _from_the_loop(record):
    """True for a record the IOLoop logged after catching an exception in a callback."""
    return (record.exc_info is not None and record.name == app_log.name and
            os.path.splitext(os.path.abspath(record.pathname))[0] ==
            os.path.splitext(os.path.abspath(ioloop.__file__))[0])


class _CallbackErrorCatcher(logging.Handler):
    """Hands exceptions the loop caught in callbacks to `on_exception(*exc_info)`."""

    def __init__(self, on_exception):
        logging.Handler.__init__(self, logging.ERROR)
        self.on_exception = on_exception

    def emit(self, record):
        if _from_the_loop(record):
            self.on_exception(*record.exc_info)


class AsyncTestCase(unittest.TestCase):
    """A TestCase with a fresh IOLoop per test in ``self.io_loop`` (current while the
    test runs, closed with all its file descriptors after).

    Write the test as a coroutine with `gen_test`, or start work and then `wait()` until
    a callback calls `stop()`::

        def test_callback(self):
            self.io_loop.call_later(0.1, self.stop, 'done')
            self.assertEqual(self.wait(), 'done')

    An exception the loop catches in a callback (which it logs) fails the test, as in
    Tornado. A generator test method without `gen_test` raises TypeError instead of
    passing without having run.
    """

    def __init__(self, methodName='runTest'):
        super(AsyncTestCase, self).__init__(methodName)
        self.io_loop = None
        self.__stopped = False
        self.__running = False
        self.__failure = None
        self.__stop_args = None
        method = getattr(self, methodName, None)
        if method is not None:
            setattr(self, methodName, _TestMethodWrapper(method))

    def get_new_ioloop(self):
        """The loop for one test; override to configure it."""
        return IOLoop(make_current=False)

    def setUp(self):
        super(AsyncTestCase, self).setUp()
        self.io_loop = self.get_new_ioloop()
        self.io_loop.make_current()

    def tearDown(self):
        IOLoop.clear_current()
        self.io_loop.close(all_fds=True)
        super(AsyncTestCase, self).tearDown()
        # A callback failure not yet reported by wait() fails the test here.
        self.__rethrow()

    def run(self, result=None):
        catcher = _CallbackErrorCatcher(self._handle_exception)
        app_log.addHandler(catcher)
        try:
            super(AsyncTestCase, self).run(result)
        finally:
            app_log.removeHandler(catcher)
        # Last resort for a failure that arrived after tearDown: noisy beats silent.
        self.__rethrow()

    def _handle_exception(self, exc_type, exc_value, traceback):
        if self.__failure is None:
            self.__failure = (exc_type, exc_value, traceback)
        else:
            app_log.error('multiple unhandled exceptions in test',
                          exc_info=(exc_type, exc_value, traceback))
        self.stop()
        return True  # handled: Tornado's says so to its callers

    def __rethrow(self):
        if self.__failure is not None:
            failure, self.__failure = self.__failure, None
            raise_exc_info(failure)

    def stop(self, _arg=None, **kwargs):
        """End the current `wait()`, making it return `_arg` (or the keyword arguments)."""
        assert _arg is None or not kwargs
        self.__stop_args = kwargs or _arg
        if self.__running:
            self.io_loop.stop()
            self.__running = False
        self.__stopped = True

    def wait(self, condition=None, timeout=None):
        """Run the loop until `stop()` is called (and `condition()`, if given, is true).

        Returns what was passed to `stop()`. Fails the test after `timeout` seconds
        (default `get_async_test_timeout()`; 0 for none), or re-raises an exception
        caught in a callback meanwhile.
        """
        if timeout is None:
            timeout = get_async_test_timeout()
        if not self.__stopped:
            handle = None
            if timeout:
                handle = self.io_loop.call_later(timeout, self.__time_out, timeout)
            while True:
                self.__running = True
                self.io_loop.start()
                if self.__failure is not None or condition is None or condition():
                    break
            if handle is not None:
                self.io_loop.remove_timeout(handle)
        assert self.__stopped
        self.__stopped = False
        self.__rethrow()
        result, self.__stop_args = self.__stop_args, None
        return result

    def __time_out(self, delay):
        try:
            raise self.failureException(
                'Async operation timed out after %s seconds' % delay)
        except self.failureException:
            self.__failure = sys.exc_info()
        self.stop()


class VirtualClockTestCase(AsyncTestCase):
    """An AsyncTestCase whose loop runs on a `VirtualClock`, ``self.clock``.

    Timers fire in order and at once: with nothing to run, the loop jumps the clock to
    the next deadline. That includes the test's own timeout, which is virtual time too:
    a test that would hang fails at once, a test simulating delays longer than 5 seconds
    needs ``@gen_test(timeout=...)`` (a large one costs nothing), and real I/O, which
    the loop would not wait for, is ruled out.
    """

    def get_new_ioloop(self):
        self.clock = VirtualClock()
        return IOLoop(make_current=False, time_func=self.clock)


def gen_test(func=None, timeout=None):
    """Run a generator test method of an `AsyncTestCase` as a coroutine on its loop.

    Usable bare (``@gen_test``) or with a timeout in seconds (``@gen_test(timeout=30)``);
    the default is `get_async_test_timeout()`, read when the test runs. On timeout the
    coroutine is cancelled (its ``finally`` blocks run) and the TimeoutError shows the
    `yield` it was waiting at. The method may also be a `gen.coroutine`, or on Python 3
    an ``async def`` once `tinytornado.platform.asyncio` is imported.
    """
    def decorate(method):
        @functools.wraps(method)
        def run(self, *args, **kwargs):
            return run_test_coroutine(self.io_loop, timeout,
                                      functools.partial(method, **kwargs), self, *args)
        run.__wrapped__ = method    # functools.wraps sets it on Python 3 only
        return run

    if func is not None:
        return decorate(func)
    return decorate


gen_test.__test__ = False  # not a test itself, whatever nose's name matching says


def run_test_coroutine(io_loop, delay, func, *args):
    """Run ``func(*args)`` as a coroutine on `io_loop` and return its result.

    What `gen_test` and the pytest plugin do. `func` is a generator function, a
    coroutine, a native coroutine function (run as `gen` runs one it is given), or a
    plain function; it may run `delay` seconds (None for `get_async_test_timeout()`). To
    pass keyword arguments, wrap the call in a lambda or a partial.

    Raises:
        TimeoutError: the coroutine ran longer; it has been cancelled, and the message
            lists the yields it was suspended at, outermost first.
    """
    if delay is None:
        delay = get_async_test_timeout()
    started = []

    def start():
        started.append(_test_future(func(*args)))
        return started[0]

    # run_sync waits for the cancelled coroutine to finish; one that ignores its
    # cancellation must not hang the test run.
    watchdog = io_loop.call_later(delay + _CANCEL_GRACE, io_loop.stop)
    try:
        return io_loop.run_sync(start, timeout=delay)
    except TimeoutError as e:
        future = started[0]
        if future.done() and not future.cancelled() and future.exception() is e:
            raise  # The test's own TimeoutError, not ours.
        message = _timeout_message(delay, future)
    finally:
        io_loop.remove_timeout(watchdog)
    # Raised outside the except block, so Python 3 does not chain run_sync's error.
    raise TimeoutError(message)


def _test_future(result):
    """The Future of a test function's run, from what calling it returned."""
    if isinstance(result, types.GeneratorType):
        return gen.coroutine(lambda: result)()
    if is_future(result) or hasattr(result, '__await__'):  # or a native coroutine
        return gen.convert_yielded(result)
    # What a plain function returned: None, or a value the test wrapper will refuse.
    future = Future()
    future.set_result(result)
    return future


def _timeout_message(delay, future):
    message = 'Test timed out after %s seconds' % delay
    if not future.done():
        return message + ' and ignored its cancellation'
    if not future.cancelled():
        return message
    return message + ', waiting at:\n' + _suspension_points(future.exc_info()[2])


def _suspension_points(tb):
    """The generator frames a CancelledError went through, formatted as a traceback.

    Cancellation throws it in at the innermost `yield`, and it travels out through each
    waiting coroutine: its traceback is the chain of yields that were waiting.
    """
    entries = []
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_flags & inspect.CO_GENERATOR:
            line = linecache.getline(code.co_filename, tb.tb_lineno).strip()
            entries.append((code.co_filename, tb.tb_lineno, code.co_name, line))
        tb = tb.tb_next
    return ''.join(traceback.format_list(entries)).rstrip()


class AsyncHTTPTestCase(AsyncTestCase):
    """A test case serving ``get_app()`` with an `HTTPServer` on a free loopback port, and
    an HTTP client to fetch from it (Tornado 5.1's)::

        class HelloTest(AsyncHTTPTestCase):
            def get_app(self):
                return Application([('/', HelloHandler)])

            def test_hello(self):
                response = self.fetch('/')
                self.assertEqual(response.body, b'hello')

    `get_app` returns what `HTTPServer` serves: a request callback or an
    `HTTPServerConnectionDelegate` (a web Application). `fetch` runs the loop until the
    response arrives; a `gen_test` coroutine may instead yield ``self.http_client.fetch``.
    """

    def setUp(self):
        super(AsyncHTTPTestCase, self).setUp()
        sock, port = bind_unused_port()
        self.__port = port
        self.http_client = None
        try:
            self.http_client = self.get_http_client()
            self._app = self.get_app()
            self.http_server = self.get_http_server()
        except Exception:
            # unittest runs no tearDown after a failed setUp: undo what was made here.
            sock.close()
            if self.http_client is not None:
                self.http_client.close()
            AsyncTestCase.tearDown(self)
            raise
        self.http_server.add_sockets([sock])

    def get_http_client(self):
        """The client `fetch` uses: the loop's shared `AsyncHTTPClient`."""
        return AsyncHTTPClient()

    def get_http_server(self):
        return HTTPServer(self._app, **self.get_httpserver_options())

    def get_app(self):
        """What the server serves; a test case must override it."""
        raise NotImplementedError('%s must define get_app()' % type(self).__name__)

    def get_httpserver_options(self):
        """Keyword arguments for the `HTTPServer` (e.g. ``dict(xheaders=True)``)."""
        return {}

    def fetch(self, path, raise_error=False, **kwargs):
        """Fetch `path` (relative to the server, or a whole URL) and return the response,
        running the loop until it arrives. An error status is returned as a response,
        unless `raise_error` (then it raises HTTPClientError, as a network error always
        does)."""
        url = path if path.lower().startswith(('http://', 'https://')) else self.get_url(path)
        return self.io_loop.run_sync(
            lambda: self.http_client.fetch(url, raise_error=raise_error, **kwargs),
            timeout=get_async_test_timeout())

    def get_http_port(self):
        return self.__port

    def get_protocol(self):
        return 'http'

    def get_url(self, path):
        """The server's URL of `path` (which starts with a slash)."""
        return '%s://127.0.0.1:%s%s' % (self.get_protocol(), self.get_http_port(), path)

    def tearDown(self):
        self.http_server.stop()
        # Open keep-alive connections first, so that closing the loop closes no live one.
        self.io_loop.run_sync(self.http_server.close_all_connections,
                              timeout=get_async_test_timeout())
        self.http_client.close()
        super(AsyncHTTPTestCase, self).tearDown()


class AsyncHTTPSTestCase(AsyncHTTPTestCase):
    """`AsyncHTTPTestCase` over TLS, with a self-signed test certificate for localhost and
    127.0.0.1 that the test's client does not validate."""

    def get_http_client(self):
        return AsyncHTTPClient(force_instance=True, defaults=dict(validate_cert=False))

    def get_httpserver_options(self):
        return dict(ssl_options=self.get_ssl_options())

    def get_ssl_options(self):
        """The server's `ssl_options`: the package's test certificate and key."""
        return dict(certfile=os.path.join(_TEST_DATA, 'test.crt'),
                    keyfile=os.path.join(_TEST_DATA, 'test.key'))

    def get_protocol(self):
        return 'https'


# --- main --------------------------------------------------------------------------------------

# Tornado's flags of main(): --name -> (the unittest.main keyword it sets, its value).
_UNITTEST_FLAGS = {
    'verbose': ('verbosity', 2),
    'quiet': ('verbosity', 0),
    'failfast': ('failfast', True),
    'catch': ('catchbreak', True),
    'buffer': ('buffer', True),
}


def main(**kwargs):
    """Run tests with `unittest.main`, with Tornado's command line and log format.

    ``python -m tinytornado.testing tests.test_module.SomeCase`` runs the tests named
    (unittest's names); a script calling ``main()`` with no test named runs what its
    ``all()`` returns. Tornado's options come first: ``--verbose``, ``--quiet``,
    ``--failfast``, ``--catch``, ``--buffer``, and the logging options of
    `tinytornado.log.LoggingOptions` (``--logging=debug``, ``--log_file_prefix=...``),
    with which logging is then set up as `tinytornado.log.enable_pretty_logging` does.
    Other arguments go to unittest. Keyword arguments are unittest.main's.
    """
    argv = [sys.argv[0]] + _take_options(sys.argv[1:], kwargs)
    enable_pretty_logging()
    if len(argv) > 1:
        # No module: the names are importable dotted names, not this module's tests.
        unittest.main(module=None, argv=argv, **kwargs)
    elif __name__ == '__main__':  # python -m tinytornado.testing, with nothing to run
        print('No tests specified', file=sys.stderr)
        sys.exit(1)
    else:
        unittest.main(defaultTest='all', argv=argv, **kwargs)


def _take_options(args, unittest_kwargs):
    """Apply Tornado's ``--name[=value]`` options among `args`; the others are returned."""
    others = []
    for arg in args:
        name, equals, value = arg[2:].partition('=')
        name = name.replace('-', '_')
        if not arg.startswith('--'):
            others.append(arg)
        elif name in _UNITTEST_FLAGS and not equals:
            keyword, flag_value = _UNITTEST_FLAGS[name]
            unittest_kwargs[keyword] = flag_value
        else:
            try:
                logging_options.set_from_text(name, value if equals else None)
            except KeyError:
                others.append(arg)
    return others


if __name__ == '__main__':
    main()
