"""Tornado 5.1's names for the HTTP client: `SimpleAsyncHTTPClient` and its errors.

5.1 kept its client's implementation here; tinytornado's is httpclient's `AsyncHTTPClient`,
of which `SimpleAsyncHTTPClient` is the subclass that ``AsyncHTTPClient()`` makes by default,
as in 5.1 (it is defined beside its base, which names it as its default; this module gives
it the place legacy code imports it from). ``AsyncHTTPClient.configure(
'tornado.simple_httpclient.SimpleAsyncHTTPClient')`` chooses it, and
``SimpleAsyncHTTPClient()`` is a client of the IOLoop's of its own, apart from
``AsyncHTTPClient()``'s. The errors 5.1 defined here, `HTTPTimeoutError` and
`HTTPStreamClosedError`, are httpclient's, re-exported.
"""
from __future__ import absolute_import, division, print_function

from tinytornado.httpclient import (
    HTTPStreamClosedError, HTTPTimeoutError, SimpleAsyncHTTPClient,
)

__all__ = ['SimpleAsyncHTTPClient', 'HTTPTimeoutError', 'HTTPStreamClosedError']
