"""AsyncHTTPTestCase and AsyncHTTPSTestCase as Tornado 5.1 suites use them: a plain
request callback served, fetch with and without raise_error, a gen_test fetching through
self.http_client, TLS with the package's test certificate, and a clean tearDown."""
from __future__ import absolute_import, division, print_function

import pytest

from net_helpers import open_fds
from test_testing import only_problem, run_case
from tinytornado.httpclient import HTTPClientError
from tinytornado.httputil import HTTPHeaders, ResponseStartLine
from tinytornado.ioloop import IOLoop
from tinytornado.testing import AsyncHTTPSTestCase, AsyncHTTPTestCase, gen_test


def echo(request):
    """A plain request callback: answers the method, path and body; /missing is a 404."""
    code, reason = (404, 'Not Found') if request.path == '/missing' else (200, 'OK')
    body = b' '.join([request.method.encode(), request.path.encode(), request.body])
    request.connection.write_headers(
        ResponseStartLine('HTTP/1.1', code, reason),
        HTTPHeaders({'Content-Length': str(len(body)), 'Content-Type': 'text/plain'}))
    request.connection.write(body)
    request.connection.finish()


class EchoCase(AsyncHTTPTestCase):
    def get_app(self):
        return echo

    def test_get(self):
        response = self.fetch('/hello?x=1')
        self.assertEqual(response.code, 200)
        self.assertEqual(response.body, b'GET /hello ')
        self.assertEqual(response.effective_url, self.get_url('/hello?x=1'))

    def test_post(self):
        response = self.fetch('/form', method='POST', body=b'a=1')
        self.assertEqual(response.body, b'POST /form a=1')

    def test_error_status_is_returned_unless_raise_error(self):
        self.assertEqual(self.fetch('/missing').code, 404)
        with self.assertRaises(HTTPClientError) as caught:
            self.fetch('/missing', raise_error=True)
        self.assertEqual(caught.exception.code, 404)

    def test_whole_url(self):
        url = 'http://localhost:%d/whole' % self.get_http_port()
        self.assertEqual(self.fetch(url).body, b'GET /whole ')

    @gen_test
    def test_gen_test_fetches_with_the_client(self):
        first = yield self.http_client.fetch(self.get_url('/one'))
        second = yield self.http_client.fetch(self.get_url('/two'), method='PUT', body=b'z')
        self.assertEqual((first.body, second.body), (b'GET /one ', b'PUT /two z'))


class EchoTLSCase(AsyncHTTPSTestCase):
    def get_app(self):
        return echo

    def test_get_over_tls(self):
        self.assertTrue(self.get_url('/x').startswith('https://127.0.0.1:'))
        response = self.fetch('/secure', method='POST', body=b'tls')
        self.assertEqual(response.body, b'POST /secure tls')


@pytest.mark.parametrize('case, names', [
    (EchoCase, ['test_get', 'test_post', 'test_error_status_is_returned_unless_raise_error',
                'test_whole_url', 'test_gen_test_fetches_with_the_client']),
    (EchoTLSCase, ['test_get_over_tls']),
])
def test_the_cases_pass_and_leave_no_loop_behind(case, names):
    before = IOLoop.current(instance=False)
    result = run_case(case, *names)
    assert result.errors == [] and result.failures == [] and result.testsRun == len(names)
    assert IOLoop.current(instance=False) is before


def test_the_server_options_reach_the_server():
    seen = []

    class Case(AsyncHTTPTestCase):
        def get_app(self):
            def app(request):
                seen.append(request.remote_ip)
                echo(request)
            return app

        def get_httpserver_options(self):
            return dict(xheaders=True)

        def test_proxied(self):
            self.assertEqual(self.fetch('/', headers={'X-Real-Ip': '10.1.2.3'}).code, 200)

    result = run_case(Case, 'test_proxied')
    assert result.errors == [] and result.failures == [] and seen == ['10.1.2.3']


def test_tear_down_closes_keep_alive_connections_and_the_loop():
    loops = []

    class Case(AsyncHTTPTestCase):
        def get_app(self):
            return echo

        def test_keep_alive(self):
            loops.append(self.io_loop)
            self.fetch('/a')
            self.fetch('/b')  # over the same kept-alive connection
            self.assertEqual(len(self.http_server._connections), 1)

        def tearDown(self):
            server = self.http_server
            super(Case, self).tearDown()
            loops.append(len(server._connections))

    result = run_case(Case, 'test_keep_alive')
    assert result.errors == [] and result.failures == []
    assert loops[1] == 0


def test_a_case_without_get_app_fails_at_set_up_naming_it():
    class NoApp(AsyncHTTPTestCase):
        def test_nothing(self):
            pass

    before = IOLoop.current(instance=False)
    fds = open_fds()
    problem = only_problem(run_case(NoApp, 'test_nothing'))
    assert 'NotImplementedError: NoApp must define get_app()' in problem
    # setUp undid itself (unittest runs no tearDown): no loop left current, no socket open.
    assert IOLoop.current(instance=False) is before and open_fds() == fds


def test_a_failing_request_in_gen_test_fails_the_test():
    class Case(AsyncHTTPTestCase):
        def get_app(self):
            return echo

        @gen_test
        def test_raises(self):
            yield self.http_client.fetch(self.get_url('/missing'))

    assert 'HTTP 404: Not Found' in only_problem(run_case(Case, 'test_raises'))
