from __future__ import absolute_import, division, print_function

import errno
import socket
import ssl
import threading

import pytest

from net_helpers import run, tls_files
from tinytornado import gen
from tinytornado._compat import futures
from tinytornado.netutil import (
    ACCEPT_RETRY_DELAY, OverrideResolver, Resolver, add_accept_handler, bind_sockets, errno_from_exception,
    is_valid_ip, ssl_options_to_context, ssl_wrap_socket,
)


class RecordingExecutor(futures.Executor):
    """Runs each job on a thread of its own, after `release` is set; records the calls."""

    def __init__(self):
        self.calls = []
        self.release = threading.Event()

    def submit(self, fn, *args):
        self.calls.append(args)
        future = futures.Future()

        def work():
            self.release.wait()
            try:
                future.set_result(fn(*args))
            except Exception as e:
                future.set_exception(e)

        threading.Thread(target=work).start()
        return future


def test_numeric_addresses_resolve_at_once_without_a_thread(io_loop):
    executor = RecordingExecutor()
    resolver = Resolver(executor=executor)
    future = resolver.resolve('127.0.0.1', 80)
    assert future.result() == [(socket.AF_INET, ('127.0.0.1', 80))]
    v6 = resolver.resolve('::1', 443, socket.AF_INET6).result()
    assert [(family, address[:2]) for family, address in v6] == [
        (socket.AF_INET6, ('::1', 443))]
    assert executor.calls == []


def test_names_resolve_on_the_executor_while_the_loop_runs(io_loop):
    executor = RecordingExecutor()
    resolver = Resolver(executor=executor)
    trace = []

    @gen.coroutine
    def main():
        resolving = resolver.resolve('localhost', 8080, socket.AF_INET)
        trace.append(('resolving', resolving.done()))
        yield gen.moment
        trace.append('the loop went on')
        executor.release.set()
        addresses = yield resolving
        raise gen.Return(addresses)

    addresses = run(io_loop, main)
    assert trace == [('resolving', False), 'the loop went on']
    assert executor.calls == [('localhost', 8080, socket.AF_INET)]
    assert (socket.AF_INET, ('127.0.0.1', 8080)) in addresses


def test_the_default_resolver_uses_a_thread_pool(io_loop):
    addresses = run(io_loop, lambda: Resolver().resolve('localhost', 1, socket.AF_INET))
    assert (socket.AF_INET, ('127.0.0.1', 1)) in addresses


def test_an_unknown_name_fails_with_gaierror(io_loop):
    with pytest.raises(socket.gaierror):
        run(io_loop, lambda: Resolver().resolve('no-such-host.invalid', 80))


class FakeResolver(Resolver):
    def __init__(self):
        super(FakeResolver, self).__init__()
        self.calls = []
        self.closed = False

    def resolve(self, host, port, family=socket.AF_UNSPEC):
        self.calls.append((host, port, family))
        return gen.maybe_future([(socket.AF_INET, (host, port))])

    def close(self):
        self.closed = True


def test_override_resolver_prefers_the_most_specific_mapping(io_loop):
    fake = FakeResolver()
    resolver = OverrideResolver(fake, {
        'example.com': '127.0.0.1',
        ('example.com', 443): ('127.0.0.2', 8443),
        ('example.com', 443, socket.AF_INET6): ('::1', 9443),
        ('other.org', 80): ('127.0.0.3', 8080),
    })
    resolver.resolve('example.com', 80)
    resolver.resolve('example.com', 443)
    resolver.resolve('example.com', 443, socket.AF_INET6)
    resolver.resolve('other.org', 80)
    resolver.resolve('other.org', 81)
    assert fake.calls == [
        ('127.0.0.1', 80, socket.AF_UNSPEC),
        ('127.0.0.2', 8443, socket.AF_UNSPEC),
        ('::1', 9443, socket.AF_INET6),
        ('127.0.0.3', 8080, socket.AF_UNSPEC),
        ('other.org', 81, socket.AF_UNSPEC),
    ]
    resolver.close()
    assert fake.closed


@pytest.mark.parametrize('text, valid', [
    ('127.0.0.1', True), ('::1', True), ('fe80::1', True), ('2001:db8::', True),
    ('localhost', False), ('example.com', False), ('', False), ('1.2.3.4\x00', False),
    ('300.1.1.1', False), ('::1::2', False),
])
def test_is_valid_ip(text, valid):
    assert is_valid_ip(text) is valid


def test_bind_sockets_on_every_interface_shares_one_port():
    sockets = bind_sockets(0, None)
    try:
        ports = set(sock.getsockname()[1] for sock in sockets)
        families = set(sock.family for sock in sockets)
        assert len(ports) == 1 and ports != set([0])
        assert socket.AF_INET in families
        assert all(sock.gettimeout() == 0.0 for sock in sockets)  # non-blocking
    finally:
        for sock in sockets:
            sock.close()


def test_bind_sockets_on_one_address_and_family():
    sockets = bind_sockets(0, '127.0.0.1', family=socket.AF_INET, backlog=5)
    try:
        assert [(s.family, s.getsockname()[0]) for s in sockets] == [
            (socket.AF_INET, '127.0.0.1')]
    finally:
        for sock in sockets:
            sock.close()


