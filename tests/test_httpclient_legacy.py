"""Tornado 5.1's legacy client APIs: ``fetch(..., callback=)`` over the Future path, the
blocking `HTTPClient`, the response's repr, and `_RequestProxy`.

The servers are test_httpclient's: `CannedServer` (``servers``) on the test's loop, and the
threaded standard-library server (``http_server``), which the blocking client needs since
it holds the thread while it fetches.
"""
from __future__ import absolute_import, division, print_function

import errno
import gc
import io
import threading
import warnings

import pytest

from test_httpclient import (  # noqa: F401  (fixtures, found by pytest under their names)
    clients, client, servers, http_server, close_without_reply, never_reply, reply,
    response_bytes, wait_for,
)
from net_helpers import open_fds
from tinytornado import gen
from tinytornado.httpclient import (
    AsyncHTTPClient, HTTPClient, HTTPClientError, HTTPError, HTTPRequest, HTTPResponse,
    _RequestProxy,
)
from tinytornado.httputil import NoResponseError
from tinytornado.ioloop import IOLoop
from tinytornado.testing import bind_unused_port


def fetch_with_callback(client, request, **kwargs):
    """``client.fetch(request, callback, **kwargs)``: the Future, and a list that gets what
    the callback was called with."""
    called = []
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        future = client.fetch(request, called.append, **kwargs)
    return future, called


@gen.coroutine
def passes(count):
    for _ in range(count):
        yield gen.moment


# --- fetch(callback=) ------------------------------------------------------------------------

def test_callback_gets_the_response_on_a_later_loop_pass(client, servers):
    server = servers([reply(response_bytes(b'hi'))])
    future, called = fetch_with_callback(client, server.url())
    response = yield future
    assert response.body == b'hi' and called == []  # not called within the Future's end
    yield passes(2)
    assert called == [response]


def test_callback_gets_a_non_2xx_response_while_the_future_fails(client, servers):
    server = servers([reply(response_bytes(b'gone', code=404))])
    future, called = fetch_with_callback(client, server.url())
    with pytest.raises(HTTPClientError) as caught:
        yield future
    yield passes(2)
    response = called[0]
    assert caught.value.response is response
    assert (response.code, response.body, response.error) == (404, b'gone', caught.value)


def test_callback_gets_a_599_response_for_a_failure_without_response(client, servers):
    server = servers([close_without_reply])
    request = HTTPRequest(server.url())
    future, called = fetch_with_callback(client, request)
    with pytest.raises(NoResponseError) as caught:
        yield future
    yield passes(2)
    response = called[0]
    assert (response.code, response.error, response.request) == (599, caught.value, request)
    assert response.body is None and response.request_time >= 0
    with pytest.raises(NoResponseError):
        response.rethrow()


def test_callback_with_raise_error_false_gets_what_the_future_gives(client, servers):
    server = servers([reply(response_bytes(code=500)), close_without_reply])
    for expected_code in (500, 599):
        future, called = fetch_with_callback(client, server.url(), raise_error=False)
        response = yield future
        yield passes(2)
        assert called == [response] and response.code == expected_code


def test_callback_takes_a_url_with_request_arguments(client, servers):
    server = servers([reply(response_bytes())])
    future, called = fetch_with_callback(client, server.url('/form'), method='POST',
                                         body=b'a=1', user_agent='legacy/1')
    yield future
    yield passes(2)
    request = server.requests[0]
    assert (request.method, request.path, request.body) == ('POST', '/form', b'a=1')
    assert request.headers['User-Agent'] == 'legacy/1'
    assert called[0].request.url == server.url('/form')


def test_callback_fetch_leaves_no_unretrieved_failure(client, servers, app_log_records):
    server = servers([reply(response_bytes(code=404))])
    future, called = fetch_with_callback(client, server.url())
    yield wait_for(lambda: called)
    assert future.done()
    del future
    gc.collect()
    assert [r.getMessage() for r in app_log_records] == []


def test_callback_is_not_called_for_a_cancelled_fetch(client, servers, app_log_records):
    server = servers([never_reply])
    future, called = fetch_with_callback(client, server.url())
    yield passes(3)
    future.cancel()
    yield passes(3)
    assert future.cancelled() and called == [] and app_log_records == []


