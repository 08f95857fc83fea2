"""The core of Tornado 5.1's ``tornado.web``: `RequestHandler`, `Application` and the
handlers every application uses (`RedirectHandler`, `ErrorHandler`, `StaticFileHandler`).

An `Application` is the `HTTPServer`'s delegate: each request is routed by host and path
to a `URLSpec`, read whole, and handed to a new instance of its handler, whose verb method
(``get``, ``post``...) runs: a plain method, a `gen.coroutine`, an ``async def`` (3.x),
or one decorated with `asynchronous` that finishes the response from a callback. A
handler class decorated with `stream_request_body` is run once the headers are in and
given the body piece by piece (``data_received``).

`StaticFileHandler` serves a directory (the ``static_path`` setting serves it under
``/static/``, and `RequestHandler.static_url` names its files with a ``?v=`` hash).

The ``compress_response`` setting (``gzip``, its old name) gzips responses: the
`GZipContentEncoding` transform (_transforms), which Application's `transforms` may replace.

Templates, websockets, auth, locale, XSRF and UI modules are not here: `render`,
`render_string`, `xsrf_form_html` and `locale`, and the settings that need them, fail at
once with an error naming what is missing (README, differences).
"""
from __future__ import absolute_import, division, print_function

import datetime
import functools
import hashlib
import hmac
import numbers
import os
import stat
import re
import sys
import time
import traceback

from six.moves import http_cookies
from six.moves.urllib.parse import urlencode, urlsplit

import tinytornado
from tinytornado import _staticfiles, gen, httputil
from tinytornado._compat import binary_type, text_type
from tinytornado._compat import native_str as header_str
from tinytornado._signedvalue import (
    create_signed_value, decode_signed_value, get_signature_key_version, signature_v1,
    signature_v2,
)
from tinytornado._transforms import GZipContentEncoding, OutputTransform
from tinytornado._urlspec import URLSpec, url
from tinytornado.concurrent import Future
from tinytornado.escape import json_encode, native_str, to_unicode, utf8
from tinytornado.httpserver import HTTPServer
from tinytornado.iostream import StreamClosedError
from tinytornado.log import access_log, app_log, gen_log

__all__ = [
    'RequestHandler', 'Application', 'URLSpec', 'url', 'HTTPError', 'MissingArgumentError',
    'Finish', 'RedirectHandler', 'ErrorHandler', 'StaticFileHandler', 'FallbackHandler',
    'asynchronous', 'authenticated', 'addslash', 'removeslash', 'stream_request_body',
    'create_signed_value', 'decode_signed_value', 'OutputTransform', 'GZipContentEncoding',
]

# What tinytornado does not have, and the settings that would need it.
_MISSING_SETTINGS = {
    'xsrf_cookies': 'XSRF protection', 'template_path': 'templates',
    'template_loader': 'templates', 'template_whitespace': 'templates',
    'ui_modules': 'UI modules', 'ui_methods': 'UI modules', 'autoreload': 'autoreload',
}


def _missing(feature):
    return NotImplementedError(
        '%s: tinytornado.web does not provide %s (see README, differences from Tornado 5.1)'
        % (feature, _MISSING_SETTINGS.get(feature, feature)))


class HTTPError(Exception):
    """Raise it in a handler to answer with `status_code` (Tornado 5.1's).

    Args:
        log_message: logged (a warning), formatted with `args`; never shown to the client.
        reason: the status line's reason phrase, in place of the standard one.
    """

    def __init__(self, status_code=500, log_message=None, *args, **kwargs):
        super(HTTPError, self).__init__()
        self.status_code = status_code
        self.log_message = log_message
        self.args = args
        self.reason = kwargs.get('reason')
        if log_message and not args:
            self.log_message = log_message.replace('%', '%%')

    def __str__(self):
        message = 'HTTP %d: %s' % (self.status_code,
                                   self.reason or httputil.responses.get(self.status_code,
                                                                         'Unknown'))
        if self.log_message:
            return message + ' (' + (self.log_message % self.args) + ')'
        return message


class MissingArgumentError(HTTPError):
    """A required argument (get_argument without default) is absent: a 400."""

    def __init__(self, arg_name):
        super(MissingArgumentError, self).__init__(400, 'Missing argument %s' % arg_name)
        self.arg_name = arg_name


class Finish(Exception):
    """Raise it to end the request without an error (its args go to finish())."""


_ARG_DEFAULT = object()
_SERVER_HEADER = 'TornadoServer/%s' % tinytornado.version
_DEFAULT_HEADER_NAMES = ('Server', 'Content-Type', 'Date')  # clear()'s, in this order
_EPOCH = datetime.datetime(1970, 1, 1)  # naive, in UTC
_CONTROL_CHARS = re.compile(r'[\x00-\x08\x0e-\x1f]')
_UNSAFE_HEADER_CHARS = re.compile(r'[\x00-\x1f]')


