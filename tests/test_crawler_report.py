"""The link checker and the HTML report: referrers and broken links as the crawl finds
them, the report's data and its page (escaped, self-contained), ``--link-check``'s exit
status and list, and the page rendered by a real headless browser (Debian's chromium).
"""
from __future__ import absolute_import, division, print_function

import io
import os
import re
import subprocess

import pytest
from six import unichr
from six.moves.html_entities import name2codepoint
from six.moves.html_parser import HTMLParser

from tinytornado.crawler.application import linkcheck
from tinytornado.crawler.application.cli import EXIT_BROKEN_LINKS, main
from tinytornado.crawler.engine import Crawler
from tinytornado.crawler.application.linkcheck import (
    BrokenLink, Hop, LinkChecker, broken_link_lines)
from tinytornado.crawler.application.report import CrawlReport, Timeline, bar_chart, escape_html
from tinytornado.crawler.stats import ROBOTS_DISALLOWED, CrawlStatistics, FetchStatistic

from crawler_sites import UNTHROTTLED_ARGS, Pages, links

EVIL = u'http://a.test/<script>alert("x")</script>\'"&amp;'


def redirect(location, status=301):
    return {'status': status, 'headers': [('Location', location)]}


def feed(checker, statistics, pages=()):
    for url, hrefs in pages:
        checker.add_links(url, hrefs)
    for statistic in statistics:
        checker.add_statistic(statistic)
    return checker


# -- the link checker ---------------------------------------------------------------------

def test_every_referrer_is_kept_up_to_the_limit_and_the_rest_counted():
    checker = LinkChecker(max_referrers=2)
    for page in ('http://a.test/1', 'http://a.test/2', 'http://a.test/3'):
        checker.add_links(page, ['http://a.test/gone'])
    checker.add_statistic(FetchStatistic('http://a.test/gone', status=404))
    checker.add_links('http://a.test/4', ['http://a.test/gone'])
    assert checker.broken_links() == [BrokenLink(
        'http://a.test/gone', '404', [Hop('http://a.test/gone', '404')],
        ['http://a.test/1', 'http://a.test/2'], 4)]


def test_a_url_found_not_broken_drops_its_referrers_and_ignores_later_ones():
    checker = LinkChecker()
    checker.add_links('http://a.test/', ['http://a.test/ok', 'http://a.test/later'])
    checker.add_statistic(FetchStatistic('http://a.test/ok', status=200))
    checker.add_links('http://a.test/2', ['http://a.test/ok'])
    assert checker.referrers['http://a.test/ok'] is linkcheck._NOT_BROKEN  # no list kept
    assert checker.referrers['http://a.test/later'].urls == ['http://a.test/']
    assert checker.broken_links() == []  # /later was never fetched: nothing known


def test_what_breaks_a_link():
    urls = ['http://a.test/%s' % name for name in (
        'ok', 'missing', 'error', 'refused', 'robots', 'huge', 'moved', 'loop1', 'loop2',
        'away', 'r0', 'r1', 'r2', 'r3')]
    statistics = [
        FetchStatistic(urls[0], status=200),
        FetchStatistic(urls[1], status=404),
        FetchStatistic(urls[2], status=503, tries=4),
        FetchStatistic(urls[3], exception='ConnectionRefusedError: refused'),
        FetchStatistic(urls[4], exception=ROBOTS_DISALLOWED),
        FetchStatistic(urls[5], status=200, exception='BodyTooLarge: over 10 bytes'),
        FetchStatistic(urls[6], status=301, next_url=urls[1]),
        FetchStatistic(urls[7], status=302, next_url=urls[8]),
        FetchStatistic(urls[8], status=307, next_url=urls[7]),
        FetchStatistic(urls[9], status=301, next_url='http://elsewhere.test/'),
        FetchStatistic(urls[10], status=301, next_url=urls[11]),
        FetchStatistic(urls[11], status=301, next_url=urls[12]),
        FetchStatistic(urls[12], status=301, next_url=urls[13]),
    ]
    checker = feed(LinkChecker(max_redirect=2), statistics, [('http://a.test/', urls)])
    problems = [(link.url, link.problem, link.chain) for link in checker.broken_links()]
    assert problems == [
        (urls[2], '503', [Hop(urls[2], '503')]),
        (urls[7], 'redirect loop', [Hop(urls[7], '302'), Hop(urls[8], '307'),
                                    Hop(urls[7], None)]),
        (urls[8], 'redirect loop', [Hop(urls[8], '307'), Hop(urls[7], '302'),
                                    Hop(urls[8], None)]),
        (urls[1], '404', [Hop(urls[1], '404')]),
        (urls[6], '404', [Hop(urls[6], '301'), Hop(urls[1], '404')]),
        (urls[10], 'more than 2 redirects', [Hop(urls[10], '301'), Hop(urls[11], '301'),
                                             Hop(urls[12], '301'), Hop(urls[13], None)]),
        (urls[3], 'ConnectionRefusedError: refused',
         [Hop(urls[3], 'ConnectionRefusedError: refused')]),
    ]


