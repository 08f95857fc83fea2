from __future__ import absolute_import, division, print_function

import logging
import os
import socket
import ssl
import subprocess
import sys

import pytest

from net_helpers import open_fds, run, tls_files, unix_socket_path  # noqa: F401
from tinytornado import gen
from tinytornado.concurrent import Future
from tinytornado.ioloop import PeriodicCallback
from tinytornado.iostream import IOStream, StreamClosedError
from tinytornado.netutil import bind_sockets, bind_unix_socket
from tinytornado.tcpclient import TCPClient
from tinytornado.tcpserver import TCPServer

try:
    import resource
except ImportError:  # not on Windows
    resource = None

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        'examples')


class EchoServer(TCPServer):
    """Echoes lines; counts the connections open now and the most open at once."""

    def __init__(self, **kwargs):
        super(EchoServer, self).__init__(**kwargs)
        self.open = self.most_open = 0
        self.all_closed = None
        self.handlers = []

    def handle_stream(self, stream, address):
        self.handlers.append(self.echo(stream))
        return self.handlers[-1]

    def line_echoed(self):
        """Called after each line is sent back."""

    @gen.coroutine
    def wait_for_handlers(self):
        """Wait until every connection's handler has finished, failed or not (else one
        whose read failed as the test ended leaves an unretrieved error behind)."""
        for handler in self.handlers:
            try:
                yield handler
            except Exception:
                pass

    @gen.coroutine
    def echo(self, stream):
        self.open += 1
        self.most_open = max(self.most_open, self.open)
        try:
            while True:
                line = yield stream.read_until(b'\n')
                if line == b'fail\n':
                    raise ValueError('the handler failed')
                yield stream.write(line)
                self.line_echoed()
        except StreamClosedError:
            pass
        finally:
            self.open -= 1
            if not self.open and self.all_closed is not None:
                self.all_closed.set_result(None)


def shut_down(io_loop, server):
    run(io_loop, server.wait_for_handlers)
    server.stop()


def serve(server, backlog=128):
    """Start `server` on a loopback port; returns the port."""
    sock = bind_sockets(0, '127.0.0.1', backlog=backlog)[0]
    server.add_sockets([sock])
    return sock.getsockname()[1]


@gen.coroutine
def echo_once(port, line, ssl_options=None):
    # By name: Python 2.7 cannot match a certificate to an IP address.
    stream = yield TCPClient().connect('localhost', port, af=socket.AF_INET,
                                       ssl_options=ssl_options)
    yield stream.write(line)
    echoed = yield stream.read_until(b'\n')
    stream.close()
    raise gen.Return(echoed)


def test_handle_stream_coroutine_serves_each_connection(io_loop):
    server = EchoServer()
    port = serve(server)

    @gen.coroutine
    def main():
        echoed = yield [echo_once(port, b'line %d\n' % i) for i in range(20)]
        raise gen.Return(echoed)

    assert run(io_loop, main) == [b'line %d\n' % i for i in range(20)]
    assert len(server.handlers) == 20
    shut_down(io_loop, server)


def test_listen_on_a_port(io_loop):
    server = EchoServer()
    server.listen(0, '127.0.0.1')
    port = list(server._sockets.values())[0].getsockname()[1]
    assert run(io_loop, lambda: echo_once(port, b'listen\n')) == b'listen\n'
    shut_down(io_loop, server)


def test_bind_then_start(io_loop):
    server = EchoServer()
    server.bind(0, '127.0.0.1')
    assert server._sockets == {}  # nothing accepted before start()
    server.start()
    port = list(server._sockets.values())[0].getsockname()[1]
    assert run(io_loop, lambda: echo_once(port, b'started\n')) == b'started\n'
    shut_down(io_loop, server)


def test_start_with_several_processes_is_not_implemented(io_loop):
    server = EchoServer()
    with pytest.raises(NotImplementedError):
        server.start(4)
    server.stop()


