"""A client for echo_server.py: sends each argument as a line and prints what comes back.

    python examples/echo_client.py --port 8888 hello world
"""
from __future__ import absolute_import, division, print_function

import argparse

import six

from tinytornado import gen
from tinytornado.ioloop import IOLoop
from tinytornado.tcpclient import TCPClient

__all__ = ['echo', 'main']


@gen.coroutine
def echo(host, port, lines, timeout=10):
    """Send each of `lines` (text) to the echo server; a Future of the replies, decoded."""
    stream = yield TCPClient().connect(host, port, timeout=timeout)
    replies = []
    try:
        for line in lines:
            yield stream.write(six.ensure_binary(line, 'utf-8') + b'\n')
            reply = yield stream.read_until(b'\n')
            replies.append(reply[:-1].decode('utf-8'))
    finally:
        stream.close()
    raise gen.Return(replies)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--host', default='127.0.0.1')
    parser.add_argument('--port', type=int, default=8888)
    parser.add_argument('lines', nargs='*', default=['hello, echo'])
    args = parser.parse_args(argv)
    for reply in IOLoop.current().run_sync(lambda: echo(args.host, args.port, args.lines)):
        print(reply)


if __name__ == '__main__':
    main()
