"""Sitemaps: reading them (crawler/sitemaps.py, robots.txt's Sitemap lines), then crawls with
``sitemaps=True`` that find pages no link leads to, within scope and politely.
"""
from __future__ import absolute_import, division, print_function

import gzip
import io
import json

import pytest

from tinytornado import gen
from tinytornado.crawler import extractors, sitemaps
from tinytornado.crawler.application.cli import main
from tinytornado.crawler.engine import Crawler
from tinytornado.crawler.robots import RobotsRules
from tinytornado.crawler.sitemaps import (
    DEEPEST_SITEMAP_DEPTH, ROBOTS_DEPTH, SITEMAP_DEPTH, Sitemap, SitemapError, parse_sitemap,
    read_sitemap, sitemap_entries, sitemap_sources)
from tinytornado.crawler.stats import ROBOTS_DISALLOWED

from crawler_sites import (
    UNTHROTTLED, Pages, by_url, links, request_log, robots_txt, unthrottled,
)

NAMESPACE = 'http://www.sitemaps.org/schemas/sitemap/0.9'


def urlset(*locs):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="%s">\n%s</urlset>\n' % (
        NAMESPACE, ''.join('  <url>\n    <loc>%s</loc>\n  </url>\n' % loc for loc in locs))
    ).encode('utf-8')


def sitemapindex(*locs):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="%s">\n%s'
            '</sitemapindex>\n' % (NAMESPACE, ''.join(
                '<sitemap><loc>%s</loc><lastmod>2024-01-01</lastmod></sitemap>\n' % loc
                for loc in locs))).encode('utf-8')


def gzipped(data):
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode='wb') as compressor:
        compressor.write(data)
    return out.getvalue()


def xml(body, content_type='application/xml', **page):
    """A page of crawler_sites.Pages serving `body`."""
    page.update(content_type=content_type, body=body)
    return page


# -- reading a sitemap ------------------------------------------------------------------------

def test_a_urlset_lists_its_pages_with_whitespace_and_entities_resolved():
    body = (b'<?xml version="1.0" encoding="UTF-8"?>\n'
            b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"\n'
            b'        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">\n'
            b'  <url>\n    <loc>\n      http://a.test/x?a=1&amp;b=2\n    </loc>\n'
            b'    <lastmod>2024-01-01</lastmod>\n'
            b'    <image:image><image:loc>http://a.test/i.png</image:loc></image:image>\n'
            b'  </url>\n'
            b'  <url><loc>  </loc></url>\n'
            b'  <url><priority>0.5</priority></url>\n'
            b'  <url><loc>/relative</loc></url>\n'
            b'</urlset>\n')
    assert parse_sitemap(body) == Sitemap([u'http://a.test/x?a=1&b=2', u'/relative'], [])


def test_a_sitemapindex_lists_its_sitemaps():
    assert parse_sitemap(sitemapindex('http://a.test/1.xml', 'http://a.test/2.xml.gz')) == \
        Sitemap([], [u'http://a.test/1.xml', u'http://a.test/2.xml.gz'])


@pytest.mark.parametrize('root', [
    '<urlset>',  # no namespace, as many generators write it
    '<urlset xmlns="http://www.google.com/schemas/sitemap/0.84">',
    '<s:urlset xmlns:s="http://www.sitemaps.org/schemas/sitemap/0.9">',
])
def test_the_sitemap_namespace_or_none(root):
    prefix = 's:' if root.startswith('<s:') else ''
    body = ('%s<%surl><%sloc>http://a.test/</%sloc></%surl></%surlset>' % (
        root, prefix, prefix, prefix, prefix, prefix)).encode('ascii')
    assert parse_sitemap(body).pages == [u'http://a.test/']


def test_a_loc_of_another_namespace_is_not_a_page():
    body = (b'<urlset xmlns:x="urn:x"><url><x:loc>http://a.test/x</x:loc></url>'
            b'<url><loc>http://a.test/y</loc></url><loc>http://a.test/z</loc></urlset>')
    assert parse_sitemap(body).pages == [u'http://a.test/y']