class RequestHandler(object):
    """Subclass it and define the verb methods (``get``, ``post``...) to serve.

    ``self.request`` is the `HTTPServerRequest`, ``self.application`` the Application,
    ``self.settings`` its settings. A verb method's path arguments are the route's groups.
    """

    SUPPORTED_METHODS = ('GET', 'HEAD', 'POST', 'DELETE', 'PATCH', 'PUT', 'OPTIONS')
    _stream_request_body = False  # True: see stream_request_body

    def __init__(self, application, request, **kwargs):
        super(RequestHandler, self).__init__()
        self.application = application
        self.request = request
        self._headers_written = False
        self._finished = False
        self._auto_finish = True
        self._transforms = []  # the OutputTransforms of this request, given by _execute
        # With @stream_request_body: resolved once prepare() is done, for the server to
        # start reading the body.
        self._prepared_future = None
        self.path_args = None
        self.path_kwargs = None
        self.clear()
        if self.request.connection is not None:
            self.request.connection.set_close_callback(self.on_connection_close)
        self.initialize(**kwargs)

    def initialize(self, **kwargs):
        """Called with the route's keyword arguments, before each request."""

    @property
    def settings(self):
        return self.application.settings

    def _unsupported(self, *args, **kwargs):
        raise HTTPError(405)

    head = get = post = delete = patch = put = options = _unsupported

    def prepare(self):
        """Called before the verb method; may return a Future (waited on), or finish."""

    def on_finish(self):
        """Called once the response has been sent."""

    def on_connection_close(self):
        """Called when the client goes away before the response is finished (an override
        calls it: with `stream_request_body`, it ends the wait for the body)."""
        if self._stream_request_body and not self.request.body.done():
            self.request.body.set_exception(StreamClosedError())
            self.request.body.exception()  # retrieved: _execute may have stopped waiting

    def data_received(self, chunk):
        """With `stream_request_body`, called with each piece of the body as it arrives
        (after prepare()); may return a Future, and the next piece waits for it."""
        raise NotImplementedError('%s uses @stream_request_body but does not define '
                                  'data_received' % type(self).__name__)

    def clear(self):
        """Reset the headers, the status and the unwritten body to their defaults."""
        # Made whole, names normalized already: every response starts here.
        self._headers = httputil.headers_from_fields(list(_DEFAULT_HEADER_NAMES), {
            'Server': [_SERVER_HEADER],
            'Content-Type': ['text/html; charset=UTF-8'],
            'Date': [httputil.format_timestamp(time.time())],
        })
        self.set_default_headers()
        self._write_buffer = []
        self._status_code = 200
        self._reason = httputil.responses[200]

    def set_default_headers(self):
        """Override to set headers on every response (errors included)."""

    def require_setting(self, name, feature='this feature'):
        if not self.application.settings.get(name):
            raise Exception("You must define the '%s' setting in your application to use %s"
                            % (name, feature))

    # -- the user --------------------------------------------------------------------------

    @property
    def current_user(self):
        """The request's user: what `get_current_user` returns (asked once), or what was
        assigned (in `prepare`, say)."""
        if not hasattr(self, '_current_user'):
            self._current_user = self.get_current_user()
        return self._current_user

    @current_user.setter
    def current_user(self, value):
        self._current_user = value

    def get_current_user(self):
        """Override to say who the user is (e.g. from a secure cookie); None: nobody."""
        return None

    def get_login_url(self):
        """Where `authenticated` sends a user who is nobody: the ``login_url`` setting."""
        self.require_setting('login_url', '@tornado.web.authenticated')
        return self.application.settings['login_url']

    # -- cookies -------------------------------------------------------------------------

    @property
    def cookies(self):
        """The request's cookies: name -> Morsel."""
        return self.request.cookies

    def get_cookie(self, name, default=None):
        """The value of the request's cookie `name`, or `default`."""
        if name in self.request.cookies:
            return self.request.cookies[name].value
        return default

    def set_cookie(self, name, value, domain=None, expires=None, path='/', expires_days=None,
                   **kwargs):
        """Set cookie `name` in the response. `expires` is a timestamp or a UTC datetime;
        other keywords are Morsel attributes (``httponly=True``, ``secure=True``,
        ``max_age=60``)."""
        name, value = native_str(name), native_str(value)
        if re.search(r'[\x00-\x20]', name + value):
            raise ValueError('Invalid cookie %r: %r' % (name, value))
        # Read as flush reads it (see there).
        new_cookie = self.__dict__.get('_new_cookie')
        if new_cookie is None:
            # Made when first needed, as in 5.1.
            new_cookie = self._new_cookie = http_cookies.SimpleCookie()
        if name in new_cookie:
            del new_cookie[name]
        new_cookie[name] = value
        morsel = new_cookie[name]
        if domain:
            morsel['domain'] = domain
        if expires_days is not None and not expires:
            # A timestamp, not utcnow()'s naive datetime (deprecated on 3.12): the same text.
            expires = time.time() + 86400 * expires_days
        if expires:
            morsel['expires'] = httputil.format_timestamp(expires)
        if path:
            morsel['path'] = path
        for key, attribute in kwargs.items():
            if key == 'max_age':
                key = 'max-age'
            if key in ('httponly', 'secure') and not attribute:
                continue  # a false flag is no flag (Morsel would write it anyway)
            morsel[key] = attribute

    def clear_cookie(self, name, path='/', domain=None):
        """Expire cookie `name` (path and domain must be those it was set with)."""
        expires = time.time() - 86400 * 365
        self.set_cookie(name, value='', path=path, expires=expires, domain=domain)

    def clear_all_cookies(self, path='/', domain=None):
        for name in self.request.cookies:
            self.clear_cookie(name, path=path, domain=domain)

    def set_secure_cookie(self, name, value, expires_days=30, version=None, **kwargs):
        """Set cookie `name` to `value` signed with the ``cookie_secret`` setting."""
        self.set_cookie(name, self.create_signed_value(name, value, version=version),
                        expires_days=expires_days, **kwargs)

    def create_signed_value(self, name, value, version=None):
        self.require_setting('cookie_secret', 'secure cookies')
        secret = self.application.settings['cookie_secret']
        key_version = None
        if isinstance(secret, dict):
            if self.application.settings.get('key_version') is None:
                raise Exception('key_version setting must be used for secret_key dicts')
            key_version = self.application.settings['key_version']
        return create_signed_value(secret, name, value, version=version,
                                   key_version=key_version)

    def get_secure_cookie(self, name, value=None, max_age_days=31, min_version=None):
        """The bytes of signed cookie `name` (or of `value`), or None when it is absent,
        forged, expired or for another name."""
        self.require_setting('cookie_secret', 'secure cookies')
        if value is None:
            value = self.get_cookie(name)
        return decode_signed_value(self.application.settings['cookie_secret'], name, value,
                                   max_age_days=max_age_days, min_version=min_version)

    def get_secure_cookie_key_version(self, name, value=None):
        self.require_setting('cookie_secret', 'secure cookies')
        if value is None:
            value = self.get_cookie(name)
        return get_signature_key_version(value)

    # -- status and headers ------------------------------------------------------------

    def set_status(self, status_code, reason=None):
        """The response's status; `reason` is its phrase, by default the standard one
        or "Unknown" (any code is taken, as in 5.1)."""
        self._status_code = status_code
        if reason is not None:
            self._reason = native_str(reason)
        else:
            self._reason = httputil.responses.get(status_code, 'Unknown')

    def get_status(self):
        return self._status_code

    def set_header(self, name, value):
        """Set a response header; `value` may be text, bytes, a number or a datetime."""
        self._headers[name] = self._convert_header_value(value)

    def add_header(self, name, value):
        """Add a response header, keeping those of the same name."""
        self._headers.add(name, self._convert_header_value(value))

    def clear_header(self, name):
        if name in self._headers:
            del self._headers[name]

    def _convert_header_value(self, value):
        # The usual values first, without the isinstance chain (numbers.Integral asks
        # abc, slow on 2.7): a native str comes back unchanged, as the general path below
        # would give it.
        if value.__class__ is str:
            if _UNSAFE_HEADER_CHARS.search(value):
                raise ValueError('Unsafe header value %r' % value)
            return value
        if value.__class__ is int:
            return str(value)
        if isinstance(value, binary_type):
            value = value.decode('latin1')
        elif isinstance(value, datetime.datetime):  # before numbers' abc, slow on 2.7
            return httputil.format_timestamp(value)
        elif isinstance(value, numbers.Integral):
            return str(value)
        elif not isinstance(value, text_type):
            raise TypeError('Unsupported header value %r' % value)
        if _UNSAFE_HEADER_CHARS.search(value):
            raise ValueError('Unsafe header value %r' % value)
        return header_str(value)  # the server takes heads as the native str (latin-1)

    # -- arguments -----------------------------------------------------------------------

    def get_argument(self, name, default=_ARG_DEFAULT, strip=True):
        """The last value of argument `name` (query or body), as text; without a
        `default`, a missing one is a MissingArgumentError (a 400)."""
        return self._get_argument(name, default, self.request.arguments, strip)

    def get_arguments(self, name, strip=True):
        return self._get_arguments(name, self.request.arguments, strip)

    def get_query_argument(self, name, default=_ARG_DEFAULT, strip=True):
        return self._get_argument(name, default, self.request.query_arguments, strip)

    def get_query_arguments(self, name, strip=True):
        return self._get_arguments(name, self.request.query_arguments, strip)

    def get_body_argument(self, name, default=_ARG_DEFAULT, strip=True):
        return self._get_argument(name, default, self.request.body_arguments, strip)

    def get_body_arguments(self, name, strip=True):
        return self._get_arguments(name, self.request.body_arguments, strip)

    def _get_argument(self, name, default, source, strip):
        values = self._get_arguments(name, source, strip)
        if values:
            return values[-1]
        if default is _ARG_DEFAULT:
            raise MissingArgumentError(name)
        return default

    def _get_arguments(self, name, source, strip):
        values = []
        for value in source.get(name, []):
            value = _CONTROL_CHARS.sub(' ', self.decode_argument(value, name=name))
            values.append(value.strip() if strip else value)
        return values

    def decode_argument(self, value, name=None):
        """An argument's bytes as text (UTF-8); override for another encoding."""
        try:
            return to_unicode(value)
        except UnicodeDecodeError:
            raise HTTPError(400, 'Invalid unicode in %s: %r' % (name or 'url', value[:40]))

    # -- the response --------------------------------------------------------------------

    def write(self, chunk):
        """Buffer `chunk` (text, bytes, or a dict sent as JSON) for the response."""
        if self._finished:
            raise RuntimeError('Cannot write() after finish()')
        if not isinstance(chunk, (binary_type, text_type, dict)):
            message = 'write() only accepts bytes, unicode, and dict objects'
            if isinstance(chunk, list):
                message += '. Lists not accepted for security reasons'
            raise TypeError(message)
        if isinstance(chunk, dict):
            chunk = json_encode(chunk)
            self.set_header('Content-Type', 'application/json; charset=UTF-8')
        self._write_buffer.append(utf8(chunk))

    def flush(self, include_footers=False, callback=None):
        """Send what is buffered (the headers first, the first time). A Future of the
        write, unless `callback` (Tornado 5.1's, deprecated) is given; as in 5.1, a HEAD
        request's callback is not called once its headers are out."""
        chunk = b''.join(self._write_buffer)
        self._write_buffer = []
        if not self._headers_written:
            self._headers_written = True
            for transform in self._transforms:
                self._status_code, self._headers, chunk = transform.transform_first_chunk(
                    self._status_code, self._headers, chunk, include_footers)
            if self.request.method == 'HEAD':
                chunk = None
            # The instance's dict, not getattr: no AttributeError made for most responses,
            # which set no cookie.
            new_cookie = self.__dict__.get('_new_cookie')
            if new_cookie is not None:
                for cookie in new_cookie.values():
                    self.add_header('Set-Cookie', cookie.OutputString(None))
            start_line = httputil.ResponseStartLine('', self._status_code, self._reason)
            return self.request.connection.write_headers(start_line, self._headers, chunk,
                                                         callback=callback)
        for transform in self._transforms:
            chunk = transform.transform_chunk(chunk, include_footers)
        if self.request.method != 'HEAD':
            return self.request.connection.write(chunk, callback=callback)
        future = Future()
        future.set_result(None)
        return future

    def finish(self, chunk=None):
        """End the response (after writing `chunk`, if given)."""
        if self._finished:
            raise RuntimeError('finish() called twice')
        if chunk is not None:
            self.write(chunk)
        if not self._headers_written:
            if (self._status_code == 200 and self.request.method in ('GET', 'HEAD') and
                    'Etag' not in self._headers):
                self.set_etag_header()
                if self.check_etag_header():
                    self._write_buffer = []
                    self.set_status(304)
            if self._status_code in (204, 304) or 100 <= self._status_code < 200:
                if self._write_buffer and b''.join(self._write_buffer):
                    raise RuntimeError('Cannot send body with %s' % self._status_code)
                self._clear_headers_for_304()
            elif 'Content-Length' not in self._headers:
                self.set_header('Content-Length', sum(map(len, self._write_buffer)))
        if self.request.connection is not None:
            self.request.connection.set_close_callback(None)
        self.flush(include_footers=True)
        self.request.connection.finish()
        self._log()
        self._finished = True
        self.on_finish()

    def _clear_headers_for_304(self):
        # RFC 7232 4.1: a 304 carries no entity headers.
        for name in ('Allow', 'Content-Encoding', 'Content-Language', 'Content-Length',
                     'Content-MD5', 'Content-Range', 'Content-Type', 'Last-Modified'):
            self.clear_header(name)

    def detach(self):
        """Take the connection's IOStream over, to speak on it directly (Tornado 5.1's):
        the handler is done, the server lets go of the connection."""
        self._finished = True
        return self.request.connection.detach()

    def compute_etag(self):
        """The response's ETag: a hash of its body; None for no ETag."""
        hasher = hashlib.sha1()
        for part in self._write_buffer:
            hasher.update(part)
        return '"%s"' % hasher.hexdigest()

    def set_etag_header(self):
        etag = self.compute_etag()
        if etag is not None:
            self.set_header('Etag', etag)

    def check_etag_header(self):
        """Whether the request's If-None-Match matches the response's Etag (weakly)."""
        if_none_match = self.request.headers.get('If-None-Match')
        if not if_none_match:  # most requests: nothing to match
            return False
        computed = utf8(self._headers.get('Etag', ''))
        requested = re.findall(br'\*|(?:W/)?"[^"]*"', utf8(if_none_match))
        if not computed or not requested:
            return False
        if requested[0] == b'*':
            return True
        return any(_weak(etag) == _weak(computed) for etag in requested)

    def redirect(self, url, permanent=False, status=None):
        """Redirect to `url`: a 302, a 301 if `permanent`, or the 3xx `status`."""
        if self._headers_written:
            raise Exception('Cannot redirect after headers have been written')
        if status is None:
            status = 301 if permanent else 302
        elif not (isinstance(status, int) and 300 <= status <= 399):
            raise ValueError('a redirect status is a 3xx code, not %r' % (status,))
        self.set_status(status)
        self.set_header('Location', utf8(url))
        self.finish()

    def send_error(self, status_code=500, **kwargs):
        """Answer with an error page (`write_error`), dropping what was written."""
        if self._headers_written:
            gen_log.error('Cannot send error response after headers written')
            if not self._finished:
                try:
                    self.finish()
                except Exception:
                    gen_log.error('Failed to flush partial response', exc_info=True)
                    self.request.connection.close()  # the client would wait for the rest
            return
        self.clear()
        reason = kwargs.get('reason')
        if 'exc_info' in kwargs:
            exception = kwargs['exc_info'][1]
            if isinstance(exception, HTTPError) and exception.reason:
                reason = exception.reason
        self.set_status(status_code, reason=reason)
        try:
            self.write_error(status_code, **kwargs)
        except Exception:
            app_log.error('Uncaught exception in write_error', exc_info=True)
        if not self._finished:
            self.finish()

    def write_error(self, status_code, **kwargs):
        """Write the error page; the traceback too with the `serve_traceback` setting."""
        if self.settings.get('serve_traceback') and 'exc_info' in kwargs:
            self.set_header('Content-Type', 'text/plain')
            for line in traceback.format_exception(*kwargs['exc_info']):
                self.write(line)
            self.finish()
        else:
            self.finish('<html><title>%(code)d: %(message)s</title>'
                        '<body>%(code)d: %(message)s</body></html>'
                        % {'code': status_code, 'message': self._reason})

    def reverse_url(self, name, *args):
        """The application's `reverse_url`."""
        return self.application.reverse_url(name, *args)

    def static_url(self, path, include_host=None, **kwargs):
        """The URL of static file `path` (under the ``static_path`` setting), with a
        ``?v=`` hash of its content so that it may be cached for ever."""
        self.require_setting('static_path', 'static_url')
        make_url = self.settings.get('static_handler_class', StaticFileHandler).make_static_url
        if include_host is None:
            include_host = getattr(self, 'include_host', False)
        base = self.request.protocol + '://' + self.request.host if include_host else ''
        return base + make_url(self.settings, path, **kwargs)

    # -- what tinytornado does not have ---------------------------------------------------

    def render(self, template_name, **kwargs):
        raise _missing('templates')

    def render_string(self, template_name, **kwargs):
        raise _missing('templates')

    def xsrf_form_html(self):
        raise _missing('XSRF protection')

    def check_xsrf_cookie(self):
        raise _missing('XSRF protection')

    @property
    def xsrf_token(self):
        raise _missing('XSRF protection')

    @property
    def locale(self):
        """What a handler assigned (tinytornado has no locale module to find one)."""
        if not hasattr(self, '_locale'):
            raise _missing('locale')
        return self._locale

    @locale.setter
    def locale(self, value):
        self._locale = value

    # -- running a request ---------------------------------------------------------------

    @gen.coroutine
    def _execute(self, transforms, *args, **kwargs):
        """Serve the request, its response going through `transforms` (OutputTransforms):
        5.1's signature, which legacy handlers override."""
        self._transforms = transforms
        try:
            if self.request.method not in self.SUPPORTED_METHODS:
                raise HTTPError(405)
            self.path_args = [self.decode_argument(arg) for arg in args]
            self.path_kwargs = dict((name, self.decode_argument(value, name=name))
                                    for name, value in kwargs.items()) if kwargs else {}
            result = self.prepare()
            if result is not None:
                yield result
            if self._prepared_future is not None:
                self._prepared_future.set_result(None)  # the body may come now
            if self._finished:
                return
            if self._stream_request_body:
                try:
                    yield self.request.body  # resolves once data_received has had it all
                except StreamClosedError:
                    return
            method = getattr(self, self.request.method.lower())
            result = method(*self.path_args, **self.path_kwargs)
            if result is not None:  # a Future, or a coroutine object of an async def
                # One done already (a coroutine method that never waited, as for a small
                # static file) makes no Runner for this coroutine: see gen._start_runner.
                yield result
            if self._auto_finish and not self._finished:
                self.finish()
        except Exception as e:
            try:
                self._handle_request_exception(e)
            except Exception:
                app_log.error('Exception in exception handler', exc_info=True)
            if self._prepared_future is not None and not self._prepared_future.done():
                # It failed before the body: the server reads on (and drops it, or closes).
                self._prepared_future.set_result(None)

    def _handle_request_exception(self, e):
        if isinstance(e, Finish):
            if not self._finished:
                self.finish(*e.args)
            return
        exc_info = sys.exc_info()
        try:
            self.log_exception(*exc_info)
        except Exception:
            # A broken logger must not leave the client waiting: the answer still goes.
            app_log.error('Error in exception logger', exc_info=True)
        if self._finished:
            return  # the response is out: nothing more to say
        status = e.status_code if isinstance(e, HTTPError) else 500
        self.send_error(status, exc_info=exc_info)

    def log_exception(self, typ, value, tb):
        """Log an HTTPError's log_message as a warning, any other exception as an error."""
        if isinstance(value, HTTPError):
            if value.log_message:
                gen_log.warning('%d %s: ' + value.log_message, value.status_code,
                                self._request_summary(), *value.args)
        else:
            app_log.error('Uncaught exception %s\n%r', self._request_summary(), self.request,
                          exc_info=(typ, value, tb))

    def _request_summary(self):
        return '%s %s (%s)' % (self.request.method, self.request.uri, self.request.remote_ip)

    def _log(self):
        self.application.log_request(self)


