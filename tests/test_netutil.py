from __future__ import absolute_import, division, print_function

import errno
import os
import socket
import ssl
import stat
import threading

import pytest

from net_helpers import open_fds, run, tls_files, unix_socket_path  # noqa: F401
from tinytornado import gen, netutil
from tinytornado._compat import futures
from tinytornado.concurrent import Future
from tinytornado.log import app_log
from tinytornado.netutil import (
    ACCEPT_RETRY_DELAY, BlockingResolver, DefaultExecutorResolver, ExecutorResolver,
    OverrideResolver, Resolver, ThreadedResolver, add_accept_handler, bind_sockets,
    bind_unix_socket, errno_from_exception, is_valid_ip, ssl_options_to_context,
    ssl_wrap_socket,
)
from tinytornado.tcpclient import TCPClient
from tinytornado.testing import ExpectLog


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


# -- Tornado 5.1's other resolvers and Resolver.configure ------------------------------

@pytest.fixture
def getaddrinfo_calls(monkeypatch):
    """Records the thread each getaddrinfo of a name runs on, and answers 127.0.0.1."""
    calls = []

    def fake_getaddrinfo(host, port, family, flags=0):
        if flags & socket.AI_NUMERICHOST:
            raise socket.gaierror(socket.EAI_NONAME, 'a name, not a number')
        calls.append((host, threading.current_thread().name))
        return [(socket.AF_INET, ('127.0.0.1', port))]

    monkeypatch.setattr(netutil, '_getaddrinfo', fake_getaddrinfo)
    return calls


def test_threaded_resolvers_share_a_pool_that_outlives_close(io_loop, getaddrinfo_calls):
    first, second = ThreadedResolver(), ThreadedResolver(num_threads=3)
    assert first.executor is second.executor
    first.close()
    addresses = run(io_loop, lambda: first.resolve('service.test', 80))
    assert addresses == [(socket.AF_INET, ('127.0.0.1', 80))]
    assert getaddrinfo_calls[0][0] == 'service.test'
    assert getaddrinfo_calls[0][1] != threading.current_thread().name


def test_the_first_threaded_resolver_sizes_the_pool(monkeypatch):
    # Made in another process (before a fork, say): a new pool, of the size asked for.
    monkeypatch.setattr(netutil, '_shared_pool', {'pid': -1, 'executor': None})
    resolver = ThreadedResolver(num_threads=3)
    assert resolver.executor._max_workers == 3
    assert ThreadedResolver(num_threads=5).executor is resolver.executor
    resolver.executor.shutdown()


def test_blocking_resolver_resolves_within_the_call_and_answers_in_a_later_pass(
        io_loop, getaddrinfo_calls):
    resolver = BlockingResolver()
    future = resolver.resolve('service.test', 443)
    assert getaddrinfo_calls == [('service.test', threading.current_thread().name)]
    assert not future.done()
    assert run(io_loop, lambda: future) == [(socket.AF_INET, ('127.0.0.1', 443))]
    resolver.close()


class ShutdownRecorder(RecordingExecutor):
    def __init__(self):
        super(ShutdownRecorder, self).__init__()
        self.shut_down = False

    def shutdown(self, wait=True):
        self.shut_down = True


@pytest.mark.parametrize('close_executor', [True, False])
def test_executor_resolver_shuts_its_executor_down_if_told(io_loop, close_executor):
    executor = ShutdownRecorder()
    executor.release.set()
    resolver = ExecutorResolver(executor, close_executor=close_executor)
    addresses = run(io_loop, lambda: resolver.resolve('localhost', 80, socket.AF_INET))
    assert executor.calls == [('localhost', 80, socket.AF_INET)]
    assert (socket.AF_INET, ('127.0.0.1', 80)) in addresses
    resolver.close()
    assert executor.shut_down is close_executor


def test_resolve_with_a_callback_calls_back_in_a_later_pass(io_loop):
    trace = []
    called = Future()

    def callback(addresses):
        trace.append(addresses)
        called.set_result(None)

    @gen.coroutine
    def main():
        returned = Resolver().resolve('127.0.0.1', 80, callback=callback)
        trace.append(('returned', returned.done()))
        yield called

    with pytest.warns(DeprecationWarning):
        run(io_loop, main)
    # Tornado 5.1 returns the Future too; a numeric address resolves at once.
    assert trace == [('returned', True), [(socket.AF_INET, ('127.0.0.1', 80))]]


def test_resolve_with_a_callback_logs_a_failure(io_loop, monkeypatch):
    def failing(host, port, family, flags=0):
        raise socket.gaierror(socket.EAI_NONAME, 'no such name')

    monkeypatch.setattr(netutil, '_getaddrinfo', failing)
    called = []

    @gen.coroutine
    def main():
        with ExpectLog(app_log, 'Exception in callback'):
            future = BlockingResolver().resolve('service.test', 80, callback=called.append)
            with pytest.raises(socket.gaierror):
                yield future
            yield gen.moment

    with pytest.warns(DeprecationWarning):
        run(io_loop, main)
    assert called == []


