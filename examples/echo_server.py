"""An echo server on tinytornado: every line a client sends comes back to it.

    python examples/echo_server.py --port 8888
    python examples/echo_client.py --port 8888 hello world

Each connection is served by one coroutine; ten thousand idle clients cost ten thousand
small buffers, not ten thousand threads.
"""
from __future__ import absolute_import, division, print_function

import argparse
import logging

from tinytornado import gen
from tinytornado.ioloop import IOLoop
from tinytornado.iostream import StreamClosedError
from tinytornado.log import app_log
from tinytornado.tcpserver import TCPServer

__all__ = ['EchoServer', 'main']

MAX_LINE_BYTES = 64 * 1024


class EchoServer(TCPServer):
    """Echoes each line back, until the client closes the connection."""

    @gen.coroutine
    def handle_stream(self, stream, address):
        app_log.info('%s connected', address)
        try:
            while True:
                line = yield stream.read_until(b'\n', max_bytes=MAX_LINE_BYTES)
                yield stream.write(line)
        except StreamClosedError:
            app_log.info('%s disconnected', address)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--address', default='127.0.0.1')
    parser.add_argument('--port', type=int, default=8888)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format='%(asctime)s %(message)s')
    server = EchoServer()
    server.listen(args.port, args.address)
    app_log.info('echoing on %s:%d', args.address, args.port)
    try:
        IOLoop.current().start()
    except KeyboardInterrupt:
        server.stop()


if __name__ == '__main__':
    main()
