"""An HTTP/1.1 client with keep-alive: `AsyncHTTPClient.fetch` -> Future of `HTTPResponse`.

The names and behaviour are Tornado 5.1's (`HTTPRequest`, `HTTPResponse`, `HTTPClientError`,
one client per IOLoop, `configure`), with a connection pool where Tornado's simple client
opened a connection per request.

How a fetch runs: it waits for a *slot* in the pool (at most `max_clients` requests in
flight, at most `max_host_clients` per (scheme, host, port)), bounded only by
`queue_timeout`; then its own clock starts (Tornado #1400: time in the queue does not eat
`request_timeout`). It takes the most recently used idle connection to that origin, or opens
one (`connect_timeout`), writes the request, and feeds what it reads to the sans-IO
`HTTP1ClientProtocol` until the response ends. A connection both sides allow to go on
returns to the pool; any error closes it, and ends the fetch with an exception that says
what went wrong.

The parts: `_httprequest` (what a request means on the wire), `_http1connection` (one
request and its response over one connection), `_httppool` (slots and idle connections),
`_httperrors` (the errors, public here).
"""
from __future__ import absolute_import, division, print_function

import io
import time
import weakref

from six.moves import http_client

from tinytornado import gen
from tinytornado._compat import overrides, text_type
from tinytornado._configurable import Configurable
from tinytornado._http1connection import (
    Exchange, HeaderTooLargeClientError, HTTPInputClientError, NoResponseClientError,
    RecordedExchange, client_error, data_at_close,
)
from tinytornado._httperrors import HTTPClientError, HTTPStreamClosedError, HTTPTimeoutError
from tinytornado._httppool import ConnectionPool, SlotWaiter
from tinytornado._httprequest import (
    RARE_OPTION_DEFAULTS, RARE_OPTIONS, RareOptions, RequestProxy, SSLContexts, native_url,
    redirected_request,
)
from tinytornado.concurrent import CancelledError, Future, future_set_exc_info
from tinytornado.httputil import HTTPHeaders, DEFAULT_MAX_HEADER_SIZE, format_timestamp
from tinytornado.ioloop import IOLoop
from tinytornado.iostream import StreamClosedError
from tinytornado.netutil import OverrideResolver, Resolver
from tinytornado.tcpclient import TCPClient

__all__ = [
    'AsyncHTTPClient', 'HTTPClient', 'HTTPRequest', 'HTTPResponse', 'HTTPClientError',
    'HTTPError', 'HTTPTimeoutError', 'HTTPStreamClosedError', 'HTTPInputClientError',
    'NoResponseClientError', 'HeaderTooLargeClientError',
]

_DEFAULT_MAX_BUFFER_SIZE = 100 * 1024 * 1024  # Tornado's; also the default max_body_size

HTTPError = HTTPClientError  # Tornado's older name

_CODE_ERROR = object()  # an HTTPResponse's error: the HTTPClientError of its code, not made yet