def test_the_declared_encoding_and_blank_lines_before_the_declaration():
    body = b'\n\n  <?xml version="1.0" encoding="ISO-8859-1"?><urlset><url><loc>' \
           b'http://a.test/caf\xe9</loc></url></urlset>'
    assert parse_sitemap(body).pages == [u'http://a.test/caf\xe9']


def test_gzip_is_told_by_its_magic_bytes_in_pieces_and_members(monkeypatch):
    body = urlset('http://a.test/1', 'http://a.test/2')
    expected = parse_sitemap(body)
    assert expected.pages == [u'http://a.test/1', u'http://a.test/2']
    assert parse_sitemap(gzipped(body)) == expected
    monkeypatch.setattr(sitemaps, '_PIECE_SIZE', 1)  # expat fed a byte at a time
    assert parse_sitemap(gzipped(body)) == expected
    # Two gzip members are one file, as gzip -d reads them.
    assert parse_sitemap(gzipped(body[:50]) + gzipped(body[50:])) == expected


def test_a_gzip_bomb_is_stopped_at_the_size_cap():
    bomb = gzipped(b'<urlset>' + b' ' * (4 * 1024 * 1024) + b'</urlset>')
    assert len(bomb) < 10 * 1024
    with pytest.raises(SitemapError) as raised:
        parse_sitemap(bomb, max_size=1024 * 1024)
    assert 'over 1048576 bytes decompressed' in str(raised.value)
    assert parse_sitemap(bomb, max_size=5 * 1024 * 1024) == Sitemap([], [])


def test_a_plain_sitemap_over_the_cap_is_refused():
    body = urlset('http://a.test/')
    assert parse_sitemap(body, max_size=len(body)).pages == [u'http://a.test/']
    with pytest.raises(SitemapError) as raised:
        parse_sitemap(body, max_size=len(body) - 1)
    assert 'over %d bytes' % (len(body) - 1) in str(raised.value)


@pytest.mark.parametrize('body, message', [
    (b'', 'bad XML'),
    (b'not xml at all', 'line 1 of the text is not an http(s) URL'),  # a text sitemap?
    (b'http://a.test/\n\nftp://a.test/', 'line 3 of the text is not an http(s) URL'),
    (b'<urlset><url><loc>http://a.test/</loc></url>', 'bad XML'),  # cut short
    (b'<urlset><url><loc>&nbsp;</loc></url></urlset>', 'bad XML'),  # undefined entity
    (b'<html><body>Not found</body></html>', 'not a urlset or a sitemapindex'),
    (b'<rss version="2.0"><channel/></rss>', 'not a urlset or a sitemapindex'),
    (b'\x1f\x8bnot gzip data', 'bad gzip data'),
])
def test_what_is_not_a_sitemap_is_an_error(body, message):
    with pytest.raises(SitemapError) as raised:
        parse_sitemap(body)
    assert message in str(raised.value)


BILLION_LAUGHS = b'''<?xml version="1.0"?>
<!DOCTYPE urlset [
  <!ENTITY a "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa">
  <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
  <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
]>
<urlset><url><loc>http://a.test/&c;</loc></url></urlset>'''


@pytest.mark.parametrize('body', [
    BILLION_LAUGHS,
    b'<!DOCTYPE urlset SYSTEM "http://127.0.0.1:1/evil.dtd"><urlset/>',
    b'<!DOCTYPE urlset [<!ENTITY file SYSTEM "file:///etc/passwd">]>'
    b'<urlset><url><loc>&file;</loc></url></urlset>',
    b'<!DOCTYPE urlset [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]><urlset/>',
    b'<!DOCTYPE urlset><urlset/>',
])
def test_a_doctype_is_refused_so_no_entity_is_expanded(body):
    for sitemap in (body, gzipped(body)):
        with pytest.raises(SitemapError) as raised:
            parse_sitemap(sitemap)
        assert 'DOCTYPE is refused' in str(raised.value)


