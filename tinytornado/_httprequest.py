"""What an `HTTPRequest` means on the wire: the client's defaults applied, the origin it goes
to, the headers it implies, its TLS context, and the request a redirect leads to.

Pure functions of the request and the URL (the TLS contexts aside, which are made once per
setting and kept): no I/O here.
"""
from __future__ import absolute_import, division, print_function

import base64
import copy
import operator
import re
import ssl

from six.moves.urllib.parse import SplitResult, urljoin, urlsplit

from tinytornado import version
from tinytornado._compat import binary_type, text_type
from tinytornado.httputil import HTTPHeaders, encode_username_password
from tinytornado.netutil import ssl_options_to_context

__all__ = ['RareOptions', 'RARE_OPTIONS', 'RARE_OPTION_DEFAULTS', 'RequestProxy',
           'check_supported', 'split_url', 'origin', 'target', 'native_url',
           'prepare_headers', 'SSLContexts', 'redirected_request']

_SUPPORTED_METHODS = frozenset(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'])
_BODY_METHODS = frozenset(['POST', 'PATCH', 'PUT'])
_UNSUPPORTED_OPTIONS = ('proxy_host', 'proxy_port', 'proxy_username', 'proxy_password',
                        'proxy_auth_mode')
# With the body options last: the one read of them a fetch makes, in the same C call.
_checked_values = operator.attrgetter(
    *_UNSUPPORTED_OPTIONS + ('body_producer', 'expect_100_continue'))
_PLAIN_BODY = (None, False)  # check_supported's answer for nearly every request
# What a redirect that turns the request into a GET drops with its body.
_BODY_HEADERS = ('Content-Length', 'Content-Type', 'Content-Encoding', 'Transfer-Encoding',
                 'Expect')


class RareOptions(object):
    """The values of the request options that are rare (or unsupported), for a request or
    proxy not given them: HTTPRequest makes them attributes only when given.

    Each attribute in a request's __dict__ costs every fetch (RequestProxy copies the
    dict), and past 30 attributes CPython 3.11+ gives up the compact layout of instance
    dicts: with all of them, a request and its proxy took 3.2 KB, half a queued fetch.
    """
    wire_recorder = prepare_curl_callback = network_interface = None
    proxy_host = proxy_port = proxy_username = proxy_password = proxy_auth_mode = None
    ca_certs = client_key = client_cert = body_producer = None
    expect_100_continue = False


# In the order HTTPRequest.__init__ lists their values.
RARE_OPTIONS = ('wire_recorder', 'prepare_curl_callback', 'network_interface', 'proxy_host',
                'proxy_port', 'proxy_username', 'proxy_password', 'proxy_auth_mode',
                'ca_certs', 'client_key', 'client_cert', 'body_producer',
                'expect_100_continue')
RARE_OPTION_DEFAULTS = tuple(getattr(RareOptions, name) for name in RARE_OPTIONS)


class RequestProxy(RareOptions):
    """A request whose None attributes read as the client's defaults.

    The values are copied when the proxy is made (a fetch reads them some twenty times:
    plain attributes are much cheaper than a __getattr__ each time); the request must not
    change while it is being fetched.
    """

    def __init__(self, request, defaults):
        values = request.__dict__.copy()  # one copy of the whole table, not an update
        for name, value in defaults.items():
            if values.get(name) is None:
                values[name] = value
        values['headers'], values['body'] = request.headers, request.body  # properties
        values['request'], values['defaults'] = request, defaults
        self.__dict__ = values


def check_supported(request):
    """Raise NotImplementedError for an option tinytornado does not implement; return
    (body_producer, expect_continue): the request's producer (None without one), and
    whether its body is to wait for the server's 100 Continue."""
    # Every value read in one C call first: this runs for every request, and nearly
    # always finds nothing. (A rare option left unset is a class attribute: each read
    # of one misses the instance, then looks in the class.)
    values = _checked_values(request)
    if not any(values):
        return _PLAIN_BODY
    for option in _UNSUPPORTED_OPTIONS:
        if getattr(request, option):
            raise NotImplementedError('%s is not supported by tinytornado' % option)
    body_producer, expect_100_continue = values[-2:]
    # RFC 9110 10.1.1: a client must not send the expectation without content (Tornado 5.1
    # sent it all the same); a redirect to GET, which drops the body, drops it too.
    return body_producer, bool(expect_100_continue) and (
        body_producer is not None or request.body is not None)


# An http(s) URL that urlsplit reads plainly: a lower-case scheme, a host of letters,
# digits, dots and hyphens, digits for a port, then visible ASCII only (urlsplit strips or
# removes whitespace and control characters), the path starting with '/'. Its groups are
# urlsplit's parts.
_PLAIN_URL_RE = re.compile(r'(https?)://([A-Za-z0-9.\-]+(?::[0-9]+)?)((?:/[!"$->@-~]*)?)'
                           r'(?:\?([!"$-~]*))?(?:#([!-~]*))?\Z')


def split_url(url):
    """urlsplit(url), made directly for a plain http(s) URL: urlsplit's checks and cache
    cost a request more than the rest of its preparation."""
    match = _PLAIN_URL_RE.match(url)
    if match is None:
        return urlsplit(url)
    scheme, netloc, path, query, fragment = match.groups()
    return SplitResult(scheme, netloc, path, query or '', fragment or '')


_origins = {}  # (scheme, netloc) -> (scheme, host, port): a crawl asks for few, often
_MAX_ORIGINS = 1000


def origin(parts, url):
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
    result = scheme, host, parts.port or (443 if scheme == 'https' else 80)
    if len(_origins) >= _MAX_ORIGINS:
        _origins.clear()
    _origins[parts.scheme, parts.netloc] = result
    return result


def target(parts):
    """The request target of a split URL: its path and query."""
    return (parts.path or '/') + ('?' + parts.query if parts.query else '')


def native_url(text):
    """A URL as the native str."""
    if isinstance(text, str):
        return text
    return text.encode('utf-8') if isinstance(text, text_type) else text.decode('utf-8')


def prepare_headers(request, parts, body_producer, expect_continue):
    """request.headers with what the request implies added (Host, auth, User-Agent...);
    `body_producer` and `expect_continue` are as check_supported returned them."""
    headers = request.headers
    method = request.method
    if method not in _SUPPORTED_METHODS and not request.allow_nonstandard_methods:
        raise KeyError('unknown method %s' % method)
    if not request.allow_nonstandard_methods and (method in _BODY_METHODS) != (
            request.body is not None or body_producer is not None):
        raise ValueError('Body must %sbe None for method %s (unless allow_nonstandard_methods '
                         'is true)' % ('not ' if method in _BODY_METHODS else '', method))
    if body_producer is not None and request.body is not None:
        raise ValueError('body and body_producer are mutually exclusive')
    netloc = parts.netloc
    if 'Host' not in headers:
        headers['Host'] = netloc.rpartition('@')[2]
    username = password = None
    if '@' in netloc:  # SplitResult parses the user info again for each of the two
        username, password = _url_text(parts.username), _url_text(parts.password)
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
    if expect_continue:
        headers['Expect'] = '100-continue'
        # The head goes before the body (send_request_head), which would then be chunked;
        # a body known whole goes with its length, as send_request sends it.
        if body_producer is None and 'Content-Length' not in headers:
            headers['Content-Length'] = str(len(request.body))
    return headers


def _url_text(value):
    # A 2.7 native URL is bytes; Tornado 5.1 splits URLs as text, so that credentials
    # given in one are NFC-normalized on 2.7 as well.
    return value.decode('utf-8') if isinstance(value, binary_type) else value


def _basic_auth(mode, username, password):
    if mode not in (None, 'basic'):
        raise ValueError('unsupported auth_mode %s' % mode)
    credentials = encode_username_password(username, password or '')
    return 'Basic ' + base64.b64encode(credentials).decode('ascii')


class SSLContexts(object):
    """The SSLContexts of one client: one per distinct TLS setting, made once."""

    def __init__(self):
        self._contexts = {}  # settings -> SSLContext

    def for_request(self, request):
        """The SSLContext for an https request."""
        if isinstance(request.ssl_options, dict):
            settings = tuple(sorted(request.ssl_options.items()))
        elif request.ssl_options is not None:
            return request.ssl_options
        else:
            settings = (request.validate_cert, request.ca_certs, request.client_cert,
                        request.client_key)
        context = self._contexts.get(settings)
        if context is None:
            context = self._contexts[settings] = ssl_options_to_context(
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


def redirected_request(request, code, location):
    """The request (a RequestProxy) to send after `request` had a `code` response with
    this Location."""
    new_request = copy.copy(request.request)
    new_request.url = urljoin(request.url, location)
    new_request.headers = HTTPHeaders(request.headers)
    del new_request.headers['Host']
    if urlsplit(new_request.url).netloc != urlsplit(request.url).netloc:
        # Credentials stay with the host they were meant for.
        new_request.headers.pop('Authorization', None)
        new_request.auth_username = new_request.auth_password = None
    new_request.max_redirects = request.max_redirects - 1
    # 303 means "GET it there"; browsers (and Tornado) treat a POST's 301 and 302 the
    # same way. 307 and 308 keep the method and the body.
    if ((code == 303 and request.method != 'HEAD') or
            (code in (301, 302) and request.method == 'POST')):
        new_request.method = 'GET'
        new_request.body = new_request.body_producer = None
        for name in _BODY_HEADERS:
            new_request.headers.pop(name, None)
    return RequestProxy(new_request, request.defaults)