class HTTPRequest(RareOptions):
    """One HTTP request, with Tornado 5.1's arguments.

    Arguments left as None take the client's defaults (`HTTPRequest._DEFAULTS`, changed
    with ``AsyncHTTPClient.configure(None, defaults={...})``). Beyond Tornado:
    `max_body_size` (default: the client's) limits the body, before and after decoding;
    `head_callback` sees the response's head as parsed; `sent_callback` tells when the
    request goes out; `wire_recorder` sees the bytes as they pass on the connection.
    Not supported (fetch raises NotImplementedError): proxies. `prepare_curl_callback` is
    ignored, as by Tornado's simple client.

    Args:
        url: 'http://...' or 'https://...'; user:password@ in it means basic auth.
        headers: a dict or HTTPHeaders; fetch works on a copy.
        body: bytes or text (sent as UTF-8); needed by POST, PATCH and PUT (or a
            `body_producer`), refused elsewhere, unless `allow_nonstandard_methods`.
        body_producer: ``f(write)``, which produces the body instead of `body` (not
            both): it calls ``write(chunk)`` (bytes) for each piece, which returns a
            Future resolved once the piece has been sent, and returns None or what to
            wait on (a Future, or a coroutine's) until the body is whole. Sent chunked,
            unless `headers` give its Content-Length, which the pieces must then add up
            to (else the fetch fails with httputil.HTTPOutputError). It runs while the
            response is read; an exception it raises (or its Future's) ends the fetch.
            Called again for a 307 or 308 redirect followed, which sends the body again;
            a request with one is never retried, and cannot have a `wire_recorder`.
        expect_100_continue: for a request with a body (given or produced), send
            "Expect: 100-continue" with the head and hold the body back (a body_producer
            is not called) until the server answers "100 Continue". A final response in
            its place (a 403, say) is the fetch's, as any other: the body is never sent,
            and the connection is not kept. As in Tornado 5.1, the client waits for the
            100 until request_timeout. Ignored without a body (Tornado 5.1 sent the
            header all the same); a request with it cannot have a `wire_recorder`.
        connect_timeout, request_timeout: seconds (default 20 each); 0 or None for no
            limit. Both start once the request has a slot, not when fetch is called.
        follow_redirects, max_redirects: follow 301/302/303/307/308, at most this many
            times (default: True, 5).
        decompress_response: ask for and decode gzip and deflate (default True);
            `use_gzip` is its old name.
        streaming_callback: ``f(chunk)`` for each piece of the (decoded) body, which is
            then not kept in the response.
        header_callback: ``f(line)`` for the status line, each header line and the
            blank line that ends them, as native strings with CRLF. An exception raised
            by either callback ends the fetch with that error (and closes the connection).
        head_callback: ``f(head)`` with the `httputil.ResponseHead` (version, code, reason
            and the response's own HTTPHeaders) once it is parsed, before the body: what
            header_callback's lines say, without making and parsing them again. Called
            after header_callback; an exception ends the fetch in the same way.
        sent_callback: ``f()`` each time the request has been written to a connection
            (its bytes handed to the socket; with a body_producer, its head and what the
            producer wrote before its first wait; with expect_100_continue, its head),
            once that connection is open: the moment the server can see it, which may be
            well after fetch was called (a slot to wait for, a connection to open). Called
            again for each redirect followed and for a retry on a new connection; never
            for a request whose connection could not be made. An exception ends the
            fetch as above.
        wire_recorder: an object shown the bytes exchanged with the server, as they
            pass on the connection (for an archive such as a WARC file, or a trace); None
            (the default) costs a fetch nothing. For each request written, once
            sent_callback returned (each redirect followed, a retry on a new connection):
            ``request_sent(url, address, data)``: `url` the URL asked for (this hop's),
            `address` the server's socket address (``socket.getpeername()``; None if it
            cannot be known), `data` the request's bytes as written (head and body).
            Then ``response_data(data)`` with the bytes read for its response, piece by
            piece as they came, before anything is decoded: the status line, the headers
            and the body with its chunked framing and Content-Encoding as sent (with a
            1xx head before it, if the server sent one). ``response_ended()`` once that
            response was read whole: a request that fails, or whose fetch is cancelled,
            gets no response_ended (nor does the first try of a retried request). An
            exception raised by one of them ends the fetch as a callback's does.
        validate_cert, ca_certs, client_cert, client_key, ssl_options: TLS settings;
            `ssl_options` (an SSLContext or a dict) overrides the others.
    """

    _DEFAULTS = dict(
        connect_timeout=20.0, request_timeout=20.0, follow_redirects=True, max_redirects=5,
        decompress_response=True, proxy_password='', allow_nonstandard_methods=False,
        validate_cert=True, allow_ipv6=True, auth_mode='basic')

    def __init__(self, url, method='GET', headers=None, body=None, auth_username=None,
                 auth_password=None, auth_mode=None, connect_timeout=None,
                 request_timeout=None, if_modified_since=None, follow_redirects=None,
                 max_redirects=None, user_agent=None, use_gzip=None, network_interface=None,
                 streaming_callback=None, header_callback=None, prepare_curl_callback=None,
                 proxy_host=None, proxy_port=None, proxy_username=None, proxy_password=None,
                 proxy_auth_mode=None, allow_nonstandard_methods=None, validate_cert=None,
                 ca_certs=None, allow_ipv6=None, client_key=None, client_cert=None,
                 body_producer=None, expect_100_continue=False, decompress_response=None,
                 ssl_options=None, max_body_size=None, head_callback=None,
                 sent_callback=None, wire_recorder=None):
        self._headers = headers  # an HTTPHeaders made on first use, if None
        if if_modified_since:
            self.headers['If-Modified-Since'] = format_timestamp(if_modified_since)
        self.url = native_url(url)
        self.method = method
        self.body = body
        self.auth_username, self.auth_password, self.auth_mode = (
            auth_username, auth_password, auth_mode)
        self.connect_timeout, self.request_timeout = connect_timeout, request_timeout
        self.follow_redirects, self.max_redirects = follow_redirects, max_redirects
        self.user_agent = user_agent
        self.decompress_response = (use_gzip if decompress_response is None
                                    else decompress_response)
        self.allow_ipv6 = allow_ipv6
        self.streaming_callback, self.header_callback = streaming_callback, header_callback
        self.head_callback, self.sent_callback = head_callback, sent_callback
        self.allow_nonstandard_methods = allow_nonstandard_methods
        self.validate_cert, self.ssl_options = validate_cert, ssl_options
        self.max_body_size = max_body_size
        given = (wire_recorder, prepare_curl_callback, network_interface, proxy_host,
                 proxy_port, proxy_username, proxy_password, proxy_auth_mode, ca_certs,
                 client_key, client_cert, body_producer, expect_100_continue)
        if given != RARE_OPTION_DEFAULTS:
            for name, value, default in zip(RARE_OPTIONS, given, RARE_OPTION_DEFAULTS):
                if value is not default:
                    setattr(self, name, value)
        self.start_time = time.time()

    @property
    def headers(self):
        if self._headers is None:
            self._headers = HTTPHeaders()
        return self._headers

    @headers.setter
    def headers(self, value):
        self._headers = value

    @property
    def body(self):
        return self._body

    @body.setter
    def body(self, value):
        self._body = value.encode('utf-8') if isinstance(value, text_type) else value

    def __repr__(self):
        return '<HTTPRequest %s %s>' % (self.method, self.url)