def test_a_broken_root_is_broken_without_referrers():
    checker = feed(LinkChecker(), [FetchStatistic('http://a.test/', status=500)])
    assert checker.broken_links() == []  # a URL nobody links to is not a link...
    assert checker.broken_links(['http://a.test/']) == [  # ...but a root is one
        BrokenLink('http://a.test/', '500', [Hop('http://a.test/', '500')], [], 0)]


def test_redirect_chains_start_where_no_redirect_leads_and_in_loops():
    checker = feed(LinkChecker(), [
        FetchStatistic('http://a.test/b', status=302, next_url='http://a.test/c'),
        FetchStatistic('http://a.test/a', status=301, next_url='http://a.test/b'),
        FetchStatistic('http://a.test/c', status=200),
        FetchStatistic('http://a.test/x', status=308, next_url='mailto:someone'),
        FetchStatistic('http://a.test/loop1', status=301, next_url='http://a.test/loop2'),
        FetchStatistic('http://a.test/loop2', status=301, next_url='http://a.test/loop1'),
    ])
    assert checker.redirect_chains() == [
        [Hop('http://a.test/a', '301'), Hop('http://a.test/b', '302'),
         Hop('http://a.test/c', None)],
        [Hop('http://a.test/x', '308'), Hop('mailto:someone', None)],
        [Hop('http://a.test/loop1', '301'), Hop('http://a.test/loop2', '301'),
         Hop('http://a.test/loop1', None)],
    ]


def test_broken_link_lines():
    broken = [
        BrokenLink('http://a.test/m', '301', [Hop('http://a.test/m', '301'),
                                              Hop('http://a.test/g', '404')],
                   ['http://a.test/', 'http://a.test/p'], 5),
        BrokenLink('http://a.test/', 'TimeoutError: 30 s', [], [], 0),
    ]
    assert broken_link_lines(broken) == [
        'Broken links: 2',
        'http://a.test/m 301',
        '    redirects: http://a.test/m 301 -> http://a.test/g 404',
        '    linked from http://a.test/',
        '    linked from http://a.test/p',
        '    and from 3 more pages',
        'http://a.test/ TimeoutError: 30 s',
        '    (a root)',
    ]
    assert broken_link_lines([]) == ['Broken links: none']


# -- the crawl's hook ---------------------------------------------------------------------

def test_on_links_gets_every_page_and_its_links_in_scope(serve):
    server, origin = serve(Pages({
        '/': links('/a', '/b', 'http://elsewhere.test/', '/a'),
        '/a': links('/b', '/', '/excluded'),
        '/b': links('/a'),
    }))
    sightings = {}
    crawler = Crawler([origin + '/'], exclude=['excluded'], delay=0.0, max_per_host=None,
                      on_links=lambda url, found: sightings.setdefault(url, []).append(found))
    yield crawler.crawl()
    assert sightings == {
        origin + '/': [[origin + '/a', origin + '/b']],
        origin + '/a': [[origin + '/b', origin + '/']],
        origin + '/b': [[origin + '/a']],
    }


