"""Tornado 5.1's module of its client, `tinytornado.simple_httpclient`: the names legacy code
imports from it are httpclient's default client class and errors, configuring by 5.1's
dotted name chooses that client, and calling it keeps a client per loop of its own.

The server is test_httpclient's `CannedServer` (``servers``), on the test's loop.
"""
from __future__ import absolute_import, division, print_function

import logging

import pytest

from test_httpclient import (  # noqa: F401  (fixtures, found by pytest under their names)
    clients, close_without_reply, never_reply, reply, response_bytes, servers,
)
from tinytornado import httpclient, simple_httpclient
from tinytornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPError
from tinytornado.httputil import HTTPInputError, NoResponseError
from tinytornado.iostream import UnsatisfiableReadError
from tinytornado.simple_httpclient import (
    HTTPStreamClosedError, HTTPTimeoutError, SimpleAsyncHTTPClient,
)


def test_the_names_are_httpclients_own():
    assert SimpleAsyncHTTPClient is httpclient.SimpleAsyncHTTPClient
    assert SimpleAsyncHTTPClient.__bases__ == (AsyncHTTPClient,)
    assert repr(SimpleAsyncHTTPClient) == (
        "<class 'tinytornado.simple_httpclient.SimpleAsyncHTTPClient'>")
    assert HTTPTimeoutError is httpclient.HTTPTimeoutError
    assert HTTPStreamClosedError is httpclient.HTTPStreamClosedError
    assert sorted(simple_httpclient.__all__) == [
        'HTTPStreamClosedError', 'HTTPTimeoutError', 'SimpleAsyncHTTPClient']


@pytest.mark.parametrize('error_class, message', [
    (HTTPTimeoutError, 'Timeout during request'), (HTTPStreamClosedError, 'Stream closed'),
])
def test_the_errors_are_599_client_errors(error_class, message):
    error = error_class(message)
    assert isinstance(error, HTTPClientError)
    assert (error.code, str(error), error.response) == (599, message, None)


@pytest.fixture
def saved_configuration():
    saved = AsyncHTTPClient._save_configuration()
    yield
    AsyncHTTPClient._restore_configuration(saved)


def max_clients_of(**kwargs):
    client = AsyncHTTPClient(force_instance=True, **kwargs)
    try:
        assert isinstance(client, SimpleAsyncHTTPClient)
        return client.max_clients
    finally:
        client.close()


@pytest.mark.parametrize('name', [
    'tornado.simple_httpclient.SimpleAsyncHTTPClient',
    'tinytornado.simple_httpclient.SimpleAsyncHTTPClient',
])
def test_configure_by_the_dotted_name_of_5_1(io_loop, saved_configuration, name):
    AsyncHTTPClient.configure(name)
    assert AsyncHTTPClient.configured_class() is SimpleAsyncHTTPClient
    assert [max_clients_of(), max_clients_of(max_clients=11)] == [10, 11]
    AsyncHTTPClient.configure(name, max_clients=12)
    assert [max_clients_of(), max_clients_of(max_clients=13)] == [12, 13]


def test_configure_by_the_class(io_loop, saved_configuration):
    AsyncHTTPClient.configure(SimpleAsyncHTTPClient, max_clients=3)
    assert max_clients_of() == 3


def test_it_is_the_default_client_class_as_in_5_1(io_loop, saved_configuration):
    AsyncHTTPClient.configure(None)
    client = AsyncHTTPClient(force_instance=True)
    client.close()
    assert type(client).__name__ == 'SimpleAsyncHTTPClient'
    assert AsyncHTTPClient.configured_class() is SimpleAsyncHTTPClient


def test_it_keeps_a_client_per_loop_apart_from_the_bases(io_loop, servers):
    server = servers([reply(response_bytes(b'mapped'))])
    default = AsyncHTTPClient()
    # Port 1 of loopback mapped to the server's: without the mapping, refused.
    mapped = SimpleAsyncHTTPClient(max_clients=3, hostname_mapping={
        ('127.0.0.1', 1): ('127.0.0.1', server.port)})
    try:
        assert mapped is not default and type(default) is SimpleAsyncHTTPClient
        assert SimpleAsyncHTTPClient() is mapped and AsyncHTTPClient() is default
        assert (mapped.max_clients, default.max_clients) == (3, 10)
        response = yield mapped.fetch('http://127.0.0.1:1/')
        assert response.body == b'mapped'
    finally:
        mapped.close()
        default.close()
    assert SimpleAsyncHTTPClient() is not mapped  # close() forgot it: a new one is made
    SimpleAsyncHTTPClient().close()


