"""Tornado 5.1's blocking HTTP client, `HTTPClient`, re-exported by httpclient.

It runs a private IOLoop around an `AsyncHTTPClient` for each fetch: for scripts and
tests written against 5.1. Nothing in the core imports this module; httpclient
re-exports its name at its end.
"""
from __future__ import absolute_import, division, print_function

import functools

from tinytornado import gen
from tinytornado.httpclient import AsyncHTTPClient
from tinytornado.ioloop import IOLoop

__all__ = ['HTTPClient']


class HTTPClient(object):
    """A blocking HTTP client, for scripts and tests: ``fetch`` returns the HTTPResponse.

    Each fetch runs a private IOLoop until its response is in. The thread's current loop
    is left as it was, so this works with no loop at all and also (blocking it) from
    inside a running one, which Tornado 5 refuses on Python 3. ``close()`` when done; closing again
    does nothing.

    Args:
        async_client_class: the AsyncHTTPClient class that does the work (default:
            AsyncHTTPClient, or what it is configured to make).
        kwargs: for that class, as ``AsyncHTTPClient(**kwargs)`` takes them.
    """

    def __init__(self, async_client_class=None, **kwargs):
        self._closed = True  # until made whole: close(), and so __del__, has nothing to do
        self._io_loop = IOLoop(make_current=False)
        client_class = async_client_class or AsyncHTTPClient
        try:
            # Made while the private loop runs, so that the client is that loop's.
            self._async_client = self._io_loop.run_sync(
                gen.coroutine(lambda: client_class(**kwargs)))
        except Exception:
            self._io_loop.close()
            raise
        self._closed = False

    def __del__(self):
        self.close()

    def close(self):
        """Close the connections and the private loop."""
        if not self._closed:
            self._closed = True
            self._async_client.close()
            self._io_loop.close(all_fds=True)

    def fetch(self, request, **kwargs):
        """Fetch `request` (an HTTPRequest, or a URL with HTTPRequest's keyword arguments).

        Returns the HTTPResponse. Raises what `AsyncHTTPClient.fetch`'s Future would:
        HTTPClientError (HTTPError) for a non-2xx response, with the response attached,
        or the error itself when there was no response; with ``raise_error=False``,
        every outcome is a response instead.
        """
        if self._closed:
            raise RuntimeError('fetch() called on closed HTTPClient')
        return self._io_loop.run_sync(
            functools.partial(self._async_client.fetch, request, **kwargs))
