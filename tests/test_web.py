"""tinytornado.web's core as Tornado 5.1's handlers use it, served by AsyncHTTPTestCase:
verb methods of each style, arguments, the response, errors, routing, redirects, and the
features that are missing failing at once."""
from __future__ import absolute_import, division, print_function

import logging

import pytest

from tinytornado import gen
from tinytornado._compat import PY2
from tinytornado.escape import json_decode
from tinytornado.httpclient import AsyncHTTPClient
from tinytornado.ioloop import IOLoop
from tinytornado.locks import Event
from tinytornado.tcpclient import TCPClient
from tinytornado.log import access_log, app_log, gen_log
from tinytornado.testing import AsyncHTTPTestCase, ExpectLog, bind_unused_port, gen_test
from tinytornado.web import (
    Application, ErrorHandler, Finish, HTTPError, MissingArgumentError, RedirectHandler,
    RequestHandler, URLSpec, addslash, asynchronous, removeslash, url,
)

if not PY2:
    from web_async_cases_py3 import NativeHandler


class PlainHandler(RequestHandler):
    def initialize(self, greeting='hello'):
        self.greeting = greeting

    def get(self, name='world'):
        self.write('%s %s' % (self.greeting, name))

    head = get


class ArgsHandler(RequestHandler):
    def get(self):
        self.write({'x': self.get_argument('x'), 'xs': self.get_arguments('x'),
                    'q': self.get_query_argument('q', None),
                    'missing': self.get_argument('missing', 'default'),
                    'unstripped': self.get_argument('s', strip=False)})

    def post(self):
        self.write({'body': self.get_body_argument('b'),
                    'bodies': self.get_body_arguments('b'),
                    'query': self.get_query_arguments('b'),
                    'all': self.get_arguments('b')})


class KwargsHandler(RequestHandler):
    def get(self, year, month):
        self.write('%s/%s' % (year, month))


class CoroutineHandler(RequestHandler):
    @gen.coroutine
    def prepare(self):
        yield gen.sleep(0)
        self.steps = ['prepare']

    @gen.coroutine
    def get(self):
        yield gen.sleep(0.01)
        self.steps.append('get')
        self.write(','.join(self.steps))


class AsynchronousHandler(RequestHandler):
    @asynchronous
    def get(self):
        self.write('later ')
        IOLoop.current().call_later(0.01, self.done)

    def done(self):
        self.finish('done')


class AsynchronousCoroutineHandler(RequestHandler):
    @asynchronous
    @gen.coroutine
    def get(self):
        yield gen.sleep(0)
        self.write('finished for it')


class ResponseHandler(RequestHandler):
    def get(self):
        self.set_status(201, 'Made')
        self.set_header('X-One', 1)
        self.set_header('X-Gone', 'soon')
        self.add_header('X-Many', 'a')
        self.add_header('X-Many', b'b')
        self.clear_header('X-Gone')
        self.clear_header('X-Never-Set')
        self.write(b'bytes ')
        self.write(u'text \u00e9')


class FlushHandler(RequestHandler):
    @gen.coroutine
    def get(self):
        self.write('first ')
        yield self.flush()
        self.write('second')


class ClearHandler(RequestHandler):
    def get(self):
        self.set_header('X-Dropped', '1')
        self.write('dropped')
        self.clear()
        self.write('kept')


class ErrorsHandler(RequestHandler):
    def get(self, kind):
        if kind == 'http':
            raise HTTPError(403, 'no %s', 'entry', reason='Keep Out')
        if kind == 'crash':
            raise ValueError('boom')
        if kind == 'send':
            self.write('dropped')
            self.send_error(410)
        if kind == 'finish':
            raise Finish('finished early')
        if kind == 'missing':
            self.get_argument('needed')
        if kind == 'list':
            self.write([1, 2])


class CustomErrorHandler(RequestHandler):
    def get(self):
        raise HTTPError(409)

    def write_error(self, status_code, **kwargs):
        self.write({'code': status_code, 'type': kwargs['exc_info'][0].__name__})


class RedirectingHandler(RequestHandler):
    def get(self, how):
        if how == 'temp':
            self.redirect('/plain')
        elif how == 'perm':
            self.redirect('/plain', permanent=True)
        else:
            self.redirect('/plain', status=int(how))


class RenderHandler(RequestHandler):
    def get(self):
        self.render('page.html', name='x')