class _RequestProxy(RequestProxy):
    """Tornado 5.1's (private) name for a request seen through a client's defaults, for
    code that makes one itself: an attribute the request leaves None reads as its value in
    `defaults`, or None when `defaults` lacks it or is None. Unlike 5.1's, it reads the
    request when made, as the fetch's own does; `request` and `defaults` are the two given.
    """

    def __init__(self, request, defaults):
        super(_RequestProxy, self).__init__(request, {} if defaults is None else defaults)
        self.defaults = defaults


class HTTPResponse(object):
    """The response to an HTTPRequest (Tornado 5.1's attributes).

    Attributes:
        request: the HTTPRequest fetched (the first one, when redirects were followed);
            given a request proxy (`_RequestProxy`), the request behind it.
        code, reason: the status; 599 when the request failed without a response.
        headers: an HTTPHeaders. A Content-Encoding that was decoded is moved to
            X-Consumed-Content-Encoding.
        body: bytes (b'' with a streaming_callback, None after a failure); `buffer` is a
            BytesIO of it, made on first use.
        effective_url: the URL of the response, after redirects.
        error: None, an HTTPClientError for a non-2xx code, or what made the request fail.
        request_time: seconds from the request getting its slot to the end of the response;
            time_info['queue'] says how long it waited for that slot.
        start_time: the wall-clock time (time.time()) when the request got its slot.
    """

    def __init__(self, request, code, headers=None, buffer=None, effective_url=None,
                 error=None, request_time=None, time_info=None, reason=None,
                 start_time=None):
        # A proxy's request: a response made from what a fetch sees refers to what was asked.
        self.request = request.request if isinstance(request, RequestProxy) else request
        self.code = code
        self.reason = reason or http_client.responses.get(code, 'Unknown')
        self.headers = headers if headers is not None else HTTPHeaders()
        self._buffer = buffer
        self._body = None
        self.effective_url = request.url if effective_url is None else effective_url
        if error is None and not 200 <= code < 300:
            error = _CODE_ERROR
        self._error = error
        self.request_time = request_time
        self.time_info = time_info or {}
        self.start_time = start_time

    @property
    def error(self):
        # The HTTPClientError of a non-2xx code is made when first asked for: it refers
        # back to the response, and a crawl that never looks at it would leave a cycle
        # (a body held until the garbage collector runs) per 404 or redirect.
        if self._error is _CODE_ERROR:
            self._error = HTTPClientError(self.code, message=self.reason, response=self)
        return self._error

    @error.setter
    def error(self, value):
        self._error = value

    @property
    def body(self):
        if self._body is None and self._buffer is not None:
            self._body = self._buffer.getvalue()
        return self._body

    @property
    def buffer(self):
        if self._buffer is None and self._body is not None:
            self._buffer = io.BytesIO(self._body)
        return self._buffer

    def rethrow(self):
        """Raise `error`, if there is one."""
        if self.error:
            raise self.error

    def __repr__(self):
        return 'HTTPResponse(%s)' % ','.join(
            '%s=%r' % (name, getattr(self, name)) for name in self._REPR_FIELDS)

    # Tornado 5.1's repr, 'HTTPResponse(code=200,...)', without the headers and body.
    _REPR_FIELDS = ('code', 'effective_url', 'error', 'reason', 'request', 'request_time')


