"""Tornado 5.1's ``tornado.http1connection``: an HTTP/1.1 connection's messages read into an
`HTTPMessageDelegate` and written through an `HTTPConnection`'s calls, either side.

The server side is httpserver's, re-exported here where 5.1 defined it:
`HTTP1ServerConnection` serves a connection request after request, and its per-request
connection reads a request and writes the response. This module adds the client side:
``HTTP1Connection(stream, True)`` writes a request (`write_headers`, `write`, `finish`) and
reads its response into a delegate (`read_response`), for code that speaks HTTP over a
stream it holds, as Tornado 5.1's tests do to read a raw response. tinytornado's HTTP
client does not use it: its fetches pool their connections (httpclient).
``HTTP1Connection(stream, False, params, context)`` makes a server side connection, whose
`read_response` reads one request.

Invariant: the bytes are parsed by the sans-IO protocols alone (httputil's
`HTTP1ClientProtocol`, _http1server's `HTTP1ServerProtocol`); nothing here reads the
grammar. A response that cannot be read is logged as 5.1 logged it ("Malformed HTTP
message from ...") and closes the connection; the delegate's own exceptions propagate.
"""
from __future__ import absolute_import, division, print_function

import abc

import six

from tinytornado import gen
from tinytornado.concurrent import Future
from tinytornado.httpserver import HTTP1Connection as ServerHTTP1Connection
from tinytornado.httpserver import HTTP1ConnectionParameters, HTTP1ServerConnection
from tinytornado.httputil import (
    NEED_DATA, BodyData, ContentDecoder, EndOfMessage, HTTP1ClientProtocol, HTTPConnection,
    HTTPInputError, InformationalResponse, ResponseStartLine,
)
from tinytornado.iostream import StreamClosedError
from tinytornado.log import gen_log

__all__ = ['HTTP1Connection', 'HTTP1ConnectionParameters', 'HTTP1ServerConnection']

_READ_SIZE = 65536
# The methods whose request has a body even without a Content-Length (sent chunked), as
# 5.1's client connection chose them.
_BODY_METHODS = frozenset(['POST', 'PUT', 'PATCH'])
_BODYLESS_CODES = frozenset([204, 304])