# -- the report's data --------------------------------------------------------------------

def test_timeline_buckets_widen_and_merge_exactly():
    timeline = Timeline(max_buckets=4)
    for seconds in (0.05, 0.15, 0.35):
        timeline.add(seconds)
    assert (timeline.width, timeline.counts) == (0.1, [1, 1, 0, 1])
    timeline.add(0.45)
    assert (timeline.width, timeline.counts) == (0.2, [2, 1, 1])
    timeline.add(0.95)
    assert (timeline.width, timeline.counts) == (1.0, [5])
    timeline.add(7.5)  # 2 s buckets hold it; 10 s would have been too wide
    assert (timeline.width, timeline.counts, timeline.rates()) == (
        2.0, [5, 0, 0, 1], [2.5, 0.0, 0.0, 0.5])


class FakeClock(object):
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_report_collects_times_latencies_and_the_largest_pages():
    clock = FakeClock()
    report = CrawlReport(LinkChecker(), clock=clock, max_largest=2)
    for index, (elapsed, size) in enumerate([(0.005, 10), (0.3, 500), (0.3, 20), (12.0, 90)]):
        clock.now += 0.25  # exact in binary: no bucket boundary in doubt
        report.add_statistic(FetchStatistic('http://a.test/%d' % index, status=200,
                                            elapsed=elapsed, size=size))
    report.add_statistic(FetchStatistic('http://a.test/x', exception='OSError: no'))
    assert report.timeline.counts == [0, 0, 1, 0, 0, 1, 0, 1, 0, 0, 2]
    assert report.latencies == [1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1]
    assert report.largest() == [(500, 'http://a.test/1', 200, None),
                                (90, 'http://a.test/3', 200, None)]


# -- the page -----------------------------------------------------------------------------

def test_escape_html():
    assert escape_html(u'<a href="x">\'&') == u'&lt;a href=&quot;x&quot;&gt;&#39;&amp;'
    assert escape_html(b'caf\xc3\xa9 <') == u'caf\xe9 &lt;'
    assert escape_html(404) == u'404'


class PageParser(HTMLParser):
    """The tags, attributes and text of a page, as a browser's tokenizer sees them."""

    def __init__(self):
        HTMLParser.__init__(self)
        self.tags, self.text = [], []

    def handle_starttag(self, tag, attributes):
        self.tags.append((tag, dict(attributes)))

    def handle_data(self, data):
        self.text.append(data)

    # Python 2.7's parser hands character references over apart (3.x converts them).
    def handle_entityref(self, name):
        self.text.append(unichr(name2codepoint[name]))

    def handle_charref(self, name):
        self.text.append(unichr(int(name[1:], 16) if name[:1] in 'xX' else int(name)))


def parse(page):
    parser = PageParser()
    parser.feed(page)
    parser.close()
    return parser


def evil_report():
    """A report whose URLs, redirect target and error message carry markup and quotes."""
    checker = LinkChecker()
    report = CrawlReport(checker)
    statistics = CrawlStatistics(keep_statistics=False)
    checker.add_links(EVIL, [EVIL + '/gone', 'http://a.test/moved'])
    for statistic in [
            FetchStatistic(EVIL, status=200, size=900, content_type='text/html"><em>'),
            FetchStatistic(EVIL + '/gone', exception='Error: <img src=x onerror=alert(1)>'),
            FetchStatistic('http://a.test/moved', status=302,
                           next_url='javascript:alert("</script>")')]:
        report.add_statistic(statistic)
        checker.add_statistic(statistic)
        statistics.add(statistic)
    statistics.finish(0, False)
    return report, statistics