# --- The client ----------------------------------------------------------------------------

class AsyncHTTPClient(Configurable):
    """A non-blocking HTTP client with a keep-alive connection pool.

    ``AsyncHTTPClient()`` returns the client of the current IOLoop, made on first use;
    ``AsyncHTTPClient(force_instance=True)`` a new one of its own. As in Tornado 5.1, each
    class called keeps its own client per IOLoop, and calling the base makes the class
    `configure` chose (`SimpleAsyncHTTPClient` by default). Keyword arguments apply only when
    a client is made (``configure`` sets them for every client the base makes after):

    Args:
        max_clients: most requests in flight, and most connections open, at once (10).
        max_host_clients: most requests in flight to one (scheme, host, port)
            (default: max_clients).
        queue_timeout: most seconds a request waits for a slot (default: no limit); then
            it fails with HTTPTimeoutError('Timeout in request queue').
        hostname_mapping: {host: address} rewrites for name resolution (for tests).
        resolver: a netutil.Resolver (default: a new one, closed with the client).
        max_buffer_size: most unread bytes a connection holds (100 MB).
        max_header_size: largest response head accepted (64 KB).
        max_body_size: default for HTTPRequest.max_body_size (max_buffer_size).
        defaults: HTTPRequest attribute defaults, e.g. ``dict(user_agent='bot/1')``.
    """

    _instance_caches = {}  # class -> WeakKeyDictionary(IOLoop -> client)

    def __new__(cls, force_instance=False, **kwargs):
        io_loop = IOLoop.current()
        cache = None
        if not force_instance:
            cache = AsyncHTTPClient._instance_caches.setdefault(cls, weakref.WeakKeyDictionary())
            if io_loop in cache:
                return cache[io_loop]
        impl, init_kwargs = cls._impl_and_kwargs(kwargs)
        instance = super(AsyncHTTPClient, cls).__new__(impl)
        instance._instance_cache = cache
        # Decided once per client, so that the native fetch pays one attribute test.
        instance._fetch_impl_overridden = overrides(impl, AsyncHTTPClient, 'fetch_impl')
        instance.initialize(**init_kwargs)
        if cache is not None:
            cache[io_loop] = instance
        return instance

    @classmethod
    def _impl_and_kwargs(cls, kwargs):
        if cls is not AsyncHTTPClient:
            return cls, kwargs
        init_kwargs = dict(AsyncHTTPClient.configured()[1])
        init_kwargs.update(kwargs)
        return AsyncHTTPClient.configured_class(), init_kwargs

    @classmethod
    def configurable_base(cls):
        return AsyncHTTPClient

    @classmethod
    def configurable_default(cls):
        return SimpleAsyncHTTPClient

    def initialize(self, max_clients=10, max_host_clients=None, queue_timeout=None,
                   hostname_mapping=None, max_buffer_size=_DEFAULT_MAX_BUFFER_SIZE,
                   resolver=None, defaults=None, max_header_size=None, max_body_size=None):
        self.io_loop = IOLoop.current()
        self.defaults = dict(HTTPRequest._DEFAULTS)
        self.defaults['max_body_size'] = max_body_size or max_buffer_size
        if defaults is not None:
            self.defaults.update(defaults)
        self.max_clients = max_clients
        self.max_buffer_size = max_buffer_size
        self.max_header_size = max_header_size or DEFAULT_MAX_HEADER_SIZE
        self._own_resolver = resolver is None
        resolver = resolver or Resolver()
        if hostname_mapping is not None:
            resolver = OverrideResolver(resolver, hostname_mapping)
        self.resolver = resolver
        self.tcp_client = TCPClient(resolver=resolver)
        self._pool = ConnectionPool(self.io_loop, max_clients,
                                    max_host_clients or max_clients, queue_timeout)
        self._ssl_contexts = SSLContexts()
        self._closed = False

    def close(self):
        """Close the idle connections and stop taking requests; those in flight finish.

        Needed only for a client made with force_instance, or to forget the IOLoop's one.
        """
        if self._closed:
            return
        self._closed = True
        self._pool.close()
        if self._own_resolver:
            self.resolver.close()
        if self._instance_cache is not None:
            if self._instance_cache.get(self.io_loop) is not self:
                raise RuntimeError('inconsistent AsyncHTTPClient cache')
            del self._instance_cache[self.io_loop]

    def fetch(self, request, callback=None, raise_error=True, **kwargs):
        """Fetch `request` (an HTTPRequest, or a URL with HTTPRequest's keyword arguments).

        Returns a Future of the HTTPResponse. With `raise_error` (the default) it fails
        instead: with HTTPClientError for a non-2xx response (the response attached), and
        with the error itself when there was no response (an HTTPTimeoutError, a socket
        error such as a refused connection...). A response that could not be read
        (malformed, cut short, over max_header_size or max_body_size) fails it with an
        HTTPInputClientError: both an httputil.HTTPInputError that says what was wrong
        and, as in Tornado 5.1, an HTTPStreamClosedError (code 599); NoResponseClientError
        if the connection closed before the response began; HeaderTooLargeClientError
        (also 5.1's iostream.UnsatisfiableReadError) for a head over max_header_size.
        With ``raise_error=False`` every outcome is a response, code 599 when there was
        none. Cancelling the Future
        abandons the request and closes its connection.

        `callback` (deprecated, as in Tornado 5.1) is called on the loop with the
        HTTPResponse, whatever the outcome: a failure is a response whose `error` is set
        (code 599 when there was no response). The Future is returned all the same, and
        `raise_error` still decides how it ends; the callback is not called for a fetch
        whose Future was cancelled.

        A subclass that overrides `fetch_impl` (a mock client, as in 5.1) gets the request
        there instead, and its response ends the Future as described.
        """
        if callback is not None:
            return _legacy.fetch_with_callback(self, request, callback, raise_error, kwargs)
        if self._closed:
            raise RuntimeError('fetch() called on closed AsyncHTTPClient')
        if not isinstance(request, HTTPRequest):
            request = HTTPRequest(url=request, **kwargs)
        elif kwargs:
            raise ValueError("kwargs can't be used if request is an HTTPRequest object")
        # Ours to add to: a copy of the request's, or new ones (not made twice).
        headers = request._headers
        request.headers = HTTPHeaders() if headers is None else HTTPHeaders(headers)
        request = RequestProxy(request, self.defaults)
        if self._fetch_impl_overridden:
            return _legacy.fetch_through_impl(self, request, raise_error)
        return self._start_fetch(request, raise_error)

    def fetch_impl(self, request, callback):
        """Tornado 5.1's hook for a client of another kind: fetch `request` and call
        ``callback(response)`` once, with the HTTPResponse whatever the outcome (code 599
        and its `error` when there was no response).

        `fetch` calls it only in a subclass that overrides it, with the request seen
        through the client's defaults (a `_RequestProxy`); such a subclass may still call
        this one (through super) for a real fetch.
        """
        self._start_fetch(request, False).add_done_callback(
            lambda future: callback(future.result()))

    def _start_fetch(self, request, raise_error):
        """The Future of the native fetch of `request` (a RequestProxy)."""
        try:
            exchange = (Exchange if request.wire_recorder is None else RecordedExchange)(
                request, self.io_loop, self._ssl_contexts)
        except Exception:
            # Refused before it could be sent: the coroutine meets the same error again
            # and makes the failed response, as for any failure of a later hop.
            return self._fetch(request, raise_error, None, None)
        host = self._pool.try_acquire(exchange.key)
        if host is None:
            return self._pool.wait(exchange.key,
                                   _QueuedFetch(self, request, raise_error, exchange)).future
        return self._fetch(request, raise_error, exchange, host)

    @gen.coroutine
    def _fetch(self, request, raise_error, exchange, host):
        """The fetch of `request`, its first hop's `exchange` holding a slot at `host`
        (both None: the coroutine makes them, and meets what refused them)."""
        # One flat coroutine for the whole fetch, redirects and a retry included: it is a
        # crawl's hot path, and each nested coroutine would add a generator, a Runner and a
        # Future per hop.
        original_request = request.request
        slot = host
        while True:
            try:
                if host is None:  # a redirect's hop, or a first one refused
                    exchange = (Exchange if request.wire_recorder is None else
                                RecordedExchange)(request, self.io_loop, self._ssl_contexts)
                    slot = self._pool.acquire(exchange.key)
                    host = (yield slot) if slot.__class__ is Future else slot
                exchange.start()
                exchange.connection = self._pool.take_idle(host)
                while True:
                    if exchange.connection is None:
                        yield exchange.connect(self.tcp_client, self.max_buffer_size,
                                               self.max_header_size)
                    exchange.send()
                    try:
                        while not exchange.receive():
                            try:
                                data = yield exchange.read()
                            except StreamClosedError as e:
                                data = data_at_close(e)
                            exchange.feed(data)
                        break
                    except Exception as e:
                        if not exchange.may_retry(e):
                            raise
                        exchange.drop_connection()
                self._pool.release(host, exchange.keep_connection())
            except CancelledError:
                self._abandon(exchange, slot)
                slot = None  # it holds the CancelledError, whose traceback holds this frame
                raise
            except Exception as e:
                self._abandon(exchange, slot)
                # Raised here, so that no local names the error once it leaves (Python 3
                # unbinds `e`; a 2.7 exception holds no traceback): its traceback holds this
                # frame, and a local naming it would make a cycle keeping the frame (the
                # exchange, the request's callbacks...) until the garbage collector runs.
                raise _outcome(_response(original_request, exchange, client_error(e)),
                               raise_error)
            if not exchange.redirect:
                raise _outcome(_response(original_request, exchange), raise_error)
            request = redirected_request(request, exchange.code,
                                         exchange.response_headers['Location'])
            exchange = slot = host = None

    def _abandon(self, exchange, slot):
        """An error or a cancellation: close what the exchange had open, give back the slot."""
        if exchange is not None:
            exchange.abandon()
        if slot.__class__ is Future:
            # Granted while this coroutine waited to resume, the slot is held all the same.
            slot = slot.result() if _granted(slot) else None
        if slot is not None:
            self._pool.release(slot, None)