class LifecycleHandler(RequestHandler):
    events = []

    def prepare(self):
        self.events.append('prepare')
        if self.get_argument('stop', None):
            self.finish('stopped in prepare')

    def get(self):
        self.events.append('get')
        self.write('ok')

    def on_finish(self):
        self.events.append('on_finish %d' % self.get_status())


class AppHandler(RequestHandler):
    def get(self):
        self.write({'setting': self.settings['custom'], 'same': self.application is
                    self.settings['app_holder'][0],
                    'url': self.application.reverse_url('kwargs', 2018, '07'),
                    'request_path': self.request.path})


def make_app(**settings):
    holder = []
    app = Application([
        (r'/plain', PlainHandler),
        (r'/greet/(\w+)', PlainHandler, {'greeting': 'hi'}),
        (r'/args', ArgsHandler),
        url(r'/date/(?P<year>\d+)/(?P<month>\d+)', KwargsHandler, name='kwargs'),
        (r'/coroutine', CoroutineHandler),
        (r'/asynchronous', AsynchronousHandler),
        (r'/asynchronous-coroutine', AsynchronousCoroutineHandler),
        (r'/response', ResponseHandler),
        (r'/flush', FlushHandler),
        (r'/clear', ClearHandler),
        (r'/error/(\w+)', ErrorsHandler),
        (r'/custom-error', CustomErrorHandler),
        (r'/redirect/(\w+)', RedirectingHandler),
        (r'/old/(\w+)', RedirectHandler, {'url': '/greet/{0}'}),
        (r'/gone', ErrorHandler, {'status_code': 410}),
        (r'/render', RenderHandler),
        (r'/lifecycle', LifecycleHandler),
        (r'/app', AppHandler, None, 'app'),
    ] + ([] if PY2 else [(r'/native/(\w+)', NativeHandler)]),
        custom='value', app_holder=holder, **settings)
    holder.append(app)
    return app


