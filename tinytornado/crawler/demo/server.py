"""A minimal HTTP/1.1 server for a `website.Site`, on the current IOLoop.

It serves the crawler's ``--demo`` mode, its tests and examples: GET and HEAD, keep-alive
(HTTP/1.1 unless ``Connection: close``; HTTP/1.0 only if asked), each response after its
resource's ``delay_seconds``. It counts what a test wants to see from the server's side:
every request path in order of arrival, and the most requests it was answering at once.
"""
from __future__ import absolute_import, division, print_function

import re

import six
from six.moves import http_client

from tinytornado import gen
from tinytornado.iostream import StreamClosedError
from tinytornado.locks import Event
from tinytornado.netutil import bind_sockets
from tinytornado.tcpserver import TCPServer

from .website import Site

__all__ = ['DemoServer', 'start_demo_server', 'urls_or_demo']

_MAX_REQUEST_HEAD = 65536
_REQUEST_LINE_RE = re.compile(br'\A([A-Z]+) (\S+) HTTP/1\.([01])\Z')
_FRAMING_HEADERS = frozenset(['content-length', 'connection', 'transfer-encoding'])


class DemoServer(TCPServer):
    """Serves `site` (anything with ``resource(path)`` returning a website.Resource).

    With `keep_alive` False every response closes its connection; with `ssl_options`
    (a TCPServer's) it serves over TLS.

    Attributes:
        requests: the path (with query) of every request, in order of arrival.
        active: requests being answered now; peak_active: the most at any time.
        on_request: if set, called with each path as its request arrives.
    """

    def __init__(self, site, keep_alive=True, ssl_options=None):
        super(DemoServer, self).__init__(ssl_options=ssl_options)
        self.site = site
        self.keep_alive = keep_alive
        self.requests = []
        self.active = 0
        self.peak_active = 0
        self.on_request = None
        self._streams = set()
        self._all_closed = Event()
        self._all_closed.set()

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
        for stream in list(self._streams):
            stream.close()
        return self._all_closed.wait()

    def note_request(self, path):
        """Count a request for `path` (`requests`, `on_request`)."""
        self.requests.append(path)
        if self.on_request is not None:
            self.on_request(path)

    @gen.coroutine
    def handle_stream(self, stream, address):
        self._streams.add(stream)
        self._all_closed.clear()
        # Without it, Nagle's algorithm holds a response's last segment until the client's
        # delayed ACK of the one before: 40 ms per page.
        stream.set_nodelay(True)
        try:
            keep_alive = True
            while keep_alive:
                head = yield stream.read_until(b'\r\n\r\n', max_bytes=_MAX_REQUEST_HEAD)
                keep_alive = yield self._answer(stream, head)
        except StreamClosedError:
            pass  # the client went away, or close() closed it
        finally:
            self._streams.discard(stream)
            stream.close()
            if not self._streams:
                self._all_closed.set()

    @gen.coroutine
    def _answer(self, stream, head):
        """Answer the request whose head is `head`; True if the connection stays open."""
        request = _parse_request(head)
        if request is None:
            yield stream.write(b'HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n'
                               b'Connection: close\r\n\r\n')
            raise gen.Return(False)
        method, path, keep_alive = request
        keep_alive = keep_alive and self.keep_alive
        self.note_request(path)
        self.active += 1
        self.peak_active = max(self.peak_active, self.active)
        try:
            resource = self.site.resource(path)
            if resource.delay_seconds:
                yield gen.sleep(resource.delay_seconds)
            yield stream.write(_response_bytes(resource, method == b'HEAD', keep_alive))
        finally:
            self.active -= 1
        raise gen.Return(keep_alive)


def _parse_request(head):
    """(method, path, keep_alive) of a request head, or None if it is malformed."""
    lines = head.split(b'\r\n')
    match = _REQUEST_LINE_RE.match(lines[0])
    if match is None:
        return None
    method, target, minor = match.groups()
    connection = b''
    for line in lines[1:]:
        name, _, value = line.partition(b':')
        if name.strip().lower() == b'connection':
            connection = value.strip().lower()
    keep_alive = connection == b'keep-alive' if minor == b'0' else connection != b'close'
    return method, six.ensure_str(target, 'latin-1'), keep_alive


def _response_bytes(resource, is_head, keep_alive):
    headers = resource.headers
    items = headers.items() if hasattr(headers, 'items') else headers
    lines = ['HTTP/1.1 %d %s' % (resource.status, http_client.responses.get(
        resource.status, 'Unknown'))]
    lines.extend('%s: %s' % (name, value) for name, value in items
                 if name.lower() not in _FRAMING_HEADERS)
    lines.append('Content-Length: %d' % len(resource.body))
    if not keep_alive:
        lines.append('Connection: close')
    head = ('\r\n'.join(lines) + '\r\n\r\n').encode('latin-1')
    return head if is_head else head + resource.body


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
