from __future__ import absolute_import, division, print_function

import collections
import hashlib
import io
import os
import re

import pytest
from six.moves.urllib.parse import unquote

from tinytornado.crawler.demo import website as demosite
from tinytornado.crawler.demo.website import Site
from tinytornado.crawler.links import decode_html, extract_links, is_html_content_type
from tinytornado.crawler.robots import RobotsRules
from tinytornado.crawler.scope import Scope
from tinytornado.crawler.urls import normalize_url, urljoin

ORIGIN = 'http://127.0.0.1:8000'
ROOT = ORIGIN + '/'


@pytest.fixture(scope='module')
def site():
    return Site(seed=1, pages=60)


def header(resource, name):
    return dict(resource.headers).get(name)


def reference_crawl(site, root_url, obey_robots=True, frames=False):
    """{url: status} of a plain breadth-first crawl over `site.resource`, no network."""
    robots = RobotsRules.parse(site.resource('/robots.txt').body)
    scope = Scope([root_url])
    results = {}
    queue = collections.deque([normalize_url(root_url)])
    while queue:
        url = queue.popleft()
        if url in results or not scope.allows(url) or (
                obey_robots and not robots.allowed(url, 'tinycrawl/1.0')):
            continue
        resource = site.resource(url[len(ORIGIN):])
        results[url] = resource.status
        if header(resource, 'Location'):
            queue.append(urljoin(url, header(resource, 'Location')))
        elif resource.status == 200 and is_html_content_type(header(resource, 'Content-Type')):
            text, _ = decode_html(resource.body, header(resource, 'Content-Type'))
            queue.extend(extract_links(text, url, frames))
    return results


@pytest.mark.parametrize('kwargs', [
    dict(seed=1, pages=60), dict(seed=2, pages=40, variety=False),
    dict(seed=3, pages=30, origin=ORIGIN), dict(seed=4, pages=10, links_per_page=3),
])
@pytest.mark.parametrize('obey_robots, frames', [(True, False), (False, True)])
def test_expected_crawl_is_what_a_crawl_over_the_resources_finds(kwargs, obey_robots, frames):
    site = Site(**kwargs)
    assert site.expected_crawl(ROOT, obey_robots, frames) == reference_crawl(
        site, ROOT, obey_robots, frames)


def test_a_deep_root_crawls_what_it_reaches(site):
    root = ORIGIN + '/s3/p58.html'
    expected = site.expected_crawl(root)
    assert expected == reference_crawl(site, root)
    assert normalize_url(root) in expected


def test_the_crawl_holds_every_kind_of_resource(site):
    statuses = collections.Counter(site.expected_crawl(ROOT).values())
    assert set(statuses) == set([200, 301, 302, 303, 307, 308, 404, 500])
    assert statuses[404] >= 2 and statuses[500] >= 2
    kinds = collections.Counter(site.kind(url[len(ORIGIN):]) for url in site.expected_crawl(ROOT))
    assert kinds[demosite.FILE] >= 3 and kinds[demosite.TRAP] == 0


def test_every_page_is_reachable_from_the_root(site):
    crawled = site.expected_crawl(ROOT)
    pages = [path for path in site.paths() if re.match(r'/s\d/p\d+\.html$', path)]
    assert len(pages) == 59
    assert all(ORIGIN + path in crawled for path in pages)


def test_redirects_chain_loop_join_and_leave_the_site(site):
    chain, seen = [], set()
    path = '/go/chain-1'
    while site.kind(path) == demosite.REDIRECT:
        resource = site.resource(path)
        chain.append(resource.status)
        path = header(resource, 'Location')
    assert chain == [302, 307, 308] and site.kind(path) == demosite.PAGE
    path = '/go/loop-a'
    while path not in seen:
        seen.add(path)
        path = header(site.resource(path), 'Location')
    assert seen == set(['/go/loop-a', '/go/loop-b'])
    assert (header(site.resource('/go/join-1'), 'Location') ==
            header(site.resource('/go/join-2'), 'Location'))
    assert header(site.resource('/go/away'), 'Location').startswith('http://offsite-')
    broken = header(site.resource('/go/broken'), 'Location')
    assert site.resource(broken).status == 404


def test_robots_txt_keeps_the_crawl_out_of_private_but_not_open(site):
    obeying = site.expected_crawl(ROOT)
    everything = site.expected_crawl(ROOT, obey_robots=False)
    left_out = set(everything) - set(obeying)
    assert left_out and all('/private/' in url and '/open/' not in url for url in left_out)
    assert any('/private/open/' in url for url in obeying)


def test_iframe_pages_are_crawled_only_with_frames(site):
    with_frames = site.expected_crawl(ROOT, frames=True)
    assert set(with_frames) - set(site.expected_crawl(ROOT)) == set(
        url for url in with_frames if '/embed/' in url)
    assert any('/embed/' in url for url in with_frames)


def test_pages_declare_charsets_in_every_way_and_are_read_right(site):
    expected = site.expected_encodings()
    assert set(expected.values()) >= set(['utf-8', 'iso8859-1', 'cp1252'])
    for path, encoding in expected.items():
        resource = site.resource(path)
        assert decode_html(resource.body, header(resource, 'Content-Type'))[1] == encoding


