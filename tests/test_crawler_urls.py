# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

import os
import random
import subprocess
import sys

import pytest

from tinytornado.crawler.urls import (
    is_http_url, normalize_url, remove_dot_segments, url_hash, url_host, urljoin, urljoin_all,
)

# RFC 3986 section 5.4: reference resolution examples against this base.
RFC_BASE = 'http://a/b/c/d;p?q'
RFC_EXAMPLES = [
    ('g', 'http://a/b/c/g'), ('./g', 'http://a/b/c/g'), ('g/', 'http://a/b/c/g/'),
    ('/g', 'http://a/g'), ('//g', 'http://g/'), ('?y', 'http://a/b/c/d;p?y'),
    ('g?y', 'http://a/b/c/g?y'), ('#s', 'http://a/b/c/d;p?q'), ('g#s', 'http://a/b/c/g'),
    ('g?y#s', 'http://a/b/c/g?y'), (';x', 'http://a/b/c/;x'), ('g;x', 'http://a/b/c/g;x'),
    ('g;x?y#s', 'http://a/b/c/g;x?y'), ('', 'http://a/b/c/d;p?q'), ('.', 'http://a/b/c/'),
    ('./', 'http://a/b/c/'), ('..', 'http://a/b/'), ('../', 'http://a/b/'),
    ('../g', 'http://a/b/g'), ('../..', 'http://a/'), ('../../', 'http://a/'),
    ('../../g', 'http://a/g'),
    # 5.4.2, abnormal examples
    ('../../../g', 'http://a/g'), ('../../../../g', 'http://a/g'), ('/./g', 'http://a/g'),
    ('/../g', 'http://a/g'), ('g.', 'http://a/b/c/g.'), ('.g', 'http://a/b/c/.g'),
    ('g..', 'http://a/b/c/g..'), ('..g', 'http://a/b/c/..g'), ('./../g', 'http://a/b/g'),
    ('./g/.', 'http://a/b/c/g/'), ('g/./h', 'http://a/b/c/g/h'), ('g/../h', 'http://a/b/c/h'),
    ('g;x=1/./y', 'http://a/b/c/g;x=1/y'), ('g;x=1/../y', 'http://a/b/c/y'),
    ('g?y/./x', 'http://a/b/c/g?y/./x'), ('g?y/../x', 'http://a/b/c/g?y/../x'),
    ('g#s/./x', 'http://a/b/c/g'), ('g#s/../x', 'http://a/b/c/g'),
    # "for backward compatibility": a same-scheme prefix is read as relative, as browsers do
    ('http:g', 'http://a/b/c/g'),
]


@pytest.mark.parametrize('reference, expected', RFC_EXAMPLES)
def test_urljoin_resolves_the_rfc_3986_examples(reference, expected):
    assert urljoin(RFC_BASE, reference) == expected


@pytest.mark.parametrize('url, expected', [
    ('HTTP://Example.COM', 'http://example.com/'),
    ('http://example.com:80/a', 'http://example.com/a'),
    ('https://example.com:443/a', 'https://example.com/a'),
    ('http://example.com:443/a', 'http://example.com:443/a'),
    ('http://example.com:0080/a', 'http://example.com/a'),
    ('http://example.com:/a', 'http://example.com/a'),
    ('http://example.com/a/./b/../c', 'http://example.com/a/c'),
    ('http://example.com/a/%2e%2E/c', 'http://example.com/c'),
    ('http://example.com/%7euser/%41%62%2d', 'http://example.com/~user/Ab-'),
    ('http://example.com/a%2fb%3f', 'http://example.com/a%2Fb%3F'),
    ('http://example.com/100%', 'http://example.com/100%25'),
    ('http://example.com/%zz', 'http://example.com/%25zz'),
    ('http://example.com/a b"c<d>|^`{}', 'http://example.com/a%20b%22c%3Cd%3E%7C%5E%60%7B%7D'),
    ("http://example.com/!$&'()*+,;=:@", "http://example.com/!$&'()*+,;=:@"),
    ('http://example.com/p?q=a b&r=%7e&s=/?:@', 'http://example.com/p?q=a%20b&r=~&s=/?:@'),
    ('http://example.com/p?', 'http://example.com/p'),
    ('http://example.com/p#frag', 'http://example.com/p'),
    ('http://example.com/p?q#frag', 'http://example.com/p?q'),
    ('http://example.com.', 'http://example.com/'),
    (u'http://b\u00fccher.example/caf\u00e9?\u00e9=1',
     'http://xn--bcher-kva.example/caf%C3%A9?%C3%A9=1'),
    (u'http://\u4f8b\u5b50.\u6d4b\u8bd5/', 'http://xn--fsqu00a.xn--0zwm56d/'),
    ('http://[0:0:0:0:0:0:0:1]:8080/', 'http://[::1]:8080/'),
    ('http://[2001:DB8::A]/', 'http://[2001:db8::a]/'),
    ('http://[::1]:80/', 'http://[::1]/'),
    ('http://127.0.0.1:8000/x', 'http://127.0.0.1:8000/x'),
    ('http://User:P%61ss@Example.com/', 'http://User:Pass@example.com/'),
    ('  http://example.com/a\tb\nc  ', 'http://example.com/abc'),
    (b'http://example.com/bytes', 'http://example.com/bytes'),
])
def test_normalize_url(url, expected):
    assert normalize_url(url) == expected
    assert normalize_url(expected) == expected