def test_bind_sockets_to_a_port_in_use_fails():
    first = bind_sockets(0, '127.0.0.1')
    try:
        with pytest.raises(socket.error) as info:
            bind_sockets(first[0].getsockname()[1], '127.0.0.1')
        assert errno_from_exception(info.value) == errno.EADDRINUSE
    finally:
        first[0].close()


@pytest.mark.skipif(not hasattr(socket, 'SO_REUSEPORT'), reason='no SO_REUSEPORT here')
def test_bind_sockets_with_reuse_port_can_share_a_port():
    first = bind_sockets(0, '127.0.0.1', reuse_port=True)
    second = bind_sockets(first[0].getsockname()[1], '127.0.0.1', reuse_port=True)
    assert second[0].getsockname() == first[0].getsockname()
    for sock in first + second:
        sock.close()


def test_add_accept_handler_accepts_until_removed(io_loop):
    listener = bind_sockets(0, '127.0.0.1')[0]
    accepted = []
    clients = []

    def on_connection(connection, address):
        accepted.append(address)
        connection.close()
        if len(accepted) == 3:
            stop_accepting()
            io_loop.stop()

    stop_accepting = add_accept_handler(listener, on_connection)
    for _ in range(5):
        clients.append(socket.create_connection(listener.getsockname()))
    timer = io_loop.call_later(10, io_loop.stop)
    io_loop.start()
    io_loop.remove_timeout(timer)
    assert len(accepted) == 3
    assert [address[1] for address in accepted] == [
        client.getsockname()[1] for client in clients[:3]]
    assert io_loop.pending_work()[1] == []  # the listener is no longer watched
    for client in clients:
        client.close()
    listener.close()


class OutOfFilesListener(object):
    """A listening socket whose first `failures` accept() calls fail with EMFILE.

    Far more calls than that stop `io_loop`: accepting that fails on every pass would
    otherwise spin for ever, and the test would hang rather than fail.
    """

    def __init__(self, io_loop, failures):
        self.sock = bind_sockets(0, '127.0.0.1')[0]
        self.io_loop = io_loop
        self.failures = failures
        self.accept_calls = 0

    def fileno(self):
        return self.sock.fileno()

    def getsockname(self):
        return self.sock.getsockname()

    def accept(self):
        self.accept_calls += 1
        if self.accept_calls > self.failures + 10:
            self.io_loop.stop()
        if self.accept_calls <= self.failures:
            raise socket.error(errno.EMFILE, 'Too many open files')
        return self.sock.accept()


def test_accept_out_of_files_pauses_then_takes_the_waiting_connection(
        io_loop, virtual_clock, app_log_records):
    listener = OutOfFilesListener(io_loop, failures=2)
    accepted = []

    def on_connection(connection, address):
        accepted.append(io_loop.time())
        connection.close()
        stop_accepting()
        io_loop.stop()

    stop_accepting = add_accept_handler(listener, on_connection)
    client = socket.create_connection(listener.getsockname())
    io_loop.start()
    # One failure per pause, not one per pass: the connection waited in the queue.
    assert listener.accept_calls == 3
    assert accepted == [2 * ACCEPT_RETRY_DELAY]
    assert len(app_log_records) == 2
    assert 'not accepting' in app_log_records[0].getMessage()
    client.close()
    listener.sock.close()


def test_accepting_stopped_while_paused_leaves_no_timer(io_loop, virtual_clock,
                                                        app_log_records):
    listener = OutOfFilesListener(io_loop, failures=1)
    stop_accepting = add_accept_handler(listener, lambda connection, address: None)
    client = socket.create_connection(listener.getsockname())
    io_loop.add_callback(io_loop.stop)
    io_loop.start()  # One pass: the accept fails and accepting pauses.
    assert listener.accept_calls == 1 and io_loop.pending_work()[0]
    stop_accepting()
    assert io_loop.pending_work() == ([], [])
    client.close()
    listener.sock.close()


def test_ssl_options_to_context_from_a_dict(io_loop):
    files = tls_files()
    client = ssl_options_to_context({'ca_certs': files.ca_cert})
    assert client.verify_mode == ssl.CERT_REQUIRED and client.check_hostname
    unverified = ssl_options_to_context({'cert_reqs': ssl.CERT_NONE})
    assert unverified.verify_mode == ssl.CERT_NONE and not unverified.check_hostname
    server = ssl_options_to_context({'certfile': files.server_cert,
                                     'keyfile': files.server_key}, server_side=True)
    assert server.verify_mode == ssl.CERT_NONE
    assert ssl_options_to_context(server) is server


@pytest.mark.parametrize('options, server_side', [
    ({'no_such_option': 1}, False),
    ({}, True),  # a server without a certificate
])
def test_ssl_options_to_context_rejects_bad_options(options, server_side):
    with pytest.raises(ValueError):
        ssl_options_to_context(options, server_side=server_side)


def test_ssl_wrap_socket_sets_the_client_server_hostname(io_loop):
    left, right = socket.socketpair()
    wrapped = ssl_wrap_socket(left, None, server_hostname='example.com',
                              do_handshake_on_connect=False)
    try:
        assert isinstance(wrapped, ssl.SSLSocket) and wrapped.server_hostname == 'example.com'
    finally:
        wrapped.close()
        right.close()