def test_a_text_sitemap_lists_a_url_a_line():
    body = b'\n  http://a.test/a  \r\nhttps://a.test/caf\xc3\xa9\n\nHTTP://a.test/b'
    expected = Sitemap([u'http://a.test/a', u'https://a.test/caf\xe9', u'HTTP://a.test/b'], [])
    assert parse_sitemap(body) == expected
    assert parse_sitemap(gzipped(body)) == expected
    with pytest.raises(SitemapError) as raised:
        parse_sitemap(b'http://a.test/\xff\n')
    assert 'line 1 of the text is not UTF-8' in str(raised.value)


def test_robots_txt_lists_sitemaps():
    text = (b'User-agent: *\nDisallow: /private\nSitemap: http://a.test/s.xml\n'
            b'User-agent: other\nsitemap :  http://a.test/s2.xml.gz  \n')
    assert RobotsRules.parse(text).sitemaps() == [u'http://a.test/s.xml',
                                                   u'http://a.test/s2.xml.gz']
    assert read_sitemap(text, ROBOTS_DEPTH) == Sitemap(
        [], [u'http://a.test/s.xml', u'http://a.test/s2.xml.gz'])
    assert RobotsRules.allow_all().sitemaps() == []
    # The same bytes at a sitemap's depth are read as a sitemap.
    with pytest.raises(SitemapError):
        read_sitemap(text, SITEMAP_DEPTH)


def test_sitemap_sources_are_each_sites_robots_txt_and_sitemap_xml():
    roots = ['http://a.test/', 'http://a.test/deep/page', 'https://a.test:8443/',
             'http://b.test/x']
    assert sitemap_sources(roots) == [
        ('http://a.test/robots.txt', ROBOTS_DEPTH), ('http://a.test/sitemap.xml', SITEMAP_DEPTH),
        ('https://a.test:8443/robots.txt', ROBOTS_DEPTH),
        ('https://a.test:8443/sitemap.xml', SITEMAP_DEPTH),
        ('http://b.test/robots.txt', ROBOTS_DEPTH), ('http://b.test/sitemap.xml', SITEMAP_DEPTH)]


def test_sitemap_entries_resolve_and_go_one_level_down_to_the_deepest():
    sitemap = Sitemap([u'/p', u'mailto:x@a.test', u'HTTP://A.test:80/q#f'],
                      [u'child.xml', u'javascript:x'])
    base = 'http://a.test/maps/index.xml'
    assert sitemap_entries(base, SITEMAP_DEPTH, sitemap) == [
        ('http://a.test/p', 0), ('http://a.test/q', 0),
        ('http://a.test/maps/child.xml', SITEMAP_DEPTH - 1)]
    assert sitemap_entries(base, DEEPEST_SITEMAP_DEPTH + 1, sitemap)[-1] == (
        'http://a.test/maps/child.xml', DEEPEST_SITEMAP_DEPTH)
    assert sitemap_entries(base, DEEPEST_SITEMAP_DEPTH, sitemap) == [
        ('http://a.test/p', 0), ('http://a.test/q', 0)]


# -- crawling with sitemaps ---------------------------------------------------------------------

@gen.coroutine
def crawl(roots, **options):
    # Unthrottled unless a test says otherwise: the polite start delay made the two crawls
    # of the nesting test take most of gen_test's 5 s, and CI's 3.6 run went past it.
    statistics = yield Crawler(roots, **unthrottled(options)).crawl()
    raise gen.Return(statistics)


def paths(statistics, origin):
    return set(url[len(origin):] for url in by_url(statistics))


