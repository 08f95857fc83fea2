"""An HTTP/1.1 client with keep-alive: `AsyncHTTPClient.fetch` -> Future of `HTTPResponse`.

The names and behaviour are Tornado 5.1's (`HTTPRequest`, `HTTPResponse`, `HTTPClientError`,
one client per IOLoop, `configure`), with a connection pool where Tornado's simple client
opened a connection per request.

How a fetch runs: it waits for a *slot* (at most `max_clients` requests in flight, at most
`max_host_clients` per (scheme, host, port)), bounded only by `queue_timeout`; then its own
clock starts (Tornado #1400: time in the queue does not eat `request_timeout`). It takes the
most recently used idle connection to that origin, or opens one (`connect_timeout`), writes
the request, and feeds what it reads to the sans-IO `HTTP1ClientProtocol` until the response
ends. A connection both sides allow to go on returns to the pool; any error closes it.

Invariants: every connection is either in use by exactly one fetch or idle in the pool with
a one-byte read pending, so whatever the server sends to an idle connection (a close, a
reset, stray bytes) retires it; at most `max_clients` connections are open, idle ones
included (the least recently used idle one is closed to make room); every failure ends the
fetch with an exception that says what went wrong, and closes its connection.
"""
from __future__ import absolute_import, division, print_function

import base64
import calendar
import collections
import copy
import datetime
import email.utils
import errno
import functools
import importlib
import io
import numbers
import select
import socket
import ssl
import time
import weakref

from six.moves import http_client
from six.moves.urllib.parse import urljoin, urlsplit

from tinytornado import gen, version
from tinytornado._compat import string_types, text_type
from tinytornado.concurrent import CancelledError, Future, TimeoutError
from tinytornado.httputil import (
    NEED_DATA, BodyData, ConnectionClosed, ContentDecoder, EndOfMessage, HTTP1ClientProtocol,
    HTTPHeaders, HTTPInputError, NoResponseError, ResponseHead, DEFAULT_MAX_HEADER_SIZE,
)
from tinytornado.ioloop import IOLoop
from tinytornado.iostream import StreamClosedError
from tinytornado.netutil import (
    OverrideResolver, Resolver, errno_from_exception, ssl_options_to_context,
)
from tinytornado.tcpclient import TCPClient

__all__ = [
    'AsyncHTTPClient', 'HTTPRequest', 'HTTPResponse', 'HTTPClientError', 'HTTPError',
    'HTTPTimeoutError', 'HTTPStreamClosedError',
]

