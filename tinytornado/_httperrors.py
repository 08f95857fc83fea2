"""The errors of `tinytornado.httpclient`, defined below it so that the pool and the
connection code it is built on can raise them too.

They are public in `tinytornado.httpclient`, which re-exports them; their `__module__` says
so, so that tracebacks and pickles name them as Tornado's users know them.
"""
from __future__ import absolute_import, division, print_function

from six.moves import http_client

__all__ = ['HTTPClientError', 'HTTPTimeoutError', 'HTTPStreamClosedError']

_PUBLIC_MODULE = 'tinytornado.httpclient'


class HTTPClientError(Exception):
    """An HTTP response with a non-2xx code (`response` is attached), or code 599 for a
    failure that produced no response (see the subclasses).

    Attributes: `code`, `message` (the reason phrase by default), `response`.
    """
    __module__ = _PUBLIC_MODULE

    def __init__(self, code, message=None, response=None):
        self.code = code
        self.message = message or http_client.responses.get(code, 'Unknown')
        self.response = response
        super(HTTPClientError, self).__init__(code, message, response)

    def __str__(self):
        return 'HTTP %d: %s' % (self.code, self.message)

    __repr__ = __str__  # the default repr would show the whole response


class HTTPTimeoutError(HTTPClientError):
    """Code 599: 'Timeout while connecting', 'Timeout during request' or 'Timeout in
    request queue'."""
    __module__ = _PUBLIC_MODULE

    def __init__(self, message):
        super(HTTPTimeoutError, self).__init__(599, message=message)

    def __str__(self):
        return self.message or 'Timeout'


class HTTPStreamClosedError(HTTPClientError):
    """Code 599: the connection closed where nothing else explains it; or, as the
    subclass HTTPInputClientError, the client closed it on a response it could not read."""
    __module__ = _PUBLIC_MODULE

    def __init__(self, message):
        super(HTTPStreamClosedError, self).__init__(599, message=message)

    def __str__(self):
        return self.message or 'Stream closed'
