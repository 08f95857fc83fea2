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
from tinytornado._kernel import set_new_exception
from tinytornado.concurrent import Future, TimeoutError
from tinytornado.ioloop import IOLoop, deadline_for
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
        if isinstance(timeout, numbers.Real):
            timeout = datetime.timedelta(seconds=timeout)  # 5.1 counts it from now
        deadline = deadline_for(timeout)
        addresses = yield _within(deadline, self.resolver.resolve(host, port, af))
        connector = _Connector(addresses, functools.partial(
            self._create_stream, max_buffer_size, source_ip, source_port))
        _, _, stream = yield connector.start(connect_timeout=deadline)
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


def _within(deadline, future):
    return future if deadline is None else gen.with_timeout(deadline, future)


class _Connector(object):
    """Tries the (af, address) pairs of `addrinfo` until one connects; see the module
    docstring. `connect(af, address)` returns ``(stream, connect_future)``.

    It has the names of Tornado 5.1's private connector, for legacy code that drives one
    (`split`, `start`, `on_timeout`, `on_connect_timeout`, `clear_timeouts`,
    `close_streams`, `streams`), but not its order of attempts: 5.1 keeps one attempt per
    family in flight and starts a family's next address only when its last one fails,
    so one black-holed address stalls its family until the system gives up on it.
    """

    def __init__(self, addrinfo, connect):
        self.io_loop = IOLoop.current()
        self.connect = connect
        self.addresses = collections.deque(_interleave_families(addrinfo))
        self.future = Future()
        self.future.set_canceller(self._cancel)
        # Every stream made but the winner, failed ones too: close_streams closes them.
        self.streams = set()
        self.connecting = 0  # attempts not done yet
        self.last_error = None
        self.attempt_delay = _ATTEMPT_DELAY
        self.timeout = None  # the timer that starts the next attempt
        self.connect_timeout = None  # the timer that gives up

    @staticmethod
    def split(addrinfo):
        """``(primary, secondary)``: the entries of the first entry's family, and the
        others, each list in `addrinfo`'s order."""
        if not addrinfo:
            return [], []
        primary_family = addrinfo[0][0]
        primary = [entry for entry in addrinfo if entry[0] == primary_family]
        secondary = [entry for entry in addrinfo if entry[0] != primary_family]
        return primary, secondary

    def start(self, timeout=_ATTEMPT_DELAY, connect_timeout=None):
        """Start connecting; a Future of ``(af, address, stream)`` for the first attempt
        that connects. Cancelling it closes every attempt.

        Args:
            timeout: seconds an attempt may go on before the next starts beside it.
            connect_timeout: when to give up, a deadline (`IOLoop.time()`) or a
                timedelta from now: the Future fails with TimeoutError and the
                attempts close.
        """
        self.attempt_delay = timeout
        if connect_timeout is not None:
            self.connect_timeout = self.io_loop.add_timeout(connect_timeout,
                                                            self.on_connect_timeout)
        self._try_next()
        return self.future

    def on_timeout(self):
        """The attempt delay passed: start the next address beside the pending ones."""
        if not self.future.done():
            self._try_next()

    def on_connect_timeout(self):
        """Give up: fail with TimeoutError (unless done already), close the attempts."""
        if not self.future.done():
            set_new_exception(self.future, TimeoutError('Timed out connecting'))
        self._stop()

    def clear_timeouts(self):
        for handle in (self.timeout, self.connect_timeout):
            if handle is not None:
                self.io_loop.remove_timeout(handle)
        self.timeout = self.connect_timeout = None

    def close_streams(self):
        for stream in self.streams:
            stream.close()

    def _try_next(self):
        if self.timeout is not None:
            self.io_loop.remove_timeout(self.timeout)
            self.timeout = None
        if not self.addresses:
            if not self.connecting:
                self._fail()
            return
        af, address = self.addresses.popleft()
        try:
            stream, connecting = self.connect(af, address)
        except (socket.error, IOError, OSError) as e:
            self.last_error = e  # e.g. this host has no IPv6
            self._try_next()
            return
        self.streams.add(stream)
        self.connecting += 1
        self.timeout = self.io_loop.call_later(self.attempt_delay, self.on_timeout)
        connecting.add_done_callback(
            functools.partial(self._on_attempt_done, af, address, stream))

    def _on_attempt_done(self, af, address, stream, connecting):
        self.connecting -= 1
        error = connecting.exception()  # taken even from a loser, so it is not logged
        if self.future.done():
            stream.close()
        elif error is None:
            self.streams.discard(stream)
            self.future.set_result((af, address, stream))
            self._stop()
        else:
            self.last_error = error
            self._try_next()

    # Each ending resolves the Future before closing the other attempts, whose connect
    # Futures then fail and find it done.

    def _fail(self):
        self.future.set_exception(self.last_error or IOError('no addresses to connect to'))
        self._stop()

    def _cancel(self):
        self.future.set_cancelled()
        self._stop()
        return True

    def _stop(self):
        """No more attempts: cancel the timers and close the streams still connecting."""
        self.addresses.clear()
        self.clear_timeouts()
        self.close_streams()


def _interleave_families(addresses):
    """First of the first family, first of the other, second of the first..."""
    primary, secondary = _Connector.split(addresses)
    order = []
    for index in range(max(len(primary), len(secondary))):
        order.extend(group[index] for group in (primary, secondary) if index < len(group))
    return order
