"""The demo site's server: a `website.Site` served by HTTPServer on the current IOLoop.

It serves the crawler's ``--demo`` mode, its tests and examples: every method as GET (HEAD
without the body), keep-alive as HTTPServer keeps it, each response after its resource's
``delay_seconds``. It counts what a test wants to see from the server's side: every
request path in order of arrival, and the most requests it was answering at once.
"""
from __future__ import absolute_import, division, print_function

from tinytornado.httpserver import HTTPServer
from tinytornado.httputil import HTTPHeaders, ResponseStartLine
from tinytornado.ioloop import IOLoop
from tinytornado.netutil import bind_sockets

from .website import Site

__all__ = ['DemoServer', 'respond', 'start_demo_server', 'urls_or_demo']

# HTTPServer frames the response itself: a resource's own framing headers are left out.
_FRAMING_HEADERS = frozenset(['content-length', 'connection', 'transfer-encoding'])


class DemoServer(HTTPServer):
    """Serves `site` (anything with ``resource(path)`` returning a website.Resource).

    With `keep_alive` False every response closes its connection; with `ssl_options`
    (a TCPServer's) it serves over TLS.

    Attributes:
        requests: the path (with query) of every request, in order of arrival.
        active: requests being answered now; peak_active: the most at any time.
        on_request: if set, called with each path as its request arrives.
    """

    def __init__(self, site, keep_alive=True, ssl_options=None):
        super(DemoServer, self).__init__(self._answer, no_keep_alive=not keep_alive,
                                         ssl_options=ssl_options)
        self.site = site
        self.requests = []
        self.active = 0
        self.peak_active = 0
        self.on_request = None

    def listen_on(self, port=0, address='127.0.0.1'):
        """Accept connections on `address`:`port` (0: a free one); returns the port."""
        sockets = bind_sockets(port, address=address)
        self.add_sockets(sockets)
        return sockets[0].getsockname()[1]

    def close(self):
        """Stop accepting, close every connection; a Future resolved once all are done.

        (`stop` alone only stops accepting: connections kept alive stay open.)
        """
        self.stop()
        return self.close_all_connections()

    def note_request(self, path):
        """Count a request for `path` (`requests`, `on_request`)."""
        self.requests.append(path)
        if self.on_request is not None:
            self.on_request(path)

    def _answer(self, request):
        """The request callback: answer `request` (an HTTPServerRequest) with its
        resource, after the resource's delay. Subclasses answer some requests otherwise."""
        self.note_request(request.uri)
        resource = self.site.resource(request.uri)
        self.active += 1
        self.peak_active = max(self.peak_active, self.active)
        if not resource.delay_seconds:
            self._send(request, resource)
            return
        io_loop = IOLoop.current()
        timer = io_loop.call_later(resource.delay_seconds, self._send, request, resource)

        def abandon():  # the client left, or close() closed the connection: no answer
            io_loop.remove_timeout(timer)
            self.active -= 1
        request.connection.set_close_callback(abandon)

    def _send(self, request, resource):
        request.connection.set_close_callback(None)
        self.active -= 1
        respond(request, resource)


def respond(request, resource):
    """Answer `request` (an HTTPServerRequest) with `resource` (a website.Resource) and
    finish it; a HEAD is sent the resource's Content-Length without its body."""
    headers = HTTPHeaders()
    items = resource.headers.items() if hasattr(resource.headers, 'items') else resource.headers
    for name, value in items:
        if name.lower() not in _FRAMING_HEADERS:
            headers.add(name, value)
    headers['Content-Length'] = str(len(resource.body))
    body = b'' if request.method == 'HEAD' else resource.body
    request.connection.write_headers(ResponseStartLine('HTTP/1.1', resource.status, None),
                                     headers, body)
    request.connection.finish()


def start_demo_server(site, port=0, address='127.0.0.1'):
    """Serve `site` on `address`:`port` (0: a free port); returns (server, port)."""
    server = DemoServer(site)
    return server, server.listen_on(port, address)


def urls_or_demo(urls, pages=100):
    """``(urls, None)`` if `urls` has any; else serve a demo site of `pages` pages and
    return ``([its root URL], server)``. For scripts that work with no network."""
    if urls:
        return list(urls), None
    server, port = start_demo_server(Site(pages=pages))
    return ['http://127.0.0.1:%d/' % port], server
