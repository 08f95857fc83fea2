"""One hop of a fetch: a request written and its response read over one HTTP/1.1 connection.

An `Exchange` is made for each request a fetch sends (the first, then one per redirect
followed). It prepares the request, keeps its clock (`request_timeout` starts when the
request gets its pool slot), opens a connection unless the pool lends one, writes the
request, and acts on the events the sans-IO `HTTP1ClientProtocol` parses from the bytes the
fetch coroutine reads: the head (redirect or not, decoding, size limit), the body (decoded,
capped at `max_body_size`, streamed or kept), the end. Every failure is an exception that
says what went wrong; the fetch then drops the connection, and reports a response it could
not read as an HTTPClientError too (`client_error`).

A pooled connection the server closed meanwhile fails the first read; `may_retry` says when
the request can be sent again on a new connection.

A request's `body_producer` streams its body while the response is read: a failure to
produce or write it closes the connection with that error, which the next read then reports.
With `expect_100_continue`, the head goes alone and the body (given or produced) follows the
server's 100 Continue; a final response in its place ends the exchange, the body unsent.
"""
from __future__ import absolute_import, division, print_function

import errno
import functools
import socket
import time

from tinytornado import gen
from tinytornado._httperrors import HTTPClientError, HTTPStreamClosedError, HTTPTimeoutError
from tinytornado._httprequest import (
    check_supported, origin, prepare_headers, split_url, target,
)
from tinytornado.concurrent import TimeoutError
from tinytornado.httputil import (
    NEED_DATA, BodyData, ConnectionClosed, ContentDecoder, EndOfMessage, HeaderTooLargeError,
    HTTP1ClientProtocol, HTTPInputError, InformationalResponse, NoResponseError, ResponseHead,
)
from tinytornado.iostream import StreamClosedError, UnsatisfiableReadError
from tinytornado.log import gen_log
from tinytornado.netutil import errno_from_exception

__all__ = ['Connection', 'Exchange', 'RecordedExchange', 'data_at_close', 'client_error',
           'HTTPInputClientError', 'NoResponseClientError', 'HeaderTooLargeClientError']

