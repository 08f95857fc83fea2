"""Corners of tornado.web that legacy handlers rely on: any status code, properties
assigned in prepare(), StaticFileHandler overrides returning bytes, a broken
log_exception, and 5.1's private signing helpers that legacy code imports."""
from __future__ import absolute_import, division, print_function

import calendar
import email.utils
import re
import time
import warnings

from tinytornado import gen, web
from tinytornado._compat import PY2
from tinytornado.httputil import HTTPHeaders, ResponseStartLine
from tinytornado.log import app_log
from tinytornado.tcpclient import TCPClient
from tinytornado.testing import AsyncHTTPTestCase, ExpectLog, gen_test
from tinytornado.web import (
    Application, FallbackHandler, HTTPError, RequestHandler, StaticFileHandler,
)


class StatusHandler(RequestHandler):
    def get(self):
        self.set_status(int(self.get_argument('code')), self.get_argument('reason', None))

    def post(self):
        raise HTTPError(int(self.get_argument('code')), reason=self.get_argument('reason'))


class AssignedHandler(RequestHandler):
    def prepare(self):
        self.current_user = 'Ben'
        if self.get_argument('locale', None):
            self.locale = self.get_argument('locale')

    def get_current_user(self):
        raise AssertionError('not asked: the user was assigned')

    def get(self):
        try:
            locale = self.locale
        except NotImplementedError as e:
            locale = str(e).split(':')[0]
        self.write('%s %s' % (self.current_user, locale))


class BytesStaticHandler(StaticFileHandler):
    """Serves made-up content: get_content returns it whole, as bytes."""

    @classmethod
    def get_absolute_path(cls, root, path):
        return 'made-up:' + path

    def validate_absolute_path(self, root, absolute_path):
        return absolute_path

    @classmethod
    def get_content(cls, abspath, start=None, end=None):
        return b'content of ' + abspath.encode('ascii')

    def get_content_size(self):
        return len(self.get_content(self.absolute_path))

    def get_modified_time(self):
        return None


class BrokenLoggerHandler(RequestHandler):
    def get(self):
        1 / 0

    def log_exception(self, typ, value, tb):
        raise RuntimeError('the logger is broken')


class CookieTimesHandler(RequestHandler):
    def get(self):
        self.set_cookie('kept', 'v', expires_days=2)
        self.clear_cookie('gone')


class InnerHandler(RequestHandler):
    def get(self):
        self.write('inner %s' % self.request.path)


def plain_callback(request):
    body = ('plain %s %s' % (request.method, request.body_arguments)).encode('ascii')
    request.connection.write_headers(ResponseStartLine('HTTP/1.1', 201, 'Created'),
                                     HTTPHeaders({'Content-Length': str(len(body))}))
    request.connection.write(body)
    request.connection.finish()


class DetachingHandler(RequestHandler):
    @gen.coroutine
    def get(self):
        stream = self.detach()
        yield gen.moment  # the server has let go: nothing finishes the response for us
        yield stream.write(b'HTTP/1.0 200 OK\r\n\r\nraw bytes')
        stream.close()


