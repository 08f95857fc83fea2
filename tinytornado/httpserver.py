"""An HTTP/1.1 server: Tornado 5.1's `HTTPServer`, on the sans-IO `HTTP1ServerProtocol`.

`HTTPServer` is a TCPServer that serves each connection with an `HTTP1ServerConnection`:
one coroutine that reads request after request (keep-alive), hands each to a delegate as it
is read (Tornado's `HTTPMessageDelegate`: `headers_received`, `data_received`, `finish`,
`on_connection_close`), and waits until its response has been written through the
request's `HTTP1Connection` (`write_headers`, `write`, `finish`) before reading the next.
A plain callable is served the whole request at once, as an `HTTPServerRequest`.

A malformed or over-limit request is answered (400, or 431 for a head over
max_header_size) and its connection closed; an application's exception is logged and its
connection closed; a client idle past `idle_connection_timeout` between requests, or slower
than `body_timeout` sending a body, is disconnected. The server itself never fails.
"""
from __future__ import absolute_import, division, print_function

import socket
import sys

from tinytornado import _httpserver_legacy as _legacy
from tinytornado import gen
from tinytornado._compat import throw_exc_info
from tinytornado._http1server import HTTP1ServerProtocol, RequestHead
from tinytornado.concurrent import Future
from tinytornado.httputil import (
    NEED_DATA, BodyData, ConnectionClosed, ContentDecoder, HTTPInputError,
    HTTPMessageDelegate, HTTPServerConnectionDelegate, HTTPServerRequest, RequestStartLine,
    responses,
)
from tinytornado.iostream import SSLIOStream, StreamClosedError
from tinytornado.log import app_log, gen_log
from tinytornado.netutil import is_valid_ip
from tinytornado.tcpserver import TCPServer

__all__ = ['HTTPServer', 'HTTP1ServerConnection', 'HTTP1Connection',
           'HTTP1ConnectionParameters']

_READ_SIZE = 65536
_DEFAULT_IDLE_TIMEOUT = 3600  # Tornado 5.1's
_DEFAULT_MAX_BODY_SIZE = 100 * 1024 * 1024  # Tornado 5.1's (its streams' max_buffer_size)
_LINGER_SECONDS = 2.0  # a refused request's rest is read and dropped this long at most


class HTTP1ConnectionParameters(object):
    """The settings of a server's connections (Tornado 5.1's names).

    Args:
        no_keep_alive: close each connection after one request.
        chunk_size: largest piece of a body handed to `data_received`.
        max_header_size: largest request head, in bytes.
        header_timeout: seconds a connection may wait for a request head (the server's
            idle_connection_timeout).
        max_body_size: largest request body, in bytes.
        body_timeout: seconds a request body may take to arrive, or None.
        decompress: decode gzip or deflate request bodies (Content-Encoding).
    """

    def __init__(self, no_keep_alive=False, chunk_size=None, max_header_size=None,
                 header_timeout=None, max_body_size=None, body_timeout=None, decompress=False):
        self.no_keep_alive = no_keep_alive
        self.chunk_size = chunk_size or _READ_SIZE
        self.max_header_size = max_header_size or 65536
        self.header_timeout = header_timeout
        self.max_body_size = max_body_size
        self.body_timeout = body_timeout
        self.decompress = decompress