def test_fetch_through_the_old_name(servers):
    server = servers([reply(response_bytes(b'hi'))])
    client = SimpleAsyncHTTPClient(force_instance=True)
    try:
        response = yield client.fetch(server.url())
    finally:
        client.close()
    assert (response.code, response.body) == (200, b'hi')


def test_a_timeout_is_the_error_of_the_old_module(virtual_clock, clients, servers):
    server = servers([never_reply])
    with pytest.raises(HTTPTimeoutError) as caught:
        yield clients().fetch(server.url(), request_timeout=1)
    assert str(caught.value) == 'Timeout during request'


@pytest.mark.parametrize('data, message', [
    (response_bytes(b'x' * 1001), 'larger than max_body_size'),
    (response_bytes(headers=['X-Big: ' + 'a' * 2000]), 'larger than max_header_size'),
    (b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\nhello',
     'both Transfer-Encoding and Content-Length'),
    (b'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello',
     'Multiple unequal Content-Lengths'),
], ids=['body', 'head', 'chunked-with-length', 'two-lengths'])
def test_a_response_that_cannot_be_read_is_5_1s_stream_closed_error(clients, servers, data,
                                                                      message):
    # What 5.1's MaxBodySizeTest, MaxHeaderSizeTest and ChunkedWithContentLengthTest
    # expect: legacy code catches it as an HTTPError; ours still says what was wrong.
    server = servers([reply(data)])
    client = clients(max_body_size=1000, max_header_size=1024)
    try:
        yield client.fetch(server.url())
    except HTTPError as e:
        caught = e
    assert isinstance(caught, HTTPStreamClosedError) and caught.code == 599
    assert isinstance(caught, HTTPInputError) and message in str(caught)
    response = yield client.fetch(server.url(), raise_error=False)
    assert response.code == 599 and response.error.__class__ is caught.__class__


@pytest.mark.parametrize('data, logged', [
    (response_bytes(b'x' * 1001), 'Malformed HTTP message from None: Content-Length too long: '
     '1001 is larger than max_body_size (1000 bytes)'),
    (response_bytes(headers=['X-Big: ' + 'a' * 2000]),
     'Unsatisfiable read, closing connection: response head of '),
    (b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\nhello',
     'Malformed HTTP message from None: Response with both Transfer-Encoding and '
     'Content-Length'),
], ids=['body', 'head', 'chunked-with-length'])
def test_a_response_that_cannot_be_read_is_logged_in_5_1s_words(clients, servers, caplog,
                                                                data, logged):
    # 5.1's MaxBodySizeTest, MaxHeaderSizeTest and ChunkedWithContentLengthTest look for
    # these messages (their first words) on tornado.general.
    caplog.set_level(logging.INFO, logger='tornado.general')
    server = servers([reply(data)])
    response = yield clients(max_body_size=1000, max_header_size=1024).fetch(
        server.url(), raise_error=False)
    assert response.code == 599
    [message] = [record.getMessage() for record in caplog.records
                 if record.name == 'tornado.general']
    assert message.startswith(logged)


def test_a_head_over_max_header_size_is_5_1s_unsatisfiable_read(clients, servers):
    server = servers([reply(response_bytes(headers=['X-Big: ' + 'a' * 2000]))])
    with pytest.raises(UnsatisfiableReadError) as caught:
        yield clients(max_header_size=1024).fetch(server.url())
    assert isinstance(caught.value, HTTPStreamClosedError) and caught.value.code == 599
    assert 'larger than max_header_size (1024 bytes)' in str(caught.value)


def test_no_response_is_not_logged(clients, servers, caplog):
    caplog.set_level(logging.INFO, logger='tornado.general')
    server = servers([close_without_reply])
    response = yield clients().fetch(server.url(), raise_error=False)
    assert isinstance(response.error, NoResponseError)
    assert [record for record in caplog.records if record.name == 'tornado.general'] == []


def test_no_response_is_5_1s_stream_closed_error_too(clients, servers):
    server = servers([close_without_reply])
    with pytest.raises(HTTPStreamClosedError) as caught:
        yield clients().fetch(server.url())
    assert isinstance(caught.value, NoResponseError) and caught.value.code == 599