def hidden_site(serve):
    """A site whose root links nowhere; its other pages are listed only in sitemaps: a gzip
    one named by robots.txt, and an index at /sitemap.xml leading to an index leading to a
    sitemap sent with Content-Encoding: gzip."""
    site = Pages({
        '/': links(),
        '/maps/index2.xml': xml(sitemapindex('/maps/b.xml')),  # relative: resolved
        '/a': links('/c'), '/b': 'b', '/c': 'c', '/unlisted': 'never found',
    })
    server, origin = serve(site)
    site.pages.update({
        '/robots.txt': robots_txt('User-agent: *\nDisallow: /private\n'
                                  'Sitemap: %s/maps/pages.xml.gz\n' % origin),
        '/maps/pages.xml.gz': xml(gzipped(urlset(origin + '/a', origin + '/private/x')),
                                  content_type='application/x-gzip'),
        '/sitemap.xml': xml(sitemapindex(origin + '/maps/index2.xml',
                                         'http://example.com/sitemap.xml')),
        '/maps/b.xml': xml(gzipped(urlset('  %s/b\n' % origin, 'http://example.com/out',
                                          origin + '/a')),
                           headers=[('Content-Encoding', 'gzip')]),
    })
    return server, origin


def test_without_sitemaps_only_the_root_is_found(serve):
    server, origin = hidden_site(serve)
    statistics = yield crawl([origin + '/'])
    assert paths(statistics, origin) == {'/'}
    assert sorted(server.requests) == ['/', '/robots.txt']


def test_pages_listed_in_sitemaps_are_found_with_sitemaps(serve):
    server, origin = hidden_site(serve)
    statistics = yield crawl([origin + '/'], sitemaps=True)
    found = dict((url[len(origin):], statistic) for url, statistic in
                 by_url(statistics).items())
    assert set(found) == {'/', '/robots.txt', '/sitemap.xml', '/maps/pages.xml.gz',
                          '/maps/index2.xml', '/maps/b.xml', '/a', '/b', '/c', '/private/x'}
    # The sitemaps' pages come in as roots (depth 0); sitemaps are below 0, one level
    # down for each index.
    assert dict((path, found[path].depth) for path in found) == {
        '/': 0, '/a': 0, '/b': 0, '/private/x': 0, '/c': 1,
        '/robots.txt': ROBOTS_DEPTH, '/sitemap.xml': SITEMAP_DEPTH,
        '/maps/pages.xml.gz': SITEMAP_DEPTH, '/maps/index2.xml': SITEMAP_DEPTH - 1,
        '/maps/b.xml': SITEMAP_DEPTH - 2}
    assert found['/private/x'].exception == ROBOTS_DISALLOWED
    # num_urls counts what a sitemap lists, num_new_urls what the crawl took in: not
    # example.com's, out of scope, nor /a a second time.
    assert [(found[path].num_urls, found[path].num_new_urls) for path in (
        '/robots.txt', '/sitemap.xml', '/maps/b.xml')] == [(1, 1), (2, 1), (3, 1)]
    assert all(statistic.exception is None for path, statistic in found.items()
               if path != '/private/x')
    # robots.txt once: the crawl's item for its Sitemap lines takes what its rules read.
    assert sorted(server.requests) == sorted([
        '/', '/robots.txt', '/sitemap.xml', '/maps/pages.xml.gz',
        '/maps/index2.xml', '/maps/b.xml', '/a', '/b', '/c'])


def test_missing_and_broken_sitemaps_are_counted_and_the_crawl_goes_on(serve):
    server, origin = serve(Pages({
        '/': links(),
        '/sitemap.xml': xml(sitemapindex('/broken.xml', '/gone.xml', '/evil.xml',
                                         '/ok.xml.gz')),
        '/broken.xml': xml(b'<urlset><url><loc>/p</loc></url>'),
        '/evil.xml': xml(BILLION_LAUGHS),
        '/ok.xml.gz': xml(gzipped(urlset('/p')), content_type='application/octet-stream'),
        '/p': 'found',
    }))
    statistics = yield crawl([origin + '/'], sitemaps=True)
    found = dict((url[len(origin):], statistic) for url, statistic in
                 by_url(statistics).items())
    assert (found['/robots.txt'].status, found['/gone.xml'].status) == (404, 404)
    assert found['/broken.xml'].exception.startswith('SitemapError: bad XML')
    assert found['/evil.xml'].exception.startswith('SitemapError: a sitemap with a DOCTYPE')
    assert (found['/p'].status, found['/p'].depth) == (200, 0)
    assert statistics.counters['fail_SitemapError'] == 2
    assert statistics.counters['status_404'] == 2