class HTTPServer(TCPServer, HTTPServerConnectionDelegate):
    """A non-blocking HTTP/1.1 server (Tornado 5.1's arguments)::

        def handle(request):
            request.connection.write_headers(
                ResponseStartLine('HTTP/1.1', 200, 'OK'), HTTPHeaders({'Content-Length': '2'}))
            request.connection.write(b'ok')
            request.connection.finish()

        server = HTTPServer(handle)
        server.listen(8888)

    Args:
        request_callback: a callable given each whole request (an HTTPServerRequest), or
            an HTTPServerConnectionDelegate (a web Application) that streams them.
        no_keep_alive: one request per connection.
        xheaders: take the client's address and protocol from X-Real-Ip or
            X-Forwarded-For and X-Scheme or X-Forwarded-Proto (behind a proxy).
        ssl_options: serve TLS (an ssl.SSLContext or a dict, as TCPServer takes).
        protocol: the request's protocol ('http' or 'https') when xheaders do not say;
            by default, whether the connection is TLS.
        decompress_request: decode gzip and deflate request bodies.
        chunk_size: largest piece of a body handed to data_received (64 KB).
        max_header_size: largest request head (64 KB); larger ones are answered 431.
        idle_connection_timeout: seconds a connection waits for its next request (3600).
        body_timeout: seconds a body may take to arrive (no limit).
        max_body_size: largest request body (max_buffer_size, or 100 MB); larger ones are
            answered 400.
        max_buffer_size: passed to each stream.
        trusted_downstream: proxy addresses to skip in X-Forwarded-For.
    """

    def __init__(self, request_callback, no_keep_alive=False, xheaders=False,
                 ssl_options=None, protocol=None, decompress_request=False, chunk_size=None,
                 max_header_size=None, idle_connection_timeout=None, body_timeout=None,
                 max_body_size=None, max_buffer_size=None, trusted_downstream=None):
        # chunk_size bounds what data_received is handed, not the socket's reads: reading
        # it in such small pieces would split the body where the reads fell.
        TCPServer.__init__(self, ssl_options=ssl_options, max_buffer_size=max_buffer_size)
        self.request_callback = request_callback
        self.xheaders = xheaders
        self.protocol = protocol
        self.conn_params = HTTP1ConnectionParameters(
            no_keep_alive=no_keep_alive, chunk_size=chunk_size,
            max_header_size=max_header_size,
            header_timeout=idle_connection_timeout or _DEFAULT_IDLE_TIMEOUT,
            max_body_size=max_body_size or max_buffer_size or _DEFAULT_MAX_BODY_SIZE,
            body_timeout=body_timeout, decompress=decompress_request)
        self.trusted_downstream = set(trusted_downstream or [])
        self._connections = set()
        # Whether request_callback (which may be replaced) is a delegate, asked once.
        self._checked_callback = self._callback_is_delegate = None

    @gen.coroutine
    def close_all_connections(self):
        """Close every open connection; resolves once each has stopped serving."""
        while self._connections:
            yield next(iter(self._connections)).close()

    def handle_stream(self, stream, address):
        context = _HTTPRequestContext(stream, address, self.protocol, self.trusted_downstream)
        connection = HTTP1ServerConnection(stream, self.conn_params, context)
        self._connections.add(connection)
        connection.start_serving(self)

    def start_request(self, server_conn, request_conn):
        callback = self.request_callback
        if callback is not self._checked_callback:  # an abc's isinstance is slow on 2.7
            self._checked_callback = callback
            self._callback_is_delegate = isinstance(callback, HTTPServerConnectionDelegate)
        if self._callback_is_delegate:
            delegate = callback.start_request(server_conn, request_conn)
        else:
            delegate = _CallableAdapter(callback, request_conn)
        if self.xheaders:
            delegate = _ProxyAdapter(delegate, request_conn)
        return delegate

    def on_close(self, server_conn):
        self._connections.discard(server_conn)


class _HTTPRequestContext(object):
    """What HTTPServerRequest reads from its connection's `context`: the client's
    `remote_ip` and the `protocol`, which xheaders may replace for one request."""

    def __init__(self, stream, address, protocol, trusted_downstream=None):
        self.address = address
        sock = stream.socket
        self.address_family = sock.family if sock is not None else None
        if self.address_family in (socket.AF_INET, getattr(socket, 'AF_INET6', None)):
            self.remote_ip = address[0]
        else:
            self.remote_ip = '0.0.0.0'  # a Unix socket's client has no IP (Tornado's value)
        if protocol:
            self.protocol = protocol
        else:
            self.protocol = 'https' if isinstance(stream, SSLIOStream) else 'http'
        self._orig_remote_ip = self.remote_ip
        self._orig_protocol = self.protocol
        self.trusted_downstream = set(trusted_downstream or [])

    def __str__(self):
        if self.address_family in (socket.AF_INET, getattr(socket, 'AF_INET6', None)):
            return self.remote_ip
        return str(self.address)

    def apply_xheaders(self, headers):
        """Take the client's address and protocol from a proxy's headers, for one request."""
        ip = self.remote_ip
        # The last address not of a trusted proxy is the client's.
        for candidate in reversed(headers.get('X-Forwarded-For', ip).split(',')):
            ip = candidate.strip()
            if ip not in self.trusted_downstream:
                break
        ip = headers.get('X-Real-Ip', ip)
        if is_valid_ip(ip):
            self.remote_ip = ip
        proto = headers.get('X-Scheme', headers.get('X-Forwarded-Proto', self.protocol))
        proto = proto.split(',')[-1].strip()
        if proto in ('http', 'https'):
            self.protocol = proto

    def unapply_xheaders(self):
        """Back to the connection's own address and protocol (the request is over)."""
        self.remote_ip = self._orig_remote_ip
        self.protocol = self._orig_protocol


