"""Tornado 5.1's HTTP client interfaces from before fetch returned only a Future,
re-exported by httpclient: the blocking `HTTPClient`, fetch's ``callback=`` argument, and
the route through a subclass's `fetch_impl` (a mock client, as 5.1's tests write them).

`HTTPClient` runs a private IOLoop around an `AsyncHTTPClient` for each fetch, for
scripts and tests written against 5.1. Only httpclient imports this module, at its end:
`AsyncHTTPClient.fetch` hands a call with a callback, or a client whose class overrides
fetch_impl, to the functions here.
"""
from __future__ import absolute_import, division, print_function

import functools
import time
import warnings

from tinytornado import gen
from tinytornado.concurrent import Future
from tinytornado.httpclient import (
    AsyncHTTPClient, HTTPClientError, HTTPRequest, HTTPResponse, _end_fetch,
)
from tinytornado.ioloop import IOLoop

__all__ = ['HTTPClient']


def fetch_with_callback(client, request, callback, raise_error, kwargs):
    """`client.fetch` with Tornado 5.1's callback: the Future all the same, and
    ``callback(response)`` on the loop once it is done (a response even for a failure),
    unless it was cancelled."""
    warnings.warn('the callback argument of AsyncHTTPClient.fetch is deprecated: use '
                  'the Future it returns', DeprecationWarning, stacklevel=3)
    if not isinstance(request, HTTPRequest):
        # Made here, so that a failure without a response can still name the request.
        request, kwargs = HTTPRequest(url=request, **kwargs), {}
    future = client.fetch(request, raise_error=raise_error, **kwargs)

    def deliver(future):
        if not future.cancelled():
            client.io_loop.add_callback(callback, _callback_response(future, request))
    future.add_done_callback(deliver)
    return future


def _callback_response(future, request):
    """What a legacy fetch callback is given: a response, even for a failure."""
    error = future.exception()
    if error is None:
        return future.result()
    if isinstance(error, HTTPClientError) and error.response is not None:
        return error.response
    return HTTPResponse(request, 599, error=error,
                        request_time=time.time() - request.start_time)


def fetch_through_impl(client, request, raise_error):
    """fetch's Future for a client whose class overrides fetch_impl, which ends it as
    5.1's fetch did."""
    future = Future()

    def handle_response(response):
        if not future.cancelled():  # nobody waits for it any more
            _end_fetch(future, response, raise_error)
    client.fetch_impl(request, handle_response)
    return future


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