def test_callback_exception_goes_to_the_loop(client, servers, app_log_records):
    server = servers([reply(response_bytes())])

    def broken(response):
        raise ZeroDivisionError('in the callback')
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        response = yield client.fetch(server.url(), broken)
    yield passes(2)
    assert response.code == 200
    assert [type(r.exc_info[1]) for r in app_log_records] == [ZeroDivisionError]


def test_only_the_callback_form_is_deprecated(client, servers):
    server = servers([reply(response_bytes())])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        yield client.fetch(server.url())
        assert caught == []
        yield client.fetch(server.url(), lambda response: None)
    assert [w.category for w in caught] == [DeprecationWarning]
    assert 'callback' in str(caught[0].message)
    assert caught[0].filename == __file__.replace('.pyc', '.py')


def test_callback_fetch_on_a_closed_client_raises_at_once(clients):
    client = clients()
    client.close()
    with pytest.raises(RuntimeError):
        fetch_with_callback(client, 'http://127.0.0.1/')


# --- fetch_impl: 5.1's clients of another kind --------------------------------------------

class CannedClient(AsyncHTTPClient):
    """A mock client as 5.1's users write one: `fetch_impl` answers from `responses`
    (code, error) by URL, and keeps the requests it was given."""
    responses = {}

    def initialize(self, **kwargs):
        super(CannedClient, self).initialize(**kwargs)
        self.requests = []
        self.callbacks = []

    def fetch_impl(self, request, callback):
        self.requests.append(request)
        self.callbacks.append(callback)
        code, error = self.responses.get(request.url, (200, None))
        if code is not None:  # else answered later, through self.callbacks
            callback(HTTPResponse(request, code, error=error,
                                  buffer=io.BytesIO(b'canned ' + request.method.encode())))


@pytest.fixture
def canned_client_configured(io_loop):
    """AsyncHTTPClient made into CannedClient for the test."""
    saved = AsyncHTTPClient._save_configuration()
    AsyncHTTPClient.configure(CannedClient, defaults=dict(user_agent='canned/1'))
    yield
    AsyncHTTPClient._restore_configuration(saved)


@pytest.fixture
def canned(canned_client_configured):
    client = AsyncHTTPClient(force_instance=True)
    yield client
    client.close()


def test_a_configured_fetch_impl_answers_instead_of_the_network(canned):
    assert type(canned) is CannedClient
    response = yield canned.fetch('http://127.0.0.1:1/a', method='POST', body=b'x')
    assert (response.code, response.body) == (200, b'canned POST')
    request = canned.requests[0]  # seen through the defaults, as by 5.1's _RequestProxy
    assert request.user_agent == 'canned/1' and request.defaults is canned.defaults
    assert (request.request.url, request.request.body) == ('http://127.0.0.1:1/a', b'x')
    assert response.request is request.request


def test_fetch_impl_errors_end_the_future_as_5_1s_fetch(canned):
    refused = EnvironmentError(errno.ECONNREFUSED, 'refused')
    CannedClient.responses = {'http://127.0.0.1:1/gone': (404, None),
                              'http://127.0.0.1:1/down': (599, refused)}
    try:
        with pytest.raises(HTTPClientError) as caught:
            yield canned.fetch('http://127.0.0.1:1/gone')
        assert caught.value.code == 404 and caught.value.response.body == b'canned GET'
        with pytest.raises(EnvironmentError) as caught:
            yield canned.fetch('http://127.0.0.1:1/down')
        assert caught.value is refused
        responses = yield [canned.fetch('http://127.0.0.1:1/' + path, raise_error=False)
                           for path in ('gone', 'down')]
    finally:
        CannedClient.responses = {}
    assert [r.code for r in responses] == [404, 599]
    assert isinstance(responses[0].error, HTTPClientError) and responses[1].error is refused


def test_fetch_impl_answering_a_cancelled_fetch_is_ignored(canned, app_log_records):
    CannedClient.responses = {'http://127.0.0.1:1/later': (None, None)}
    try:
        future = canned.fetch('http://127.0.0.1:1/later')
    finally:
        CannedClient.responses = {}
    future.cancel()
    canned.callbacks[0](HTTPResponse(canned.requests[0], 200))
    assert future.cancelled() and app_log_records == []


def test_fetch_impl_serves_the_callback_form_too(canned):
    future, called = fetch_with_callback(canned, 'http://127.0.0.1:1/b')
    response = yield future
    yield passes(2)
    assert called == [response] and response.body == b'canned GET'