_READ_CHUNK_SIZE = 65536
_DEFAULT_MAX_BUFFER_SIZE = 100 * 1024 * 1024  # Tornado's; also the default max_body_size
_SUPPORTED_METHODS = frozenset(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'])
_BODY_METHODS = frozenset(['POST', 'PATCH', 'PUT'])
# Requests that may be sent twice: RFC 9110 9.2.2's idempotent methods (TRACE aside).
_IDEMPOTENT_METHODS = frozenset(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'])
_REDIRECT_CODES = frozenset([301, 302, 303, 307, 308])
_BODYLESS_CODES = frozenset([204, 304])  # their Content-Length describes another response
# How a server that timed out an idle connection shows it to the next request.
_STALE_CONNECTION_ERRNOS = frozenset([errno.ECONNRESET, errno.EPIPE, errno.ECONNABORTED])
_UNSUPPORTED_OPTIONS = ('proxy_host', 'proxy_port', 'proxy_username', 'proxy_password',
                        'proxy_auth_mode', 'body_producer', 'expect_100_continue')


# --- Errors --------------------------------------------------------------------------------

class HTTPClientError(Exception):
    """An HTTP response with a non-2xx code (`response` is attached), or code 599 for a
    failure that produced no response (see the subclasses).

    Attributes: `code`, `message` (the reason phrase by default), `response`.
    """

    def __init__(self, code, message=None, response=None):
        self.code = code
        self.message = message or http_client.responses.get(code, 'Unknown')
        self.response = response
        super(HTTPClientError, self).__init__(code, message, response)

    def __str__(self):
        return 'HTTP %d: %s' % (self.code, self.message)

    __repr__ = __str__  # the default repr would show the whole response


HTTPError = HTTPClientError  # Tornado's older name


class HTTPTimeoutError(HTTPClientError):
    """Code 599: 'Timeout while connecting', 'Timeout during request' or 'Timeout in
    request queue'."""

    def __init__(self, message):
        super(HTTPTimeoutError, self).__init__(599, message=message)

    def __str__(self):
        return self.message or 'Timeout'


class HTTPStreamClosedError(HTTPClientError):
    """Code 599: the connection closed where nothing else explains it."""

    def __init__(self, message):
        super(HTTPStreamClosedError, self).__init__(599, message=message)

    def __str__(self):
        return self.message or 'Stream closed'


# --- Requests and responses ---------------------------------------------------------------

class HTTPRequest(object):
    """One HTTP request, with Tornado 5.1's arguments.

    Arguments left as None take the client's defaults (`HTTPRequest._DEFAULTS`, changed
    with ``AsyncHTTPClient.configure(None, defaults={...})``). Beyond Tornado:
    `max_body_size` (default: the client's) limits the body, before and after decoding.
    Not supported (fetch raises NotImplementedError): proxies, `body_producer`,
    `expect_100_continue`. `prepare_curl_callback` is ignored, as by Tornado's simple client.

    Args:
        url: 'http://...' or 'https://...'; user:password@ in it means basic auth.
        headers: a dict or HTTPHeaders; fetch works on a copy.
        body: bytes or text (sent as UTF-8); needed by POST, PATCH and PUT, refused
            elsewhere, unless `allow_nonstandard_methods`.
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
                 ssl_options=None, max_body_size=None):
        self.headers = headers
        if if_modified_since:
            self.headers['If-Modified-Since'] = _format_timestamp(if_modified_since)
        self.url = _native(url)
        self.method = method
        self.body = body
        self.auth_username, self.auth_password, self.auth_mode = (
            auth_username, auth_password, auth_mode)
        self.connect_timeout, self.request_timeout = connect_timeout, request_timeout
        self.follow_redirects, self.max_redirects = follow_redirects, max_redirects
        self.user_agent = user_agent
        self.decompress_response = (use_gzip if decompress_response is None
                                    else decompress_response)
        self.network_interface, self.allow_ipv6 = network_interface, allow_ipv6
        self.streaming_callback, self.header_callback = streaming_callback, header_callback
        self.prepare_curl_callback = prepare_curl_callback
        self.proxy_host, self.proxy_port = proxy_host, proxy_port
        self.proxy_username, self.proxy_password = proxy_username, proxy_password
        self.proxy_auth_mode = proxy_auth_mode
        self.allow_nonstandard_methods = allow_nonstandard_methods
        self.validate_cert, self.ca_certs, self.ssl_options = validate_cert, ca_certs, ssl_options
        self.client_key, self.client_cert = client_key, client_cert
        self.body_producer, self.expect_100_continue = body_producer, expect_100_continue
        self.max_body_size = max_body_size
        self.start_time = time.time()

    @property
    def headers(self):
        return self._headers

    @headers.setter
    def headers(self, value):
        self._headers = HTTPHeaders() if value is None else value

    @property
    def body(self):
        return self._body

    @body.setter
    def body(self, value):
        self._body = value.encode('utf-8') if isinstance(value, text_type) else value

    def __repr__(self):
        return '<HTTPRequest %s %s>' % (self.method, self.url)


class _RequestProxy(object):
    """A request whose None attributes read as the client's defaults.

    The values are copied when the proxy is made (a fetch reads them some twenty times:
    plain attributes are much cheaper than a __getattr__ each time); the request must not
    change while it is being fetched.
    """

    def __init__(self, request, defaults):
        values = self.__dict__
        values.update(defaults)
        values.update(request.__dict__)
        for name, value in defaults.items():
            if values.get(name) is None:
                values[name] = value
        values['headers'], values['body'] = request.headers, request.body  # properties
        self.request = request
        self.defaults = defaults

    def __getattr__(self, name):  # attributes set on the request after the copy
        value = getattr(self.request, name)
        if value is None:
            return self.defaults.get(name)
        return value


class HTTPResponse(object):
    """The response to an HTTPRequest (Tornado 5.1's attributes).

    Attributes:
        request: the HTTPRequest fetched (the first one, when redirects were followed).
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
        self.request = request.request if isinstance(request, _RequestProxy) else request
        self.code = code
        self.reason = reason or http_client.responses.get(code, 'Unknown')
        self.headers = headers if headers is not None else HTTPHeaders()
        self._buffer = buffer
        self._body = None
        self.effective_url = request.url if effective_url is None else effective_url
        if error is None and not 200 <= code < 300:
            error = HTTPClientError(code, message=self.reason, response=self)
        self.error = error
        self.request_time = request_time
        self.time_info = time_info or {}
        self.start_time = start_time

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
        return '<HTTPResponse %d %s %s>' % (self.code, self.reason, self.effective_url)


# --- The client ----------------------------------------------------------------------------

class AsyncHTTPClient(object):
    """A non-blocking HTTP client with a keep-alive connection pool.

    ``AsyncHTTPClient()`` returns the client of the current IOLoop, made on first use;
    ``AsyncHTTPClient(force_instance=True)`` a new one of its own. Keyword arguments apply
    only when a client is made (``configure`` sets them for every client made after):

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

    _configured = (None, {})  # (impl class or None, keyword arguments), set by configure
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
        instance.initialize(**init_kwargs)
        if cache is not None:
            cache[io_loop] = instance
        return instance

    @classmethod
    def _impl_and_kwargs(cls, kwargs):
        if cls is not AsyncHTTPClient:
            return cls, kwargs
        impl, configured_kwargs = AsyncHTTPClient._configured
        init_kwargs = dict(configured_kwargs)
        init_kwargs.update(kwargs)
        return impl or AsyncHTTPClient, init_kwargs

    @classmethod
    def configure(cls, impl, **kwargs):
        """Choose the class ``AsyncHTTPClient()`` makes (None: this one; a subclass or its
        dotted name) and the keyword arguments clients are made with from now on."""
        if isinstance(impl, string_types):
            module_name, _, class_name = impl.rpartition('.')
            impl = getattr(importlib.import_module(module_name), class_name)
        if impl is not None and not issubclass(impl, cls):
            raise ValueError('Invalid subclass of %s: %r' % (cls.__name__, impl))
        AsyncHTTPClient._configured = (impl, kwargs)

    @classmethod
    def configured_class(cls):
        return AsyncHTTPClient._configured[0] or AsyncHTTPClient

    @classmethod
    def _save_configuration(cls):
        return AsyncHTTPClient._configured

    @classmethod
    def _restore_configuration(cls, saved):
        AsyncHTTPClient._configured = saved

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
        self._pool = _ConnectionPool(self.io_loop, max_clients,
                                     max_host_clients or max_clients, queue_timeout)
        self._ssl_contexts = {}
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

    def fetch(self, request, raise_error=True, **kwargs):
        """Fetch `request` (an HTTPRequest, or a URL with HTTPRequest's keyword arguments).

        Returns a Future of the HTTPResponse. With `raise_error` (the default) it fails
        instead: with HTTPClientError for a non-2xx response (the response attached), and
        with the error itself when there was no response (an HTTPTimeoutError, a socket
        error such as a refused connection, HTTPInputError for a malformed response...).
        With ``raise_error=False`` every outcome is a response, code 599 when there was
        none. Cancelling the Future abandons the request and closes its connection.
        """
        if self._closed:
            raise RuntimeError('fetch() called on closed AsyncHTTPClient')
        if not isinstance(request, HTTPRequest):
            request = HTTPRequest(url=request, **kwargs)
        elif kwargs:
            raise ValueError("kwargs can't be used if request is an HTTPRequest object")
        request.headers = HTTPHeaders(request.headers)  # ours to add to
        return self._fetch(_RequestProxy(request, self.defaults), raise_error)

    @gen.coroutine
    def _fetch(self, request, raise_error):
        # One flat coroutine for the whole fetch, redirects and a retry included: a nested
        # coroutine would cost a loop pass each time it returns.
        original_request = request.request
        queued_at = self.io_loop.time()
        while True:
            exchange = slot = None
            try:
                exchange = _Exchange(self, request)
                slot = self._pool.acquire(exchange.key)
                host = (yield slot) if slot.__class__ is Future else slot
                exchange.start(queued_at)
                exchange.connection = self._pool.take_idle(host)
                while True:
                    if exchange.connection is None:
                        yield self._connect(exchange)
                    exchange.send()
                    try:
                        while not exchange.receive():
                            try:
                                data = yield exchange.connection.stream.read_bytes(
                                    _READ_CHUNK_SIZE, partial=True)
                            except StreamClosedError as e:
                                data = _data_at_close(e)
                            exchange.feed(data)
                        break
                    except Exception as e:
                        if not exchange.may_retry(e):
                            raise
                        exchange.drop_connection()
                self._pool.release(host, exchange.keep_connection())
            except CancelledError:
                self._abandon(exchange, slot)
                raise
            except Exception as e:
                self._abandon(exchange, slot)
                response = _error_response(original_request, exchange, e)
            else:
                if exchange.redirect:
                    request = exchange.redirected_request(original_request)
                    continue
                response = exchange.response(original_request)
            break
        if raise_error and response.error:
            if isinstance(response.error, HTTPClientError):
                response.error.response = response
            raise response.error
        raise gen.Return(response)

    def _abandon(self, exchange, slot):
        """An error or a cancellation: close what the exchange had open, give back the slot."""
        if exchange is not None:
            exchange.stop_timer()
            exchange.drop_connection()
        if slot.__class__ is Future:
            # Granted while this coroutine waited to resume, the slot is held all the same.
            slot = slot.result() if _granted(slot) else None
        if slot is not None:
            self._pool.release(slot, None)

    @gen.coroutine
    def _connect(self, exchange):
        """Open a connection for `exchange`, as its `connection` (so that whoever abandons
        the exchange closes it, even if the coroutine waiting here was cancelled)."""
        request = exchange.request
        try:
            stream = yield self.tcp_client.connect(
                exchange.host, exchange.port,
                af=socket.AF_UNSPEC if request.allow_ipv6 is not False else socket.AF_INET,
                ssl_options=exchange.ssl_options, max_buffer_size=self.max_buffer_size,
                source_ip=request.network_interface, timeout=exchange.connect_timeout())
        except TimeoutError:
            raise HTTPTimeoutError('Timeout while connecting')
        except StreamClosedError as e:
            raise e.real_error or HTTPStreamClosedError('Stream closed')
        stream.set_nodelay(True)
        exchange.connection = _Connection(stream, HTTP1ClientProtocol(self.max_header_size))

    def ssl_options_for(self, request):
        """The SSLContext for an https request; one per distinct setting, made once."""
        if isinstance(request.ssl_options, dict):
            settings = tuple(sorted(request.ssl_options.items()))
        elif request.ssl_options is not None:
            return request.ssl_options
        else:
            settings = (request.validate_cert, request.ca_certs, request.client_cert,
                        request.client_key)
        context = self._ssl_contexts.get(settings)
        if context is None:
            context = self._ssl_contexts[settings] = ssl_options_to_context(
                _ssl_options_dict(request))
        return context


def _ssl_options_dict(request):
    if request.ssl_options is not None:
        return request.ssl_options
    options = {'ca_certs': request.ca_certs}
    if not request.validate_cert:
        options['cert_reqs'] = ssl.CERT_NONE
    if request.client_cert is not None:
        options['certfile'] = request.client_cert
        options['keyfile'] = request.client_key
    return options


def _granted(slot):
    return slot.done() and not slot.cancelled() and slot.exception() is None


def _data_at_close(error):
    """b'' (end of file, for the parser to judge) after a clean close, else the cause."""
    if error.real_error is None:
        return b''
    raise error.real_error


def _error_response(request, exchange, error):
    if exchange is None:
        return HTTPResponse(request, 599, error=error, request_time=0.0)
    return HTTPResponse(request, 599, error=error, effective_url=exchange.request.url,
                        request_time=exchange.elapsed(), time_info=exchange.time_info,
                        start_time=exchange.start_time)


# --- One request and its response ---------------------------------------------------------

class _Exchange(object):
    """One hop of a fetch: the request prepared from the URL, then the response's state
    between the protocol's events, then the response or the redirect it leads to."""

    def __init__(self, client, request):
        for option in _UNSUPPORTED_OPTIONS:
            if getattr(request, option):
                raise NotImplementedError('%s is not supported by tinytornado' % option)
        self.request = request
        self.io_loop = client.io_loop
        parts = urlsplit(request.url)
        self.scheme, self.host, self.port = _origin(parts, request.url)
        self.target = (parts.path or '/') + ('?' + parts.query if parts.query else '')
        self.method = request.method
        self.headers = _prepare_headers(request, parts)
        self.ssl_options = client.ssl_options_for(request) if self.scheme == 'https' else None
        self.key = (self.scheme, self.host, self.port, self.ssl_options)
        self.max_body_size = request.max_body_size
        self.started_at = self.start_time = self.timer = self.connection = None
        self.time_info = {}
        self.retried = self.received = self.redirect = False
        self.code = self.reason = self.response_headers = self.decoder = None
        self.chunks = []
        self.body_size = 0

    # -- the request ------------------------------------------------------------------------

    def start(self, queued_at):
        """The request has its slot: its own clock starts."""
        self.started_at = self.io_loop.time()
        self.start_time = time.time()
        self.time_info['queue'] = self.started_at - queued_at
        if self.request.request_timeout:
            self.timer = self.io_loop.call_at(self.started_at + self.request.request_timeout,
                                              self._time_out)

    def connect_timeout(self):
        """Seconds left for opening a connection, or None for no limit."""
        limits = [limit for limit in (self.request.connect_timeout, self.request.request_timeout)
                  if limit]
        if not limits:
            return None
        return max(0.0, self.started_at + min(limits) - self.io_loop.time())

    def send(self):
        connection = self.connection
        # The write's Future is not waited for: a failed write closes the stream, and the
        # read that follows reports why.
        connection.stream.write(connection.protocol.send_request(
            self.method, self.target, self.headers, self.request.body))

    def _time_out(self):
        self.timer = None
        if self.connection is not None:  # else the connect has its own, earlier timeout
            self.connection.stream.close(exc_info=HTTPTimeoutError('Timeout during request'))

    # -- the response -----------------------------------------------------------------------

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
            # An InformationalResponse (1xx) announces the real head: nothing to do.

    def _on_head(self, head):
        self.code, self.reason, self.response_headers = head.code, head.reason, head.headers
        headers = head.headers
        length = headers.get('Content-Length')
        # A too large body fails before it is read, unless it will not be sent at all.
        if (length is not None and length.isdigit() and int(length) > self.max_body_size and
                self.method != 'HEAD' and head.code not in _BODYLESS_CODES):
            raise HTTPInputError('Content-Length %s is larger than max_body_size (%d bytes)'
                                 % (length, self.max_body_size))
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

    def _should_follow_redirect(self):
        return (self.code in _REDIRECT_CODES and self.request.follow_redirects and
                self.request.max_redirects > 0 and 'Location' in self.response_headers)

    # -- the connection ---------------------------------------------------------------------

    def may_retry(self, error):
        """True if `error` shows a pooled connection the server had closed, and sending the
        request again on a new connection is safe: once, before any byte of a response."""
        stale = (isinstance(error, NoResponseError) or
                 errno_from_exception(error) in _STALE_CONNECTION_ERRNOS)
        if (not stale or self.retried or self.received or self.connection.requests == 0 or
                self.method not in _IDEMPOTENT_METHODS):
            return False
        self.retried = True
        return True

    def drop_connection(self):
        connection, self.connection = self.connection, None
        if connection is not None:
            connection.stream.close()

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

    def stop_timer(self):
        if self.timer is not None:
            self.io_loop.remove_timeout(self.timer)
            self.timer = None

    def elapsed(self):
        """Seconds since the request got its slot (0 while it waits for one)."""
        if self.started_at is None:
            return 0.0
        return self.io_loop.time() - self.started_at

    # -- the outcome ------------------------------------------------------------------------

    def response(self, original_request):
        body = b'' if self.request.streaming_callback is not None else b''.join(self.chunks)
        response = HTTPResponse(original_request, self.code, reason=self.reason,
                                headers=self.response_headers, effective_url=self.request.url,
                                request_time=self.elapsed(), time_info=self.time_info,
                                start_time=self.start_time)
        response._body = body
        return response

    def redirected_request(self, original_request):
        """The request to send next, following the response's Location (as a proxy)."""
        request = self.request
        new_request = copy.copy(request.request)
        new_request.url = urljoin(request.url, self.response_headers['Location'])
        new_request.headers = HTTPHeaders(request.headers)
        del new_request.headers['Host']
        if urlsplit(new_request.url).netloc != urlsplit(request.url).netloc:
            # Credentials stay with the host they were meant for.
            new_request.headers.pop('Authorization', None)
            new_request.auth_username = new_request.auth_password = None
        new_request.max_redirects = request.max_redirects - 1
        # 303 means "GET it there"; browsers (and Tornado) treat a POST's 301 and 302 the
        # same way. 307 and 308 keep the method and the body.
        if ((self.code == 303 and self.method != 'HEAD') or
                (self.code in (301, 302) and self.method == 'POST')):
            new_request.method = 'GET'
            new_request.body = None
            for name in ('Content-Length', 'Content-Type', 'Content-Encoding',
                         'Transfer-Encoding'):
                new_request.headers.pop(name, None)
        new_request.original_request = original_request
        return _RequestProxy(new_request, request.defaults)


_origins = {}  # (scheme, netloc) -> (scheme, host, port): a crawl asks for few, often
_MAX_ORIGINS = 1000


def _origin(parts, url):
    """(scheme, host, port) of a split URL; ValueError for what cannot be fetched."""
    try:
        return _origins[parts.scheme, parts.netloc]
    except KeyError:
        pass
    scheme = parts.scheme.lower()
    if scheme not in ('http', 'https'):
        raise ValueError('Unsupported url scheme: %s' % (url,))
    host = parts.hostname
    if not host:
        raise ValueError('No host in url: %s' % (url,))
    origin = scheme, host, parts.port or (443 if scheme == 'https' else 80)
    if len(_origins) >= _MAX_ORIGINS:
        _origins.clear()
    _origins[parts.scheme, parts.netloc] = origin
    return origin


def _prepare_headers(request, parts):
    """request.headers with what the request implies added (Host, auth, User-Agent...)."""
    headers = request.headers
    method = request.method
    if method not in _SUPPORTED_METHODS and not request.allow_nonstandard_methods:
        raise KeyError('unknown method %s' % method)
    if not request.allow_nonstandard_methods and (
            (method in _BODY_METHODS) != (request.body is not None)):
        raise ValueError('Body must %sbe None for method %s (unless allow_nonstandard_methods '
                         'is true)' % ('not ' if method in _BODY_METHODS else '', method))
    if 'Host' not in headers:
        headers['Host'] = parts.netloc.rpartition('@')[2]
    username, password = parts.username, parts.password
    if username is None and request.auth_username is not None:
        username, password = request.auth_username, request.auth_password
    if username is not None:
        headers['Authorization'] = _basic_auth(request.auth_mode, username, password)
    if request.user_agent:
        headers['User-Agent'] = request.user_agent
    elif 'User-Agent' not in headers:
        headers['User-Agent'] = 'tinytornado/' + version
    if request.decompress_response and 'Accept-Encoding' not in headers:
        headers['Accept-Encoding'] = 'gzip, deflate'
    if method == 'POST' and 'Content-Type' not in headers:
        headers['Content-Type'] = 'application/x-www-form-urlencoded'
    return headers


def _basic_auth(mode, username, password):
    if mode not in (None, 'basic'):
        raise ValueError('unsupported auth_mode %s' % mode)
    credentials = '%s:%s' % (username, password or '')
    if isinstance(credentials, text_type):
        credentials = credentials.encode('utf-8')
    return 'Basic ' + base64.b64encode(credentials).decode('ascii')


def _format_timestamp(timestamp):
    """An HTTP date from a POSIX timestamp or a naive UTC datetime."""
    if isinstance(timestamp, datetime.datetime):
        timestamp = calendar.timegm(timestamp.utctimetuple())
    elif not isinstance(timestamp, numbers.Real):
        raise TypeError('unknown timestamp type: %r' % (timestamp,))
    return email.utils.formatdate(timestamp, usegmt=True)


def _native(text):
    """A URL as the native str."""
    if isinstance(text, str):
        return text
    return text.encode('utf-8') if isinstance(text, text_type) else text.decode('utf-8')


# --- The pool ------------------------------------------------------------------------------

class _Connection(object):
    """An open connection to one origin and the protocol state that goes with it."""
    __slots__ = ('stream', 'protocol', 'requests', 'idle_read')

    def __init__(self, stream, protocol):
        self.stream = stream
        self.protocol = protocol
        self.requests = 0  # responses read whole on it; 0 while it serves its first request
        self.idle_read = None  # the read pending while it is idle


class _HostPool(object):
    """The connections to one (scheme, host, port, TLS settings), and the requests
    waiting for a slot there."""
    __slots__ = ('key', 'idle', 'active', 'waiting', 'in_turn')

    def __init__(self, key):
        self.key = key
        self.idle = collections.deque()  # most recently used last
        self.active = 0  # slots held: requests in flight or opening a connection
        self.waiting = collections.deque()  # _SlotRequest, in arrival order
        self.in_turn = False  # listed in the pool's hosts_in_turn


class _SlotRequest(object):
    """A request waiting for a slot: its Future, and the timer of its queue_timeout."""
    __slots__ = ('pool', 'host', 'future', 'timer')

    def __init__(self, pool, host):
        self.pool, self.host = pool, host
        self.future = Future()
        self.future.set_canceller(self.cancel)
        self.timer = None

    def cancel(self):
        self.pool.stop_waiting(self)
        self.future.set_cancelled()
        return True

    def time_out(self):
        self.timer = None
        self.pool.stop_waiting(self)
        self.future.set_exception(HTTPTimeoutError('Timeout in request queue'))


class _ConnectionPool(object):
    """Slots and idle connections for every origin (see the module docstring).

    Waiting requests are served per origin in arrival order, and the origins that have
    some take turns, so that one busy host does not hold up the others.
    """

    def __init__(self, io_loop, max_clients, max_host_clients, queue_timeout):
        self.io_loop = io_loop
        self.max_clients = max_clients
        self.max_host_clients = max_host_clients
        self.queue_timeout = queue_timeout
        self.hosts = {}  # key -> _HostPool
        self.active = 0
        self.idle = collections.OrderedDict()  # every idle _Connection -> its _HostPool,
        #                                        least recently used first
        self.hosts_in_turn = collections.deque()  # with waiting requests and room of their own
        self.closed = False

    def acquire(self, key):
        """A slot at the origin `key`: its _HostPool if one is free, else a Future of it,
        which fails with HTTPTimeoutError after queue_timeout; cancelling it stops waiting."""
        host = self.hosts.get(key)
        if host is None:
            host = self.hosts[key] = _HostPool(key)
        if not host.waiting and self._has_room(host):
            self._take_slot(host)
            return host
        waiter = _SlotRequest(self, host)
        host.waiting.append(waiter)
        self._take_turn(host)
        if self.queue_timeout is not None:
            waiter.timer = self.io_loop.call_later(self.queue_timeout, waiter.time_out)
        return waiter.future

    def release(self, host, connection):
        """Give back a slot, with the connection to keep idle (None if it was closed)."""
        host.active -= 1
        self.active -= 1
        if connection is not None:
            self._keep_idle(host, connection)
        else:
            self._forget_if_unused(host)
        self._take_turn(host)
        self._serve_waiting()

    def stop_waiting(self, waiter):
        waiter.host.waiting.remove(waiter)
        if waiter.timer is not None:
            self.io_loop.remove_timeout(waiter.timer)
        self._forget_if_unused(waiter.host)

    def take_idle(self, host):
        """The most recently used idle connection of `host` that still looks alive, or
        None; if a new connection is needed and none may open, an idle one is closed."""
        while host.idle:
            connection = host.idle.pop()
            del self.idle[connection]
            connection.idle_read.cancel()
            connection.idle_read = None
            if _looks_alive(connection.stream):
                return connection
            connection.stream.close()
        if self.active + len(self.idle) > self.max_clients:
            self._close_idle(next(iter(self.idle)))
        return None

    def close(self):
        """Close every idle connection; connections in use close when released."""
        self.closed = True
        for connection in list(self.idle):
            self._close_idle(connection)

    def _has_room(self, host):
        return self.active < self.max_clients and host.active < self.max_host_clients

    def _take_slot(self, host):
        host.active += 1
        self.active += 1

    def _take_turn(self, host):
        if host.waiting and not host.in_turn and host.active < self.max_host_clients:
            host.in_turn = True
            self.hosts_in_turn.append(host)

    def _serve_waiting(self):
        while self.hosts_in_turn and self.active < self.max_clients:
            host = self.hosts_in_turn.popleft()
            host.in_turn = False
            if not host.waiting or host.active >= self.max_host_clients:
                continue  # it rejoins when one of its own requests ends
            waiter = host.waiting.popleft()
            if waiter.timer is not None:
                self.io_loop.remove_timeout(waiter.timer)
            self._take_slot(host)
            waiter.future.set_result(host)
            self._take_turn(host)

    def _keep_idle(self, host, connection):
        if self.closed:
            connection.stream.close()
            self._forget_if_unused(host)
            return
        host.idle.append(connection)
        self.idle[connection] = host
        # Nothing may arrive on an idle connection: this read ends only when something
        # does (a close, a reset, stray bytes), and then the connection is retired.
        connection.idle_read = connection.stream.read_bytes(1, partial=True)
        connection.idle_read.add_done_callback(functools.partial(self._on_idle_read, connection))

    def _on_idle_read(self, connection, future):
        if future.cancelled():
            return  # taken from the pool for a request
        future.exception()  # seen: a closed idle connection is not worth a log line
        if connection in self.idle:
            self._close_idle(connection)

    def _close_idle(self, connection):
        host = self.idle.pop(connection)
        host.idle.remove(connection)
        connection.stream.close()
        self._forget_if_unused(host)

    def _forget_if_unused(self, host):
        # A crawl meets many origins: keep only those with something in them.
        if (not host.active and not host.idle and not host.waiting and
                self.hosts.get(host.key) is host):
            del self.hosts[host.key]


def _looks_alive(stream):
    """False if the stream is closed or its socket is readable: an idle connection has
    nothing to read unless the server closed or reset it (or misbehaved)."""
    if stream.closed():
        return False
    fileno = stream.fileno()
    if hasattr(select, 'poll'):
        poller = select.poll()
        poller.register(fileno, select.POLLIN)
        return not poller.poll(0)
    return not select.select([fileno], [], [], 0)[0]