class _CallableAdapter(HTTPMessageDelegate):
    """Gathers one request whole for a request_callback."""

    def __init__(self, request_callback, request_conn):
        self.connection = request_conn
        self.request_callback = request_callback
        self.request = None
        self._chunks = []

    def headers_received(self, start_line, headers):
        self.request = HTTPServerRequest(connection=self.connection, start_line=start_line,
                                         headers=headers)

    def data_received(self, chunk):
        self._chunks.append(chunk)

    def finish(self):
        self.request.body = b''.join(self._chunks)
        self.request.parse_body()
        self.request_callback(self.request)

    def on_connection_close(self):
        self._chunks = None


class _ProxyAdapter(HTTPMessageDelegate):
    """Applies xheaders to the connection's context for the length of one request."""

    def __init__(self, delegate, request_conn):
        self.connection = request_conn
        self.delegate = delegate

    def headers_received(self, start_line, headers):
        self.connection.context.apply_xheaders(headers)
        return self.delegate.headers_received(start_line, headers)

    def data_received(self, chunk):
        return self.delegate.data_received(chunk)

    def finish(self):
        self.delegate.finish()
        self.connection.context.unapply_xheaders()

    def on_connection_close(self):
        self.delegate.on_connection_close()
        self.connection.context.unapply_xheaders()


class _DelegateFailed(Exception):
    """The application's delegate raised (logged already): close the connection."""


class HTTP1ServerConnection(object):
    """Serves the requests of one connection, one after another.

    Args:
        stream: the connection's IOStream.
        params: an HTTP1ConnectionParameters.
        context: what requests read as ``request.connection.context`` (remote_ip...).
    """

    def __init__(self, stream, params=None, context=None):
        self.stream = stream
        self.params = params or HTTP1ConnectionParameters()
        self.context = context
        self.protocol = HTTP1ServerProtocol(
            max_header_size=self.params.max_header_size,
            max_body_size=self.params.max_body_size,
            no_keep_alive=self.params.no_keep_alive)
        self._serving_future = None
        # The wait in progress (a head, a body) must end by _deadline (loop time), or None;
        # _alarm, a loop timeout at _alarm_at, checks it. A request moves the deadline and
        # leaves the alarm be (it re-arms itself if it comes early): no timeout made and
        # cancelled per request.
        self._deadline = None
        self._deadline_request = None  # the HTTP1Connection waiting
        self._deadline_body = False  # waiting for a body (else for a head)
        self._alarm = None
        self._alarm_at = None

    def _set_deadline(self, request_conn, seconds, body):
        io_loop = self.stream.io_loop
        deadline = self._deadline = io_loop.time() + seconds
        self._deadline_request = request_conn
        self._deadline_body = body
        if self._alarm is not None:
            if self._alarm_at <= deadline:
                return
            io_loop.remove_timeout(self._alarm)
        self._alarm = io_loop.call_at(deadline, self._check_deadline)
        self._alarm_at = deadline

    def _clear_deadline(self):
        self._deadline = self._deadline_request = None

    def _check_deadline(self):
        self._alarm = None
        if self._deadline is None:
            return
        io_loop = self.stream.io_loop
        if io_loop.time() < self._deadline:  # moved since the alarm was set
            self._alarm = io_loop.call_at(self._deadline, self._check_deadline)
            self._alarm_at = self._deadline
            return
        request_conn = self._deadline_request
        self._clear_deadline()
        request_conn._time_out(self._deadline_body)

    def _cancel_alarm(self):
        self._clear_deadline()
        if self._alarm is not None:
            self.stream.io_loop.remove_timeout(self._alarm)
            self._alarm = None

    @gen.coroutine
    def close(self):
        """Close the connection; resolves once it has stopped serving."""
        self.stream.close()
        if self._serving_future is not None:
            yield self._serving_future  # _serve logs what fails and never raises

    def start_serving(self, delegate):
        """Serve requests, each to the HTTPMessageDelegate that
        ``delegate.start_request(self, request_connection)`` returns (`delegate` being an
        HTTPServerConnectionDelegate), until the connection closes."""
        self._serving_future = self._serve(delegate)

    @gen.coroutine
    def _serve(self, delegate):
        try:
            while True:
                request_conn = HTTP1Connection(self)
                message_delegate = delegate.start_request(self, request_conn)
                # read_request's generator, run here rather than as a coroutine of its
                # own: a request is then no Runner and no Future of its own, and this
                # coroutine waits for what it waits for (most requests: their head).
                steps = request_conn._read_request(message_delegate)
                try:
                    waited = next(steps)
                    while True:
                        try:
                            outcome = yield waited
                        except Exception:
                            waited = throw_exc_info(steps, sys.exc_info())
                        else:
                            waited = steps.send(outcome)
                except gen.Return as returned:
                    keep_going = returned.value
                except _DelegateFailed:
                    self.stream.close()
                    return
                if not keep_going:
                    return
        except Exception:
            gen_log.error('Uncaught exception serving %s', self.context, exc_info=True)
            self.stream.close()
        finally:
            self._cancel_alarm()  # else the loop would hold the connection until it rings
            delegate.on_close(self)


