"""The crawler against sites served by the test: the 500 Lines chapter's own test list, then
each of its defects, which are bugs here.

Each test serves hand-written pages (`crawler_sites.Pages`) or the generated demo site from a
demo server on the test's loop, crawls it with `Crawler`, and checks the statistics and what
the server saw.
"""
from __future__ import absolute_import, division, print_function

import socket

import pytest

from tinytornado import gen
from tinytornado.crawler import extractors
from tinytornado.crawler.demo.website import Site
from tinytornado.crawler.engine import Crawler

from crawler_sites import FlakyServer, Pages, by_url, links, unthrottled


@gen.coroutine
def crawl(roots, **options):
    statistics = yield Crawler(roots, **unthrottled(options)).crawl()
    raise gen.Return(statistics)


def crawled(statistics):
    """The set of URLs the crawl has a statistic for."""
    return set(by_url(statistics))


# -- the chapter's tests --------------------------------------------------------------------

def test_link(serve):
    server, origin = serve(Pages({'/': links('/foo'), '/foo': 'no links'}))
    statistics = yield crawl([origin + '/'])
    assert crawled(statistics) == {origin + '/', origin + '/foo'}
    root = by_url(statistics)[origin + '/']
    assert (root.status, root.num_urls, root.num_new_urls, root.depth) == (200, 1, 1, 0)
    assert by_url(statistics)[origin + '/foo'].depth == 1


def test_link_cycle(serve):
    server, origin = serve(Pages({'/': links('/foo'), '/foo': links('/')}))
    statistics = yield crawl([origin + '/'])
    assert crawled(statistics) == {origin + '/', origin + '/foo'}
    assert sorted(server.requests) == ['/', '/foo', '/robots.txt']
    assert by_url(statistics)[origin + '/foo'].num_new_urls == 0


def test_prohibited_host(serve):
    server, origin = serve(Pages({'/': links('http://example.com/', '/foo'), '/foo': ''}))
    statistics = yield crawl([origin + '/'])
    assert crawled(statistics) == {origin + '/', origin + '/foo'}
    assert by_url(statistics)[origin + '/'].num_urls == 2


def test_strict_host_checking():
    crawler = Crawler(['http://example.com'])
    assert crawler.scope.allows('http://www.example.com/')
    assert not crawler.scope.allows('http://foo.example.com/')
    assert not crawler.scope.allows('http://example.org/')


def test_lenient_host_checking():
    crawler = Crawler(['http://example.com', 'http://news.bbc.co.uk'], strict=False)
    assert crawler.scope.allows('http://foo.example.com/')
    assert crawler.scope.allows('http://www.bbc.co.uk/')
    # The Public Suffix List knows co.uk is a suffix: the chapter admitted all of it.
    assert not crawler.scope.allows('http://evil.co.uk/')
    assert not Crawler(['http://127.0.0.1/'], strict=False).scope.allows('http://127.0.0.2/')
    assert Crawler(['http://[::1]:8000/'], strict=False).scope.allows('http://[::1]:9000/')


def test_exclude(serve):
    server, origin = serve(Pages({'/': links('/foo', '/bar'), '/foo': '', '/bar': ''}))
    statistics = yield crawl([origin + '/'], exclude='/ba.$')
    assert crawled(statistics) == {origin + '/', origin + '/foo'}


def test_include(serve):
    server, origin = serve(Pages({'/': links('/a/1', '/b/1'), '/a/1': '', '/b/1': ''}))
    statistics = yield crawl([origin + '/'], include=[r'/$', '/a/'])
    assert crawled(statistics) == {origin + '/', origin + '/a/1'}


def test_roots(serve):
    server_a, origin_a = serve(Pages({'/': links('/a')}))
    server_b, origin_b = serve(Pages({'/': links('/b')}))
    statistics = yield crawl([origin_a + '/', origin_b + '/'])
    assert crawled(statistics) == {origin_a + '/', origin_a + '/a', origin_b + '/',
                                   origin_b + '/b'}