class WebTest(AsyncHTTPTestCase):
    def get_app(self):
        return make_app()

    def test_plain_verb_with_initialize_and_path_args(self):
        self.assertEqual(self.fetch('/plain').body, b'hello world')
        self.assertEqual(self.fetch('/greet/bob').body, b'hi bob')

    def test_arguments_of_query_and_body(self):
        response = self.fetch('/args?x=1&x=%202%20&q=query&s=%20s%20')
        self.assertEqual(response.headers['Content-Type'], 'application/json; charset=UTF-8')
        self.assertEqual(json_decode(response.body), {
            'x': '2', 'xs': ['1', '2'], 'q': 'query', 'missing': 'default',
            'unstripped': ' s '})
        response = self.fetch('/args?b=q', method='POST', body='b=one&b=two')
        self.assertEqual(json_decode(response.body), {
            'body': 'two', 'bodies': ['one', 'two'], 'query': ['q'],
            'all': ['q', 'one', 'two']})

    def test_a_missing_argument_is_a_400(self):
        with ExpectLog(gen_log, '.*Missing argument x'):
            response = self.fetch('/args')
        self.assertEqual(response.code, 400)
        with ExpectLog(gen_log, '.*Missing argument needed'):
            self.assertEqual(self.fetch('/error/missing').code, 400)

    def test_named_groups_are_keyword_arguments(self):
        self.assertEqual(self.fetch('/date/2018/07').body, b'2018/07')

    def test_coroutine_prepare_and_verb(self):
        self.assertEqual(self.fetch('/coroutine').body, b'prepare,get')

    @pytest.mark.skipif(PY2, reason='no async def on 2.7')
    def test_async_def_prepare_and_verb(self):
        self.assertEqual(self.fetch('/native/n').body, b'native n after prepare,get')

    def test_asynchronous_finishes_from_a_callback(self):
        self.assertEqual(self.fetch('/asynchronous').body, b'later done')
        self.assertEqual(self.fetch('/asynchronous-coroutine').body, b'finished for it')

    def test_status_headers_and_body(self):
        response = self.fetch('/response')
        self.assertEqual((response.code, response.reason), (201, 'Made'))
        self.assertEqual(response.headers['X-One'], '1')
        self.assertEqual(response.headers.get_list('X-Many'), ['a', 'b'])
        self.assertNotIn('X-Gone', response.headers)
        self.assertEqual(response.headers['Server'], 'TornadoServer/0.1.0')
        self.assertEqual(response.body, u'bytes text \u00e9'.encode('utf-8'))
        self.assertEqual(response.headers['Content-Length'], str(len(response.body)))

    def test_flush_sends_the_head_then_the_body_chunked(self):
        response = self.fetch('/flush')
        self.assertEqual(response.body, b'first second')
        self.assertNotIn('Content-Length', response.headers)

    def test_clear_drops_headers_and_body(self):
        response = self.fetch('/clear')
        self.assertEqual(response.body, b'kept')
        self.assertNotIn('X-Dropped', response.headers)

    def test_http_error_with_reason_and_log_message(self):
        with ExpectLog(gen_log, r'403 GET /error/http \(127.0.0.1\): no entry'):
            response = self.fetch('/error/http')
        self.assertEqual((response.code, response.reason), (403, 'Keep Out'))
        self.assertIn(b'403: Keep Out', response.body)

    def test_an_exception_is_a_logged_500(self):
        with ExpectLog(app_log, 'Uncaught exception GET /error/crash'):
            response = self.fetch('/error/crash')
        self.assertEqual(response.code, 500)
        self.assertEqual(response.body, b'<html><title>500: Internal Server Error</title>'
                                        b'<body>500: Internal Server Error</body></html>')

    def test_send_error_drops_what_was_written(self):
        response = self.fetch('/error/send')
        self.assertEqual(response.code, 410)
        self.assertNotIn(b'dropped', response.body)

    def test_finish_exception_ends_the_request(self):
        response = self.fetch('/error/finish')
        self.assertEqual((response.code, response.body), (200, b'finished early'))

    def test_writing_a_list_is_refused(self):
        with ExpectLog(app_log, 'Uncaught exception'):
            self.assertEqual(self.fetch('/error/list').code, 500)

    def test_write_error_overridden(self):
        response = self.fetch('/custom-error')
        self.assertEqual(response.code, 409)
        self.assertEqual(json_decode(response.body), {'code': 409, 'type': 'HTTPError'})

    def test_redirects(self):
        for how, code in [('temp', 302), ('perm', 301), ('307', 307)]:
            response = self.fetch('/redirect/' + how, follow_redirects=False)
            self.assertEqual((response.code, response.headers['Location']), (code, '/plain'))
        self.assertEqual(self.fetch('/redirect/temp').body, b'hello world')

    def test_redirect_handler_keeps_the_query(self):
        response = self.fetch('/old/ann?a=1', follow_redirects=False)
        self.assertEqual((response.code, response.headers['Location']),
                         (301, '/greet/ann?a=1'))

    def test_error_handler_and_unmatched_paths(self):
        with ExpectLog(gen_log, '.*', required=False):
            self.assertEqual(self.fetch('/gone').code, 410)
            self.assertEqual(self.fetch('/nowhere').code, 404)
            self.assertEqual(self.fetch('/plain/more').code, 404)  # anchored at the end

    def test_an_unsupported_verb_is_a_405(self):
        self.assertEqual(self.fetch('/plain', method='DELETE').code, 405)

    def test_head_has_no_body(self):
        response = self.fetch('/plain', method='HEAD')
        self.assertEqual((response.code, response.body), (200, b''))
        self.assertEqual(response.headers['Content-Length'], str(len(b'hello world')))
        self.assertEqual(self.fetch('/args', method='HEAD').code, 405)  # no head()

    def test_etag_and_if_none_match(self):
        etag = self.fetch('/plain').headers['Etag']
        response = self.fetch('/plain', headers={'If-None-Match': etag})
        self.assertEqual((response.code, response.body), (304, b''))
        self.assertEqual(self.fetch('/plain', headers={'If-None-Match': '"other"'}).code, 200)

    def test_render_fails_naming_templates(self):
        with ExpectLog(app_log, 'Uncaught exception'):
            response = self.fetch('/render')
        self.assertEqual(response.code, 500)

    def test_lifecycle(self):
        LifecycleHandler.events = events = []
        self.fetch('/lifecycle')
        self.fetch('/lifecycle?stop=1')
        self.assertEqual(events, ['prepare', 'get', 'on_finish 200',
                                  'prepare', 'on_finish 200'])

    def test_application_settings_and_reverse_url(self):
        self.assertEqual(json_decode(self.fetch('/app').body), {
            'setting': 'value', 'same': True, 'url': '/date/2018/07',
            'request_path': '/app'})

    @gen_test
    def test_gen_test_with_the_client(self):
        response = yield self.http_client.fetch(self.get_url('/greet/gen'))
        self.assertEqual(response.body, b'hi gen')


