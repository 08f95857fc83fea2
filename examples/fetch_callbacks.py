"""Fetch one page with callbacks: the first stage of the 500 Lines crawler, on tinytornado.

A non-blocking socket, and the loop calling back a `Fetcher` method each time the socket is
ready: `connected` once it can be written, `read_response` each time it can be read. The
Fetcher object holds what the callbacks share (the socket, the bytes so far), and its error
handling is smeared across them: "stack ripping". Diff this file with fetch_coroutine.py
to see what coroutines change.

    python examples/fetch_callbacks.py [URL]     # no URL: serve the demo site and fetch it
"""
from __future__ import absolute_import, division, print_function

import errno
import socket
import sys

from six.moves.urllib.parse import urlsplit

from tinytornado.crawler.demo.server import urls_or_demo
from tinytornado.ioloop import IOLoop

__all__ = ['Fetcher', 'main']


class Fetcher(object):
    """Fetches `url` over HTTP/1.0, then calls `on_done(response bytes)`."""

    def __init__(self, url, on_done):
        parts = urlsplit(url)
        self.host, self.port = parts.hostname, parts.port or 80
        self.path = parts.path or '/'
        self.on_done = on_done
        self.response = b''
        self.sock = None
        self.io_loop = IOLoop.current()

    def fetch(self):
        self.sock = socket.socket()
        self.sock.setblocking(False)
        try:
            self.sock.connect((self.host, self.port))
        except socket.error as e:
            if e.errno not in (errno.EINPROGRESS, errno.EWOULDBLOCK):
                raise
        # Writable means connected (or failed): `connected` finds out which.
        self.io_loop.add_handler(self.sock, self.connected, IOLoop.WRITE)

    def connected(self, sock, events):
        self.io_loop.remove_handler(sock)
        error = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if error:
            raise socket.error(error, 'cannot connect to %s:%d' % (self.host, self.port))
        request = 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' % (self.path, self.host)
        sock.send(request.encode('ascii'))  # a few bytes: the socket buffer takes them
        self.io_loop.add_handler(sock, self.read_response, IOLoop.READ)

    def read_response(self, sock, events):
        chunk = sock.recv(4096)
        if chunk:
            self.response += chunk
            return  # more to come: the loop calls again when the socket is readable
        self.io_loop.remove_handler(sock)
        sock.close()
        self.on_done(self.response)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    io_loop = IOLoop.current()
    [url], server = urls_or_demo(argv[:1], pages=20)

    def done(response):
        print(response.split(b'\r\n', 1)[0].decode('latin-1'), '-', len(response), 'bytes')
        io_loop.stop()

    Fetcher(url, done).fetch()
    io_loop.start()
    if server is not None:
        server.stop()


if __name__ == '__main__':
    main()