@pytest.mark.parametrize('url', [
    'mailto:someone@example.com', 'javascript:void(0)', 'ftp://example.com/', '/relative',
    'http:///nohost', 'http://exa mple.com/', 'http://example.com:99999/',
    'http://example.com:8a/', 'http://[::1/', 'http://[::1]x/', 'http://[zz::1]/',
    'http://a:b:c/', u'http://' + u'a' * 70 + u'\u00e9.example/',
])
def test_normalize_url_rejects_what_is_no_valid_http_url(url):
    with pytest.raises(ValueError):
        normalize_url(url)


def test_normalized_urls_are_native_ascii_str():
    url = normalize_url(u'http://b\u00fccher.example/\u00e9')
    assert type(url) is str
    url.encode('ascii')


@pytest.mark.parametrize('base, reference, expected', [
    ('http://example.com/a/b.html', 'HTTPS://Other.Example:443/x', 'https://other.example/x'),
    ('https://example.com/a/b.html', '//cdn.example/x', 'https://cdn.example/x'),
    ('http://example.com/a/b.html', '\\\\other.example\\x\\y?a\\b',
     'http://other.example/x/y?a%5Cb'),
    ('http://example.com/a/b.html', ' \n c.html\t', 'http://example.com/a/c.html'),
    ('http://example.com/a/b.html', '?x=1', 'http://example.com/a/b.html?x=1'),
    ('http://example.com/a/b.html?q', '#top', 'http://example.com/a/b.html?q'),
    ('http://example.com', 'c', 'http://example.com/c'),
    ('http://example.com/a/', u'caf\u00e9', 'http://example.com/a/caf%C3%A9'),
    ('http://example.com/a/b.html', 'c?', 'http://example.com/a/c'),
    ('http://example.com/a/b.html', '/x/y?q=1&r=/s?#f', 'http://example.com/x/y?q=1&r=/s?'),
    ('http://Example.com:80/a/b', 'c/d', 'http://example.com/a/c/d'),
    ('http://example.com/a/b', 'c/d:e', 'http://example.com/a/c/d:e'),
])
def test_urljoin_reads_hrefs_as_browsers_do(base, reference, expected):
    assert urljoin(base, reference) == expected


@pytest.mark.parametrize('reference', [
    'mailto:a@b.example', 'javascript:alert(1)', 'data:text/html,hi', 'tel:+1555',
    'ftp://example.com/x', 'https:no-authority', 'http://exa mple/',
])
def test_urljoin_rejects_what_does_not_resolve_to_an_http_url(reference):
    with pytest.raises(ValueError):
        urljoin('http://example.com/', reference)


def join_or_none(base, reference):
    try:
        return urljoin(base, reference)
    except ValueError:
        return None


JOIN_BASES = ['http://example.com/dir/page', 'http://example.com/', 'https://h:8443/a/b/?q',
              'http://h/a/b?x=/y', 'http://[::1]/p/q', 'http://EXAMPLE.com/not/normal',
              'http://example.com/a%20b/c', 'http://example.com:80/x', 'https://h/x?',
              'http://h/x#f', 'http://h/a/../b', 'http://h/a//b', 'http://h', ' http://h/x',
              'http://u@h/x', 'http://h:99999/x', 'mailto:a@h']


