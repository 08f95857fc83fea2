"""crawler.fetch's Download: the checks on a response's head, and the outcome it makes.

The head comes as the HTTP client's head_callback gives it: the ResponseHead its parser
made of the bytes. Fetches over the network are tested through the crawler
(test_crawler.py).
"""
from __future__ import absolute_import, division, print_function

import pytest

from tinytornado.crawler.fetch import BodyTooLarge, Download, Fetched
from tinytornado.httpclient import HTTPRequest, HTTPResponse, HTTPTimeoutError
from tinytornado.httputil import (
    HTTP1ClientProtocol, HTTPHeaders, HTTPInputError, NoResponseError, ResponseHead,
)

URL = 'http://example.test/page'


def receive_head(download, status_line, *header_lines):
    """Give `download` the head the client's parser makes of these lines."""
    protocol = HTTP1ClientProtocol()
    protocol.send_request('GET', '/page', {'Host': 'example.test'})
    protocol.receive_data(('\r\n'.join((status_line,) + header_lines) + '\r\n\r\n')
                          .encode('latin-1'))
    head = protocol.next_event()
    assert isinstance(head, ResponseHead)
    download.on_head(head)


@pytest.mark.parametrize('line, refused', [
    ('Content-Length: 100', False),
    ('Content-Length: 101', True),
    ('content-LENGTH:\t 101 ', True),  # any case, blanks around the value
])
def test_a_content_length_over_the_cap_refuses_the_body_before_it_comes(line, refused):
    download = Download(URL, max_body_size=100, download_non_html=True)
    lines = ('HTTP/1.1 200 OK', 'Content-Type: text/html', line)
    if refused:
        with pytest.raises(BodyTooLarge, match='over 100 bytes'):
            receive_head(download, *lines)
    else:
        receive_head(download, *lines)
    assert download.too_large == refused


def test_a_content_length_repeated_counts_once():
    # The parser keeps one value of a Content-Length repeated (and refuses two that differ).
    download = Download(URL, max_body_size=100, download_non_html=True)
    with pytest.raises(BodyTooLarge):
        receive_head(download, 'HTTP/1.1 200 OK', 'Content-Length: 101',
                     'Content-Length: 101')
    assert download.too_large


def test_without_a_content_length_the_body_count_refuses_the_body():
    download = Download(URL, max_body_size=100, download_non_html=True)
    receive_head(download, 'HTTP/1.1 200 OK', 'Transfer-Encoding: chunked')
    download.on_chunk(b'x' * 100)
    assert not download.too_large
    with pytest.raises(BodyTooLarge):
        download.on_chunk(b'x')
    assert download.too_large


@pytest.mark.parametrize('status_line, content_type, skipped', [
    ('HTTP/1.1 200 OK', 'text/html; charset=utf-8', False),
    ('HTTP/1.1 200 OK', 'image/png', True),
    ('HTTP/1.1 404 Not Found', 'image/png', True),
    ('HTTP/1.1 301 Moved Permanently', 'image/png', False),  # its Location is wanted
])
def test_without_download_non_html_only_html_and_redirects_are_read(status_line,
                                                                    content_type, skipped):
    download = Download(URL, max_body_size=100, download_non_html=False)
    lines = (status_line, 'Content-Type: ' + content_type, 'Content-Length: 5')
    if skipped:
        with pytest.raises(Exception) as raised:
            receive_head(download, *lines)
        assert not isinstance(raised.value, BodyTooLarge)
    else:
        receive_head(download, *lines)
    assert download.skipped == skipped


def test_the_outcome_of_a_skipped_body_has_the_status_and_headers_of_its_head():
    download = Download(URL, max_body_size=100, download_non_html=False)
    with pytest.raises(Exception):
        receive_head(download, 'HTTP/1.1 200 OK', 'Content-Type: image/png',
                     'X-Folded: one', ' two')
    fetched = download.outcome(HTTPResponse(HTTPRequest(URL), 599, error=Exception('stop')))
    assert (fetched.url, fetched.status, fetched.body, fetched.body_skipped,
            fetched.exception, fetched.transient) == (URL, 200, b'', True, None, False)
    assert list(fetched.headers.get_all()) == [('Content-Type', 'image/png'),
                                               ('X-Folded', 'one two')]


def test_the_outcome_of_a_body_too_large_is_final():
    download = Download(URL, max_body_size=3, download_non_html=True)
    receive_head(download, 'HTTP/1.1 200 OK', 'Transfer-Encoding: chunked')
    download.on_chunk(b'abc')
    with pytest.raises(BodyTooLarge):
        download.on_chunk(b'd')
    fetched = download.outcome(HTTPResponse(HTTPRequest(URL), 599,
                                            error=BodyTooLarge('the body is over 3 bytes')))
    assert (fetched.status, fetched.body, fetched.transient) == (200, b'', False)
    assert fetched.exception == 'BodyTooLarge: the body is over 3 bytes'
    assert fetched.headers['Transfer-Encoding'] == 'chunked'


def test_the_outcome_of_a_response_has_its_body_from_the_chunks():
    download = Download(URL, max_body_size=100, download_non_html=True)
    receive_head(download, 'HTTP/1.1 503 Busy', 'Content-Length: 6')
    download.on_chunk(b'try ')
    download.on_chunk(b'me')
    headers = HTTPHeaders({'Content-Length': '6'})
    fetched = download.outcome(HTTPResponse(HTTPRequest(URL), 503, headers=headers))
    assert (fetched.status, fetched.headers, fetched.body, fetched.exception,
            fetched.transient) == (503, headers, b'try me', None, True)


@pytest.mark.parametrize('error, transient', [
    (HTTPTimeoutError('Timeout during request'), True),
    (NoResponseError('closed before the response began'), True),
    (HTTPInputError('bad status line'), False),  # it will be as bad next time
])
def test_the_outcome_of_a_failed_request_says_if_it_may_pass(error, transient):
    download = Download(URL, max_body_size=100, download_non_html=True)
    fetched = download.outcome(HTTPResponse(HTTPRequest(URL), 599, error=error))
    assert isinstance(fetched, Fetched)
    assert (fetched.status, fetched.transient) == (None, transient)
    assert fetched.exception == '%s: %s' % (type(error).__name__, error)