def test_deep_root(serve):
    # The scope is the root's host, not its path: the crawl climbs out of /deep/.
    server, origin = serve(Pages({'/deep/root': links('/'), '/': links('/other'),
                                  '/other': ''}))
    statistics = yield crawl([origin + '/deep/root'])
    assert crawled(statistics) == {origin + '/deep/root', origin + '/', origin + '/other'}


def redirect(location, status=302):
    return {'status': status, 'headers': [('Location', location)], 'body': 'moved'}


def test_redirect(serve):
    server, origin = serve(Pages({'/': redirect('/foo'), '/foo': 'landed'}))
    statistics = yield crawl([origin + '/'])
    root = by_url(statistics)[origin + '/']
    assert (root.status, root.next_url, root.num_new_urls) == (302, origin + '/foo', 1)
    assert by_url(statistics)[origin + '/foo'].status == 200
    assert server.requests.count('/foo') == 1


def test_redirect_cycle(serve):
    server, origin = serve(Pages({'/a': redirect('/b'), '/b': redirect('/a', 301)}))
    statistics = yield crawl([origin + '/a'])
    assert crawled(statistics) == {origin + '/a', origin + '/b'}
    assert by_url(statistics)[origin + '/b'].next_url == origin + '/a'
    assert sorted(server.requests) == ['/a', '/b', '/robots.txt']


def test_redirect_join(serve):
    server, origin = serve(Pages({'/': links('/a', '/b'), '/a': redirect('/c'),
                                  '/b': redirect('/c', 307), '/c': 'joined'}))
    statistics = yield crawl([origin + '/'], max_tasks=1)
    assert server.requests.count('/c') == 1
    assert by_url(statistics)[origin + '/a'].num_new_urls == 1
    assert by_url(statistics)[origin + '/b'].num_new_urls == 0


def test_max_redirect(serve):
    chain = dict(('/r%d' % n, redirect('/r%d' % (n + 1))) for n in range(5))
    server, origin = serve(Pages(chain))
    statistics = yield crawl([origin + '/r0'], max_redirect=2)
    assert crawled(statistics) == {origin + '/r0', origin + '/r1', origin + '/r2'}
    assert by_url(statistics)[origin + '/r2'].next_url == origin + '/r3'


def test_redirect_308_followed_like_307(serve):
    server, origin = serve(Pages({'/': redirect('/b', 307), '/b': redirect('/c', 308),
                                  '/c': 'there'}))
    statistics = yield crawl([origin + '/'])
    assert by_url(statistics)[origin + '/c'].status == 200


def slow_pages(count, delay):
    pages = dict(('/p%d' % n, {'body': 'slow', 'delay': delay}) for n in range(count))
    pages['/'] = links(*sorted(pages))
    return Pages(pages)


def test_max_tasks_is_the_peak_concurrency_the_server_sees(serve):
    server, origin = serve(slow_pages(12, 0.05))
    statistics = yield crawl([origin + '/'], max_tasks=3)
    assert statistics.urls == 13
    assert server.peak_active == 3


def test_max_tries_retries_what_may_pass(serve):
    site = Pages({'/': links('/flaky', '/dead'), '/flaky': 'ok', '/dead': 'never'})
    server, origin = serve(site, FlakyServer, failures={'/flaky': 2, '/dead': None})
    statistics = yield crawl([origin + '/'], max_tries=4, backoff=0.0,
                             obey_robots=False)
    flaky, dead = by_url(statistics)[origin + '/flaky'], by_url(statistics)[origin + '/dead']
    assert (flaky.status, flaky.tries, flaky.exception) == (200, 3, None)
    assert (dead.status, dead.tries) == (None, 4)
    assert dead.exception.startswith('NoResponseClientError: ')
    assert server.requests.count('/dead') == 4


def test_max_tries_one_means_no_retry(serve):
    site = Pages({'/': links('/flaky'), '/flaky': 'ok'})
    server, origin = serve(site, FlakyServer, failures={'/flaky': 1})
    statistics = yield crawl([origin + '/'], max_tries=1, backoff=0.0, obey_robots=False)
    assert by_url(statistics)[origin + '/flaky'].tries == 1
    assert server.requests.count('/flaky') == 1