@pytest.mark.parametrize('references', [
    [], [''], ['/'], ['', '/', ''], ['a?', 'a??', 'a?b?', '/a?b#c', '/?q', '?q', '#f', '/#f'],
    ['/a/./b', 'a//b', '//h/x', '.x', './x', '/.x', 'x/.', '/x?a=/./b', 'a:b', '/a:b'],
    ['/a\nb', 'a\n', '\n', '/ok', ' /spaces ', '/t\tab', '/caf\u00e9', '/%41', '/a%2f'],
    ['\x00/c0\x1f', ' \t/ws?q#f ', '/x #f', ' /x? ', '\x0b', ' ', '\r/cr\r'],
])
def test_urljoin_all_gives_what_urljoin_gives_each_reference(references):
    for base in JOIN_BASES:
        urls = urljoin_all(base, references)
        assert urls == [join_or_none(base, reference) for reference in references]
        assert all(type(url) is str for url in urls if url is not None)


def test_urljoin_all_agrees_with_urljoin_on_random_references():
    rng = random.Random(13)
    alphabet = u"aZ09-._~!$&'()*+,;=:@/?#%\\ \n\t\r\x01\x0b\u00e9" + u'abc/' * 8
    for _ in range(3000):
        base = JOIN_BASES[int(rng.random() * len(JOIN_BASES))]
        references = [u''.join(alphabet[int(rng.random() * len(alphabet))]
                               for _ in range(int(rng.random() * 12)))
                      for _ in range(int(rng.random() * 6))]
        assert urljoin_all(base, references) == [join_or_none(base, reference)
                                                 for reference in references], (base, references)


@pytest.mark.parametrize('path, expected', [
    ('/', '/'), ('/a/b', '/a/b'), ('/a/./b', '/a/b'), ('/a/../b', '/b'), ('/..', '/'),
    ('/a/b/..', '/a/'), ('/a/b/.', '/a/b/'), ('/a//b/../c', '/a//c'), ('/./', '/'),
    ('/a/.b/..c', '/a/.b/..c'),
])
def test_remove_dot_segments(path, expected):
    assert remove_dot_segments(path) == expected


def test_normalisation_is_idempotent_on_random_urls():
    rng = random.Random(7)
    alphabet = u'aZ09-._~!$&\'()*+,;=:@/?#%[] "<>\\^`{|}\u00e9\u4f8b.'
    for _ in range(2000):
        tail = u''.join(alphabet[int(rng.random() * len(alphabet))] for _ in range(12))
        try:
            once = urljoin('http://example.com/dir/page', tail)
        except ValueError:
            continue
        assert normalize_url(once) == once
        assert urljoin(once, '') == once


@pytest.mark.parametrize('url, expected', [
    ('http://example.com/', True), ('HTTPS://example.com', True), ('ftp://example.com/', False),
    ('http:///x', False), ('http://:80/', False), ('/path', False), ('mailto:x@y', False),
])
def test_is_http_url(url, expected):
    assert is_http_url(url) is expected


@pytest.mark.parametrize('url, expected', [
    ('http://example.com:8080/x', 'example.com'), ('http://[::1]:8080/', '[::1]'),
    ('http://user:pw@example.com/', 'example.com'), ('http://127.0.0.1/', '127.0.0.1'),
])
def test_url_host(url, expected):
    assert url_host(url) == expected


def test_url_hash_is_64_bits_and_tells_urls_apart():
    urls = ['http://example.com/%d' % number for number in range(10000)]
    hashes = set(url_hash(url) for url in urls)
    assert len(hashes) == len(urls)
    assert all(0 <= value < 2 ** 64 for value in hashes)
    assert url_hash(u'http://example.com/1') == url_hash(b'http://example.com/1')


def test_url_hash_is_the_same_in_another_process_with_another_hash_seed():
    script = ('from tinytornado.crawler.urls import url_hash; '
              'print(url_hash("http://example.com/a?b=c"))')
    environment = dict(os.environ, PYTHONHASHSEED='12345')
    output = subprocess.check_output([sys.executable, '-c', script], env=environment)
    assert int(output.strip()) == url_hash('http://example.com/a?b=c')