class HostsTest(AsyncHTTPTestCase):
    def get_app(self):
        app = Application([(r'/', PlainHandler, {'greeting': 'wildcard'})],
                          default_host='www.example.com')
        app.add_handlers(r'www\.example\.com', [(r'/', PlainHandler, {'greeting': 'www'}),
                                                (r'/only-www', PlainHandler)])
        app.add_handlers(r'api\.example\.com', [(r'/', PlainHandler, {'greeting': 'api'})])
        return app

    def test_host_routes_come_first(self):
        self.assertEqual(self.fetch('/', headers={'Host': 'api.example.com'}).body,
                         b'api world')
        self.assertEqual(self.fetch('/', headers={'Host': 'www.example.com'}).body,
                         b'www world')
        self.assertEqual(self.fetch('/').body, b'wildcard world')

    def test_default_host_routes_serve_other_hosts_unless_proxied(self):
        self.assertEqual(self.fetch('/only-www').body, b'hello world')
        self.assertEqual(self.fetch('/only-www', headers={'X-Real-Ip': '1.2.3.4'}).code, 404)


class DebugTest(AsyncHTTPTestCase):
    def get_app(self):
        return make_app(debug=True)

    def test_debug_serves_the_traceback(self):
        with ExpectLog(app_log, 'Uncaught exception'):
            response = self.fetch('/error/crash')
        self.assertEqual(response.code, 500)
        self.assertIn(b'ValueError: boom', response.body)


def test_url_spec_reverse_and_match():
    spec = URLSpec(r'/a/(\d+)/b/(.*)', PlainHandler, name='ab')
    assert spec.reverse(1, 'x y/z') == '/a/1/b/x%20y/z'
    assert spec.match('/a/1/b/%C3%A9') == ([b'1', u'\u00e9'.encode('utf-8')], {})
    assert spec.match('/a/x/b/') is None
    with pytest.raises(ValueError):
        spec.reverse(1)
    with pytest.raises(ValueError) as caught:
        URLSpec(r'/a/(?:x|y)', PlainHandler).reverse()
    assert 'Cannot reverse url regex' in str(caught.value)
    assert URLSpec(r'/a\.b', 'test_web.PlainHandler').reverse() == '/a.b'


@pytest.mark.parametrize('setting, missing', [
    ('xsrf_cookies', 'XSRF protection'), ('template_path', 'templates'),
    ('ui_modules', 'UI modules'), ('autoreload', 'autoreload'),
])
def test_settings_needing_what_is_missing_fail_at_once(setting, missing):
    with pytest.raises(NotImplementedError) as caught:
        Application([], **{setting: 'x'})
    assert str(caught.value).startswith('%s: tinytornado.web does not provide %s'
                                        % (setting, missing))


def test_a_bad_route_is_refused():
    with pytest.raises(ValueError):
        Application([(r'/',)])
    with pytest.raises(TypeError):
        Application([r'/'])


def test_reverse_url_of_an_unknown_name():
    with pytest.raises(KeyError):
        Application([]).reverse_url('nothing')


def test_http_error_text():
    assert str(HTTPError(404)) == 'HTTP 404: Not Found'
    assert str(HTTPError(400, 'bad %s', 'x')) == 'HTTP 400: Bad Request (bad x)'
    assert str(HTTPError(400, '100%')) == 'HTTP 400: Bad Request (100%)'
    assert str(MissingArgumentError('a')) == 'HTTP 400: Bad Request (Missing argument a)'


def test_listen_serves_and_logs_access(caplog):
    io_loop = IOLoop(make_current=False)
    io_loop.make_current()
    sock, port = bind_unused_port()
    sock.close()
    server = make_app().listen(port, '127.0.0.1')
    client = AsyncHTTPClient(force_instance=True)
    try:
        with caplog.at_level(logging.INFO, logger=access_log.name):
            response = io_loop.run_sync(
                lambda: client.fetch('http://127.0.0.1:%d/plain' % port))
        assert response.body == b'hello world'
        assert any(record.getMessage().startswith('200 GET /plain (127.0.0.1)')
                   for record in caplog.records)
    finally:
        client.close()
        server.stop()
        io_loop.run_sync(server.close_all_connections)
        IOLoop.clear_current()
        io_loop.close(all_fds=True)