def charset_page(content_type, body):
    return {'content_type': content_type, 'body': body}


def test_encoding(serve):
    cafe = u'<a href="/caf\u00e9">caf\u00e9</a>'
    server, origin = serve(Pages({
        '/': links('/header', '/meta', '/bom', '/none'),
        '/header': charset_page('text/html; charset=ISO-8859-1', cafe.encode('latin-1')),
        '/meta': charset_page('text/html', b'<meta charset="windows-1252">' +
                              cafe.encode('cp1252')),
        '/bom': charset_page('text/html', b'\xef\xbb\xbf' + cafe.encode('utf-8')),
        '/none': charset_page('text/html', cafe.encode('latin-1')),
    }))
    statistics = yield crawl([origin + '/'])
    encodings = dict((url[len(origin):], statistic.encoding)
                     for url, statistic in by_url(statistics).items())
    assert encodings['/header'] == 'iso8859-1'
    assert encodings['/meta'] == 'cp1252'
    assert encodings['/bom'] == 'utf-8'
    assert encodings['/none'] == 'cp1252'
    # Each page was read right: its link names the same (UTF-8 percent-encoded) page.
    assert by_url(statistics)[origin + '/caf%C3%A9'].status == 404


def test_content_type(serve):
    server, origin = serve(Pages({
        '/': links('/xhtml', '/plain'),
        '/xhtml': charset_page('application/xhtml+xml', links('/from-xhtml')),
        '/plain': charset_page('text/plain; charset=us-ascii', links('/from-plain')),
        '/from-xhtml': '',
    }))
    statistics = yield crawl([origin + '/'])
    plain = by_url(statistics)[origin + '/plain']
    assert (plain.content_type, plain.encoding) == ('text/plain; charset=us-ascii', 'us-ascii')
    assert plain.num_urls == 0
    assert crawled(statistics) == {origin + '/', origin + '/xhtml', origin + '/plain',
                                   origin + '/from-xhtml'}


def test_non_html_is_not_parsed(serve):
    server, origin = serve(Pages({
        '/': links('/doc.pdf'),
        '/doc.pdf': charset_page('application/pdf', b'%PDF-1.4 <a href="/trap">x</a>'),
    }))
    statistics = yield crawl([origin + '/'])
    assert crawled(statistics) == {origin + '/', origin + '/doc.pdf'}
    pdf = by_url(statistics)[origin + '/doc.pdf']
    assert (pdf.content_type, pdf.size) == ('application/pdf', 30)


def test_non_http(serve):
    server, origin = serve(Pages({
        '/': links('mailto:a@example.com', 'ftp://example.com/f', 'javascript:go()',
                   '/away'),
        '/away': redirect('ftp://example.com/pub/'),
    }))
    statistics = yield crawl([origin + '/'])
    assert crawled(statistics) == {origin + '/', origin + '/away'}
    assert by_url(statistics)[origin + '/'].num_urls == 1
    assert by_url(statistics)[origin + '/away'].next_url == 'ftp://example.com/pub/'
    with pytest.raises(ValueError):
        Crawler(['ftp://example.com/'])


# -- the chapter's defects, fixed -----------------------------------------------------------

def test_an_exception_while_parsing_is_recorded_and_the_crawl_goes_on(serve, monkeypatch):
    extract_links = extractors.extract_links

    def failing_on_bad(text, url, frames=False):
        if url.endswith('/bad'):
            raise ValueError('cannot parse this one')
        return extract_links(text, url, frames)

    monkeypatch.setattr(extractors, 'extract_links', failing_on_bad)
    server, origin = serve(Pages({'/': links('/bad', '/good'), '/bad': links('/lost'),
                                  '/good': ''}))
    statistics = yield crawl([origin + '/'], max_tasks=1)
    bad = by_url(statistics)[origin + '/bad']
    assert bad.exception == 'ValueError: cannot parse this one'
    assert crawled(statistics) == {origin + '/', origin + '/bad', origin + '/good'}