def test_a_sitemap_over_the_body_cap_keeps_its_own_error(serve):
    server, origin = serve(Pages({'/': links(), '/sitemap.xml': xml(urlset(*(
        '/p%d' % number for number in range(100))))}))
    statistics = yield crawl([origin + '/'], sitemaps=True, max_body_size=1000)
    sitemap = by_url(statistics)[origin + '/sitemap.xml']
    assert (sitemap.status, sitemap.num_urls) == (200, 0)
    assert sitemap.exception.startswith('BodyTooLarge: ')
    assert statistics.urls == 3


def test_sitemap_pages_keep_to_the_scope_and_sitemaps_to_its_hosts(serve):
    site = Pages({'/': links(), '/keep/1': '', '/drop/1': '', '/keep/2': ''})
    server, origin = serve(site)
    site.pages['/sitemap.xml'] = xml(urlset(
        origin + '/keep/1', origin + '/drop/1', 'http://example.com/keep/3'))
    site.pages['/robots.txt'] = robots_txt('Sitemap: %s/keep/more.xml\n' % origin)
    site.pages['/keep/more.xml'] = xml(urlset(origin + '/keep/2'))
    # --include chooses pages: the sitemaps, on the root's host, are read all the same.
    statistics = yield crawl([origin + '/'], sitemaps=True, include='/keep/[0-9]')
    assert paths(statistics, origin) == {'/', '/robots.txt', '/sitemap.xml', '/keep/more.xml',
                                         '/keep/1', '/keep/2'}
    statistics = yield crawl([origin + '/'], sitemaps=True, exclude='/keep/1')
    assert paths(statistics, origin) == {'/', '/robots.txt', '/sitemap.xml', '/keep/more.xml',
                                         '/drop/1', '/keep/2'}
    assert '/drop/1' in server.requests and 'http://example.com/keep/3' not in server.requests


def test_index_nesting_and_the_number_of_sitemaps_are_bounded(serve, monkeypatch):
    # /sitemap.xml -> i1 -> i2 -> i3 -> i4, each index listing a urlset of its own and
    # the one it came from (a loop the seen set stops): i3 is at the deepest level.
    pages = {'/': links(), '/sitemap.xml': xml(sitemapindex('/u0.xml', '/i1.xml'))}
    for level in range(1, 5):
        pages['/i%d.xml' % level] = xml(sitemapindex(
            '/u%d.xml' % level, '/i%d.xml' % (level + 1), '/sitemap.xml'))
    for level in range(5):
        pages['/u%d.xml' % level] = xml(urlset('/p%d' % level))
        pages['/p%d' % level] = ''
    server, origin = serve(Pages(pages))
    assert SITEMAP_DEPTH - 3 == DEEPEST_SITEMAP_DEPTH
    statistics = yield crawl([origin + '/'], sitemaps=True)
    found = paths(statistics, origin)
    assert found == {'/', '/robots.txt', '/sitemap.xml', '/u0.xml', '/p0', '/i1.xml',
                     '/u1.xml', '/p1', '/i2.xml', '/u2.xml', '/p2', '/i3.xml'}
    assert by_url(statistics)[origin + '/i3.xml'].num_urls == 3
    # What is left out is counted, and said.
    assert by_url(statistics)[origin + '/i3.xml'].exception == (
        'SitemapTooDeep: its 3 sitemaps are left out (indexes are read 3 levels down)')
    assert statistics.counters['fail_SitemapTooDeep'] == 1
    monkeypatch.setattr(extractors, 'MAX_SITEMAPS', 2)  # besides robots.txt and /sitemap.xml
    statistics = yield crawl([origin + '/'], sitemaps=True)
    assert paths(statistics, origin) == {'/', '/robots.txt', '/sitemap.xml', '/u0.xml',
                                         '/p0', '/i1.xml'}