def test_fetch_impl_serves_the_blocking_client(no_current_loop, canned_client_configured):
    client = HTTPClient()
    try:
        assert client.fetch('http://127.0.0.1:1/c').body == b'canned GET'
    finally:
        client.close()


class Logging(AsyncHTTPClient):
    """A subclass that watches the fetches and leaves them to the real client."""

    def initialize(self, **kwargs):
        super(Logging, self).initialize(**kwargs)
        self.log = []

    def fetch_impl(self, request, callback):
        self.log.append(request.url)
        super(Logging, self).fetch_impl(request, lambda response: callback(
            self.log.append(response.code) or response))


def test_the_base_fetch_impl_fetches_for_a_subclass_that_calls_it(io_loop, servers):
    server = servers([reply(response_bytes(b'real')), reply(response_bytes(code=404)),
                      close_without_reply])
    client = Logging(force_instance=True)
    try:
        response = yield client.fetch(server.url('/1'))
        with pytest.raises(HTTPClientError):
            yield client.fetch(server.url('/2'))
        failed = yield client.fetch(server.url('/3'), raise_error=False)
    finally:
        client.close()
    assert response.body == b'real'
    assert client.log == [server.url('/1'), 200, server.url('/2'), 404, server.url('/3'), 599]
    assert isinstance(failed.error, NoResponseError)


# --- HTTPResponse repr -----------------------------------------------------------------------

def test_response_repr_is_tornados():
    request = HTTPRequest('http://example.com/')
    text = repr(HTTPResponse(request, 200, request_time=0.5))
    assert text == ("HTTPResponse(code=200,effective_url='http://example.com/',error=None,"
                    "reason='OK',request=%r,request_time=0.5)" % (request,))
    assert 'code=404' in repr(HTTPResponse(request, 404))


# --- HTTPClient ------------------------------------------------------------------------------

@pytest.fixture
def no_current_loop():
    """The thread has no current IOLoop during the test; the previous one comes back."""
    previous = IOLoop.current(instance=False)
    IOLoop.clear_current()
    yield
    if previous is not None:
        previous.make_current()


@pytest.fixture
def sync_client(no_current_loop, http_server):
    client = HTTPClient()
    yield client
    client.close()
    http_server.wait_until_idle()


def test_sync_fetch_runs_with_no_loop_and_makes_none(sync_client, http_server):
    response = sync_client.fetch(http_server.url('/length/5'))
    assert (response.code, response.body) == (200, b'xxxxx')
    assert IOLoop.current(instance=False) is None


def test_sync_fetch_keeps_its_connection_between_fetches(sync_client, http_server):
    before = http_server.connections
    bodies = [sync_client.fetch(http_server.url('/length/%d' % n)).body for n in (1, 2, 3)]
    assert bodies == [b'x', b'xx', b'xxx'] and http_server.connections == before + 1


def test_sync_fetch_raises_http_error_with_the_response(sync_client, http_server):
    with pytest.raises(HTTPError) as caught:
        sync_client.fetch(http_server.url('/status/404'))
    assert caught.value.code == 404 and caught.value.response.body == b'status body'
    response = sync_client.fetch(http_server.url('/status/404'), raise_error=False)
    assert response.code == 404 and isinstance(response.error, HTTPClientError)


def test_sync_fetch_raises_a_failure_without_response_as_itself(sync_client):
    sock, port = bind_unused_port()
    sock.setblocking(True)

    def accept_and_close():
        connection, _ = sock.accept()
        received = b''
        while b'\r\n\r\n' not in received:  # all read: a close with unread data resets
            received += connection.recv(65536)
        connection.close()
    thread = threading.Thread(target=accept_and_close)
    thread.start()
    try:
        with pytest.raises(NoResponseError):
            sync_client.fetch('http://127.0.0.1:%d/' % port)
    finally:
        thread.join()
        sock.close()


def test_sync_fetch_takes_a_request_and_request_arguments(sync_client, http_server):
    request = HTTPRequest(http_server.url('/echo'), method='POST', body=b'a=1')
    assert b'"body": "a=1"' in sync_client.fetch(request).body
    assert b'"method": "PUT"' in sync_client.fetch(http_server.url('/echo'), method='PUT',
                                                   body=b'').body