@pytest.mark.parametrize('handler_kind', ['coroutine', 'plain function'])
def test_a_failing_handler_is_logged_its_connection_closed_and_the_server_goes_on(
        io_loop, caplog, handler_kind):
    class Failing(EchoServer):
        def handle_stream(self, stream, address):
            if handler_kind == 'plain function':
                raise ValueError('the handler failed at once')
            return super(Failing, self).handle_stream(stream, address)

    server = Failing()
    port = serve(server)

    @gen.coroutine
    def main():
        stream = yield TCPClient().connect('127.0.0.1', port)
        yield stream.write(b'fail\n')
        rest = yield stream.read_until_close()  # the server closed the connection
        if handler_kind == 'plain function':
            raise gen.Return((rest, None))
        echoed = yield echo_once(port, b'still serving\n')
        yield server.wait_for_handlers()
        raise gen.Return((rest, echoed))

    with caplog.at_level(logging.ERROR, logger='tornado.application'):
        rest, echoed = run(io_loop, main)
    assert rest == b''
    if handler_kind == 'coroutine':
        assert echoed == b'still serving\n'
    errors = [r for r in caplog.records if 'handle_stream' in r.getMessage()]
    assert len(errors) == 1
    assert isinstance(errors[0].exc_info[1], ValueError)
    # Legacy tests expect Tornado 5.1's wording: ExpectLog(app_log, 'Exception in callback').
    assert errors[0].getMessage().startswith('Exception in callback')
    server.stop()


@pytest.mark.filterwarnings('ignore::DeprecationWarning')  # the callback form's
@pytest.mark.parametrize('form', ['future', 'callback'])
def test_a_server_on_a_unix_socket(io_loop, unix_socket_path, form):
    addresses = []

    class Recording(EchoServer):
        def handle_stream(self, stream, address):
            addresses.append(address)
            return super(Recording, self).handle_stream(stream, address)

    server = Recording()
    server.add_socket(bind_unix_socket(unix_socket_path))
    stream = IOStream(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))

    @gen.coroutine
    def main():
        if form == 'future':
            yield stream.connect(unix_socket_path)
        else:
            connected = Future()
            stream.connect(unix_socket_path, lambda: connected.set_result(None))
            yield connected
        yield stream.write(b'over a unix socket\n')
        line = yield stream.read_until(b'\n')
        stream.close()
        yield server.wait_for_handlers()
        raise gen.Return(line)

    assert run(io_loop, main) == b'over a unix socket\n'
    assert addresses == ['']  # what accept() gives for a client with no name, as 5.1
    server.stop()


def test_stop_closes_the_listeners_but_not_the_connections(io_loop):
    server = EchoServer()
    port = serve(server)

    @gen.coroutine
    def main():
        stream = yield TCPClient().connect('127.0.0.1', port)
        yield stream.write(b'before\n')
        yield stream.read_until(b'\n')
        server.stop()
        yield stream.write(b'after\n')
        echoed = yield stream.read_until(b'\n')
        stream.close()
        with pytest.raises(StreamClosedError):
            yield TCPClient().connect('127.0.0.1', port)
        yield server.wait_for_handlers()
        raise gen.Return(echoed)

    assert run(io_loop, main) == b'after\n'
    assert io_loop.pending_work()[1] == []


def test_tls_server_survives_a_client_that_does_not_speak_tls(io_loop, caplog):
    files = tls_files()
    server = EchoServer(ssl_options={'certfile': files.server_cert,
                                     'keyfile': files.server_key})
    port = serve(server)

    @gen.coroutine
    def main():
        plain = yield TCPClient().connect('127.0.0.1', port)
        yield plain.write(b'GET / HTTP/1.0\r\n\r\n')
        try:
            yield plain.read_until_close()  # the server gives up on it...
        except StreamClosedError:
            pass  # ...closing with our bytes unread, which resets the connection
        echoed = yield echo_once(port, b'secure\n', ssl_options={'ca_certs': files.ca_cert})
        yield server.wait_for_handlers()
        raise gen.Return(echoed)

    assert run(io_loop, main) == b'secure\n'
    assert any('handshake' in r.getMessage() for r in caplog.records
               if r.name == 'tornado.general')
    server.stop()


def test_ssl_options_without_a_certfile_is_5_1s_key_error():
    with pytest.raises(KeyError) as caught:
        TCPServer(ssl_options={'keyfile': '/__missing__.key'})
    assert 'missing key "certfile" in ssl_options' in str(caught.value)


@pytest.mark.parametrize('missing', ['certfile', 'keyfile'])
def test_ssl_files_that_do_not_exist_are_5_1s_value_error(missing):
    files = tls_files()
    ssl_options = {'certfile': files.server_cert, 'keyfile': files.server_key}
    ssl_options[missing] = '/__missing__/' + missing
    with pytest.raises(ValueError) as caught:
        TCPServer(ssl_options=ssl_options)
    assert str(caught.value) == '%s "/__missing__/%s" does not exist' % (missing, missing)


