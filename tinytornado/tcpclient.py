"""Opening TCP (and TLS) connections by host name: `TCPClient.connect`.

A name may resolve to several addresses, IPv6 and IPv4. They are tried in turn,
alternating families (RFC 8305's order), and an attempt that neither connects nor fails
within `_ATTEMPT_DELAY` gets the next one started beside it, so one black-holed address
costs a fraction of a second, not the whole timeout. The first to connect wins; the
others are closed.
"""
from __future__ import absolute_import, division, print_function

import collections
import datetime
import functools
import numbers
import socket

from tinytornado import gen
from tinytornado.concurrent import Future, TimeoutError
from tinytornado.ioloop import IOLoop
from tinytornado.iostream import IOStream
from tinytornado.netutil import Resolver

__all__ = ['TCPClient', 'TimeoutError']

_ATTEMPT_DELAY = 0.3


class TCPClient(object):
    """Opens connections to hosts, resolving names with `resolver` (default: Resolver())."""

    def __init__(self, resolver=None):
        self._own_resolver = resolver is None
        self.resolver = resolver or Resolver()

    def close(self):
        if self._own_resolver:
            self.resolver.close()

    @gen.coroutine
    def connect(self, host, port, af=socket.AF_UNSPEC, ssl_options=None,
                max_buffer_size=None, source_ip=None, source_port=None, timeout=None):
        """Connect to `host`:`port`; a Future of an IOStream (an SSLIOStream with
        `ssl_options`, once its handshake is done).

        Args:
            af: the address family to resolve to (default: any).
            ssl_options: an ssl.SSLContext or dict (see netutil.ssl_options_to_context);
                the server's certificate is checked against `host`.
            source_ip, source_port: the local address to connect from.
            timeout: relative seconds or a timedelta for resolving, connecting and the
                handshake together.
        Raises:
            TimeoutError: not connected within `timeout`.
            StreamClosedError: every address refused or failed (real_error: the last
                failure).
            ssl.SSLError: the TLS handshake failed (a certificate that does not verify...).
        """
        deadline = _deadline(timeout)
        addresses = yield _within(deadline, self.resolver.resolve(host, port, af))
        connector = _Connector(addresses, functools.partial(
            self._create_stream, max_buffer_size, source_ip, source_port))
        stream = yield _within(deadline, connector.start())
        if ssl_options is not None:
            stream = yield _within(deadline, stream.start_tls(
                False, ssl_options=ssl_options, server_hostname=host))
        raise gen.Return(stream)

    def _create_stream(self, max_buffer_size, source_ip, source_port, af, address):
        """A stream connecting to `address`, and its connect Future."""
        sock = socket.socket(af, socket.SOCK_STREAM)
        try:
            if source_ip is not None or source_port is not None:
                sock.bind((source_ip or ('::' if af == socket.AF_INET6 else '0.0.0.0'),
                           source_port or 0))
            stream = IOStream(sock, max_buffer_size=max_buffer_size)
        except Exception:
            sock.close()
            raise
        return stream, stream.connect(address)


def _deadline(timeout):
    if timeout is None:
        return None
    if isinstance(timeout, datetime.timedelta):
        timeout = timeout.total_seconds()
    if not isinstance(timeout, numbers.Real):
        raise TypeError('timeout must be seconds or a timedelta: %r' % (timeout,))
    return IOLoop.current().time() + timeout


def _within(deadline, future):
    return future if deadline is None else gen.with_timeout(deadline, future)


class _Connector(object):
    """Tries `addresses` until one connects; see the module docstring.

    `create(af, address)` returns ``(stream, connect_future)``.
    """

    def __init__(self, addresses, create):
        self.addresses = collections.deque(_interleave_families(addresses))
        self.create = create
        self.io_loop = IOLoop.current()
        self.future = Future()
        self.future.set_canceller(self._cancel)
        self.attempts = set()  # the streams still connecting
        self.last_error = None
        self.timer = None

    def start(self):
        self._try_next()
        return self.future

    def _try_next(self):
        if self.timer is not None:
            self.io_loop.remove_timeout(self.timer)
            self.timer = None
        if not self.addresses:
            if not self.attempts:
                self._fail()
            return
        af, address = self.addresses.popleft()
        try:
            stream, connecting = self.create(af, address)
        except (socket.error, IOError, OSError) as e:
            self.last_error = e  # e.g. this host has no IPv6
            self._try_next()
            return
        self.attempts.add(stream)
        self.timer = self.io_loop.call_later(_ATTEMPT_DELAY, self._try_next)
        connecting.add_done_callback(functools.partial(self._on_attempt_done, stream))

    def _on_attempt_done(self, stream, connecting):
        self.attempts.discard(stream)
        error = connecting.exception()  # taken even from a loser, so it is not logged
        if self.future.done():
            stream.close()
        elif error is None:
            self._finish(stream)
        else:
            self.last_error = error
            self._try_next()

    # Each ending resolves the Future before closing the other attempts, whose connect
    # Futures then fail and find it done.

    def _finish(self, stream):
        self.future.set_result(stream)
        self._stop()

    def _fail(self):
        self.future.set_exception(self.last_error or IOError('no addresses to connect to'))
        self._stop()

    def _cancel(self):
        self.future.set_cancelled()
        self._stop()
        return True

    def _stop(self):
        """No more attempts: cancel the timer and close the streams still connecting."""
        self.addresses.clear()
        if self.timer is not None:
            self.io_loop.remove_timeout(self.timer)
            self.timer = None
        attempts, self.attempts = self.attempts, set()
        for stream in attempts:
            stream.close()


def _interleave_families(addresses):
    """First of the first family, first of the other, second of the first..."""
    if not addresses:
        return []
    first_family = addresses[0][0]
    primary = [entry for entry in addresses if entry[0] == first_family]
    secondary = [entry for entry in addresses if entry[0] != first_family]
    order = []
    for index in range(max(len(primary), len(secondary))):
        order.extend(group[index] for group in (primary, secondary) if index < len(group))
    return order
