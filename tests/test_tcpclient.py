from __future__ import absolute_import, division, print_function

import datetime
import errno
import socket
import ssl

import pytest

from net_helpers import TEST_HOSTNAME, open_fds, run, tls_files
from tinytornado import gen
from tinytornado.concurrent import Future, TimeoutError
from tinytornado.ioloop import deadline_for
from tinytornado.iostream import SSLIOStream, StreamClosedError
from tinytornado.netutil import OverrideResolver, Resolver, bind_sockets
from tinytornado.tcpclient import TCPClient, _Connector, _interleave_families
from tinytornado.tcpserver import TCPServer


class FixedResolver(Resolver):
    """Answers every name with `addresses`, or never if it is None."""

    def __init__(self, addresses):
        super(FixedResolver, self).__init__()
        self.addresses = addresses

    def resolve(self, host, port, family=socket.AF_UNSPEC):
        if self.addresses is None:
            return Future()
        return gen.maybe_future(list(self.addresses))


class Listener(object):
    """A loopback socket that accepts nothing: connections wait in its queue."""

    def __init__(self, address='127.0.0.1'):
        family = socket.AF_INET6 if ':' in address else socket.AF_INET
        self.socket = bind_sockets(0, address, family=family)[0]

    @property
    def address(self):
        return self.socket.getsockname()[:2]

    def accept(self):
        self.socket.setblocking(True)
        connection, address = self.socket.accept()
        self.socket.setblocking(False)
        return connection, address

    def close(self):
        self.socket.close()


@pytest.fixture
def listener():
    listening = Listener()
    yield listening
    listening.close()


def refusing_address():
    """A bound socket that does not listen refuses connections, and keeps its port."""
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    return sock


def hanging_address():
    """A listener whose queue (backlog 0) is already full: connecting to it hangs."""
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    sock.listen(0)
    filler = socket.create_connection(sock.getsockname())
    return sock, filler


def test_connect_by_ip(io_loop, listener):
    stream = run(io_loop, lambda: TCPClient().connect(*listener.address))
    connection, address = listener.accept()
    assert address == stream.socket.getsockname()
    stream.close()
    connection.close()


def test_connect_by_name_through_the_resolver(io_loop, listener):
    resolver = OverrideResolver(Resolver(), {'service.test': '127.0.0.1'})
    stream = run(io_loop, lambda: TCPClient(resolver).connect(
        'service.test', listener.address[1]))
    assert stream.socket.getpeername() == listener.address
    stream.close()


def test_connect_over_ipv6(io_loop):
    try:
        listening = Listener('::1')
    except socket.error:
        pytest.skip('no IPv6 loopback here')
    stream = run(io_loop, lambda: TCPClient().connect('::1', listening.address[1]))
    assert stream.socket.family == socket.AF_INET6
    stream.close()
    listening.close()


def test_a_refused_address_falls_back_to_the_next(io_loop, listener):
    refusing = refusing_address()
    resolver = FixedResolver([(socket.AF_INET, refusing.getsockname()),
                              (socket.AF_INET, listener.address)])
    stream = run(io_loop, lambda: TCPClient(resolver).connect('service.test', 80))
    assert stream.socket.getpeername() == listener.address
    stream.close()
    refusing.close()


def test_every_address_refused_raises_the_last_error(io_loop):
    refusing = [refusing_address(), refusing_address()]
    resolver = FixedResolver([(socket.AF_INET, sock.getsockname()) for sock in refusing])
    before = open_fds()
    with pytest.raises(StreamClosedError) as info:
        run(io_loop, lambda: TCPClient(resolver).connect('service.test', 80))
    assert getattr(info.value.real_error, 'errno', None) == errno.ECONNREFUSED
    assert open_fds() == before
    for sock in refusing:
        sock.close()


def test_a_hanging_address_gets_the_next_started_beside_it(io_loop, virtual_clock, listener):
    hanging, filler = hanging_address()
    resolver = FixedResolver([(socket.AF_INET, hanging.getsockname()),
                              (socket.AF_INET, listener.address)])
    start = io_loop.time()
    before = open_fds()

    @gen.coroutine
    def main():
        stream = yield TCPClient(resolver).connect('service.test', 80)
        raise gen.Return(stream)

    stream = io_loop.run_sync(main)
    assert stream.socket.getpeername() == listener.address
    assert io_loop.time() - start == pytest.approx(0.3)  # one attempt delay, then the next
    stream.close()
    assert open_fds() == before  # the hanging attempt was closed
    for sock in (hanging, filler):
        sock.close()


def test_timeout_while_resolving(io_loop, virtual_clock):
    client = TCPClient(FixedResolver(None))
    start = io_loop.time()
    with pytest.raises(TimeoutError):
        io_loop.run_sync(lambda: client.connect('service.test', 80, timeout=5))
    assert io_loop.time() - start == pytest.approx(5)