class SimpleAsyncHTTPClient(AsyncHTTPClient):
    """Tornado 5.1's name for its client, public in `tinytornado.simple_httpclient`: the
    class ``AsyncHTTPClient()`` makes unless configured otherwise.

    A class of its own, not a second name, so that ``SimpleAsyncHTTPClient(**kwargs)`` is
    5.1's: a client of the IOLoop's kept apart from ``AsyncHTTPClient()``'s, made with those
    arguments, which tests give it (``hostname_mapping``, ``resolver``) while the default
    client exists.
    """
    __module__ = 'tinytornado.simple_httpclient'


class _QueuedFetch(SlotWaiter):
    """A fetch waiting in the pool's queue for a slot, as a plain Future; its coroutine
    starts once the pool grants one, and passes its outcome on.

    A fetch that times out or is cancelled while queued then leaves in O(1): out of the
    queue, its Future failed, and no coroutine to resume for its clean-up (10,000 queued
    fetches timing out together were each resumed only to give up). Until the coroutine
    starts, the exchange has no clock, no connection and no body: nothing to abandon.
    """
    __slots__ = ('client', 'request', 'raise_error', 'exchange', 'future', 'running',
                 'has_slot')

    def __init__(self, client, request, raise_error, exchange):
        self.client, self.request, self.raise_error = client, request, raise_error
        self.exchange = exchange
        self.future = Future()
        self.future.set_canceller(self.cancel)
        self.running = None  # the coroutine's Future, once started
        self.has_slot = False

    def cancel(self):
        if self.running is not None:
            return self.running.cancel()
        if self.has_slot:  # granted, the coroutine not started yet: hand the slot on
            self.client._pool.release(self.host, None)
        else:
            self.client._pool.stop_waiting(self)
        self.future.set_cancelled()
        return True

    def granted(self):
        self.has_slot = True
        # On the loop, not in this stack: the pool grants slots while it serves its
        # queue, which the fetch's coroutine must not re-enter.
        self.client.io_loop.add_callback(self._start)

    def timed_out(self, error):
        _end_fetch(self.future, _response(self.request.request, self.exchange, error),
                   self.raise_error)

    def _start(self):
        if self.future.done():  # cancelled meanwhile, and the slot handed on
            return
        self.running = self.client._fetch(self.request, self.raise_error, self.exchange,
                                          self.host)
        self.running.add_done_callback(self._finished)

    def _finished(self, running):
        exc_info = running.exc_info()
        if exc_info is None:
            self.future.set_result(running.result())
        else:
            future_set_exc_info(self.future, exc_info)


