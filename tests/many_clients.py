"""The client side of test_tcpserver's ten-thousand-connection test, in a process of its
own: both ends of ten thousand connections do not fit one process's file descriptor
limit where it cannot be raised past 20,000.

    python many_clients.py PORT COUNT BATCH

Opens COUNT connections to the echo server on 127.0.0.1:PORT, BATCH at a time, echoes a
line on each; then, with all of them open, a second line on every one at once. Holds
them open until its standard input closes, then closes them. Exits 0 if every echo came
back right.
"""
from __future__ import absolute_import, division, print_function

import sys

from tinytornado import gen
from tinytornado.ioloop import IOLoop
from tinytornado.tcpclient import TCPClient

__all__ = ['main']


@gen.coroutine
def echo(stream, line):
    yield stream.write(line)
    echoed = yield stream.read_until(b'\n')
    if echoed != line:
        raise AssertionError('sent %r, got back %r' % (line, echoed))


@gen.coroutine
def connect(client, port, index):
    stream = yield client.connect('127.0.0.1', port)
    yield echo(stream, b'%d\n' % index)
    raise gen.Return(stream)


@gen.coroutine
def talk(port, count, batch):
    client = TCPClient()
    streams = []
    # Batches keep the listen queue from overflowing (a dropped SYN costs a second).
    for start in range(0, count, batch):
        streams.extend((yield [connect(client, port, index)
                               for index in range(start, min(count, start + batch))]))
    yield [echo(stream, b'again %d\n' % index) for index, stream in enumerate(streams)]
    raise gen.Return(streams)


def main(argv):
    port, count, batch = [int(arg) for arg in argv[1:4]]
    streams = IOLoop.current().run_sync(lambda: talk(port, count, batch), timeout=300)
    sys.stdin.read()  # until the parent has counted the connections
    for stream in streams:
        stream.close()


if __name__ == '__main__':
    main(sys.argv)