@six.add_metaclass(abc.ABCMeta)
class HTTP1Connection(HTTPConnection):
    """One request and its response over `stream`, client side (Tornado 5.1's class).

    ``HTTP1Connection(stream, False, params, context)`` is the server side instead: an
    httpserver connection, which `isinstance` counts as one of this class's.

    Args:
        stream: an IOStream, connected.
        is_client: True for this, the client side.
        params: an HTTP1ConnectionParameters: `max_header_size`, `max_body_size` (default:
            the stream's max_buffer_size), `chunk_size` (largest piece handed to
            data_received), `header_timeout` and `body_timeout` (seconds, or None),
            `decompress` (decode a gzip or deflate response).
        context: what the log names the peer by (None, as in 5.1's client).

    One request per connection object, as in 5.1: `write_headers` (a RequestStartLine),
    `write`, `finish`, then `read_response`. `read_response` alone reads the response to a
    request written to the stream by other means, as to a GET. Bytes of the stream past
    the response that were read with it are not handed back by `detach`.
    """

    def __new__(cls, stream, is_client, params=None, context=None):
        if not is_client:
            return ServerHTTP1Connection(HTTP1ServerConnection(stream, params, context))
        return super(HTTP1Connection, cls).__new__(cls)

    def __init__(self, stream, is_client, params=None, context=None):
        self.is_client = True
        self.stream = stream
        self.params = params or HTTP1ConnectionParameters()
        self.context = context
        self._io_loop = stream.io_loop
        self._protocol = HTTP1ClientProtocol(max_header_size=self.params.max_header_size)
        self._max_body_size = self.params.max_body_size or stream.max_buffer_size
        self._body_timeout = self.params.body_timeout
        self._request_method = None  # of the request written, if one was
        self._sending_body = False  # a request body is being written
        self._close_callback = None
        self._timer = None
        self._timed_out = False

    # -- writing the request -----------------------------------------------------------------

    def write_headers(self, start_line, headers, chunk=None, callback=None):
        """Write the request's head (a RequestStartLine; its version is ignored: HTTP/1.1)
        and, optionally, the first `chunk` of its body. A POST, PUT or PATCH without a
        Content-Length has its body sent chunked; another method without one has no body.
        `headers` must hold Host. A Future of the write, unless `callback` (5.1's,
        deprecated) is given.

        Raises:
            ValueError: the request is not valid HTTP (see HTTP1ClientProtocol.send_request).
        """
        method = start_line.method
        protocol = self._protocol
        if method in _BODY_METHODS or 'Content-Length' in headers:
            data = protocol.send_request_head(method, start_line.path, headers)
            self._sending_body = True
        else:
            data = protocol.send_request(method, start_line.path, headers)
        self._request_method = method
        if chunk:
            data += protocol.send_body_data(chunk)
        return self._write(data, callback)

    def write(self, chunk, callback=None):
        """Write the next `chunk` of the request body. A Future of the write, unless
        `callback` (5.1's, deprecated) is given.

        Raises:
            HTTPOutputError: more than the Content-Length.
            RuntimeError: the request has no body being written.
        """
        return self._write(self._protocol.send_body_data(chunk), callback)

    def finish(self):
        """The request has been written whole.

        Raises:
            HTTPOutputError: less than the Content-Length was written; the connection is
                closed.
        """
        if not self._sending_body:
            return
        self._sending_body = False
        try:
            data = self._protocol.end_body()
        except Exception:
            self.close()
            raise
        if data:
            self._write(data, None)

    def _write(self, data, callback):
        if self.stream is None or self.stream.closed():
            future = Future()
            future.set_exception(StreamClosedError())
            future.exception()  # retrieved: the caller may ignore it, as 5.1's callers do
            return future
        if callback is not None:
            return self.stream.write(data, callback=callback)
        return self.stream.write(data)

    # -- reading the response ----------------------------------------------------------------

    @gen.coroutine
    def read_response(self, delegate):
        """Read the response into `delegate` (an HTTPMessageDelegate: headers_received,
        called for each 1xx head too, as in 5.1; data_received; finish). A Future of True
        once it was read whole; False if it could not be, the connection then closed (and
        a malformed response logged), or if a timeout closed it or `detach` took it.
        """
        if self._request_method is None:
            self._protocol.expect_response()
        delegate_open = False  # headers_received was called, finish not yet
        decoder = None
        body_size = 0
        try:
            self._start_timer(self.params.header_timeout, body=False)
            while True:
                event = yield self._next_event()
                if event is None:
                    raise gen.Return(False)
                kind = event.__class__
                if kind is BodyData:
                    body_size += len(event.data)
                    if body_size > self._max_body_size:
                        raise HTTPInputError('response body too large: more than '
                                             'max_body_size (%d bytes)' % self._max_body_size)
                    data = event.data if decoder is None else decoder.decompress(event.data)
                    yield self._deliver(delegate, data)
                elif kind is EndOfMessage:
                    self._stop_timer()
                    delegate_open = False
                    self._clear_callbacks()
                    delegate.finish()
                    raise gen.Return(True)
                else:  # a head: 1xx or final
                    self._stop_timer()
                    if kind is not InformationalResponse:
                        self._check_length(event)
                        decoder = self._decoder(event.headers)
                    delegate_open = True
                    yield gen.maybe_future(delegate.headers_received(
                        ResponseStartLine(event.version, event.code, event.reason),
                        event.headers))
                    if self.stream is None:  # detached: the delegate has the stream now
                        delegate_open = False
                        raise gen.Return(False)
                    self._start_timer(self._body_timeout, body=True)
        except HTTPInputError as e:
            gen_log.info('Malformed HTTP message from %s: %s', self.context, e)
            self.close()
            raise gen.Return(False)
        except StreamClosedError:  # reset by the peer, or closed by the application
            self.close()
            raise gen.Return(False)
        finally:
            self._stop_timer()
            if delegate_open:
                delegate.on_connection_close()

    @gen.coroutine
    def _next_event(self):
        """The protocol's next event, read for as needed; None once a timeout closed the
        stream or `detach` took it."""
        protocol = self._protocol
        while True:
            event = protocol.next_event()
            if event is not NEED_DATA:
                raise gen.Return(event)
            if self.stream is None or self._timed_out:
                raise gen.Return(None)
            try:
                data = yield self.stream.read_bytes(_READ_SIZE, partial=True)
            except StreamClosedError as e:
                if self.stream is None or self._timed_out:
                    raise gen.Return(None)
                if e.real_error is not None:
                    raise
                data = b''  # a clean close: the protocol judges whether the response ended
            protocol.receive_data(data)

    def _check_length(self, head):
        """A Content-Length over max_body_size fails before the body is read (5.1's words)."""
        length = head.headers.get('Content-Length')
        if (length is not None and length.isdigit() and int(length) > self._max_body_size and
                self._request_method != 'HEAD' and head.code not in _BODYLESS_CODES):
            raise HTTPInputError('Content-Length too long: %s is larger than max_body_size '
                                 '(%d bytes)' % (length, self._max_body_size))

    def _decoder(self, headers):
        """A ContentDecoder if `decompress` is on and the body is encoded (the
        Content-Encoding then moves to X-Consumed-Content-Encoding, as in 5.1), else None."""
        if not self.params.decompress:
            return None
        return ContentDecoder.for_body(headers, self._max_body_size)

    @gen.coroutine
    def _deliver(self, delegate, data):
        """Hand `data` to the delegate in pieces of at most chunk_size, waiting for each
        Future it returns (its flow control)."""
        size = self.params.chunk_size
        for start in range(0, len(data), size):
            yield gen.maybe_future(delegate.data_received(data[start:start + size]))

    def _start_timer(self, seconds, body):
        """Close the connection in `seconds` (if not None) unless _stop_timer is called:
        the response's head, or its `body`, takes too long to arrive."""
        self._stop_timer()
        if seconds and self.stream is not None:
            self._timer = self.stream.io_loop.call_later(seconds, self._time_out, body)

    def _stop_timer(self):
        if self._timer is not None:
            self._io_loop.remove_timeout(self._timer)
            self._timer = None

    def _time_out(self, body):
        self._timer = None
        self._timed_out = True
        if body:  # a late head closes quietly, as in 5.1
            gen_log.info('Timeout reading body from %s', self.context)
        self.close()

    # -- the rest of 5.1's interface --------------------------------------------------------

    def set_body_timeout(self, timeout):
        """Seconds the response's body may take to arrive, from its head (or None)."""
        self._body_timeout = timeout

    def set_max_body_size(self, max_body_size):
        """Largest response body accepted, in bytes."""
        self._max_body_size = max_body_size

    def set_close_callback(self, callback):
        """Call `callback()` if the connection closes before the response was read
        whole (None: no callback)."""
        self._close_callback = callback
        if self.stream is not None:
            self.stream.set_close_callback(None if callback is None else self._on_close)

    def _on_close(self):
        callback, self._close_callback = self._close_callback, None
        if callback is not None:
            callback()

    def _clear_callbacks(self):
        self._close_callback = None
        if self.stream is not None:
            self.stream.set_close_callback(None)

    def detach(self):
        """Take the stream over (this connection lets go of it): returns it."""
        self._stop_timer()
        self._clear_callbacks()
        stream, self.stream = self.stream, None
        return stream

    def close(self):
        """Close the connection."""
        if self.stream is not None:
            self.stream.close()
        self._clear_callbacks()


# The server side's connections are this class's too (for isinstance), as in 5.1.
HTTP1Connection.register(ServerHTTP1Connection)
