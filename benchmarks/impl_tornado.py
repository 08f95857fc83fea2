"""The workloads written against Tornado's API, run on tinytornado and on Tornado itself.

The same source drives both: only the package the modules come from differs, so a ratio
between the two columns measures the frameworks, not two ways of writing the benchmark.
"""
from __future__ import absolute_import, division, print_function

import socket

from six.moves import range

import loop_workloads
from common import MESSAGE_SIZE, echo_payload, import_optional, loopback_listener

__all__ = ['TornadoStyle']


class TornadoStyle(loop_workloads.LoopWorkloads):
    """W1-W6 on `package` ('tinytornado' or 'tornado'), one IOLoop for the process."""

    def __init__(self, package):
        self.package = package
        self.gen = import_optional(package + '.gen')
        self.io_loop = import_optional(package + '.ioloop').IOLoop.current()

    def module(self, name):
        return import_optional(self.package + '.' + name)

    def w1_return(self, calls):
        gen = self.gen

        @gen.coroutine
        def sub(value):
            raise gen.Return(value)

        return self.io_loop.run_sync(lambda: _call_many(gen, sub, calls))

    def w1_moment(self, calls):
        gen = self.gen

        @gen.coroutine
        def sub(value):
            yield gen.moment
            raise gen.Return(value)

        return self.io_loop.run_sync(lambda: _call_many(gen, sub, calls))

    def w2_switches(self, coroutines, switches):
        gen = self.gen

        @gen.coroutine
        def worker():
            done = 0
            for _ in range(switches):
                yield gen.moment
                done += 1
            raise gen.Return(done)

        @gen.coroutine
        def main():
            results = yield [worker() for _ in range(coroutines)]
            raise gen.Return(sum(results))

        return self.io_loop.run_sync(main)

    def loop_api(self):
        io_loop = self.io_loop

        def run(fn):
            io_loop.add_callback(fn)
            io_loop.start()

        return loop_workloads.LoopAPI(io_loop.call_later, io_loop.remove_timeout,
                                      io_loop.add_callback, io_loop.stop, run)

    def w5_echo(self, clients, messages):
        gen = self.gen
        server = _echo_server_class(gen, self.module('tcpserver'),
                                    self.module('iostream'))()
        listener = loopback_listener()
        server.add_socket(listener)
        port = listener.getsockname()[1]
        connector = self.module('tcpclient').TCPClient()

        @gen.coroutine
        def client(client_id):
            stream = yield connector.connect('127.0.0.1', port)
            payload = echo_payload(client_id)
            echoed = 0
            for _ in range(messages):
                yield stream.write(payload)
                data = yield stream.read_bytes(len(payload))
                if data != payload:
                    raise AssertionError('echo returned %r for %r' % (data, payload))
                echoed += 1
            stream.close()
            raise gen.Return(echoed)

        @gen.coroutine
        def main():
            echoed = yield [client(i) for i in range(clients)]
            raise gen.Return(sum(echoed))

        try:
            return self.io_loop.run_sync(main)
        finally:
            server.stop()

    def w6_crawl(self, root_url, workers):
        if self.package == 'tinytornado':
            crawl = import_optional('crawl_tinytornado').crawl
        else:
            crawl = import_optional('crawl_webspider').crawl
        return self.io_loop.run_sync(lambda: crawl(root_url, workers))


def _call_many(gen, sub, calls):
    @gen.coroutine
    def main():
        total = 0
        for i in range(calls):
            total += (yield sub(i))
        raise gen.Return(total)
    return main()


def _echo_server_class(gen, tcpserver, iostream):
    class EchoServer(tcpserver.TCPServer):
        @gen.coroutine
        def handle_stream(self, stream, address):
            try:
                while True:
                    data = yield stream.read_bytes(MESSAGE_SIZE)
                    yield stream.write(data)
            except iostream.StreamClosedError:
                pass  # the client is done
    return EchoServer