class HTTP1Connection(object):
    """One request of a server connection: reads it into its delegate and writes its
    response (Tornado 5.1's HTTPConnection interface: `write_headers`, `write`, `finish`).

    Attributes:
        stream: the IOStream (None once `detach` has taken it).
        context: the connection's context (remote_ip, protocol).
        params: its HTTP1ConnectionParameters.
    """

    def __init__(self, server_conn):
        self._server_conn = server_conn
        self.stream = server_conn.stream
        self.context = server_conn.context
        self.params = server_conn.params
        self._protocol = server_conn.protocol
        self._response_ended = False  # written whole (or abandoned)
        # A Future of _response_ended, made only when read_request must wait for it (a
        # response written later than its request was read): most are written at once.
        self._response_waiter = None
        self._pending_write = None
        self._close_callback = None
        self._body_timeout = self.params.body_timeout
        self._timed_out = False
        self._write_finished = False

    # -- reading -----------------------------------------------------------------------------

    def _read_request(self, delegate):
        """Read one request into `delegate`: the generator of `read_request`, which the
        server's connection runs inline. It yields only what it must wait for, so that a
        request whose bytes have come and whose response is written at once runs through
        without a pause; it ends with gen.Return(True) if the connection can serve
        another request, gen.Return(False) if it is closed (or detached).

        Raises:
            _DelegateFailed: the delegate raised; the error was logged.
        """
        protocol = self._protocol
        delegate_open = False  # headers_received was called, finish not yet
        decoder = None
        head_read = False
        may_continue = False  # the first read of the body sends 100 Continue if asked
        try:
            while True:
                event = protocol.next_event()
                continuing, may_continue = may_continue, False
                if event is NEED_DATA and not head_read:
                    # A pipelined head needs no wait, hence no timer.
                    self._start_timer(self.params.header_timeout)
                # The one place that waits for bytes: the head's, and the body's.
                while event is NEED_DATA:
                    stream = self.stream
                    if stream is None or (stream.closed() and self._timed_out):
                        event = None
                        break
                    if continuing:
                        continuing = False
                        data = protocol.send_continue()
                        if data and not stream.closed():
                            stream.write(data)
                    try:
                        data = yield stream.read_bytes(_READ_SIZE, partial=True)
                    except StreamClosedError:
                        if self._timed_out or self.stream is None:
                            event = None
                            break
                        data = b''
                    protocol.receive_data(data)
                    event = protocol.next_event()
                if event is None:  # closed by a timeout or the application, or detached
                    raise gen.Return(False)
                kind = event.__class__
                if kind is BodyData:
                    data = event.data if decoder is None else decoder.decompress(event.data)
                    if not self._write_finished:  # else the response did without the body
                        yield self._deliver(delegate, data)
                    continue
                if kind is not RequestHead:
                    break  # EndOfMessage; or ConnectionClosed, in place of a head
                head_read = True
                self._stop_timer()
                decoder = self._decoder(event.headers)
                delegate_open = True
                waiting = self._call(delegate.headers_received,
                                     RequestStartLine(event.method, event.target,
                                                      event.version),
                                     event.headers)
                if waiting is not None:  # a yielded None would give up a loop pass
                    yield waiting
                if self.stream is None:  # detached: the delegate has the stream now
                    delegate_open = False
                    raise gen.Return(False)
                if decoder is not None:  # the delegate may have set this request's limit
                    decoder.max_size = protocol.max_body_size or sys.maxsize
                self._start_timer(self._body_timeout, body=True)
                may_continue = True
            if kind is ConnectionClosed:
                raise gen.Return(False)
            self._stop_timer()
            if not self._write_finished:  # else the response did without the body
                delegate_open = False
                self._call_now(delegate.finish)
            if not self._response_ended and not self.stream.closed():
                self.stream.set_close_callback(self._on_connection_close)
                self._response_waiter = Future()
                yield self._response_waiter
            if self.stream is None:
                raise gen.Return(False)
            if protocol.reusable and not self.stream.closed():
                protocol.start_next_cycle()
                raise gen.Return(True)
            self.stream.close()
            raise gen.Return(False)
        except HTTPInputError as e:  # RequestError, or a body that does not decode
            yield self._refuse(e)
            raise gen.Return(False)
        finally:
            self._stop_timer()
            if delegate_open:
                self._call_quietly(delegate.on_connection_close)
            self._clear_callbacks()

    # Its coroutine: a Future of True if the connection can serve another request, False
    # if it is closed (or detached); _DelegateFailed (logged) if the delegate raised.
    read_request = gen.coroutine(_read_request)

    def _decoder(self, headers):
        """A ContentDecoder for the body if decompress is on and it is encoded (the
        Content-Encoding then moves to X-Consumed-Content-Encoding, as in 5.1), else None."""
        if not self.params.decompress:
            return None
        return ContentDecoder.for_body(headers, self._protocol.max_body_size or sys.maxsize)

    @gen.coroutine
    def _deliver(self, delegate, data):
        """Hand `data` to the delegate in pieces of at most chunk_size, waiting for each
        Future it returns (its flow control)."""
        size = self.params.chunk_size
        for start in range(0, len(data), size):
            yield self._call(delegate.data_received, data[start:start + size])

    def _call(self, method, *args):
        """Call a delegate's method; its Future (or None); _DelegateFailed if it raised."""
        result = self._call_now(method, *args)
        if result is None:
            return None
        checked = Future()

        def check(done):
            if done.exception() is not None:
                app_log.error('Uncaught exception', exc_info=done.exc_info())
                checked.set_exception(_DelegateFailed())
            else:
                checked.set_result(None)
        gen.convert_yielded(result).add_done_callback(check)
        return checked

    def _call_now(self, method, *args):
        """Call a delegate's method and return what it returns; _DelegateFailed (the
        error logged) if it raised."""
        try:
            return method(*args)
        except Exception:
            app_log.error('Uncaught exception', exc_info=True)
            raise _DelegateFailed()

    def _call_quietly(self, method):
        try:
            method()
        except Exception:
            app_log.error('Uncaught exception', exc_info=True)

    @gen.coroutine
    def _refuse(self, error):
        """Answer a request the server cannot read (if an answer is due and none has
        begun), then close the connection."""
        stream = self.stream
        code = getattr(error, 'code', 400)
        if code is None or stream is None:  # the client left mid-request; or detached
            if stream is not None:
                stream.close()
            return
        gen_log.info('Malformed HTTP message from %s: %s', self.context, error)
        if not self._protocol.response_started and not stream.closed():
            try:
                # Its body ends where the connection does: it is empty.
                yield stream.write(('HTTP/1.1 %d %s\r\n\r\n'
                                    % (code, responses.get(code, 'Error'))).encode('ascii'))
            except StreamClosedError:
                pass  # the client left first: nothing more to tell it
            else:
                yield self._linger(stream)
        stream.close()

    @gen.coroutine
    def _linger(self, stream):
        """Half-close and drop what the client still sends (a body refused as too large),
        for at most _LINGER_SECONDS: closing with its bytes unread would make the kernel
        reset the connection, which can destroy the answer before the client reads it."""
        if isinstance(stream, SSLIOStream) or stream.socket is None:
            return  # TLS has its own close; a plain shutdown would cut it short
        try:
            stream.socket.shutdown(socket.SHUT_WR)  # the client sees the answer end
        except socket.error:
            return  # the client is gone already
        io_loop = stream.io_loop
        timer = io_loop.call_later(_LINGER_SECONDS, stream.close)
        try:
            while True:
                yield stream.read_bytes(_READ_SIZE, partial=True)
        except StreamClosedError:
            pass  # the client closed its side, or the time is up
        finally:
            io_loop.remove_timeout(timer)

    def _start_timer(self, seconds, body=False):
        """Close the connection in `seconds` (if not None) unless _stop_timer is called:
        it waits too long for a request head, or for a `body`."""
        if seconds:
            self._server_conn._set_deadline(self, seconds, body)
        else:
            self._server_conn._clear_deadline()

    def _stop_timer(self):
        self._server_conn._clear_deadline()

    def _time_out(self, body):
        self._timed_out = True
        if body:  # an idle connection closes quietly, as in 5.1
            gen_log.info('Timeout reading body from %s', self.context)
        self._server_conn.stream.close()

    # -- Tornado 5.1's HTTPConnection interface ----------------------------------------------

    # 5.1's name, shared with its client side (http1connection): it reads the peer's message.
    read_response = read_request

    def set_body_timeout(self, timeout):
        """Seconds this request's body may take to arrive (from headers_received)."""
        self._body_timeout = timeout

    def set_max_body_size(self, max_body_size):
        """Largest body this request may have (from headers_received)."""
        self._protocol.max_body_size = max_body_size

    def set_close_callback(self, callback):
        """Call `callback` if the connection closes before this request's response ends."""
        self._close_callback = callback

    def _on_connection_close(self):
        callback, self._close_callback = self._close_callback, None
        if callback is not None:
            self._call_quietly(callback)
        self._end_response()
        self._clear_callbacks()

    def _end_response(self):
        if not self._response_ended:
            self._response_ended = True
            if self._response_waiter is not None:
                self._response_waiter.set_result(None)

    def _clear_callbacks(self):
        self._close_callback = None
        if self.stream is not None:
            self.stream.set_close_callback(None)

    def detach(self):
        """Take the stream over (the server lets go of the connection): returns it."""
        self._clear_callbacks()
        stream, self.stream = self.stream, None
        self._end_response()
        return stream

    def write_headers(self, start_line, headers, chunk=None, callback=None):
        """Write the response's head (a ResponseStartLine; its version is ignored) and,
        optionally, the first `chunk` of its body. A Future of the write, unless `callback`
        (Tornado 5.1's, deprecated) is given."""
        if self.stream is None or self.stream.closed():
            return self._closed_write()
        try:
            data = self._protocol.send_response_head(start_line.code, start_line.reason,
                                                     headers)
        except Exception:
            self.stream.close()  # no head can follow a refused one: the client must not wait
            raise
        if chunk:
            data += self._frame(chunk)
        return self._write(data, callback)

    def write(self, chunk, callback=None):
        """Write the next `chunk` of the body. A Future of the write, unless `callback`
        (Tornado 5.1's, deprecated) is given.

        Raises:
            HTTPOutputError: more than the Content-Length; the connection is closed.
        """
        if self.stream is None or self.stream.closed():
            return self._closed_write()
        return self._write(self._frame(chunk), callback)

    def finish(self):
        """The response has been written whole.

        Raises:
            HTTPOutputError: less than the Content-Length was written; the connection is
                closed.
        """
        try:
            data = self._protocol.end_body()
        except Exception:
            if self.stream is not None:
                self.stream.close()
            raise
        self._write_finished = True
        if self.stream is None or self.stream.closed():
            self._finish_request()
            return
        if data:
            self._pending_write = self.stream.write(data)
        if self._pending_write is None or self._pending_write.done():
            self._finish_request()
        else:
            self._pending_write.add_done_callback(lambda future: self._finish_request())

    def close(self):
        """Close the connection."""
        if self.stream is not None:
            self.stream.close()
        self._clear_callbacks()
        self._end_response()

    def _frame(self, chunk):
        try:
            return self._protocol.send_body_data(chunk)
        except Exception:
            self.stream.close()
            raise

    def _write(self, data, callback):
        future = self._pending_write = self.stream.write(data)
        if callback is not None:
            _legacy.call_when_written(self.stream.io_loop, future, callback)
            return None
        return future

    def _closed_write(self):
        future = Future()
        future.set_exception(StreamClosedError())
        future.exception()  # retrieved: the caller may ignore it, as 5.1's callers do
        return future

    def _finish_request(self):
        # The protocol says whether the connection carries another request; read_request
        # acts on it once this resolves.
        if self._protocol.request_body_unread and self.stream is not None:
            # Answered before its body was read (a streaming handler's early error): as in
            # 5.1, close rather than wait for a body nobody will read.
            self.stream.close()
        self._end_response()