class SlashHandler(RequestHandler):
    @removeslash
    def get(self):
        self.write('no slash ' + self.reverse_url('kwargs', 1, 2))

    @addslash
    def post(self):
        self.write('slash')


class LegacyFlushHandler(RequestHandler):
    @asynchronous
    def get(self):
        self.write('first ')
        self.flush(callback=self.flushed)

    def flushed(self):
        self.finish('then the rest')


class XsrfHandler(RequestHandler):
    def get(self, what):
        try:
            if what == 'token':
                self.write(self.xsrf_token)
            else:
                self.check_xsrf_cookie()
        except NotImplementedError as e:
            self.write(str(e))


class DecoratorsTest(AsyncHTTPTestCase):
    def get_app(self):
        return Application([
            (r'/slash/?', SlashHandler), (r'/legacy-flush', LegacyFlushHandler),
            url(r'/d/(\d+)/(\d+)', KwargsHandler, name='kwargs'), (r'/xsrf/(\w+)', XsrfHandler),
        ])

    def test_removeslash_and_addslash(self):
        response = self.fetch('/slash/?a=1', follow_redirects=False)
        self.assertEqual((response.code, response.headers['Location']), (301, '/slash?a=1'))
        self.assertEqual(self.fetch('/slash').body, b'no slash /d/1/2')
        response = self.fetch('/slash', method='POST', body=b'', follow_redirects=False)
        self.assertEqual(response.code, 404)  # addslash: only GET and HEAD are redirected
        self.assertEqual(self.fetch('/slash/', method='POST', body=b'').body, b'slash')

    def test_flush_with_a_callback(self):
        self.assertEqual(self.fetch('/legacy-flush').body, b'first then the rest')

    def test_xsrf_fails_naming_it(self):
        for what in ('token', 'check'):
            self.assertTrue(self.fetch('/xsrf/' + what).body.startswith(
                b'XSRF protection: tinytornado.web does not provide XSRF protection'))


class LongPollHandler(RequestHandler):
    closed = None

    @asynchronous
    def get(self):
        self.write('waiting')  # never finished: the client goes away first
        self.flush()

    def on_connection_close(self):
        LongPollHandler.closed.set()


class ConnectionCloseTest(AsyncHTTPTestCase):
    def get_app(self):
        return Application([(r'/poll', LongPollHandler)])

    @gen_test
    def test_on_connection_close_when_the_client_leaves(self):
        LongPollHandler.closed = Event()
        stream = yield TCPClient().connect('127.0.0.1', self.get_http_port())
        yield stream.write(b'GET /poll HTTP/1.1\r\nHost: x\r\n\r\n')
        yield stream.read_until(b'waiting')  # the handler is waiting
        self.assertFalse(LongPollHandler.closed.is_set())
        stream.close()
        yield LongPollHandler.closed.wait()


class MisuseHandler(RequestHandler):
    def get(self, what):
        problems = []
        for attempt in [lambda: self.set_header('X-Bad', 'a\r\nInjected: 1'),
                        lambda: self.set_header('X-Bad', object()),
                        lambda: self.redirect('/x', status=200)]:
            try:
                attempt()
            except (TypeError, ValueError) as e:
                problems.append(type(e).__name__)
        self.finish(','.join(problems))
        for attempt in [lambda: self.write('more'), self.finish]:
            try:
                attempt()
            except RuntimeError as e:
                problems.append(str(e))
        MisuseHandler.problems = problems


class ArgumentTest(AsyncHTTPTestCase):
    def get_app(self):
        return Application([(r'/args', ArgsHandler), (r'/misuse/(\w+)', MisuseHandler)])

    def test_invalid_utf8_in_an_argument_is_a_400(self):
        with ExpectLog(gen_log, '.*Invalid unicode in x'):
            self.assertEqual(self.fetch('/args?x=%FF').code, 400)

    def test_control_characters_become_spaces(self):
        self.assertEqual(json_decode(self.fetch('/args?x=a%01b&s=1').body)['x'], 'a b')

    def test_misuse_is_refused_clearly(self):
        response = self.fetch('/misuse/x')
        self.assertEqual(response.body, b'ValueError,TypeError,ValueError')
        self.assertNotIn('Injected', response.headers)
        self.assertEqual(MisuseHandler.problems[3:], ['Cannot write() after finish()',
                                                      'finish() called twice'])