def test_the_non_ascii_link_is_found_only_with_the_right_charset(site):
    url = normalize_url(ORIGIN + u'/s0/caf\u00e9.html')
    assert url in site.expected_crawl(ROOT)
    latin1_page = [path for path, encoding in site.expected_encodings().items()
                   if encoding == 'iso8859-1'][0]
    body = site.resource(latin1_page).body
    assert url in extract_links(body.decode('latin-1'), ORIGIN + latin1_page)
    assert url not in extract_links(body.decode('utf-8', 'replace'), ORIGIN + latin1_page)


def test_traps_are_only_where_a_parser_must_not_look(site):
    trap_re = re.compile(br'href=["\']?(/trap/[^"\'>\s]+)')
    trapped = set()
    for path in site.paths():
        resource = site.resource(path)
        trapped.update(trap_re.findall(resource.body))
        if resource.status == 200 and is_html_content_type(header(resource, 'Content-Type')):
            text, _ = decode_html(resource.body)
            assert not any('/trap/' in link for link in extract_links(text, ORIGIN + path))
    assert len(trapped) == 5


def test_without_variety_a_regex_finds_the_same_links_as_the_parser():
    site = Site(seed=2, pages=20, variety=False)
    href_re = re.compile(r'href="([^"]+)"')
    for path in site.paths():
        resource = site.resource(path)
        if resource.status == 200 and is_html_content_type(header(resource, 'Content-Type')):
            text, _ = decode_html(resource.body)
            by_regex = [urljoin(ORIGIN + path, href) for href in href_re.findall(text)]
            parsed = extract_links(text, ORIGIN + path)
            assert sorted(set(by_regex)) == sorted(parsed)


def test_resources_ignore_queries_and_read_escapes_and_unknown_paths_are_404(site):
    page = site.resource('/s1/p1.html')
    assert page.status == 200 and page.body.startswith(b'<!DOCTYPE html>')
    assert site.resource('/s1/p1.html?a=1&b=2') == page
    assert site.resource(b'/s1/%70%31.html') == page
    for target in ('/no/such/page', '/s1/p9999.html', 'relative', '/bad%zz', '*'):
        assert site.resource(target).status == 404


def test_files_carry_their_types_and_magic_bytes(site):
    magic = {'application/pdf': b'%PDF-', 'image/png': b'\x89PNG\r\n\x1a\n',
             'text/plain': b''}
    files = [path for path in site.paths() if site.kind(path) == demosite.FILE]
    assert any(path.endswith('.pdf') for path in files)
    assert any(path.endswith('.png') for path in files)
    for path in files:
        resource = site.resource(path)
        assert resource.body.startswith(magic[header(resource, 'Content-Type')])


def test_some_pages_are_slow(site):
    delays = [site.resource(path).delay_seconds for path in site.paths()]
    assert 0 < sum(1 for delay in delays if delay > 0) < len(delays) // 10


def test_pages_are_near_the_size_asked_for():
    site = Site(seed=5, pages=30, page_size=(6000, 7000))
    sizes = [len(site.resource(path).body) for path in site.paths()
             if site.kind(path) == demosite.PAGE and path.startswith('/s')]
    assert all(5500 <= size <= 8000 for size in sizes)


def test_the_same_seed_gives_the_same_site_and_another_seed_another():
    def digest(site):
        content = hashlib.sha1()
        for path in site.paths():
            resource = site.resource(path)
            content.update(repr((path, resource.status, resource.headers)).encode('utf-8'))
            content.update(resource.body)
        return content.hexdigest()
    assert digest(Site(seed=7, pages=20)) == digest(Site(seed=7, pages=20))
    assert digest(Site(seed=7, pages=20)) != digest(Site(seed=8, pages=20))


def test_absolute_links_appear_only_when_the_origin_is_known():
    def bodies(site):
        return b''.join(site.resource(path).body for path in site.paths())
    assert ORIGIN.encode('ascii') in bodies(Site(seed=3, pages=30, origin=ORIGIN)).replace(
        b'HTTP://', b'http://')
    assert ORIGIN.encode('ascii') not in bodies(Site(seed=3, pages=30))


def test_write_static_writes_files_and_returns_the_rest(site, tmpdir):
    directory = str(tmpdir)
    redirects, statuses = site.write_static(directory)
    for path in site.paths():
        resource = site.resource(path)
        filename = os.path.join(directory, *(unquote(path).lstrip('/') or 'index.html')
                                .split('/'))
        if path in redirects:
            assert redirects[path] == (resource.status, header(resource, 'Location'))
            assert not os.path.exists(filename)
        elif path in statuses:
            assert statuses[path] == resource.status == 500
        elif resource.status == 404:
            assert not os.path.exists(filename)
        else:
            with io.open(filename, 'rb') as written:
                assert written.read() == resource.body
    assert set(status for status, _ in redirects.values()) == set([301, 302, 303, 307, 308])


def test_a_site_needs_two_pages():
    with pytest.raises(ValueError):
        Site(pages=1)