def test_timeout_while_connecting_closes_the_attempts(io_loop, virtual_clock):
    hanging, filler = hanging_address()
    client = TCPClient(FixedResolver([(socket.AF_INET, hanging.getsockname())]))
    start = io_loop.time()
    before = open_fds()
    with pytest.raises(TimeoutError):
        io_loop.run_sync(lambda: client.connect('service.test', 80,
                                              timeout=datetime.timedelta(seconds=2)))
    assert io_loop.time() - start == pytest.approx(2)
    assert open_fds() == before
    assert io_loop.pending_work() == ([], [])
    for sock in (hanging, filler):
        sock.close()


def test_timeout_must_be_seconds_or_a_timedelta(io_loop, listener):
    with pytest.raises(TypeError):
        run(io_loop, lambda: TCPClient().connect(*listener.address, timeout='soon'))


@pytest.mark.parametrize('timeout', [5, 5.0, datetime.timedelta(seconds=5)])
def test_a_number_is_seconds_from_now_as_in_tornado(io_loop, virtual_clock, timeout):
    # Far from the clock's start, where a number read as a deadline would be long past.
    virtual_clock.advance(1000)
    client = TCPClient(FixedResolver(None))
    start = io_loop.time()
    with pytest.raises(TimeoutError):
        io_loop.run_sync(lambda: client.connect('service.test', 80, timeout=timeout))
    assert io_loop.time() - start == pytest.approx(5)


def test_a_bad_timeout_is_refused_as_every_wait_refuses_it(io_loop, listener):
    # One reading of a timeout (ioloop.deadline_for), so one error for a bad one.
    with pytest.raises(TypeError) as connecting:
        run(io_loop, lambda: TCPClient().connect(*listener.address, timeout='soon'))
    with pytest.raises(TypeError) as deadline:
        deadline_for('soon')
    assert str(connecting.value) == str(deadline.value)
    assert 'timedelta' in str(connecting.value)


def test_source_ip(io_loop, listener):
    # All of 127/8 is loopback on Linux; elsewhere only 127.0.0.1 may be.
    try:
        probe = socket.socket()
        probe.bind(('127.0.0.2', 0))
        probe.close()
    except socket.error:
        pytest.skip('127.0.0.2 is not a local address here')
    stream = run(io_loop, lambda: TCPClient().connect(*listener.address,
                                                      source_ip='127.0.0.2'))
    connection, address = listener.accept()
    assert address == stream.socket.getsockname() and address[0] == '127.0.0.2'
    stream.close()
    connection.close()


def test_source_port_is_bound(io_loop, listener):
    # Asking for the listener's own address as the source must fail to bind: proof
    # the port is used, with no port freed and taken again.
    with pytest.raises(socket.error) as info:
        run(io_loop, lambda: TCPClient().connect(*listener.address, source_ip='127.0.0.1',
                                                 source_port=listener.address[1]))
    assert info.value.errno == errno.EADDRINUSE


class TLSEchoServer(TCPServer):
    @gen.coroutine
    def handle_stream(self, stream, address):
        line = yield stream.read_until(b'\n')
        yield stream.write(line)
        stream.close()


@pytest.fixture
def tls_server(io_loop):
    files = tls_files()
    server = TLSEchoServer(ssl_options={'certfile': files.server_cert,
                                        'keyfile': files.server_key})
    sock = bind_sockets(0, '127.0.0.1')[0]
    server.add_socket(sock)
    yield server, sock.getsockname()[1]
    server.stop()


def test_connect_with_tls_checks_the_certificate_against_the_host(io_loop, tls_server):
    files = tls_files()
    _, port = tls_server
    resolver = OverrideResolver(Resolver(), {TEST_HOSTNAME: '127.0.0.1'})

    @gen.coroutine
    def main():
        stream = yield TCPClient(resolver).connect(
            TEST_HOSTNAME, port, ssl_options={'ca_certs': files.ca_cert}, timeout=10)
        assert isinstance(stream, SSLIOStream)
        yield stream.write(b'over tls\n')
        echoed = yield stream.read_until(b'\n')
        stream.close()
        raise gen.Return(echoed)

    assert run(io_loop, main) == b'over tls\n'


def test_connect_with_tls_to_an_untrusted_server_raises_ssl_error(io_loop, tls_server):
    _, port = tls_server
    with pytest.raises(ssl.SSLError) as info:
        run(io_loop, lambda: TCPClient().connect('localhost', port, af=socket.AF_INET,
                                                 ssl_options={}))
    assert 'certificate verify failed' in str(info.value)


def test_interleave_families_alternates_starting_with_the_first():
    v4 = [(socket.AF_INET, ('10.0.0.%d' % i, 80)) for i in range(3)]
    v6 = [(socket.AF_INET6, ('fd00::%d' % i, 80, 0, 0)) for i in range(2)]
    assert _interleave_families(v6 + v4) == [v6[0], v4[0], v6[1], v4[1], v4[2]]
    assert _interleave_families([]) == []