# Tornado 5.1's private helpers, which legacy code imports from tornado.web to sign and
# check values of its own the way secure cookies are.
_create_signature_v1 = signature_v1
_create_signature_v2 = signature_v2
_time_independent_equals = hmac.compare_digest


# An absolute static root -> its abspath ending in the separator: the same for every
# request (a relative root is not kept: it depends on the working directory).
_absolute_roots = {}
_MAX_ABSOLUTE_ROOTS = 64


def _root_with_separator(root):
    normalized = _absolute_roots.get(root)
    if normalized is None:
        normalized = os.path.abspath(root)
        if not normalized.endswith(os.path.sep):
            normalized += os.path.sep
        if os.path.isabs(root) and len(_absolute_roots) < _MAX_ABSOLUTE_ROOTS:
            _absolute_roots[root] = normalized
    return normalized


def _stat_or_none(path):
    """os.stat(path), or None where os.path.exists would say False."""
    try:
        return os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in the path, as exists() takes it
        return None


def _weak(etag):
    return etag[2:] if etag.startswith(b'W/') else etag


def authenticated(method):
    """A verb method for logged-in users only: without `current_user`, a GET or HEAD is
    redirected to the login URL (with ``?next=`` the request's URL, unless the login URL
    has a query already), any other method is a 403."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        if self.current_user:
            return method(self, *args, **kwargs)
        if self.request.method not in ('GET', 'HEAD'):
            raise HTTPError(403)
        login_url = self.get_login_url()
        if '?' not in login_url:
            # An absolute login URL (another host) needs the whole URL to come back to.
            next_url = (self.request.full_url() if urlsplit(login_url).scheme
                        else self.request.uri)
            login_url += '?' + urlencode(dict(next=next_url))
        self.redirect(login_url)
    return wrapper


def stream_request_body(cls):
    """A RequestHandler class that takes its request's body as it comes, piece by piece,
    in `data_received`, instead of whole in ``request.body`` (Tornado 5.1's).

    prepare() runs once the headers are in, before any of the body (it may set
    ``self.request.connection.set_max_body_size`` or ``set_body_timeout`` for this request);
    the verb method once all of it has been received. A Future (or coroutine) that prepare()
    or data_received returns holds the server's reading of the body until it resolves.
    """
    if not (isinstance(cls, type) and issubclass(cls, RequestHandler)):
        raise TypeError('expected subclass of RequestHandler, got %r' % (cls,))
    cls._stream_request_body = True
    return cls


def _has_stream_request_body(cls):
    if not issubclass(cls, RequestHandler):
        raise TypeError('expected subclass of RequestHandler, got %r' % (cls,))
    return cls._stream_request_body


def removeslash(method):
    """A verb method for paths without a trailing slash: a GET or HEAD of one with it is
    redirected (301) to the path without it, other methods are a 404."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        if self.request.path.endswith('/'):
            if self.request.method not in ('GET', 'HEAD'):
                raise HTTPError(404)
            uri = self.request.path.rstrip('/')
            if uri:  # '/' stays '/'
                self.redirect(_with_query(uri, self.request.query), permanent=True)
                return None
        return method(self, *args, **kwargs)
    return wrapper


def addslash(method):
    """A verb method for paths with a trailing slash: a GET or HEAD of one without it is
    redirected (301) to the path with it, other methods are a 404."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        if not self.request.path.endswith('/'):
            if self.request.method not in ('GET', 'HEAD'):
                raise HTTPError(404)
            self.redirect(_with_query(self.request.path + '/', self.request.query),
                          permanent=True)
            return None
        return method(self, *args, **kwargs)
    return wrapper


def _with_query(path, query):
    return path + '?' + query if query else path


class RedirectHandler(RequestHandler):
    """Redirect to `url` (a ``str.format`` template of the path arguments), keeping the
    query: ``(r'/old/(.*)', RedirectHandler, {'url': '/new/{0}'})``."""

    def initialize(self, url, permanent=True):
        self._url = url
        self._permanent = permanent

    def get(self, *args):
        to_url = self._url.format(*args)
        if self.request.query_arguments:
            to_url = httputil.url_concat(
                to_url, list(httputil.qs_to_qsl(self.request.query_arguments)))
        self.redirect(to_url, permanent=self._permanent)


class ErrorHandler(RequestHandler):
    """Answer every request with `status_code` (the 404 of unmatched paths)."""

    def initialize(self, status_code):
        self.set_status(status_code)

    def prepare(self):
        raise HTTPError(self._status_code)


class FallbackHandler(RequestHandler):
    """Hand the request to `fallback`, any callable taking an HTTPServerRequest and
    answering through ``request.connection`` (an HTTPServer request callback, another
    Application; Tornado 5.1's, where it mostly wrapped a WSGIContainer)::

        (r'/legacy/.*', FallbackHandler, {'fallback': other_application})
    """

    def initialize(self, fallback):
        self.fallback = fallback

    def prepare(self):
        self.fallback(self.request)
        # The fallback answers: this handler neither finishes nor logs the request.
        self._finished = True
        self.on_finish()


class StaticFileHandler(RequestHandler):
    """Serve the files under the directory `path` (Tornado 5.1's)::

        (r'/files/(.*)', StaticFileHandler, {'path': '/var/www'})

    With ETag (a hash of the content) and Last-Modified, answering If-None-Match and
    If-Modified-Since with 304, a single byte Range with 206 (416 when beyond the end), and
    a ten-year cache time when the URL has ``?v=`` (as `static_url` makes them). A
    directory is served as its `default_filename` if given, else refused (403).
    """

    CACHE_MAX_AGE = 86400 * 365 * 10
    _versions = _staticfiles.VersionCache()

    def initialize(self, path, default_filename=None):
        self.root = path
        self.default_filename = default_filename

    @classmethod
    def reset(cls):
        """Forget the content hashes (files changed; the ``static_hash_cache`` setting
        set to False does it for each request)."""
        cls._versions.reset()

    def head(self, path):
        return self.get(path, include_body=False)

    @gen.coroutine
    def get(self, path, include_body=True):
        self.path = self.parse_url_path(path)
        self.absolute_path = self.validate_absolute_path(
            self.root, self.get_absolute_path(self.root, self.path))
        if self.absolute_path is None:
            return  # redirected to the directory's URL with its slash
        self.modified = self.get_modified_time()
        self.set_headers()
        if self.should_return_304():
            self.set_status(304)
            return
        size = self.get_content_size()
        start, end = self._range(size)
        if self.get_status() == 416:
            return
        self.set_header('Content-Length', (end if end is not None else size) - (start or 0))
        if not include_body:
            return
        content = self.get_content(self.absolute_path, start, end)
        if isinstance(content, binary_type):  # an override's whole content at once
            content = [content]
        for chunk in content:
            try:
                self.write(chunk)
                # Sent already, it is no wait, and makes this coroutine no Runner.
                yield self.flush()
            except StreamClosedError:
                return  # the client went away

    def _range(self, size):
        """The slice of the file to send, after setting the status a Range asks for."""
        header = self.request.headers.get('Range')
        request_range = _staticfiles.parse_request_range(header) if header else None
        if request_range is None:
            return None, None
        start, end = request_range
        if (start is not None and start >= size) or end == 0:
            self.set_status(416)
            self.set_header('Content-Type', 'text/plain')
            self.set_header('Content-Range', 'bytes */%s' % size)
            return None, None
        if start is not None and start < 0:
            start = max(start + size, 0)
        if end is not None and end > size:
            end = size
        if size != (end or size) - (start or 0):
            self.set_status(206)
            self.set_header('Content-Range', _staticfiles.content_range(start, end, size))
        return start, end

    def compute_etag(self):
        version = self._get_cached_version(self.absolute_path)
        return '"%s"' % version if version else None

    def set_headers(self):
        self.set_header('Accept-Ranges', 'bytes')
        self.set_etag_header()
        if self.modified is not None:
            self.set_header('Last-Modified', self.modified)
        content_type = self.get_content_type()
        if content_type:
            self.set_header('Content-Type', content_type)
        cache_time = self.get_cache_time(self.path, self.modified, content_type)
        if cache_time > 0:
            self.set_header('Expires', httputil.format_timestamp(time.time() + cache_time))
            self.set_header('Cache-Control', 'max-age=' + str(cache_time))
        self.set_extra_headers(self.path)

    def should_return_304(self):
        if self.request.headers.get('If-None-Match'):
            return self.check_etag_header()
        since = self.request.headers.get('If-Modified-Since')
        return since is not None and _staticfiles.unmodified_since(since, self.modified)

    @classmethod
    def get_absolute_path(cls, root, path):
        return os.path.abspath(os.path.join(root, path))

    def validate_absolute_path(self, root, absolute_path):
        """`absolute_path` if it is a file under `root`; else an HTTPError (403 outside
        root or not a file, 404 absent), or None after redirecting a directory's URL to
        its form with a slash.

        The file is stat'ed once (what isdir, exists and isfile would ask each time), and
        the result kept for `get_content_size` and `get_modified_time`."""
        root = _root_with_separator(root)
        if not (absolute_path + os.path.sep).startswith(root):
            raise HTTPError(403, '%s is not in root static directory', self.path)
        file_stat = _stat_or_none(absolute_path)
        if (file_stat is not None and stat.S_ISDIR(file_stat.st_mode) and
                self.default_filename is not None):
            if not self.request.path.endswith('/'):
                self.redirect(self.request.path + '/', permanent=True)
                return None
            absolute_path = os.path.join(absolute_path, self.default_filename)
            file_stat = _stat_or_none(absolute_path)
        if file_stat is None:
            raise HTTPError(404)
        if not stat.S_ISREG(file_stat.st_mode):
            raise HTTPError(403, '%s is not a file', self.path)
        self._validated_stat = absolute_path, file_stat
        return absolute_path

    @classmethod
    def get_content(cls, abspath, start=None, end=None):
        """The file's bytes ``[start:end]``: bytes, or an iterable of them."""
        return _staticfiles.read_file(abspath, start, end)

    @classmethod
    def get_content_version(cls, abspath):
        return _staticfiles.content_version(cls.get_content(abspath))

    def _stat(self):
        # The instance's dict, not hasattr: no AttributeError made per request.
        result = self.__dict__.get('_stat_result')
        if result is None:
            # validate_absolute_path's, unless an override validated another path.
            validated = self.__dict__.get('_validated_stat')
            if validated is not None and validated[0] == self.absolute_path:
                result = validated[1]
            else:
                result = os.stat(self.absolute_path)
            self._stat_result = result
        return result

    def get_content_size(self):
        return self._stat().st_size

    def get_modified_time(self):
        """The file's modification time, a naive UTC datetime to the second (5.1's type,
        which overrides return and compare; made without the utcfromtimestamp that 3.12
        deprecates)."""
        return _EPOCH + datetime.timedelta(seconds=int(self._stat()[stat.ST_MTIME]))

    def get_content_type(self):
        return _staticfiles.content_type(self.absolute_path)

    def set_extra_headers(self, path):
        """Override to add headers to each file's response."""

    def get_cache_time(self, path, modified, mime_type):
        return self.CACHE_MAX_AGE if 'v' in self.request.arguments else 0

    @classmethod
    def make_static_url(cls, settings, path, include_version=True):
        url = settings.get('static_url_prefix', '/static/') + path
        if not include_version:
            return url
        version = cls.get_version(settings, path)
        return '%s?v=%s' % (url, version) if version else url

    def parse_url_path(self, url_path):
        """The file path of the URL's path argument."""
        return url_path.replace('/', os.path.sep) if os.path.sep != '/' else url_path

    @classmethod
    def get_version(cls, settings, path):
        return cls._get_cached_version(cls.get_absolute_path(settings['static_path'], path))

    @classmethod
    def _get_cached_version(cls, abs_path):
        return cls._versions.get(abs_path, cls.get_content_version) or None


class Application(httputil.HTTPServerConnectionDelegate):
    """A list of routes an `HTTPServer` serves::

        application = Application([
            (r'/', MainHandler),
            (r'/user/(\\d+)', UserHandler, {'db': db}, 'user'),
            url(r'/about', AboutHandler, name='about'),
        ], debug=False)
        application.listen(8888)

    A route is a `URLSpec` or a tuple ``(regex, handler[, kwargs[, name]])``. Routes are
    tried in order; a path none matches is a 404 (or the ``default_handler_class``
    setting's). `add_handlers` adds routes for hosts matching a pattern, tried first; with
    `default_host`, those of a host pattern it matches also serve requests whose host
    matches none (unless they came through a proxy: X-Real-Ip).

    Each response goes through `transforms` (OutputTransform classes); by default none,
    or `GZipContentEncoding` with the ``compress_response`` (or ``gzip``) setting.
    """

    def __init__(self, handlers=None, default_host=None, transforms=None, **settings):
        for name in settings:
            if name in _MISSING_SETTINGS and settings[name]:
                raise _missing(name)
        if settings.get('debug'):
            settings.setdefault('serve_traceback', True)
            settings.setdefault('static_hash_cache', False)
        self.settings = settings
        if transforms is None:
            transforms = ([GZipContentEncoding] if settings.get('compress_response') or
                          settings.get('gzip') else [])
        self.transforms = list(transforms)  # OutputTransform classes, made per request
        self.default_host = default_host
        self.named_handlers = {}
        self._host_routes = []  # (host regex, [URLSpec]), tried before the wildcard ones
        self._default_host_routes = []  # (host regex, [URLSpec]) served for default_host
        handlers = list(handlers or [])
        if settings.get('static_path'):
            handlers[:0] = self._static_routes(settings)
        self._wildcard = self._specs(handlers)

    @staticmethod
    def _static_routes(settings):
        """The routes of the ``static_path`` setting: its prefix, favicon and robots."""
        handler_class = settings.get('static_handler_class', StaticFileHandler)
        kwargs = dict(settings.get('static_handler_args', {}), path=settings['static_path'])
        prefix = re.escape(settings.get('static_url_prefix', '/static/'))
        return [(pattern, handler_class, kwargs)
                for pattern in [r'/(robots\.txt)', r'/(favicon\.ico)', prefix + r'(.*)']]

    def listen(self, port, address='', **kwargs):
        """Serve on `port` with a new HTTPServer (given `kwargs`), which is returned."""
        server = HTTPServer(self, **kwargs)
        server.listen(port, address)
        return server

    def add_transform(self, transform_class):
        """Apply `transform_class` (an OutputTransform) to every response, after those
        already there."""
        self.transforms.append(transform_class)

    def add_handlers(self, host_pattern, host_handlers):
        """Routes for hosts matching `host_pattern` (a regex, anchored at its end)."""
        if not host_pattern.endswith('$'):
            host_pattern += '$'
        host = re.compile(host_pattern)
        specs = self._specs(host_handlers)
        self._host_routes.append((host, specs))
        self._default_host_routes.append((host, specs))

    def _specs(self, handlers):
        specs = []
        for spec in handlers:
            if isinstance(spec, (tuple, list)):
                if not 2 <= len(spec) <= 4:
                    raise ValueError('a route is (regex, handler[, kwargs[, name]]), not %r'
                                     % (spec,))
                spec = URLSpec(*spec)
            elif not isinstance(spec, URLSpec):
                raise TypeError('a route is a URLSpec or a tuple, not %r' % (spec,))
            specs.append(spec)
            if spec.name:
                if spec.name in self.named_handlers:
                    app_log.warning('Multiple handlers named %s; replacing previous value',
                                    spec.name)
                self.named_handlers[spec.name] = spec
        return specs

    def find_handler(self, request):
        """``(handler class, kwargs, path args, path kwargs)`` serving `request`."""
        if self._host_routes:
            routes = [specs for host, specs in self._host_routes
                      if host.match(request.host_name)]
            routes.append(self._wildcard)
        else:  # most applications: no add_handlers
            routes = [self._wildcard]
        if self.default_host is not None and 'X-Real-Ip' not in request.headers:
            routes.extend(specs for host, specs in self._default_host_routes
                          if host.match(self.default_host))
        for specs in routes:
            for spec in specs:
                match = spec.match(request.path)
                if match is not None:
                    return (spec.handler_class, spec.kwargs) + match
        if self.settings.get('default_handler_class'):
            return (self.settings['default_handler_class'],
                    self.settings.get('default_handler_args', {}), [], {})
        return ErrorHandler, {'status_code': 404}, [], {}

    def reverse_url(self, name, *args):
        """The path of the route named `name`, for `args`."""
        if name not in self.named_handlers:
            raise KeyError('%s not found in named urls' % name)
        return self.named_handlers[name].reverse(*args)

    def start_request(self, server_conn, request_conn):
        return _RequestDispatcher(self, server_conn, request_conn)

    def __call__(self, request):
        """Serve `request` (an HTTPServerRequest read whole): an Application is also a
        plain request callback. A Future of the handler's run."""
        handler, args, path_kwargs = self._handler_for(request, self.find_handler(request))
        return handler._execute(handler._transforms, *args, **path_kwargs)

    def _handler_for(self, request, route):
        """``(handler, path args, path kwargs)``: a new handler of the route that
        `find_handler` gave, for `request`, its transforms made."""
        handler_class, kwargs, args, path_kwargs = route
        if not self.settings.get('static_hash_cache', True):
            self.settings.get('static_handler_class', StaticFileHandler).reset()
        handler = handler_class(self, request, **kwargs)
        handler._transforms = ([transform(request) for transform in self.transforms]
                               if self.transforms else [])
        return handler, args, path_kwargs

    def log_request(self, handler):
        """Log the finished request: the ``log_function`` setting, or one line to
        access_log (info below 400, warning below 500, else error)."""
        if 'log_function' in self.settings:
            self.settings['log_function'](handler)
            return
        status = handler.get_status()
        log = (access_log.info if status < 400 else
               access_log.warning if status < 500 else access_log.error)
        log('%d %s %.2fms', status, handler._request_summary(),
            1000.0 * handler.request.request_time())


class _RequestDispatcher(httputil.HTTPMessageDelegate):
    """Routes one request for an Application once its headers are in; reads its body
    whole and then runs its handler, or, for a `stream_request_body` handler, runs it at
    once and hands it the body as it comes."""

    def __init__(self, application, server_conn, request_conn):
        self.application = application
        self.server_conn = server_conn
        self.connection = request_conn
        self.request = None
        self.handler = None
        self._route = None
        self._streaming = False
        self._chunks = []

    def headers_received(self, start_line, headers):
        self.request = httputil.HTTPServerRequest(
            connection=self.connection, server_connection=self.server_conn,
            start_line=start_line, headers=headers)
        self._route = self.application.find_handler(self.request)
        self._streaming = _has_stream_request_body(self._route[0])
        if not self._streaming:
            return None
        # The body is a Future until it has all come (the handler waits on it); the
        # server reads none of it before prepare() is done.
        self.request.body = Future()
        self._execute()
        return self.handler._prepared_future

    def data_received(self, chunk):
        if self._streaming:
            return self.handler.data_received(chunk)
        self._chunks.append(chunk)
        return None

    def finish(self):
        if self._streaming:
            if not self.request.body.done():
                self.request.body.set_result(None)
            return
        self.request.body = b''.join(self._chunks)
        self._chunks = None
        self.request.parse_body()
        self._execute()

    def on_connection_close(self):
        if self._streaming:
            self.handler.on_connection_close()
        self._chunks = None

    def _execute(self):
        self.handler, args, kwargs = self.application._handler_for(self.request, self._route)
        if self._streaming:
            self.handler._prepared_future = Future()
        # _execute logs what fails; its Future is the handler's to keep.
        self.handler._execute(self.handler._transforms, *args, **kwargs)


# -- Tornado 5.1's legacy decorator, re-exported (tests/test_layering.py: only here, last) -----
from tinytornado._web_legacy import asynchronous  # noqa: E402
