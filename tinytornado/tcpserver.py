"""A TCP (and TLS) server: subclass `TCPServer` and implement `handle_stream`.

Each accepted connection becomes an IOStream (an SSLIOStream with `ssl_options`, whose
handshake runs as the first reads and writes wait for it) handed to `handle_stream`.
That may be a coroutine; if it fails, the error is logged and that connection closed,
and the server goes on serving the others. A Unix socket listens as a TCP one does:
``server.add_socket(netutil.bind_unix_socket(path))``.
"""
from __future__ import absolute_import, division, print_function

import errno
import os
import socket
import ssl
import sys

from tinytornado import gen
from tinytornado._compat import close_socket
from tinytornado.iostream import IOStream, SSLIOStream
from tinytornado.log import app_log, gen_log
from tinytornado.netutil import (
    add_accept_handler, bind_sockets, errno_from_exception, ssl_options_to_context,
    ssl_wrap_socket,
)

__all__ = ['TCPServer']


class TCPServer(object):
    """Accepts connections and hands each to `handle_stream`.

    ::

        class EchoServer(TCPServer):
            @gen.coroutine
            def handle_stream(self, stream, address):
                while True:
                    line = yield stream.read_until(b'\\n')
                    yield stream.write(line)

        server = EchoServer()
        server.listen(8888)
        IOLoop.current().start()

    Args:
        ssl_options: an ssl.SSLContext or a dict with certfile (and keyfile...: see
            netutil.ssl_options_to_context) to serve TLS. A dict's files are checked
            here, as Tornado 5.1 checked them (KeyError without a certfile, ValueError
            for a file that does not exist), and loaded when the server starts
            listening (`add_sockets`): an unusable certificate or key fails that call,
            never the first connection.
        max_buffer_size, read_chunk_size: passed to each stream.
    """

    def __init__(self, ssl_options=None, max_buffer_size=None, read_chunk_size=None):
        self.ssl_options = ssl_options
        self._ssl_context = None  # made from ssl_options when the server starts listening
        if isinstance(ssl_options, dict):
            _check_ssl_files(ssl_options)
        self.max_buffer_size = max_buffer_size
        self.read_chunk_size = read_chunk_size
        self._sockets = {}  # fileno -> listening socket
        self._stop_accepting = {}  # fileno -> what add_accept_handler returned
        self._pending_sockets = []
        self._started = False
        self._stopped = False

    def listen(self, port, address=''):
        """Accept connections on `port` of `address` ('' for every interface)."""
        self.add_sockets(bind_sockets(port, address=address))

    def add_sockets(self, sockets):
        """Accept connections on these listening sockets (from bind_sockets, say)."""
        if self.ssl_options is not None and self._ssl_context is None:
            self._ssl_context = ssl_options_to_context(self.ssl_options, server_side=True)
        for sock in sockets:
            self._sockets[sock.fileno()] = sock
            self._stop_accepting[sock.fileno()] = add_accept_handler(
                sock, self._handle_connection)

    def add_socket(self, socket):
        """Accept connections on one listening socket (TCP, or Unix from
        netutil.bind_unix_socket, whose connections' address is what accept() gives:
        the client's path, '' for an unnamed client)."""
        self.add_sockets([socket])

    def bind(self, port, address=None, family=socket.AF_UNSPEC, backlog=128,
             reuse_port=False):
        """Bind now, accept once `start` is called (at once if it has been)."""
        sockets = bind_sockets(port, address=address, family=family, backlog=backlog,
                               reuse_port=reuse_port)
        if self._started:
            self.add_sockets(sockets)
        else:
            self._pending_sockets.extend(sockets)

    def start(self, num_processes=1):
        """Start accepting on the sockets given to `bind`.

        Raises:
            NotImplementedError: num_processes is not 1. To use several processes, run
                one server per process on ``bind_sockets(..., reuse_port=True)``.
        """
        if num_processes != 1:
            raise NotImplementedError(
                'TCPServer.start(num_processes=%r): tinytornado does not fork; run one '
                'process per server with reuse_port=True instead' % (num_processes,))
        if self._started:
            raise RuntimeError('TCPServer.start() was called already')
        self._started = True
        sockets, self._pending_sockets = self._pending_sockets, []
        self.add_sockets(sockets)

    def stop(self):
        """Stop accepting and close the listening sockets; open connections go on."""
        if self._stopped:
            return
        self._stopped = True
        for fileno, sock in self._sockets.items():
            self._stop_accepting.pop(fileno)()
            sock.close()
        self._sockets.clear()
        for sock in self._pending_sockets:
            sock.close()
        self._pending_sockets = []

    def handle_stream(self, stream, address):
        """Serve one connection; may be a coroutine (return a Future). Override it."""
        raise NotImplementedError()

    def _handle_connection(self, connection, address):
        if self._ssl_context is not None:
            try:
                connection = ssl_wrap_socket(connection, self._ssl_context, server_side=True,
                                             do_handshake_on_connect=False)
            except (ssl.SSLError, socket.error) as e:
                close_socket(connection)
                if errno_from_exception(e) not in (errno.ECONNABORTED, errno.EINVAL):
                    gen_log.warning('Cannot start TLS with %s: %s', address, e)
                return
            stream = SSLIOStream(connection, max_buffer_size=self.max_buffer_size,
                                 read_chunk_size=self.read_chunk_size)
        else:
            stream = IOStream(connection, max_buffer_size=self.max_buffer_size,
                              read_chunk_size=self.read_chunk_size)
        try:
            result = self.handle_stream(stream, address)
        except Exception:
            self._handler_failed(stream, address, sys.exc_info())
            return
        if result is not None:
            gen.convert_yielded(result).add_done_callback(
                lambda future: self._handler_done(stream, address, future))

    def _handler_done(self, stream, address, future):
        if not future.cancelled() and future.exception() is not None:
            self._handler_failed(stream, address, future.exc_info())

    def _handler_failed(self, stream, address, exc_info):
        # Worded as Tornado 5.1's loop words it, which legacy tests expect in the log.
        app_log.error('Exception in callback handle_stream for %r; closing the connection',
                      address, exc_info=exc_info)
        stream.close()


def _check_ssl_files(ssl_options):
    """Tornado 5.1's checks of a dict of a server's ssl_options, in its words."""
    if 'certfile' not in ssl_options:
        raise KeyError('missing key "certfile" in ssl_options')
    for name in ('certfile', 'keyfile'):
        if name in ssl_options and not os.path.exists(ssl_options[name]):
            raise ValueError('%s "%s" does not exist' % (name, ssl_options[name]))
