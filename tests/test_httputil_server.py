"""Tornado 5.1's server-side names in httputil: the `HTTPServerRequest` data object, the
interfaces a server's parts implement, and `split_host_and_port`.

tinytornado has no server: these are made here as legacy code and its tests make them,
with a connection of the test's own where one is needed.
"""
from __future__ import absolute_import, division, print_function

import logging
import ssl
import warnings

import pytest

from tinytornado.concurrent import Future
from tinytornado.httputil import (
    HTTPConnection, HTTPFile, HTTPHeaders, HTTPMessageDelegate, HTTPServerConnectionDelegate,
    HTTPServerRequest, RequestStartLine, ResponseStartLine, split_host_and_port,
)
from tinytornado.log import gen_log


class Context(object):
    def __init__(self, remote_ip, protocol):
        self.remote_ip, self.protocol = remote_ip, protocol


class RecordingConnection(HTTPConnection):
    """An HTTPConnection that records what is written to it."""

    def __init__(self, context=None):
        self.context = context
        self.trace = []

    def write_headers(self, start_line, headers, chunk=None, callback=None):
        self.trace.append(('write_headers', start_line, chunk))

    def write(self, chunk, callback=None):
        self.trace.append(('write', chunk, callback))
        future = Future()
        future.set_result(None)
        return future

    def finish(self):
        self.trace.append(('finish',))


# --- HTTPServerRequest -----------------------------------------------------------------------

def test_only_the_uri_is_needed():
    request = HTTPServerRequest(uri='/')
    assert (request.method, request.uri, request.version) == (None, '/', 'HTTP/1.0')
    assert request.body == b'' and isinstance(request.body, bytes)
    assert isinstance(request.headers, HTTPHeaders) and list(request.headers) == []
    assert (request.host, request.host_name, request.protocol, request.remote_ip) == (
        '127.0.0.1', '127.0.0.1', 'http', None)
    assert (request.path, request.query) == ('/', '')
    assert request.arguments == request.query_arguments == request.body_arguments == {}
    assert request.files == {} and request.connection is None
    assert request.full_url() == 'http://127.0.0.1/'


def test_without_a_uri_it_says_so():
    with pytest.raises(TypeError, match='needs a uri'):
        HTTPServerRequest(method='GET')


def test_a_start_line_gives_method_uri_and_version():
    request = HTTPServerRequest(start_line=RequestStartLine('POST', '/a?b=1', 'HTTP/1.1'))
    assert (request.method, request.uri, request.version) == ('POST', '/a?b=1', 'HTTP/1.1')
    assert (request.path, request.query, request.arguments) == ('/a', 'b=1', {'b': [b'1']})


def test_what_is_given_is_kept_as_given():
    headers, files = HTTPHeaders({'X': '1'}), {'f': [HTTPFile(filename='a')]}
    request = HTTPServerRequest('PUT', '/', headers=headers, body=b'data', files=files)
    assert request.headers is headers and request.files is files and request.body == b'data'


def test_query_arguments_are_bytes_under_native_names_and_a_copy_of_their_own():
    request = HTTPServerRequest('GET', '/p?a=1&a=%C3%A9&b=&c&d=x+y%2B#')
    expected = {'a': [b'1', b'\xc3\xa9'], 'b': [b''], 'c': [b''], 'd': [b'x y+#']}
    assert request.arguments == request.query_arguments == expected
    request.arguments['a'].append(b'more')
    assert request.query_arguments['a'] == [b'1', b'\xc3\xa9']


@pytest.mark.parametrize('host, header, expected_host, expected_name', [
    (None, 'Example.COM:8080', 'Example.COM:8080', 'example.com'),
    (None, '[::1]:8888', '[::1]:8888', '[::1]'),
    ('given.example', 'header.example', 'given.example', 'given.example'),
    (None, None, '127.0.0.1', '127.0.0.1'),
])
def test_host_and_host_name(host, header, expected_host, expected_name):
    headers = HTTPHeaders() if header is None else HTTPHeaders({'Host': header})
    request = HTTPServerRequest('GET', '/x?y', headers=headers, host=host)
    assert (request.host, request.host_name) == (expected_host, expected_name)
    assert request.full_url() == 'http://%s/x?y' % expected_host


def test_remote_ip_and_protocol_come_from_the_connection_context():
    connection = RecordingConnection(Context('10.0.0.7', 'https'))
    request = HTTPServerRequest('GET', '/', connection=connection, host='example.com',
                                server_connection='server side')
    assert (request.remote_ip, request.protocol) == ('10.0.0.7', 'https')
    assert request.full_url() == 'https://example.com/'
    assert (request.connection, request.server_connection) == (connection, 'server side')


def test_the_repr_leaves_the_headers_out():
    request = HTTPServerRequest('GET', '/', headers={'Authorization': 'Basic c2VjcmV0'})
    assert repr(request) == ("HTTPServerRequest(protocol='http', host='127.0.0.1', "
                             "method='GET', uri='/', version='HTTP/1.0', remote_ip=None)")


def test_cookies_are_morsels_and_names_simplecookie_refuses_are_left_out(caplog):
    caplog.set_level(logging.DEBUG, logger=gen_log.name)
    request = HTTPServerRequest('GET', '/', headers=HTTPHeaders(
        {'Cookie': 'a=1; b="quoted value"; c[0]=x; d=4'}))
    cookies = request.cookies
    assert cookies is request.cookies  # made once
    assert dict((name, morsel.value) for name, morsel in cookies.items()) == {
        'a': '1', 'b': 'quoted value', 'd': '4'}
    assert [record.getMessage().split(':')[0] for record in caplog.records] == [
        "Cookie 'c[0]' left out"]