def _granted(slot):
    return slot.done() and not slot.cancelled() and slot.exception() is None


def _end_fetch(future, response, raise_error):
    """Resolve a fetch's `future` as it ends with `response`: see `_outcome`."""
    outcome = _outcome(response, raise_error)
    if isinstance(outcome, gen.Return):
        future.set_result(response)
    else:
        future.set_exception(outcome)


def _outcome(response, raise_error):
    """What the fetch raises to end with `response`: its error (raise_error), or Return."""
    error = response.error if raise_error else None
    if not error:
        return gen.Return(response)
    if isinstance(error, HTTPClientError):
        error.response = response
    return error


def _response(request, exchange, error=None):
    """The HTTPResponse that ends the fetch of `request` (the original one): the last
    exchange's response, or code 599 with `error`."""
    if exchange is None:  # the request was refused before it could be sent
        return HTTPResponse(request, 599, error=error, request_time=0.0)
    if error is None:
        code, reason, headers = exchange.code, exchange.reason, exchange.response_headers
    else:
        code, reason, headers = 599, None, None
    response = HTTPResponse(request, code, headers=headers, reason=reason, error=error,
                            effective_url=exchange.request.url, request_time=exchange.elapsed(),
                            time_info=exchange.time_info, start_time=exchange.start_time)
    if error is None:
        response._body = exchange.body()
    return response


# -- Tornado 5.1's blocking client and its fetch routes (callback=, a subclass's
# fetch_impl), re-exported and called through `_legacy` (tests/test_layering.py: only
# here, last) -------------------------------------------------------------------------
from tinytornado import _httpclient_legacy as _legacy  # noqa: E402
from tinytornado._httpclient_legacy import HTTPClient  # noqa: E402
