"""`@web.asynchronous` over `gen.engine` and `gen.coroutine` methods, served on 127.0.0.1:
a method that fails after it first waits ends in a 500, as Tornado 5.1's stack context
made it, not in a response left open until the client gives up."""
from __future__ import absolute_import, division, print_function

import functools
import warnings

from tinytornado import gen
from tinytornado.ioloop import IOLoop
from tinytornado.log import app_log
from tinytornado.testing import AsyncHTTPTestCase, ExpectLog
from tinytornado.web import Application, RequestHandler

with warnings.catch_warnings():
    warnings.simplefilter('ignore', DeprecationWarning)
    from tinytornado.web import asynchronous

    class EngineHandler(RequestHandler):
        @asynchronous
        @gen.engine
        def get(self, outcome):
            yield gen.Task(IOLoop.current().add_callback)
            if outcome == 'fail':
                raise ValueError('oops')
            if outcome == 'value':
                raise gen.Return('a value an engine function cannot return')
            self.finish('engine done')

    class CoroutineHandler(RequestHandler):
        @asynchronous
        @gen.coroutine
        def get(self, outcome):
            yield gen.moment
            if outcome == 'fail':
                raise ValueError('oops')
            self.write('finished for it')


def test_only_the_engine_function_itself_runs_as_a_coroutine():
    @gen.engine
    def engine_function():
        yield gen.moment

    @functools.wraps(engine_function)  # copies attributes: must not pass for it
    def wrapped():
        return engine_function()
    assert gen.engine_as_coroutine(engine_function) is not None
    assert gen.engine_as_coroutine(wrapped) is None
    assert gen.engine_as_coroutine(lambda: None) is None


class AsynchronousErrorsTest(AsyncHTTPTestCase):
    def get_app(self):
        return Application([(r'/engine/(\w+)', EngineHandler),
                            (r'/coroutine/(\w+)', CoroutineHandler)])

    def test_an_engine_method_finishes_the_response_itself(self):
        self.assertEqual(self.fetch('/engine/ok').body, b'engine done')

    def test_a_coroutine_method_is_finished_for(self):
        self.assertEqual(self.fetch('/coroutine/ok').body, b'finished for it')

    def test_a_failing_engine_method_is_a_500(self):
        with ExpectLog(app_log, 'Uncaught exception GET /engine/fail'):
            response = self.fetch('/engine/fail')
        self.assertEqual(response.code, 500)

    def test_an_engine_method_returning_a_value_is_a_500(self):
        with ExpectLog(app_log, 'Uncaught exception GET /engine/value'):
            response = self.fetch('/engine/value')
        self.assertEqual(response.code, 500)

    def test_a_failing_coroutine_method_is_a_500(self):
        with ExpectLog(app_log, 'Uncaught exception GET /coroutine/fail'):
            response = self.fetch('/coroutine/fail')
        self.assertEqual(response.code, 500)