def test_no_cookie_header_no_cookies():
    assert len(HTTPServerRequest(uri='/').cookies) == 0


def test_parse_body_adds_the_form_to_arguments_after_the_query():
    request = HTTPServerRequest('POST', '/?a=q', body=b'a=b1&c=b2', headers=HTTPHeaders(
        {'Content-Type': 'application/x-www-form-urlencoded'}))
    request.parse_body()
    assert request.body_arguments == {'a': [b'b1'], 'c': [b'b2']}
    assert request.arguments == {'a': [b'q', b'b1'], 'c': [b'b2']}
    assert request.query_arguments == {'a': [b'q']}


def test_parse_body_finds_files():
    body = (b'--B\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\n'
            b'Content-Type: text/plain\r\n\r\ncontent\r\n--B--\r\n')
    request = HTTPServerRequest('POST', '/', body=body, headers=HTTPHeaders(
        {'Content-Type': 'multipart/form-data; boundary=B'}))
    request._parse_body()
    assert request.files == {'f': [{'filename': 'a.txt', 'body': b'content',
                                    'content_type': 'text/plain'}]}
    assert request.arguments == {}


def test_deprecated_methods_warn_and_use_the_connection():
    connection = RecordingConnection()
    request = HTTPServerRequest('GET', '/', version='HTTP/1.1', connection=connection)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        assert request.supports_http_1_1()
        written = request.write(b'chunk')
        assert request.request_time() >= 0
        request.finish()
    assert [(w.category, str(w.message).split(' ')[0], w.filename) for w in caught] == [
        (DeprecationWarning, 'supports_http_1_1()', __file__.rstrip('c')),
        (DeprecationWarning, 'req.write', __file__.rstrip('c')),
        (DeprecationWarning, 'req.finish', __file__.rstrip('c'))]
    assert written.done() and connection.trace == [('write', b'chunk', None), ('finish',)]
    # Once finished, the request's time stops.
    assert request.request_time() == request.request_time() >= 0


class FakeSocket(object):
    def __init__(self, certificate):
        self.certificate = certificate

    def getpeercert(self, binary_form=False):
        if self.certificate is None:
            raise ssl.SSLError('handshake not done')
        return (binary_form, self.certificate)


class FakeStream(object):
    def __init__(self, certificate):
        self.socket = FakeSocket(certificate)


@pytest.mark.parametrize('certificate, binary_form, expected', [
    ({'subject': 'x'}, False, (False, {'subject': 'x'})),
    (b'DER', True, (True, b'DER')),
    (None, False, None),
])
def test_get_ssl_certificate(certificate, binary_form, expected):
    connection = RecordingConnection()
    connection.stream = FakeStream(certificate)
    request = HTTPServerRequest('GET', '/', connection=connection)
    assert request.get_ssl_certificate(binary_form=binary_form) == expected


# --- the interfaces ---------------------------------------------------------------------------

def test_a_message_delegate_does_nothing_unless_told_to():
    delegate = HTTPMessageDelegate()
    assert delegate.headers_received(ResponseStartLine('HTTP/1.1', 200, 'OK'),
                                     HTTPHeaders()) is None
    assert (delegate.data_received(b'x'), delegate.finish(),
            delegate.on_connection_close()) == (None, None, None)


def test_a_message_delegate_subclass_overrides_what_it_needs():
    trace = []

    class Delegate(HTTPMessageDelegate):
        def headers_received(self, start_line, headers):
            trace.append(start_line.code)

        def data_received(self, chunk):
            trace.append(chunk)

    delegate = Delegate()
    delegate.headers_received(ResponseStartLine('HTTP/1.0', 200, 'OK'), HTTPHeaders())
    delegate.data_received(b'hello')
    delegate.finish()
    assert trace == [200, b'hello']


@pytest.mark.parametrize('call', [
    lambda connection: connection.write_headers(ResponseStartLine('', 200, 'OK'),
                                                HTTPHeaders()),
    lambda connection: connection.write(b'x'),
    lambda connection: connection.finish(),
], ids=['write_headers', 'write', 'finish'])
def test_an_http_connection_must_implement_every_method(call):
    with pytest.raises(NotImplementedError):
        call(HTTPConnection())


def test_a_server_connection_delegate_must_start_requests():
    delegate = HTTPServerConnectionDelegate()
    with pytest.raises(NotImplementedError):
        delegate.start_request('server connection', RecordingConnection())
    assert delegate.on_close('server connection') is None


# --- split_host_and_port -----------------------------------------------------------------------

@pytest.mark.parametrize('netloc, expected', [
    ('example.com', ('example.com', None)),
    ('example.com:8080', ('example.com', 8080)),
    ('[::1]:80', ('[::1]', 80)),
    ('[::1]', ('[::1]', None)),
    ('host:', ('host:', None)),
    (':80', (':80', None)),
    ('host:8a', ('host:8a', None)),
    ('host:\xb2', ('host:\xb2', None)),  # a superscript two: isdigit(), but no port
])
def test_split_host_and_port(netloc, expected):
    assert split_host_and_port(netloc) == expected