_READ_CHUNK_SIZE = 65536
# Requests that may be sent twice: RFC 9110 9.2.2's idempotent methods (TRACE aside).
_IDEMPOTENT_METHODS = frozenset(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'])
_REDIRECT_CODES = frozenset([301, 302, 303, 307, 308])
_BODYLESS_CODES = frozenset([204, 304])  # their Content-Length describes another response
# How a server that timed out an idle connection shows it to the next request.
_STALE_CONNECTION_ERRNOS = frozenset([errno.ECONNRESET, errno.EPIPE, errno.ECONNABORTED])


class Connection(object):
    """An open connection to one origin and the protocol state that goes with it."""
    __slots__ = ('stream', 'protocol', 'requests', 'idle_read')

    def __init__(self, stream, protocol):
        self.stream = stream
        self.protocol = protocol
        self.requests = 0  # responses read whole on it; 0 while it serves its first request
        self.idle_read = None  # the read the pool keeps pending while it is idle


class HTTPInputClientError(HTTPStreamClosedError, HTTPInputError):
    """A response the client could not read (malformed, cut short, over a size limit), as a
    fetch reports it: an HTTPInputError whose message says what was wrong, and an
    HTTPStreamClosedError (code 599), as Tornado 5.1 reported it after closing the
    connection, so that legacy ``except HTTPError`` code catches it."""
    __module__ = 'tinytornado.httpclient'


class NoResponseClientError(HTTPInputClientError, NoResponseError):
    """A NoResponseError (closed before the response began) as a fetch reports it."""
    __module__ = 'tinytornado.httpclient'


class HeaderTooLargeClientError(HTTPInputClientError, HeaderTooLargeError,
                                UnsatisfiableReadError):
    """A response head (or chunk-size line, or trailer block) over max_header_size, as a
    fetch reports it: also the iostream.UnsatisfiableReadError that Tornado 5.1 raised
    when its read of the head found no end within max_header_size bytes."""
    __module__ = 'tinytornado.httpclient'


def client_error(error):
    """`error` as a fetch reports it: an HTTPInputError made an HTTPInputClientError.

    A response that could not be read is logged (info, on tornado.general), as Tornado 5.1
    logged it, in its words: "Unsatisfiable read" for a head over max_header_size,
    "Malformed HTTP message from None" for the rest; a connection closed before the
    response began is not.
    """
    # Made from the parser's error at the end rather than raised by the parser, which is
    # the HTTP grammar's, below the client (the server side raises HTTPInputError too).
    if not isinstance(error, HTTPInputError) or isinstance(error, HTTPClientError):
        return error
    if isinstance(error, NoResponseError):
        return NoResponseClientError(str(error))
    if isinstance(error, HeaderTooLargeError):
        gen_log.info('Unsatisfiable read, closing connection: %s', error)
        return HeaderTooLargeClientError(str(error))
    gen_log.info('Malformed HTTP message from None: %s', error)
    return HTTPInputClientError(str(error))


def data_at_close(error):
    """b'' (end of file, for the parser to judge) after a clean close, else the cause."""
    if error.real_error is None:
        return b''
    raise error.real_error


class Exchange(object):
    """One hop of a fetch: the request prepared from the URL, then the response's state
    between the protocol's events, until the response or the redirect it leads to.

    Args:
        request: a RequestProxy (the client's defaults applied).
        io_loop: the loop whose clock and timers the timeouts use.
        ssl_contexts: the client's SSLContexts.
    """
    # Slots, not a __dict__: a fetch waiting in the pool's queue holds its Exchange, and
    # 10,000 of them made, then dropped by a timeout together, cost their dicts twice.
    __slots__ = ('io_loop', 'queued_at', 'request', 'scheme', 'host', 'port', 'target',
                 'method', 'headers', 'ssl_options', 'key', 'max_body_size', 'started_at',
                 'start_time', 'timer', 'connection', 'time_info', 'retried', 'received',
                 'redirect', 'code', 'reason', 'response_headers', 'decoder', 'chunks',
                 'body_size', 'body_producer', 'expect_continue')

    def __init__(self, request, io_loop, ssl_contexts):
        self.io_loop = io_loop
        self.queued_at = io_loop.time()
        # expect_continue: the body waits for a 100 Continue, until one has come.
        self.body_producer, self.expect_continue = check_supported(request)
        self.request = request
        parts = split_url(request.url)
        self.scheme, self.host, self.port = origin(parts, request.url)
        self.target = target(parts)
        self.method = request.method
        self.headers = prepare_headers(request, parts, self.body_producer,
                                       self.expect_continue)
        self.ssl_options = (ssl_contexts.for_request(request) if self.scheme == 'https'
                            else None)
        self.key = (self.scheme, self.host, self.port, self.ssl_options)  # the pool's
        self.max_body_size = request.max_body_size
        self.started_at = self.start_time = self.timer = self.connection = None
        self.time_info = {}
        self.retried = self.received = self.redirect = False
        self.code = self.reason = self.response_headers = self.decoder = None
        self.chunks = []
        self.body_size = 0

    # -- the clock --------------------------------------------------------------------------

    def start(self):
        """The request has its slot: its own clock starts."""
        self.started_at = self.io_loop.time()
        self.start_time = time.time()
        self.time_info['queue'] = self.started_at - self.queued_at
        if self.request.request_timeout:
            self.timer = self.io_loop.call_at(self.started_at + self.request.request_timeout,
                                              self._time_out)

    def _time_out(self):
        self.timer = None
        if self.connection is not None:  # else the connect has its own, earlier timeout
            self.connection.stream.close(exc_info=HTTPTimeoutError('Timeout during request'))

    def stop_timer(self):
        if self.timer is not None:
            self.io_loop.remove_timeout(self.timer)
            self.timer = None

    def elapsed(self):
        """Seconds since the request got its slot (0 while it waits for one)."""
        if self.started_at is None:
            return 0.0
        return self.io_loop.time() - self.started_at

    # -- the connection ---------------------------------------------------------------------

    @gen.coroutine
    def connect(self, tcp_client, max_buffer_size, max_header_size):
        """Open a connection, as `connection` (so that whoever abandons the exchange
        closes it, even if the coroutine waiting here was cancelled)."""
        request = self.request
        try:
            stream = yield tcp_client.connect(
                self.host, self.port,
                af=socket.AF_UNSPEC if request.allow_ipv6 is not False else socket.AF_INET,
                ssl_options=self.ssl_options, max_buffer_size=max_buffer_size,
                source_ip=request.network_interface, timeout=self._connect_timeout())
        except TimeoutError:
            raise HTTPTimeoutError('Timeout while connecting')
        except StreamClosedError as e:
            raise e.real_error or HTTPStreamClosedError('Stream closed')
        stream.set_nodelay(True)
        self.connection = Connection(stream, HTTP1ClientProtocol(max_header_size))

    def _connect_timeout(self):
        """Seconds left for opening a connection, or None for no limit."""
        limits = [limit for limit in (self.request.connect_timeout, self.request.request_timeout)
                  if limit]
        if not limits:
            return None
        return max(0.0, self.started_at + min(limits) - self.io_loop.time())

    def may_retry(self, error):
        """True if `error` shows a pooled connection the server had closed, and sending the
        request again on a new connection is safe: once, before any byte of a response."""
        # Only an OS error's errno counts: another exception's first argument need not
        # even be hashable (a callback's own exception).
        stale = (isinstance(error, NoResponseError) or
                 (isinstance(error, EnvironmentError) and
                  errno_from_exception(error) in _STALE_CONNECTION_ERRNOS))
        # A body_producer may not be able to produce its body twice.
        if (not stale or self.retried or self.received or self.connection.requests == 0 or
                self.method not in _IDEMPOTENT_METHODS or self.body_producer is not None):
            return False
        self.retried = True
        return True

    def drop_connection(self):
        connection, self.connection = self.connection, None
        if connection is not None:
            connection.stream.close()

    def abandon(self):
        """The fetch failed or was cancelled: stop the clock, close the connection, let go
        of the body read so far.

        The exception that ends the fetch keeps this exchange alive through the frames of
        its traceback, for as long as the caller keeps the exception (or a reference cycle
        does, until the garbage collector runs): all it may keep is a few small objects.
        """
        self.stop_timer()
        self.drop_connection()
        self.chunks = []
        self.decoder = None

    def keep_connection(self):
        """The response has ended: the connection if it can carry another request, else
        None (closed). Stops the request's timer either way."""
        self.stop_timer()
        connection, self.connection = self.connection, None
        protocol = connection.protocol
        # Bytes beyond the response would be read as the start of the next one.
        if protocol.reusable and not protocol.has_extra_data:
            protocol.start_next_cycle()
            connection.requests += 1
            return connection
        connection.stream.close()
        return None

    # -- the request and the response ------------------------------------------------------

    def send(self):
        """Write the request (only its head, if a body_producer streams its body or the
        body waits for a 100 Continue); returns the bytes written."""
        connection = self.connection
        request = self.request
        # The write's Future is not waited for: a failed write closes the stream, and the
        # read that follows reports why.
        if self.body_producer is None and not self.expect_continue:
            data = connection.protocol.send_request(
                self.method, self.target, self.headers, request.body)
            connection.stream.write(data)
        else:
            data = connection.protocol.send_request_head(self.method, self.target, self.headers)
            connection.stream.write(data)
            if not self.expect_continue:
                _stream_body(connection, self.body_producer)
        if request.sent_callback is not None:
            request.sent_callback()
        return data

    def read(self):
        """A Future of the next bytes of the response (StreamClosedError at the end)."""
        return self.connection.stream.read_bytes(_READ_CHUNK_SIZE, partial=True)

    def feed(self, data):
        if data:
            self.received = True
        self.connection.protocol.receive_data(data)

    def receive(self):
        """Act on the events parsed so far; True once the response has ended."""
        protocol = self.connection.protocol
        while True:
            event = protocol.next_event()
            kind = event.__class__
            if kind is BodyData:
                self._on_body(event.data)
            elif event is NEED_DATA:
                return False
            elif kind is ResponseHead:
                self._on_head(event)
            elif kind is EndOfMessage:
                return True
            elif kind is ConnectionClosed:  # no response in progress: cannot follow a request
                raise HTTPStreamClosedError('Stream closed')
            elif kind is InformationalResponse:
                self._on_informational(event)

    def body(self):
        """The body kept (b'' when it went to the streaming_callback)."""
        return b'' if self.request.streaming_callback is not None else b''.join(self.chunks)

    def _on_head(self, head):
        self.code, self.reason, self.response_headers = head.code, head.reason, head.headers
        headers = head.headers
        length = headers.get('Content-Length')
        # A too large body fails before it is read, unless it will not be sent at all.
        if (length is not None and length.isdigit() and int(length) > self.max_body_size and
                self.method != 'HEAD' and head.code not in _BODYLESS_CODES):
            # Its first words are Tornado 5.1's, which legacy tests look for in the log.
            raise HTTPInputError('Content-Length too long: %s is larger than max_body_size '
                                 '(%d bytes)' % (length, self.max_body_size))
        if self._should_follow_redirect():
            self.redirect = True  # its body is read (to keep the connection) and dropped
            return
        encoding = headers.get('Content-Encoding')
        if (encoding is not None and self.request.decompress_response and
                encoding.strip().lower() in ContentDecoder.ENCODINGS):
            self.decoder = ContentDecoder(encoding, self.max_body_size)
            headers['X-Consumed-Content-Encoding'] = encoding
            del headers['Content-Encoding']
        if self.request.header_callback is not None:
            self._run_header_callback(head)
        if self.request.head_callback is not None:
            self.request.head_callback(head)

    def _on_informational(self, head):
        # Any other 1xx (or a 100 not asked for) only announces the real head.
        if head.code == 100 and self.expect_continue:
            # Once: a second 100 must not send the body again. (A retry, which would send
            # the head again, is only ever made before any byte of a response.)
            self.expect_continue = False
            body_producer = self.body_producer
            if body_producer is None:  # a body given whole
                body_producer = functools.partial(_write_whole, self.request.body)
            _stream_body(self.connection, body_producer)

    def _should_follow_redirect(self):
        return (self.code in _REDIRECT_CODES and self.request.follow_redirects and
                self.request.max_redirects > 0 and 'Location' in self.response_headers)

    def _run_header_callback(self, head):
        callback = self.request.header_callback
        callback('%s %d %s\r\n' % (head.version, head.code, head.reason))
        for name, value in head.headers.get_all():
            callback('%s: %s\r\n' % (name, value))
        callback('\r\n')

    def _on_body(self, data):
        self.body_size += len(data)
        if self.body_size > self.max_body_size:
            raise HTTPInputError('the response body is larger than max_body_size (%d bytes)'
                                 % self.max_body_size)
        if self.redirect:
            return
        if self.decoder is not None:
            data = self.decoder.decompress(data)
            if not data:
                return
        if self.request.streaming_callback is not None:
            self.request.streaming_callback(data)
        else:
            self.chunks.append(data)


class RecordedExchange(Exchange):
    """An Exchange that shows its request's `wire_recorder` the bytes as they pass.

    A subclass, chosen when the exchange is made, so that a fetch without a recorder
    pays nothing for it on the way its bytes go (`feed` runs for every read).
    """
    __slots__ = ()

    def __init__(self, request, io_loop, ssl_contexts):
        Exchange.__init__(self, request, io_loop, ssl_contexts)
        # The recorder is given each request whole, as it was written.
        if self.body_producer is not None:
            raise ValueError('a wire_recorder cannot record the body of a body_producer')
        if self.expect_continue:
            raise ValueError('a wire_recorder cannot record a body sent after a 100 Continue')

    def send(self):
        data = Exchange.send(self)
        self.request.wire_recorder.request_sent(self.request.url,
                                                _peer_address(self.connection.stream), data)
        return data

    def feed(self, data):
        # Recorded before it is parsed: bytes the parser refuses are part of the record.
        if data:
            self.request.wire_recorder.response_data(data)
        Exchange.feed(self, data)

    def receive(self):
        ended = Exchange.receive(self)
        if ended:
            self.request.wire_recorder.response_ended()
        return ended


@gen.coroutine
def _stream_body(connection, body_producer):
    """Write the body that `body_producer` produces, then its end, on `connection`; any
    failure closes the connection with its error."""
    stream, protocol = connection.stream, connection.protocol
    try:
        produced = body_producer(lambda data: stream.write(protocol.send_body_data(data)))
        if produced is not None:
            yield produced
        stream.write(protocol.end_body())
    except Exception:
        stream.close(exc_info=True)


def _write_whole(body, write):
    """A body_producer for a `body` given whole."""
    write(body)


def _peer_address(stream):
    """The socket address the stream is connected to, or None if it cannot say."""
    sock = stream.socket  # None once the stream is closed
    if sock is None:
        return None
    try:
        return sock.getpeername()
    except EnvironmentError:  # reset by the peer already
        return None
