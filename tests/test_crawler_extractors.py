"""Extractors given to the crawl (``Crawler(extractors=[...])``): a crawl reads what its
extractors read, and follows the links they queue as it follows an HTML page's.
"""
from __future__ import absolute_import, division, print_function

import os

import pytest

from tinytornado import gen
from tinytornado.crawler.engine import Crawler
from tinytornado.crawler.extractors import Extraction, HtmlLinks, default_extractors
from tinytornado.crawler.urls import urljoin

from crawler_sites import Pages, by_url, links, unthrottled


class PlainTextLinks(object):
    """A text/plain page of one URL a line (as a URL list some sites publish)."""

    def wants(self, item, fetched):
        return fetched.status == 200 and fetched.content_type.startswith('text/plain')

    def extract(self, item, fetched, admission, new_items):
        lines = fetched.body.decode('utf-8').split()
        found = admission.follow_links(item, [urljoin(item.url, line) for line in lines],
                                       new_items)
        return Extraction(None, 'utf-8', fetched.exception, found)


def url_list_site():
    return Pages({'/': {'body': '/a\n/b\n', 'content_type': 'text/plain'},
                  '/a': links('/c'), '/b': 'no links', '/c': 'no links'})


@gen.coroutine
def crawl(roots, **options):
    statistics = yield Crawler(roots, **unthrottled(options)).crawl()
    raise gen.Return(statistics)


def test_an_injected_extractor_s_links_are_crawled_with_the_default_extractors(serve):
    server, origin = serve(url_list_site())
    statistics = yield crawl([origin + '/'],
                             extractors=[PlainTextLinks()] + default_extractors())
    found = by_url(statistics)
    assert sorted(found) == [origin + path for path in ('/', '/a', '/b', '/c')]
    root = found[origin + '/']
    assert (root.num_urls, root.num_new_urls, root.encoding) == (2, 2, 'utf-8')
    assert (found[origin + '/a'].depth, found[origin + '/c'].depth) == (1, 2)


def test_without_it_the_url_list_leads_nowhere(serve):
    server, origin = serve(url_list_site())
    statistics = yield crawl([origin + '/'])
    assert sorted(by_url(statistics)) == [origin + '/']
    assert by_url(statistics)[origin + '/'].num_urls == 0


def test_given_extractors_replace_the_defaults(serve):
    server, origin = serve(url_list_site())
    statistics = yield crawl([origin + '/'], extractors=[PlainTextLinks()])
    # /a is an HTML page, which no extractor of this crawl reads: /c is never found.
    assert sorted(by_url(statistics)) == [origin + path for path in ('/', '/a', '/b')]
    assert by_url(statistics)[origin + '/a'].num_urls == 0


def test_an_injected_extractor_s_links_keep_the_crawl_s_limits(serve):
    server, origin = serve(url_list_site())
    seen_links = []
    statistics = yield crawl([origin + '/'], extractors=[PlainTextLinks()], max_depth=0,
                             on_links=lambda url, urls: seen_links.append((url, urls)))
    assert sorted(by_url(statistics)) == [origin + '/']
    assert seen_links == [(origin + '/', [])]  # reported, none taken by the crawl


def test_an_extractor_that_raises_fails_its_url_and_the_crawl_goes_on(serve):
    class Failing(PlainTextLinks):
        def extract(self, item, fetched, admission, new_items):
            raise ValueError('cannot read %s' % item.url)

    server, origin = serve(Pages({'/': links('/list'),
                                  '/list': {'body': '/a', 'content_type': 'text/plain'},
                                  '/a': 'no links'}))
    statistics = yield crawl([origin + '/'], extractors=[Failing(), HtmlLinks()])
    assert sorted(by_url(statistics)) == [origin + '/', origin + '/list']
    assert by_url(statistics)[origin + '/list'].exception == (
        'ValueError: cannot read %s/list' % origin)


def test_an_extractor_without_its_methods_is_refused_before_a_journal_is_made(tmpdir):
    state = str(tmpdir.join('crawl.sqlite'))
    with pytest.raises(TypeError) as caught:
        Crawler(['http://example.test/'], state=state, extractors=[HtmlLinks(), object()])
    assert 'has no wants(item, fetched) or extract(' in str(caught.value)
    with pytest.raises(ValueError) as caught:
        Crawler(['http://example.test/'], state=state, frames=True,
                extractors=[HtmlLinks()])
    assert 'HtmlLinks(frames=True)' in str(caught.value)
    assert not os.path.exists(state)