def test_the_page_escapes_urls_and_messages():
    report, statistics = evil_report()
    page = report.html(statistics, [EVIL])
    parsed = parse(page)
    assert [tag for tag, _ in parsed.tags if tag in ('script', 'img', 'em')] == ['script']
    text = u''.join(parsed.text)
    for value in (EVIL, 'Error: <img src=x onerror=alert(1)>', 'text/html"><em>',
                  'javascript:alert("</script>")'):
        assert value in text
    hrefs = [attributes['href'] for tag, attributes in parsed.tags if tag == 'a']
    assert set(hrefs) == {EVIL, EVIL + '/gone', 'http://a.test/moved'}  # no javascript:


def test_the_page_needs_nothing_from_outside():
    report, statistics = evil_report()
    parsed = parse(report.html(statistics, [EVIL]))
    assert [tag for tag, _ in parsed.tags if tag in ('link', 'img', 'iframe', 'object')] == []
    assert [attributes for _, attributes in parsed.tags if 'src' in attributes] == []
    style = u''.join(text for text in parsed.text if 'font:' in text)
    assert style and 'url(' not in style and '@import' not in style


def test_bar_chart_has_a_bar_per_value_with_its_value_on_hover():
    chart = bar_chart([2, 0, 4], [u'a', u'b', u'<c>'], u'URLs', u'caption')
    titles = re.findall(r'<title>(.*?)</title>', chart)
    assert titles == [u'a: 2 URLs', u'b: 0 URLs', u'&lt;c&gt;: 4 URLs']
    heights = [float(h) for h in re.findall(r'<rect class="bar"[^>]* height="([0-9.]+)"', chart)]
    assert heights[1] == 0 and heights[2] == 2 * heights[0] > 0
    nothing = bar_chart([0, 0], [u'a', u'b'], u'URLs', u'c')
    assert nothing == u'<p class="muted">Nothing to show.</p>'


# -- the command line ---------------------------------------------------------------------

def broken_site(origin_of_refused='http://127.0.0.1:1'):
    """A site with one link of each kind of breakage, and good ones."""
    return Pages({
        '/': links('/ok', '/missing', '/moved', '/error', origin_of_refused + '/refused'),
        '/ok': links('/missing', '/', '/ok'),
        '/moved': redirect('/gone'),
        '/error': {'status': 500, 'body': 'oops'},
    })


def test_link_check_lists_broken_links_and_exits_1(serve, capsys):
    server, origin = serve(broken_site())
    status = main([origin + '/', '--link-check', '--no-progress', '--max-tries', '1']
                   + UNTHROTTLED_ARGS)
    out = capsys.readouterr().out
    assert status == EXIT_BROKEN_LINKS == 1
    listing = out[out.index('Broken links:'):].splitlines()
    refused = [line for line in listing if line.startswith('http://127.0.0.1:1/refused ')]
    assert len(refused) == 1 and 'refused' in refused[0].split(' ', 1)[1].lower()
    pages = server.site.pages

    def linked_from(path, href):  # each referrer, where it wrote the link, and how
        return "    linked from %s%s line 1 column %d as '%s'" % (
            origin, path, pages[path].index('"%s"' % href) + 2, href)
    assert listing == [
        'Broken links: 4',
        refused[0],
        linked_from('/', 'http://127.0.0.1:1/refused'),
        '%s/error 500' % origin,
        linked_from('/', '/error'),
        '%s/missing 404' % origin,
        linked_from('/', '/missing'),
        linked_from('/ok', '/missing'),
        '%s/moved 404' % origin,
        '    redirects: %s/moved 301 -> %s/gone 404' % (origin, origin),
        linked_from('/', '/moved'),
    ]


def test_link_check_exits_0_when_no_link_is_broken(serve, capsys):
    server, origin = serve(Pages({'/': links('/a', '/moved'), '/a': links('/'),
                                  '/moved': redirect('/a')}))
    assert main([origin + '/', '--link-check', '--no-progress'] + UNTHROTTLED_ARGS) == 0
    assert capsys.readouterr().out.endswith('\nBroken links: none\n')


