"""Tornado 5.1's names for the HTTP client: `SimpleAsyncHTTPClient` is `AsyncHTTPClient`.

5.1 kept its client's implementation here; tinytornado's is httpclient's `AsyncHTTPClient`,
and this module gives it the name legacy code uses.

One client, two names: ``AsyncHTTPClient.configure(
'tornado.simple_httpclient.SimpleAsyncHTTPClient')`` chooses the client there already is,
``SimpleAsyncHTTPClient()`` is the IOLoop's ``AsyncHTTPClient()``, and every client is an
instance of both. The errors 5.1 defined here, `HTTPTimeoutError` and
`HTTPStreamClosedError`, are httpclient's, re-exported.
"""
from __future__ import absolute_import, division, print_function

from tinytornado.httpclient import AsyncHTTPClient, HTTPStreamClosedError, HTTPTimeoutError

__all__ = ['SimpleAsyncHTTPClient', 'HTTPTimeoutError', 'HTTPStreamClosedError']

SimpleAsyncHTTPClient = AsyncHTTPClient
