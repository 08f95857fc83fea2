"""Sites and servers for the crawler tests: hand-written pages, a flaky server, fixtures.

`Pages` turns a dict into a site the demo server can serve, so that each test writes the
few pages it needs; `serve` (a fixture, registered by conftest.py) starts demo servers on
the test's loop and closes them after it.
"""
from __future__ import absolute_import, division, print_function

import pytest

from tinytornado.crawler.demo.server import DemoServer
from tinytornado.crawler.demo.website import Resource
from tinytornado.ioloop import IOLoop

__all__ = ['Pages', 'FlakyServer', 'serve', 'by_url', 'links', 'robots_txt', 'request_log',
           'HTML', 'UNTHROTTLED', 'UNTHROTTLED_ARGS', 'unthrottled']

HTML = 'text/html; charset=utf-8'

# The crawl as it was before the polite defaults (2 requests per host, an adapted delay,
# a rate ceiling):
# for the tests of other things, whose workload must stay what it was.
UNTHROTTLED = {'delay': 0.0, 'max_per_host': None, 'max_rate': 0.0}
# The same on the command line: a per-host cap above any test's --max-tasks is none.
UNTHROTTLED_ARGS = ['--delay', '0', '--max-per-host', '1000', '--max-rate', '0']


def unthrottled(options):
    """Crawler `options` with UNTHROTTLED's for those not given."""
    merged = dict(UNTHROTTLED)
    merged.update(options)
    return merged


class Pages(object):
    """A site from ``{path: page}``; unknown paths are 404s.

    A page is HTML text (served as 200 text/html), or a dict with some of status, headers
    (a list of pairs), body (bytes or text), delay (seconds) and content_type, or a list
    of those: one per request, the last one repeated.
    """

    def __init__(self, pages):
        self.pages = dict(pages)

    def resource(self, path):
        page = self.pages.get(path)
        if page is None:
            return Resource(404, [('Content-Type', HTML)], b'not found', 0.0)
        if isinstance(page, list):
            if len(page) > 1:
                self.pages[path] = page[1:]
            page = page[0]
        if not isinstance(page, dict):
            page = {'body': page}
        body = page.get('body', b'')
        if not isinstance(body, bytes):
            body = body.encode('utf-8')
        headers = [('Content-Type', page.get('content_type', HTML))] + page.get('headers', [])
        return Resource(page.get('status', 200), headers, body, page.get('delay', 0.0))


def links(*hrefs):
    """An HTML page linking to each href."""
    return '<html><body>%s</body></html>' % ''.join('<a href="%s">x</a>' % href
                                                    for href in hrefs)


class FlakyServer(DemoServer):
    """A demo server that drops the connection, answering nothing, for some requests.

    `failures` maps a path to how many of its requests are dropped (None: all of them).
    Every response closes its connection, so the client never meets a dropped connection
    it could take for a stale pooled one (and retry by itself).
    """

    def __init__(self, site, failures):
        super(FlakyServer, self).__init__(site, keep_alive=False)
        self.failures = dict(failures)

    def _answer(self, request):
        remaining = self.failures.get(request.uri, 0)
        if remaining is None or remaining > 0:
            if remaining is not None:
                self.failures[request.uri] = remaining - 1
            self.note_request(request.uri)
            request.connection.close()
        else:
            super(FlakyServer, self)._answer(request)


@pytest.fixture
def serve(io_loop):
    """``serve(site)`` -> (server, 'http://127.0.0.1:port'); servers close after the test.

    ``serve(site, server_class=FlakyServer, failures={...})`` starts another kind.
    """
    servers = []

    def start(site, server_class=DemoServer, **kwargs):
        server = server_class(site, **kwargs)
        port = server.listen_on()
        servers.append(server)
        return server, 'http://127.0.0.1:%d' % port

    yield start
    for server in servers:
        io_loop.run_sync(server.close, timeout=5)


def robots_txt(text):
    return {'content_type': 'text/plain', 'body': text}


def request_log(server):
    """A list the server appends (path, loop time) to as each request arrives."""
    log = []
    io_loop = IOLoop.current()
    server.on_request = lambda path: log.append((path, io_loop.time()))
    return log


def by_url(statistics):
    """{url: FetchStatistic} of a finished crawl."""
    return dict((statistic.url, statistic) for statistic in statistics.done)