def test_a_failing_output_ends_the_crawl_with_its_error(serve):
    server, origin = serve(slow_pages(20, 0.0))
    seen = []

    def on_statistic(statistic):
        seen.append(statistic)
        if len(seen) == 3:
            raise IOError('disk full')

    with pytest.raises(IOError):
        yield crawl([origin + '/'], on_statistic=on_statistic)
    assert len(seen) < 21


def test_redirect_targets_are_checked_against_scope(serve):
    server, origin = serve(Pages({'/': redirect('http://example.com/elsewhere')}))
    statistics = yield crawl([origin + '/'])
    assert crawled(statistics) == {origin + '/'}
    assert by_url(statistics)[origin + '/'].next_url == 'http://example.com/elsewhere'


def test_request_timeout(serve):
    server, origin = serve(Pages({'/': links('/slow'), '/slow': {'body': '', 'delay': 0.5}}))
    statistics = yield crawl([origin + '/'], request_timeout=0.1, max_tries=1)
    slow = by_url(statistics)[origin + '/slow']
    assert slow.status is None and 'Timeout' in slow.exception


@pytest.fixture
def unanswering_origin():
    """An origin whose connects hang: its listener's accept queue is full, so the kernel
    drops further SYNs instead of answering them."""
    listener = socket.socket()
    listener.bind(('127.0.0.1', 0))
    listener.listen(0)
    fillers = []
    for _ in range(4):
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(listener.getsockname())
        fillers.append(filler)
    yield 'http://127.0.0.1:%d' % listener.getsockname()[1]
    for sock in fillers + [listener]:
        sock.close()


def test_connect_timeout(unanswering_origin):
    statistics = yield crawl([unanswering_origin + '/'], connect_timeout=0.2,
                             request_timeout=5, max_tries=1, obey_robots=False)
    root = by_url(statistics)[unanswering_origin + '/']
    assert root.status is None and 'Timeout while connecting' in root.exception


@pytest.mark.parametrize('obey_robots', [True, False])
def test_a_request_that_never_went_out_does_not_hold_its_host_back(unanswering_origin,
                                                                   obey_robots):
    # A host with a delay waits for its request to go out before the next one; a request
    # whose connection was never made (robots.txt's, or the root's own) releases it all
    # the same, so that the retries come.
    statistics = yield crawl([unanswering_origin + '/'], connect_timeout=0.1, delay=0.05,
                             max_tries=3, backoff=0.0, obey_robots=obey_robots)
    root = by_url(statistics)[unanswering_origin + '/']
    assert root.tries == 3 and 'Timeout while connecting' in root.exception


def test_body_size_cap(serve):
    server, origin = serve(Pages({'/': links('/big'), '/big': 'x' * 5000}))
    statistics = yield crawl([origin + '/'], max_body_size=1000)
    big = by_url(statistics)[origin + '/big']
    assert big.exception.startswith('BodyTooLarge')
    assert (big.status, big.tries) == (200, 1)  # too large stays too large: no retry


def test_non_html_not_downloaded_past_its_headers(serve):
    server, origin = serve(Pages({
        '/': links('/doc.pdf', '/page'), '/page': links('/deeper'), '/deeper': '',
        '/doc.pdf': charset_page('application/pdf', b'%PDF' + b'.' * 100000),
    }))
    statistics = yield crawl([origin + '/'], download_non_html=False)
    pdf = by_url(statistics)[origin + '/doc.pdf']
    assert (pdf.status, pdf.size, pdf.exception) == (200, 0, None)
    assert pdf.content_type == 'application/pdf'
    assert origin + '/deeper' in crawled(statistics)


def test_demo_site_crawl_matches_the_site_expectations(serve):
    site = Site(seed=3, pages=40)
    server, origin = serve(site)
    statistics = yield crawl([origin + '/'])
    fetched = dict((url, statistic.status) for url, statistic in by_url(statistics).items()
                   if statistic.status is not None)
    assert fetched == site.expected_crawl(origin + '/')
    expected_encodings = site.expected_encodings()
    for url, statistic in by_url(statistics).items():
        path = url[len(origin):]
        if path in expected_encodings and statistic.status == 200:
            assert statistic.encoding == expected_encodings[path], path