def test_report_alone_does_not_change_the_exit_status(serve, capsys, tmpdir):
    server, origin = serve(broken_site())
    path = str(tmpdir.join('report.html'))
    assert main([origin + '/', '--report', path, '--no-progress', '--max-tries', '1']
                 + UNTHROTTLED_ARGS) == 0
    assert 'Broken links' not in capsys.readouterr().out
    page = io.open(path, encoding='utf-8').read()
    broken_rows = re.findall(r'<tr><td><a class="url" href="([^"]*)"[^<]*</a></td>'
                             r'<td class="bad">([^<]*)', page)
    assert [(url, problem) for url, problem in broken_rows if url.startswith(origin)] == [
        (origin + '/error', '500'), (origin + '/missing', '404'), (origin + '/moved', '404')]
    assert page.count('<svg class="chart"') == 2


# -- in a real browser --------------------------------------------------------------------

def find_program(name):
    for directory in os.environ.get('PATH', '').split(os.pathsep):
        path = os.path.join(directory, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


CHROMIUM = find_program('chromium')

# Put first in <head>: errors and console.error calls become an attribute of <html>, which
# --dump-dom shows (the console lines on chromium's stderr are the second witness).
ERROR_RECORDER = u'''<script>
(function () {
  function note(message) {
    var root = document.documentElement;
    root.setAttribute("data-errors", (root.getAttribute("data-errors") || "") + message + "|");
  }
  window.addEventListener("error", function (event) { note("error: " + event.message); });
  var error = console.error;
  console.error = function (message) {
    note("console: " + message);
    error.apply(console, arguments);
  };
})();
</script>'''


def render(path, tmpdir):
    """(the DOM after the page's scripts ran, chromium's console lines) of an HTML file."""
    process = subprocess.Popen(
        [CHROMIUM, '--headless', '--no-sandbox', '--disable-gpu', '--enable-logging=stderr',
         '--v=0', '--user-data-dir=' + str(tmpdir.join('profile')), '--dump-dom',
         'file://' + path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = process.communicate()  # chromium's --headless ends by itself
    assert process.returncode == 0, err
    console = [line for line in err.decode('utf-8', 'replace').splitlines() if ':CONSOLE' in line]
    return out.decode('utf-8'), console


@pytest.mark.skipif(CHROMIUM is None,
                    reason='chromium is not installed (apt-get install chromium)')
def test_the_report_renders_in_chromium_without_console_errors(serve, capsys, tmpdir):
    site = broken_site()
    site.pages['/strange'] = redirect('javascript:alert("</script><script>x")')
    site.pages['/'] += links('/strange', '/a%22b%27%3Cc%3E')
    server, origin = serve(site)
    path = str(tmpdir.join('report.html'))
    assert main([origin + '/', '--report', path, '--no-progress', '--max-tries', '1']
                 + UNTHROTTLED_ARGS) == 0
    page = io.open(path, encoding='utf-8').read()
    checked = str(tmpdir.join('checked.html'))
    with io.open(checked, 'w', encoding='utf-8') as out:
        out.write(page.replace(u'<head>', u'<head>' + ERROR_RECORDER, 1))
    dom, console = render(checked, tmpdir)
    assert re.match(r"<!DOCTYPE html>\s*<html lang=\"en\">", dom) and console == []
    assert dom.count('<script') == 2  # the recorder and the page's own, no injected one
    assert len(re.findall(r'<th [^>]*class="sortable"', dom)) == 4 + 3 + 2  # the script ran
    for section in ('status', 'pages-per-second', 'latency', 'largest-pages', 'broken-links',
                    'redirect-chains'):
        assert '<section id="%s">' % section in dom
    assert dom.count('<svg class="chart"') == 2 and '<rect class="bar"' in dom
    assert 'javascript:alert("&lt;/script&gt;&lt;script&gt;x")' in dom
    assert '%s/missing</a>' % origin in dom