def test_sitemaps_are_read_when_non_html_bodies_are_skipped(serve):
    server, origin = serve(Pages({'/': links(), '/sitemap.xml': xml(urlset('/p')), '/p': '',
                                  '/file.pdf': {'content_type': 'application/pdf'}}))
    statistics = yield crawl([origin + '/'], sitemaps=True, download_non_html=False)
    assert origin + '/p' in by_url(statistics)
    assert by_url(statistics)[origin + '/sitemap.xml'].size > 0


def test_sitemap_fetches_keep_the_hosts_rules(serve):
    # robots.txt may forbid a sitemap; and sitemaps share the host's one connection.
    pages = {'/': links(), '/sitemap.xml': xml(sitemapindex('/a.xml', '/secret.xml'),
                                               delay=0.02),
             '/a.xml': xml(urlset('/p1', '/p2'), delay=0.02), '/secret.xml': xml(urlset('/s')),
             '/p1': {'body': '', 'delay': 0.02}, '/p2': {'body': '', 'delay': 0.02}, '/s': ''}
    pages['/robots.txt'] = robots_txt('User-agent: *\nDisallow: /secret\n')
    server, origin = serve(Pages(pages))
    log = request_log(server)
    statistics = yield crawl([origin + '/'], sitemaps=True, max_tasks=5, max_per_host=1)
    assert by_url(statistics)[origin + '/secret.xml'].exception == ROBOTS_DISALLOWED
    assert server.peak_active == 1
    assert sorted(path for path, _ in log) == sorted([
        '/robots.txt', '/', '/sitemap.xml', '/a.xml', '/p1', '/p2'])


def test_a_resumed_crawl_still_reads_its_sitemaps(serve, tmpdir):
    server, origin = serve(Pages({'/': links(), '/sitemap.xml': xml(urlset('/p')), '/p': ''}))
    state = str(tmpdir.join('state.sqlite'))
    crawler = Crawler([origin + '/'], sitemaps=True, state=state, max_tasks=1,
                      on_statistic=lambda statistic: crawler.stop(),  # after the root
                      **UNTHROTTLED)  # journaled: the resumed crawl keeps it
    first = yield crawler.crawl()
    assert paths(first, origin) == {'/'}
    with pytest.raises(ValueError) as raised:
        Crawler([], sitemaps=False, state=state, resume=True)
    assert 'sitemaps=False contradicts' in str(raised.value)
    # The journal keeps the option, and the sitemaps' depths that tell them from pages.
    statistics = yield Crawler([], state=state, resume=True).crawl()
    found = by_url(statistics)
    assert set(found) == set(origin + path for path in ('/', '/robots.txt', '/sitemap.xml',
                                                         '/p'))
    assert found[origin + '/sitemap.xml'].depth == SITEMAP_DEPTH


def test_the_command_line_option(serve, tmpdir, capsys):
    server, origin = serve(Pages({'/': links(), '/sitemap.xml': xml(urlset('/p')), '/p': ''}))
    output = str(tmpdir.join('out.jsonl'))
    for argv, expected in (([], ['/']), (['--sitemaps'], ['/', '/p', '/robots.txt',
                                                           '/sitemap.xml'])):
        assert main([origin + '/', '--output', output, '--no-progress'] + argv) == 0
        with io.open(output, encoding='utf-8') as lines:
            urls = [json.loads(line)['url'] for line in lines]
        assert sorted(urls) == [origin + path for path in expected]
        assert capsys.readouterr().out.startswith('Finished %d urls' % len(expected))


def test_link_check_names_the_sitemap_that_lists_a_missing_page(serve, capsys):
    server, origin = serve(Pages({'/': links(), '/sitemap.xml': xml(urlset('/p', '/gone')),
                                  '/p': ''}))
    assert main([origin + '/', '--link-check', '--no-progress']) == 0
    capsys.readouterr()
    assert main([origin + '/', '--sitemaps', '--link-check', '--no-progress']) == 1
    out = capsys.readouterr().out
    assert out[out.index('Broken links:'):].splitlines() == [
        'Broken links: 1', '%s/gone 404' % origin, '    linked from %s/sitemap.xml' % origin]
