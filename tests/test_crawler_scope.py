from __future__ import absolute_import, division, print_function

import re

import pytest

from tinytornado.crawler.scope import Scope, registrable_domain
from tinytornado.crawler.urls import normalize_url


@pytest.mark.parametrize('root, url, expected', [
    ('http://example.com/', 'http://example.com/a', True),
    ('http://example.com/', 'http://www.example.com/a', True),
    ('http://www.example.com/', 'http://example.com/a', True),
    ('http://example.com/', 'http://www.www.example.com/', False),
    ('http://example.com/', 'http://blog.example.com/', False),
    ('http://example.com/', 'http://example.org/', False),
    ('http://example.com/', 'http://notexample.com/', False),
    ('http://Example.COM:8080/', 'https://example.com:8443/x', True),
    ('http://127.0.0.1:8000/', 'http://127.0.0.1:9000/', True),
    ('http://127.0.0.1:8000/', 'http://127.0.0.2:8000/', False),
    ('http://127.0.0.1/', 'http://www.127.0.0.1/', False),
    ('http://[::1]:8000/', 'http://[0::1]/', True),
    ('http://[::1]:8000/', 'http://[::2]/', False),
])
def test_strict_matching_admits_the_root_host_and_its_www_twin(root, url, expected):
    assert Scope([root]).allows(normalize_url(url)) is expected


@pytest.mark.parametrize('root, url, expected', [
    ('http://news.bbc.co.uk/', 'http://www.bbc.co.uk/', True),
    ('http://bbc.co.uk/', 'http://news.bbc.co.uk/x', True),
    ('http://bbc.co.uk/', 'http://evil.co.uk/', False),
    ('http://bbc.co.uk/', 'http://co.uk/', False),
    ('http://example.com/', 'http://a.b.example.com/', True),
    ('http://example.com/', 'http://example.org/', False),
    ('http://alice.github.io/', 'http://bob.github.io/', False),
    ('http://alice.github.io/', 'http://www.alice.github.io/', True),
    ('http://localhost:8000/', 'http://localhost:9000/', True),
    ('http://localhost:8000/', 'http://other.localhost/', False),
    (u'http://b\u00fccher.example/', u'http://www.b\u00fccher.example/', True),
    ('http://example.test/', 'http://sub.example.test/', True),
    ('http://127.0.0.1/', 'http://127.0.0.2/', False),
    ('http://10.0.0.1/', 'http://11.0.0.1/', False),
    ('http://[::1]/', 'http://[::1]:81/', True),
    ('http://[::1]/', 'http://[::2]/', False),
])
def test_lenient_matching_uses_the_public_suffix_list(root, url, expected):
    assert Scope([root], strict=False).allows(normalize_url(url)) is expected


@pytest.mark.parametrize('host, expected', [
    ('news.bbc.co.uk', 'bbc.co.uk'), ('co.uk', None), ('www.example.com', 'example.com'),
    ('127.0.0.1', None), ('[::1]', None), ('localhost', None), ('alice.github.io',
                                                                 'alice.github.io'),
])
def test_registrable_domain(host, expected):
    assert registrable_domain(host) == expected


def test_several_roots_each_admit_their_hosts():
    scope = Scope(['http://a.example/', 'http://b.example/x/y'])
    assert scope.allows('http://a.example/z')
    assert scope.allows('http://www.b.example/')
    assert not scope.allows('http://c.example/')


@pytest.mark.parametrize('url', ['mailto:x@example.com', 'ftp://example.com/', '/relative'])
def test_non_http_urls_are_out_of_scope(url):
    assert not Scope(['http://example.com/']).allows(url)


def test_exclude_patterns_remove_urls():
    scope = Scope(['http://example.com/'], exclude=[r'\.pdf$', re.compile('/private/')])
    assert scope.allows('http://example.com/a.html')
    assert not scope.allows('http://example.com/a.pdf')
    assert not scope.allows('http://example.com/private/a.html')


def test_include_patterns_keep_only_matching_urls_and_exclude_wins():
    scope = Scope(['http://example.com/'], include=r'/docs/', exclude=r'/docs/old/')
    assert scope.allows('http://example.com/docs/a')
    assert not scope.allows('http://example.com/blog/a')
    assert not scope.allows('http://example.com/docs/old/a')


def test_patterns_apply_only_inside_the_allowed_hosts():
    scope = Scope(['http://example.com/'], include='.*')
    assert not scope.allows('http://other.example/')


# URLs that share a long prefix with an admitted one, or that only an exact split reads
# right; a Scope judges each origin once, so its verdicts must not depend on the order.
TRICKY_URLS = [
    'http://example.com/a', 'http://example.com', 'https://example.com:8443/b',
    'http://example.com.evil.test/', 'http://example.com@evil.test/',
    'http://evil.test/http://example.com/', 'http://example.com:80@evil.test/',
    'http://evil.test?http://example.com/', 'http://evil.test#http://example.com/',
    'http:///example.com/', 'http://www.example.com/x/y', 'https://', 'HTTP://example.com/',
    'ftp://example.com/a', 'javascript://example.com/a', 'mailto:x@example.com',
    '/example.com/a', 'http://[::1]/', 'http://example.com?a/b',
]


@pytest.mark.parametrize('strict', [True, False])
def test_a_verdict_does_not_depend_on_the_urls_judged_before(strict):
    verdicts = dict((url, Scope(['http://example.com/'], strict=strict).allows(url))
                    for url in TRICKY_URLS)
    assert verdicts['http://example.com/a'] and verdicts['https://example.com:8443/b']
    assert not verdicts['http://example.com.evil.test/']
    for urls in (TRICKY_URLS, TRICKY_URLS[::-1]):
        scope = Scope(['http://example.com/'], strict=strict)
        assert [scope.allows(url) for url in urls + urls] == [verdicts[url] for url in urls * 2]