def test_sync_client_passes_its_arguments_to_the_async_client(no_current_loop, http_server):
    class Recording(AsyncHTTPClient):
        def initialize(self, **kwargs):
            self.made_with = kwargs
            super(Recording, self).initialize(**kwargs)

    client = HTTPClient(Recording, defaults=dict(user_agent='sync/1'))
    try:
        assert client._async_client.made_with == {'defaults': {'user_agent': 'sync/1'}}
        body = client.fetch(http_server.url('/echo')).body
        assert b'"User-Agent": "sync/1"' in body
    finally:
        client.close()
    assert IOLoop.current(instance=False) is None


def test_sync_client_close_drops_its_connection_and_may_be_repeated(no_current_loop,
                                                                    http_server):
    # The server is shared: a connection an earlier test closed may not be shut yet.
    http_server.wait_until_idle()
    client = HTTPClient()
    try:
        client.fetch(http_server.url('/length/1'))
        assert http_server.open_connections == 1
    finally:
        client.close()
    client.close()
    http_server.wait_until_idle()
    with pytest.raises(RuntimeError) as caught:
        client.fetch(http_server.url('/length/1'))
    assert 'closed HTTPClient' in str(caught.value)


def test_sync_client_leaves_the_current_loop_current(io_loop, http_server):
    client = HTTPClient()
    try:
        assert IOLoop.current() is io_loop
        assert client.fetch(http_server.url('/length/2')).body == b'xx'
        assert IOLoop.current() is io_loop
        assert AsyncHTTPClient() is not client._async_client
    finally:
        client.close()
    AsyncHTTPClient().close()
    http_server.wait_until_idle()


def test_sync_client_works_inside_a_running_loop(io_loop, http_server):
    trace = []

    @gen.coroutine
    def main():
        client = HTTPClient()
        try:
            trace.append(client.fetch(http_server.url('/length/3')).body)
            trace.append(IOLoop.current() is io_loop)
            yield gen.moment  # the outer loop still runs
            trace.append('after')
        finally:
            client.close()
    io_loop.run_sync(main, timeout=10)
    assert trace == [b'xxx', True, 'after']
    http_server.wait_until_idle()


def test_sync_client_that_cannot_be_made_closes_its_loop(no_current_loop):
    before = open_fds()
    with pytest.raises(TypeError) as caught:
        HTTPClient(no_such_argument=1)
    # The traceback holds the half-made client: its loop's descriptors are closed anyway.
    assert caught.traceback and open_fds() == before
    assert IOLoop.current(instance=False) is None


# --- _RequestProxy ---------------------------------------------------------------------------

@pytest.mark.parametrize('request_kwargs, defaults, name, expected', [
    (dict(user_agent='foo'), {}, 'user_agent', 'foo'),
    ({}, dict(network_interface='foo'), 'network_interface', 'foo'),
    (dict(proxy_host='foo'), dict(proxy_host='bar'), 'proxy_host', 'foo'),
    ({}, {}, 'auth_username', None),
    ({}, None, 'auth_username', None),
    (dict(follow_redirects=False), dict(follow_redirects=True), 'follow_redirects', False),
], ids=['request', 'default', 'both', 'neither', 'no-defaults', 'false-is-not-none'])
def test_request_proxy_reads_the_request_then_the_defaults(request_kwargs, defaults, name,
                                                           expected):
    proxy = _RequestProxy(HTTPRequest('http://example.com/', **request_kwargs), defaults)
    assert getattr(proxy, name) == expected


def test_request_proxy_has_no_attribute_the_request_lacks():
    proxy = _RequestProxy(HTTPRequest('http://example.com/'), dict(foo='default'))
    with pytest.raises(AttributeError):
        proxy.bar


def test_request_proxy_keeps_what_it_was_given():
    request, defaults = HTTPRequest('http://example.com/', body=b'x'), dict(user_agent='a')
    proxy = _RequestProxy(request, defaults)
    assert (proxy.request, proxy.defaults) == (request, defaults)
    assert (proxy.url, proxy.headers, proxy.body) == (request.url, request.headers, b'x')
    assert _RequestProxy(request, None).defaults is None


def test_a_response_made_from_a_proxy_refers_to_its_request():
    request = HTTPRequest('http://example.com/')
    response = HTTPResponse(_RequestProxy(request, {}), 200)
    assert response.request is request and response.effective_url == 'http://example.com/'