def test_an_unusable_key_fails_when_the_server_starts_listening(tmpdir):
    # Made, the server has only checked that its files exist (as 5.1 did: its own tests
    # make one with a key that OpenSSL now refuses); it loads them before it accepts any
    # connection, so that a bad certificate or key is never a first client's error.
    files = tls_files()
    bad_key = tmpdir.join('bad.key')
    bad_key.write('not a key')
    server = EchoServer(ssl_options={'certfile': files.server_cert, 'keyfile': str(bad_key)})
    sockets = bind_sockets(0, '127.0.0.1')
    try:
        with pytest.raises(ssl.SSLError):
            server.add_sockets(sockets)
        assert server._sockets == {}
    finally:
        for sock in sockets:
            sock.close()


@pytest.fixture
def examples():
    sys.path.insert(0, EXAMPLES)
    yield
    sys.path.remove(EXAMPLES)


def test_the_echo_example(io_loop, examples):
    import echo_client
    import echo_server
    handlers = []

    class Observed(echo_server.EchoServer):
        def handle_stream(self, stream, address):
            handlers.append(super(Observed, self).handle_stream(stream, address))
            return handlers[-1]

    server = Observed()
    port = serve(server)
    lines = [u'hello', u'caf\u00e9', u'']

    @gen.coroutine
    def main():
        replies = yield echo_client.echo('127.0.0.1', port, lines)
        yield handlers  # the server saw the client leave
        raise gen.Return(replies)

    assert run(io_loop, main) == lines
    server.stop()


# -- ten thousand connections at once --------------------------------------------------

CONNECTIONS = 10000
CONNECT_BATCH = 500
MANY_CLIENTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'many_clients.py')


@pytest.fixture
def fd_limit():
    """Raise RLIMIT_NOFILE to fit the server's end of every connection; restored after."""
    if resource is None:
        pytest.skip('no resource module to raise the file descriptor limit')
    needed = CONNECTIONS + 256
    previous = resource.getrlimit(resource.RLIMIT_NOFILE)
    soft, hard = previous
    if soft < needed:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (needed, max(hard, needed)))
        except (ValueError, OSError) as e:
            pytest.skip('cannot raise the file descriptor limit to %d: %s' % (needed, e))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, previous)


class CountingEchoServer(EchoServer):
    """Resolves `echoed_all` once `expected_echoes` lines have been echoed."""

    def __init__(self, expected_echoes):
        super(CountingEchoServer, self).__init__()
        self.expected_echoes = expected_echoes
        self.echoed_all = Future()
        self.open_when_all_echoed = None

    def line_echoed(self):
        self.expected_echoes -= 1
        if not self.expected_echoes:
            self.open_when_all_echoed = self.open
            self.echoed_all.set_result(None)


@pytest.mark.slow
def test_ten_thousand_concurrent_connections(io_loop, fd_limit):
    before = open_fds()
    server = CountingEchoServer(expected_echoes=2 * CONNECTIONS)
    server.all_closed = Future()
    port = serve(server, backlog=2 * CONNECT_BATCH)
    clients = subprocess.Popen([sys.executable, MANY_CLIENTS, str(port), str(CONNECTIONS),
                                str(CONNECT_BATCH)], stdin=subprocess.PIPE)

    def check_clients():
        if clients.poll() is not None and not server.echoed_all.done():
            server.echoed_all.set_exception(AssertionError(
                'the clients exited early, with status %s' % clients.returncode))

    watch = PeriodicCallback(check_clients, 100)
    watch.start()

    @gen.coroutine
    def main():
        yield server.echoed_all
        clients.stdin.close()  # the clients may close their connections now
        yield server.all_closed

    try:
        run(io_loop, main, timeout=300)
    finally:
        watch.stop()
        if clients.poll() is None:
            clients.kill()
    assert clients.wait() == 0
    # Every connection was open when the last line was echoed.
    assert server.open_when_all_echoed == server.most_open == CONNECTIONS
    assert len(server.handlers) == CONNECTIONS
    server.stop()
    assert open_fds() == before


def test_streams_are_plain_iostreams_without_ssl_options(io_loop):
    streams = []

    class Recording(TCPServer):
        def handle_stream(self, stream, address):
            streams.append(stream)
            stream.close()

    server = Recording()
    port = serve(server)

    @gen.coroutine
    def main():
        stream = yield TCPClient().connect('127.0.0.1', port)
        yield stream.read_until_close()  # the server closed it

    run(io_loop, main)
    assert [type(stream) for stream in streams] == [IOStream]
    server.stop()