@pytest.fixture
def resolver_configuration():
    """Restores Resolver.configure's choice after the test."""
    saved = Resolver._save_configuration()
    yield
    Resolver._restore_configuration(saved)


class Labelled(Resolver):
    """A resolver set up the Tornado 5.1 way, in initialize."""

    def initialize(self, label='default'):
        super(Labelled, self).initialize()
        self.label = label


def test_configure_chooses_what_resolver_makes(io_loop, resolver_configuration):
    assert Resolver.configured_class() is Resolver is DefaultExecutorResolver
    Resolver.configure(Labelled, label='configured')
    assert Resolver.configured_class() is Labelled
    assert type(Resolver()) is Labelled and Resolver().label == 'configured'
    assert Resolver(label='given').label == 'given'
    assert Labelled().label == 'default'  # called by its own name, as any class
    assert type(TCPClient().resolver) is Labelled
    Resolver.configure(None)
    assert type(Resolver()) is Resolver


@pytest.mark.parametrize('name', ['tornado.netutil.ThreadedResolver',
                                  'tinytornado.netutil.ThreadedResolver'])
def test_configure_takes_a_dotted_name_in_tornados_package_or_ours(io_loop, name,
                                                                   resolver_configuration):
    Resolver.configure(name, num_threads=2)
    resolver = Resolver()
    assert type(resolver) is ThreadedResolver
    assert (socket.AF_INET, ('127.0.0.1', 80)) in run(
        io_loop, lambda: resolver.resolve('localhost', 80, socket.AF_INET))


@pytest.mark.parametrize('impl, error', [
    (int, ValueError), ('tinytornado.iostream.IOStream', ValueError), (Resolver(), TypeError),
    ('tinytornado.netutil.NoSuchResolver', ImportError)])
def test_configure_refuses_what_is_not_a_resolver_class(impl, error, resolver_configuration):
    with pytest.raises(error):
        Resolver.configure(impl)
    assert Resolver.configured_class() is Resolver


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


def test_bind_sockets_passes_flags_to_getaddrinfo():
    # Without AI_PASSIVE, getaddrinfo answers no address with the loopback address
    # instead of the wildcard one.
    sockets = bind_sockets(0, None, family=socket.AF_INET, flags=0)
    try:
        assert [s.getsockname()[0] for s in sockets] == ['127.0.0.1']
    finally:
        for sock in sockets:
            sock.close()


def test_bind_sockets_takes_flags_fifth_and_reuse_port_sixth_as_tornado_does():
    with pytest.raises(socket.gaierror):
        bind_sockets(0, 'localhost', socket.AF_INET, 5, socket.AI_NUMERICHOST)


@pytest.mark.skipif(not hasattr(socket, 'SO_REUSEPORT'), reason='no SO_REUSEPORT here')
def test_bind_sockets_with_reuse_port_can_share_a_port():
    first = bind_sockets(0, '127.0.0.1', reuse_port=True)
    second = bind_sockets(first[0].getsockname()[1], '127.0.0.1', reuse_port=True)
    assert second[0].getsockname() == first[0].getsockname()
    for sock in first + second:
        sock.close()


# -- Unix sockets -----------------------------------------------------------------------

def connect_blocking(path):
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(path)
    return client


@pytest.mark.parametrize('mode', [0o600, 0o660])
def test_bind_unix_socket_listens_at_the_path_with_the_mode(unix_socket_path, mode):
    kwargs = {} if mode == 0o600 else {'mode': mode}
    listener = bind_unix_socket(unix_socket_path, backlog=4, **kwargs)
    assert stat.S_ISSOCK(os.stat(unix_socket_path).st_mode)
    assert stat.S_IMODE(os.stat(unix_socket_path).st_mode) == mode
    assert listener.family == socket.AF_UNIX and listener.gettimeout() == 0.0
    client = connect_blocking(unix_socket_path)
    listener.setblocking(True)
    server, _ = listener.accept()
    client.sendall(b'over the socket file')
    assert server.recv(100) == b'over the socket file'
    for sock in (server, client, listener):
        sock.close()


def test_bind_unix_socket_replaces_a_socket_file_left_behind(unix_socket_path):
    bind_unix_socket(unix_socket_path).close()  # its file stays
    listener = bind_unix_socket(unix_socket_path)
    connect_blocking(unix_socket_path).close()
    listener.close()


def test_bind_unix_socket_refuses_to_replace_another_kind_of_file(unix_socket_path):
    with open(unix_socket_path, 'w') as f:
        f.write('precious')
    with pytest.raises(ValueError):
        bind_unix_socket(unix_socket_path)
    with open(unix_socket_path) as f:
        assert f.read() == 'precious'


def test_bind_unix_socket_that_fails_leaves_no_socket_open(unix_socket_path):
    before = open_fds()
    with pytest.raises(socket.error):
        bind_unix_socket(os.path.join(unix_socket_path, 'no such directory', 'socket'))
    assert open_fds() == before


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