def test_split_puts_the_first_entrys_family_first():
    entries = [(10, 'a'), (2, 'b'), (10, 'c'), (2, 'd'), (30, 'e')]
    assert _Connector.split(entries) == ([(10, 'a'), (10, 'c')], [(2, 'b'), (2, 'd'), (30, 'e')])
    assert _Connector.split([(2, 'a'), (2, 'b')]) == ([(2, 'a'), (2, 'b')], [])
    assert _Connector.split([]) == ([], [])


# -- the connector itself, driven by attempts the test resolves ------------------------

class FakeStream(object):
    def __init__(self, address):
        self.address = address
        self.closed = False

    def close(self):
        self.closed = True


class Attempts(object):
    """The connect function for a _Connector: records each attempt, left pending until
    the test resolves it."""

    def __init__(self):
        self.started = []  # addresses, in the order attempted
        self.streams = {}
        self.futures = {}

    def __call__(self, af, address):
        self.started.append(address)
        stream = self.streams[address] = FakeStream(address)
        future = self.futures[address] = Future()
        return stream, future

    def succeed(self, address):
        self.futures[address].set_result(self.streams[address])

    def fail(self, address):
        self.futures[address].set_exception(IOError('refused: %s' % address))

    def closed(self):
        return sorted(address for address, stream in self.streams.items() if stream.closed)


V6, V4 = socket.AF_INET6, socket.AF_INET
DUAL = [(V6, 'a'), (V6, 'b'), (V4, 'c'), (V4, 'd')]


def pass_time(io_loop, seconds):
    io_loop.run_sync(lambda: gen.sleep(seconds))


def test_attempts_alternate_families_each_delay_and_a_failure_starts_the_next_at_once(
        io_loop, virtual_clock):
    attempts = Attempts()
    future = _Connector(DUAL, attempts).start(timeout=1.5)
    assert attempts.started == ['a']
    pass_time(io_loop, 1.5)
    assert attempts.started == ['a', 'c']
    attempts.fail('c')
    assert attempts.started == ['a', 'c', 'b']
    pass_time(io_loop, 1.0)
    assert attempts.started == ['a', 'c', 'b']  # b's delay started afresh
    attempts.succeed('b')
    assert future.result() == (V6, 'b', attempts.streams['b'])
    assert attempts.closed() == ['a', 'c']  # the winner alone stays open
    assert io_loop.pending_work() == ([], [])


def test_every_attempt_failing_fails_with_the_last_error():
    attempts = Attempts()
    future = _Connector([(V4, 'a'), (V4, 'b')], attempts).start()
    attempts.fail('a')
    assert attempts.started == ['a', 'b']
    attempts.fail('b')
    with pytest.raises(IOError) as info:
        future.result()
    assert str(info.value) == 'refused: b'


def test_a_late_winner_is_closed():
    attempts = Attempts()
    connector = _Connector(DUAL, attempts)
    future = connector.start()
    connector.on_timeout()  # as the attempt delay would
    attempts.succeed('c')
    attempts.succeed('a')
    assert future.result() == (V4, 'c', attempts.streams['c'])
    assert attempts.closed() == ['a']
    connector.on_timeout()
    assert attempts.started == ['a', 'c']  # done: no more attempts


def test_connect_timeout_fails_with_timeout_error_and_closes_every_attempt(
        io_loop, virtual_clock):
    attempts = Attempts()
    connector = _Connector(DUAL, attempts)
    future = connector.start(timeout=10, connect_timeout=io_loop.time() + 25)
    attempts.fail('a')
    pass_time(io_loop, 30)
    with pytest.raises(TimeoutError):
        future.result()
    assert attempts.started == ['a', 'c', 'b', 'd']  # at 0 (a failed at once), 10, 20
    assert attempts.closed() == ['a', 'b', 'c', 'd']
    assert connector.streams == set(attempts.streams.values())
    assert io_loop.pending_work() == ([], [])


def test_connect_timeout_after_success_only_clears_up(io_loop):
    attempts = Attempts()
    connector = _Connector(DUAL, attempts)
    future = connector.start(connect_timeout=datetime.timedelta(seconds=60))
    attempts.succeed('a')
    connector.on_connect_timeout()
    assert future.result() == (V6, 'a', attempts.streams['a'])
    assert attempts.closed() == []
    assert io_loop.pending_work() == ([], [])


def test_cancelling_closes_the_attempts(io_loop):
    attempts = Attempts()
    connector = _Connector(DUAL, attempts)
    future = connector.start()
    connector.on_timeout()
    assert future.cancel()
    assert attempts.closed() == ['a', 'c']
    assert io_loop.pending_work() == ([], [])