class CompatTest(AsyncHTTPTestCase):
    def get_app(self):
        inner = Application([('/inner/.*', InnerHandler)])
        return Application([('/status', StatusHandler), ('/assigned', AssignedHandler),
                            ('/inner/.*', FallbackHandler, {'fallback': inner}),
                            ('/plain', FallbackHandler, {'fallback': plain_callback}),
                            ('/cookies', CookieTimesHandler),
                            ('/made/(.*)', BytesStaticHandler, {'path': '/nowhere'}),
                            ('/broken', BrokenLoggerHandler), ('/detach', DetachingHandler)])

    def test_an_unknown_status_is_sent_as_unknown(self):
        response = self.fetch('/status?code=299')
        self.assertEqual((response.code, response.reason), (299, 'Unknown'))
        response = self.fetch('/status?code=299&reason=Fine')
        self.assertEqual((response.code, response.reason), (299, 'Fine'))
        response = self.fetch('/status?code=304')
        self.assertEqual((response.code, response.reason), (304, 'Not Modified'))

    @gen_test
    def test_a_code_beyond_599_with_its_reason(self):
        # Our client refuses codes over 599 (RFC 9110); the server sends what it is told.
        for method, expected in [(b'GET', b'HTTP/1.1 682 Bar\r\n'),
                                 (b'POST', b'HTTP/1.1 682 Foo\r\n')]:
            stream = yield TCPClient().connect('127.0.0.1', self.get_http_port())
            reason = b'Bar' if method == b'GET' else b'Foo'
            with ExpectLog('tornado.access', '682', required=False):
                yield stream.write(method + b' /status?code=682&reason=' + reason +
                                   b' HTTP/1.1\r\nContent-Length: 0\r\nConnection: close'
                                   b'\r\n\r\n')
                data = yield stream.read_until_close()
            self.assertTrue(data.startswith(expected), data)
            if method == b'POST':  # the error page names the reason too
                self.assertIn(b'682: Foo', data)

    def test_current_user_and_locale_assigned_in_prepare(self):
        self.assertEqual(self.fetch('/assigned?locale=en_US').body, b'Ben en_US')
        # Unassigned, locale still names what tinytornado lacks.
        self.assertEqual(self.fetch('/assigned').body, b'Ben locale')

    def test_get_content_may_return_bytes(self):
        response = self.fetch('/made/foo.txt')
        self.assertEqual(response.body, b'content of made-up:foo.txt')

    def test_cookie_and_cache_times_without_deprecated_utcnow(self):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            response = self.fetch('/cookies')
        self.assertEqual([str(w.message) for w in caught
                          if issubclass(w.category, DeprecationWarning)], [])
        expiry = {}
        for cookie in response.headers.get_list('Set-Cookie'):
            name = cookie.split('=', 1)[0]
            when = re.search(r'expires=([^;]+)', cookie).group(1)
            expiry[name] = calendar.timegm(email.utils.parsedate(when)) - time.time()
        self.assertTrue(2 * 86400 - 60 < expiry['kept'] <= 2 * 86400 + 1, expiry)
        self.assertTrue(-365 * 86400 - 60 < expiry['gone'] <= -365 * 86400 + 1, expiry)

    def test_fallback_to_another_application_or_a_callable(self):
        response = self.fetch('/inner/x')
        self.assertEqual((response.code, response.body), (200, b'inner /inner/x'))
        response = self.fetch('/plain', method='POST', body='a=1')
        self.assertEqual(response.code, 201)
        self.assertEqual(response.body, b"plain POST {'a': [" +
                         (b"'1'" if PY2 else b"b'1'") + b"]}")
        # Keep-alive goes on after a fallback's answer.
        self.assertEqual(self.fetch('/inner/y').body, b'inner /inner/y')

    def test_detach_hands_over_the_stream(self):
        response = self.fetch('/detach')
        self.assertEqual((response.code, response.body), (200, b'raw bytes'))
        self.assertNotIn('Content-Length', response.headers)

    def test_a_broken_log_exception_still_answers(self):
        with ExpectLog(app_log, 'Error in exception logger'):
            response = self.fetch('/broken')
        self.assertEqual(response.code, 500)


def test_the_private_signing_helpers_of_51():
    value = web.create_signed_value('secret', 'name', b'value', version=1)
    payload, timestamp, signature = value.split(b'|')
    assert web._create_signature_v1('secret', 'name', payload, timestamp) == signature
    # Version 1 runs its parts together: a digit moved from one to the next signs alike.
    assert web._create_signature_v1('secret', 'name', payload[:-1],
                                    payload[-1:] + timestamp) == signature
    value2 = web.create_signed_value('secret', 'name', b'value', version=2)
    text, signature2 = value2.rsplit(b'|', 1)
    assert web._create_signature_v2('secret', text + b'|') == signature2
    assert re.match(b'^[0-9a-f]{64}$', signature2)
    assert web._time_independent_equals(b'abc', b'abc')
    assert not web._time_independent_equals(b'abc', b'abd')

