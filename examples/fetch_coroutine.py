"""Fetch one page with a coroutine: the second stage of the 500 Lines crawler, on tinytornado.

The same fetch as fetch_callbacks.py, written as one generator: each `yield` waits for the
stream (connected, written, read to the end) and the code reads top to bottom, its state in
local variables and its errors raised where they happen. `IOStream` does what the Fetcher's
callbacks did; `IOLoop.run_sync` runs the loop until the coroutine's Future resolves.

    python examples/fetch_coroutine.py [URL]     # no URL: serve the demo site and fetch it
"""
from __future__ import absolute_import, division, print_function

import socket
import sys

from six.moves.urllib.parse import urlsplit

from tinytornado import gen
from tinytornado.crawler.demo.server import urls_or_demo
from tinytornado.ioloop import IOLoop
from tinytornado.iostream import IOStream

__all__ = ['fetch', 'main']


@gen.coroutine
def fetch(url):
    """A Future of the response bytes of an HTTP/1.0 GET of `url`."""
    parts = urlsplit(url)
    host, port, path = parts.hostname, parts.port or 80, parts.path or '/'
    stream = IOStream(socket.socket())
    try:
        yield stream.connect((host, port))
        request = 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' % (path, host)
        yield stream.write(request.encode('ascii'))
        response = yield stream.read_until_close()
    finally:
        stream.close()
    raise gen.Return(response)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    [url], server = urls_or_demo(argv[:1], pages=20)
    response = IOLoop.current().run_sync(lambda: fetch(url))
    print(response.split(b'\r\n', 1)[0].decode('latin-1'), '-', len(response), 'bytes')
    if server is not None:
        server.stop()


if __name__ == '__main__':
    main()
