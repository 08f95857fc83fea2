"""A new user's first ten minutes with ``tinycrawl`` (issue 27): each mistake tried there is
one line on stderr and the documented exit status, never a traceback nor a file silently
lost, and what a resume, a full disk or a closed pipe leaves behind is checked on disk.

Each test runs the real command in a child process (`run`), as a user would.
"""
from __future__ import absolute_import, division, print_function

import io
import json
import os
import shutil
import signal
import struct
import subprocess

import pytest

from tinytornado.crawler.application.cli import EXIT_NO_ROOT, EXIT_USAGE
from tinytornado.crawler.demo.server import DemoServer, respond
from tinytornado.crawler.demo.website import Resource, Site

from crawler_sites import UNTHROTTLED_ARGS, Pages, links, robots_txt
from net_helpers import tls_files
from test_crawler_cli import (PACKAGE_ROOT, assert_one_line_per_finished_url, child,
                              read_json_lines, start_crawl, wait_for, waits_for_processes)
from test_crawler_report import CHROMIUM

DEMO = ['--demo', '--demo-pages', '12', '--no-progress'] + UNTHROTTLED_ARGS

needs_dev_full = pytest.mark.skipif(not os.path.exists('/dev/full'),
                                    reason='needs /dev/full (a disk always full)')


def run(args, stdout=None):
    """(exit status, stdout, stderr) of ``python -m tinytornado.crawler args...``."""
    process = child(['-m', 'tinytornado.crawler'] + list(args),
                    **({} if stdout is None else {'stdout': stdout}))
    out, err = process.communicate()
    return process.returncode, (out or b'').decode('utf-8'), err.decode('utf-8')


def one_line(err):
    """The one line of `err`, a refusal's stderr, without its 'tinycrawl: error: '."""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith('tinycrawl: error: '), err
    return lines[0][len('tinycrawl: error: '):]



def after_politeness(err):
    """stderr after its first line, the politeness in force, which every crawl prints."""
    politeness, _, rest = err.partition('\n')
    assert politeness.startswith('tinycrawl: politeness: '), err
    return rest

# -- 2. a resume with nothing to resume ----------------------------------------------------

def test_a_resume_of_a_missing_state_is_refused_and_makes_no_file(tmpdir):
    state = str(tmpdir.join('nothere.db'))
    status, out, err = run(['--resume', '--state', state])
    assert status == EXIT_USAGE and out == ''
    assert one_line(err) == (
        '--resume: --state %s holds no crawl to resume (give URLs to start one)' % state)
    assert tmpdir.listdir() == []


# -- 3. a file, or stdout, that cannot be written --------------------------------------------

@needs_dev_full
@pytest.mark.parametrize('option', ['--output', '--summary', '--report'])
def test_a_full_disk_under_a_file_option_is_one_line(tmpdir, option):
    report = str(tmpdir.join('report.txt'))
    with io.open(report, 'wb') as stdout:
        status, _, err = run(DEMO + [option, '/dev/full'], stdout=stdout)
    assert status == EXIT_USAGE
    assert one_line(err) == '%s /dev/full: No space left on device' % option


@needs_dev_full
def test_a_full_stdout_is_one_line_and_the_files_are_still_written(tmpdir):
    html, summary = str(tmpdir.join('report.html')), str(tmpdir.join('summary.json'))
    with io.open('/dev/full', 'wb') as stdout:
        status, _, err = run(DEMO + ['--report', html, '--summary', summary], stdout=stdout)
    assert status == EXIT_USAGE
    assert one_line(err) == 'standard output: No space left on device'
    with io.open(summary, encoding='utf-8') as written:
        assert json.load(written)['urls'] > 10
    with io.open(html, encoding='utf-8') as written:
        assert '</html>' in written.read()


# -- 1. a resume writes the files the crawl wrote ------------------------------------------

@waits_for_processes
def test_a_resume_writes_where_the_crawl_did_unless_told(serve, tmpdir):
    site = Site(seed=3, pages=60, slow_fraction=0.5, slow_delay=0.05)
    server, origin = serve(site)
    files = dict((name, str(tmpdir.join(name))) for name in
                 ('out.jsonl', 'crawl.warc.gz', 'report.html', 'summary.json'))
    state = str(tmpdir.join('state.db'))
    crawl = start_crawl(origin + '/', '--state', state, '--max-tasks', '2',
                        '--output', files['out.jsonl'], '--warc', files['crawl.warc.gz'],
                        '--report', files['report.html'], '--summary', files['summary.json'])
    server.on_request = lambda path: (len(server.requests) == 10 and
                                      crawl.send_signal(signal.SIGINT))
    status, _, errors = yield wait_for(crawl)
    assert status == 130, errors
    first_lines = len(read_json_lines(files['out.jsonl']))
    warc_size = os.path.getsize(files['crawl.warc.gz'])
    for name in ('report.html', 'summary.json'):
        os.remove(files[name])
    server.on_request = None
    # Resumed with none of the files named again.
    status, _, errors = yield wait_for(start_crawl('--state', state, '--resume'))
    assert status == 0, errors
    expected = site.expected_crawl(origin + '/')
    lines = read_json_lines(files['out.jsonl'])
    assert len(lines) > first_lines
    assert_one_line_per_finished_url(files['out.jsonl'], state, expected)
    assert os.path.getsize(files['crawl.warc.gz']) > warc_size
    with io.open(files['summary.json'], encoding='utf-8') as summary:
        assert json.load(summary)['urls'] == len(lines)
    assert os.path.exists(files['report.html'])
    # Told another --output, a resume writes it (mended: every finished URL's line).
    moved = str(tmpdir.join('moved.jsonl'))
    status, _, errors = yield wait_for(start_crawl('--state', state, '--resume',
                                                   '--output', moved))
    assert status == 0, errors
    assert_one_line_per_finished_url(moved, state, expected)


# -- 4. two options naming one file ---------------------------------------------------------

@pytest.mark.parametrize('first, second', [('--output', '--summary'),
                                           ('--report', '--warc'),
                                           ('--output', '--state')])
def test_two_options_naming_one_file_are_refused(tmpdir, first, second):
    path = tmpdir.join('crawl.out')
    path.write('kept\n')
    status, out, err = run(DEMO + [first, str(path), second, str(tmpdir.join('.', 'crawl.out'))])
    assert status == EXIT_USAGE and out == ''
    assert one_line(err) == '%s %s and %s %s name one file: give each its own' % (
        first, path, second, tmpdir.join('.', 'crawl.out'))
    assert path.read() == 'kept\n'


def test_dev_null_may_take_every_file(tmpdir):
    status, _, err = run(DEMO + ['--output', os.devnull, '--summary', os.devnull])
    assert status == 0, err


# -- 5. options that contradict each other; --output - ---------------------------------------

@pytest.mark.parametrize('options, message', [
    (['-q', '-v'], '-q/--quiet and -v/--verbose contradict each other: give one'),
    (['--demo', 'http://127.0.0.1:1/'],
     '--demo crawls the demo site: give it no URL, or no --demo'),
    (['--crawl-id', 'mine'], '--crawl-id names a crawl in Redis: it needs --redis URL'),
    (['--output', '-', '-v'],
     '--output - and -v/--verbose both write to standard output: give one'),
])
def test_contradicting_options_are_refused(tmpdir, options, message):
    status, out, err = run(options + ['--no-progress'])
    assert status == EXIT_USAGE and out == ''
    assert one_line(err) == message


def test_output_dash_is_standard_output_and_the_report_goes_to_stderr(tmpdir):
    status, out, err = run(DEMO + ['--output', '-'], stdout=None)
    assert status == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) > 10 and all('url' in line for line in lines)
    assert err.splitlines()[1].startswith('Finished %d urls' % len(lines))  # after the demo's
    assert not os.path.exists(os.path.join(str(tmpdir), '-'))


# -- 6. a header that is not one line ---------------------------------------------------------

@pytest.mark.parametrize('agent', ['bot\r\nX-Evil: 1', 'bot\nnext', 'bot\x1b[0m'])
def test_a_control_character_in_the_user_agent_is_refused_before_a_request(agent):
    status, out, err = run(DEMO + ['--user-agent', agent])
    assert status == EXIT_USAGE and out == ''
    assert one_line(err) == ('--user-agent %r holds a control character (a line break?): '
                             'a header is one line' % agent)


# -- 10. a root that answers an error; a URL without http:// ---------------------------------

def test_a_host_name_without_a_scheme_suggests_http():
    status, out, err = run(['example.com', '--no-progress'])
    assert status == EXIT_USAGE and out == ''
    assert one_line(err) == ("the root URL 'example.com' cannot be crawled: not an absolute "
                             "URL: 'example.com' (did you mean http://example.com ?)")


@waits_for_processes
def test_roots_answering_errors_exit_3_and_say_so(serve):
    server, origin = serve(Pages({'/500': {'status': 500}, '/ok': links('/')}))
    status, report, err = yield wait_for(start_crawl(origin + '/', origin + '/500',
                                                     '--max-tries', '1'))
    assert status == EXIT_NO_ROOT, err
    assert 'Finished 2 urls' in report
    assert after_politeness(err).splitlines() == [
        'tinycrawl: no root could be crawled:',
        '  %s/: answered 404 Not Found' % origin,
        '  %s/500: answered 500 Internal Server Error' % origin]
    # One root crawled: the other's error is a warning, and the crawl's status is 0.
    status, report, err = yield wait_for(start_crawl(origin + '/ok', origin + '/500',
                                                     '--max-tries', '1'))
    assert status == 0, err
    assert after_politeness(err).splitlines() == [
        'tinycrawl: warning: the root %s/500 answered 500 Internal Server Error' % origin]


# -- 7. a certificate not trusted ---------------------------------------------------------------

@waits_for_processes
def test_a_certificate_failure_is_final_and_ca_file_or_insecure_fix_it(serve):
    files = tls_files()
    server, origin = serve(Pages({'/': links('/a'), '/a': links('/')}), ssl_options={
        'certfile': files.server_cert, 'keyfile': files.server_key})
    root = origin.replace('http://127.0.0.1', 'https://localhost') + '/'  # 2.7: no IP names
    status, report, err = yield wait_for(start_crawl(root))
    assert status == EXIT_NO_ROOT, err
    # The crawl's own lines alone: the client does not log the handshake's failure too.
    lines = after_politeness(err).splitlines()
    assert len(lines) == 2, err
    assert lines[0] == 'tinycrawl: no root could be fetched:'
    assert lines[1].startswith('  %s: ' % root) and lines[1].endswith('; tries: 1'), err
    assert ('(final for the host: not retried; trust its authority with --ca-file FILE.pem, or skip the '
            'check with --insecure)') in lines[1]
    assert 'CERTIFICATE_VERIFY_FAILED' in lines[1] or 'certificate verify failed' in lines[1]
    assert server.requests == []
    for option in (['--ca-file', files.ca_cert], ['--insecure']):
        status, report, err = yield wait_for(start_crawl(root, *option))
        assert status == 0, err
        assert set(server.requests) == set(['/robots.txt', '/', '/a'])
        del server.requests[:]


@waits_for_processes
def test_a_certificate_failure_leaves_the_hosts_other_urls_unchecked(serve,
                                                                     start_redis_server):
    files = tls_files()
    server, origin = serve(Pages({'/': links('/a'), '/a': links('/')}), ssl_options={
        'certfile': files.server_cert, 'keyfile': files.server_key})
    root = origin.replace('http://127.0.0.1', 'https://localhost')
    roots = [root + path for path in ('/', '/a', '/b', '/c')]
    redis = start_redis_server()
    # In one process, then on Redis; robots.txt read first (its fetch fails), or not.
    for store in ([], ['--redis', redis.url()]):
        for robots in ([], ['--no-robots']):
            shared = store and store + ['--crawl-id', 'tls' + ''.join(robots)]
            status, report, err = yield wait_for(start_crawl(
                *roots + shared + robots + ['--max-tasks', '1', '--max-tries', '4']))
            assert status == EXIT_NO_ROOT, err
            lines = after_politeness(err).splitlines()
            assert lines[0] == 'tinycrawl: no root could be fetched:' and len(lines) == 5, err
            tried = [line for line in lines[1:] if line.endswith('; tries: 1')]
            assert len(tried) == 1 and '(final for the host: not retried; ' in tried[0], err
            unchecked = sorted(set(lines[1:]) - set(tried))
            host = root.split('/')[2]
            assert [line.split(': ', 1)[0] for line in unchecked] == [
                '  ' + url for url in sorted(roots) if url not in tried[0]], err
            for line in unchecked:
                assert line.split(': ', 1)[1].startswith(
                    'HostGivenUp: %s given up at its first failure, final for every URL: '
                    % host) and line.endswith('; tries: 0'), err
            assert 'unchecked          3\n' in report
            assert server.requests == []


def test_a_ca_file_that_is_missing_is_refused(tmpdir):
    missing = str(tmpdir.join('ca.pem'))
    status, out, err = run(DEMO + ['--ca-file', missing])
    assert status == EXIT_USAGE and out == ''
    assert one_line(err) == '--ca-file %s: no such file' % missing


# -- 8. links that are no URL, as written, with where ---------------------------------------------

@waits_for_processes
def test_link_check_reports_malformed_links_as_written_with_line_and_column(serve):
    page = ('<html><body>\n<p><a href="/ok">fine</a>\n'
            '  <a href="http://[::1">bad host</a> <a href="/%zz">bad escape</a>\n'
            '<a href="mailto:me@example.com">mail</a></p></body></html>')
    server, origin = serve(Pages({'/': page, '/ok': links('/')}))
    status, report, err = yield wait_for(start_crawl(origin + '/', '--link-check'))
    assert status == 1, err
    malformed = report[report.index('Malformed links: '):].splitlines()
    assert malformed[1].startswith("'http://[::1' invalid IPv6 literal: ")  # 2.7: u'[::1'
    assert malformed[:1] + malformed[2:] == [
        'Malformed links: 2',
        '    in %s/ line 3 column 12' % origin,
        "'/%zz' a '%' not followed by two hex digits",
        '    in %s/ line 3 column 47' % origin]
    # Fetched as '/%25zz' (what a browser asks for), it is broken as the page wrote it.
    broken = report[report.index('Broken links: '):report.index('Malformed links: ')]
    assert broken.splitlines() == [
        'Broken links: 1',
        '%s/%%25zz 404' % origin,
        "    linked from %s/ line 3 column 47 as '/%%zz'" % origin]


@waits_for_processes
def test_link_check_names_each_referrer_as_it_wrote_the_broken_link(serve, tmpdir):
    server, origin = serve(Pages({
        '/': '<p>\n <a href="/gone#top">gone</a></p><a href="a/">a</a>',
        '/a/': '<a href="../gone">gone again</a>'}))
    html = str(tmpdir.join('report.html'))
    status, report, err = yield wait_for(start_crawl(origin + '/', '--link-check',
                                                     '--report', html))
    assert status == 1, err
    assert report[report.index('Broken links: '):].splitlines() == [
        'Broken links: 1',
        '%s/gone 404' % origin,
        "    linked from %s/ line 2 column 11 as '/gone#top'" % origin,
        "    linked from %s/a/ line 1 column 10 as '../gone'" % origin]
    with io.open(html, encoding='utf-8') as page:  # the HTML report says it too
        text = page.read()
    assert "</a> line 2 column 11 as &#39;/gone#top&#39;</li>" in text
    assert "</a> line 1 column 10 as &#39;../gone&#39;</li>" in text


# -- 9. sitemaps: text ones read, unreadable ones in --link-check -----------------------------

@waits_for_processes
def test_a_text_sitemap_is_crawled_and_a_broken_one_is_in_the_link_check(serve):
    site = Pages({'/': links('/'), '/a': links('/'), '/b': links('/'),
                  '/broken.xml': {'content_type': 'application/xml', 'body': '<urlset><url>'}})
    server, origin = serve(site)
    site.pages['/robots.txt'] = robots_txt('Sitemap: %s/pages.txt\nSitemap: %s/broken.xml\n'
                                           % (origin, origin))
    site.pages['/pages.txt'] = {'content_type': 'text/plain',
                                'body': '%s/a\n\n%s/b\n' % (origin, origin)}
    status, report, err = yield wait_for(start_crawl(origin + '/', '--sitemaps',
                                                     '--link-check'))
    assert status == 1, err
    assert '/a' in server.requests and '/b' in server.requests
    errors = report[report.index('Sitemap errors: '):].splitlines()
    assert errors[0] == 'Sitemap errors: 1'
    assert errors[1].startswith('%s/broken.xml SitemapError: bad XML' % origin)
    assert 'Broken links: none' in report


@waits_for_processes
def test_robots_txt_is_fetched_once_for_politeness_and_sitemaps(serve):
    site = Pages({'/': links('/a'), '/a': links('/'), '/b': links('/')})
    server, origin = serve(site)
    for crawl_delay in ('', 'Crawl-delay: 0.01\n'):  # a delay puts the item back once
        site.pages['/robots.txt'] = robots_txt('User-agent: *\n%sSitemap: %s/list.txt\n'
                                               % (crawl_delay, origin))
        site.pages['/list.txt'] = {'content_type': 'text/plain', 'body': origin + '/b\n'}
        del server.requests[:]
        status, report, err = yield wait_for(start_crawl(origin + '/', '--sitemaps'))
        assert status == 0, err
        assert server.requests.count('/robots.txt') == 1, server.requests
        assert sorted(set(server.requests)) == [
            '/', '/a', '/b', '/list.txt', '/robots.txt', '/sitemap.xml']


# -- 11. the demo says what it crawled ---------------------------------------------------------

def test_the_demo_says_what_it_crawled(tmpdir):
    html = str(tmpdir.join('report.html'))
    status, out, err = run(DEMO + ['--demo-seed', '3', '--report', html])
    assert status == 0, err
    # What was crawled opens the report, before its numbers; what to do next ends it.
    lines = out.splitlines()
    assert lines[0].startswith('Crawled the demo site: 12 generated pages (seed 3), served on '
                               'http://127.0.0.1:')
    assert lines[0].endswith('by this process (no network used).')
    assert lines[1].startswith('Finished ')
    assert lines[-1] == ('To check your own site: tinycrawl https://example.org/ --link-check '
                         '--report report.html')
    with io.open(html, encoding='utf-8') as page:
        text = page.read()
    assert '<title>Crawl report: the demo site: 12 generated pages (seed 3)</title>' in text
    assert '<h1>Crawl report: the demo site: 12 generated pages (seed 3)</h1>' in text


# -- the README's "check your own site" recipe, and its screenshot -------------------------------

README = os.path.join(PACKAGE_ROOT, 'README.rst')
SCREENSHOT = os.path.join(PACKAGE_ROOT, 'docs', 'check-my-site.png')
CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
                  '--no-first-run', '--disable-background-networking',
                  '--disable-component-update', '--disable-sync', '--hide-scrollbars']


def recipe_arguments():
    """The arguments of the README's one command to check a site."""
    with io.open(README, encoding='utf-8') as readme:
        text = readme.read()
    section = text[text.index('Check your own site'):text.index('Quick start')]
    commands = [line.split()[1:] for line in section.splitlines()
                if line.strip().startswith('tinycrawl https://')]
    assert len(commands) == 1, commands
    return commands[0]


def png_size(path):
    """(width, height) of the PNG at `path`, read from its IHDR chunk."""
    with io.open(path, 'rb') as image:
        head = image.read(24)
    assert head[:8] == b'\x89PNG\r\n\x1a\n' and head[12:16] == b'IHDR'
    return struct.unpack('>II', head[16:24])


@pytest.mark.skipif(CHROMIUM is None, reason='chromium is not installed (apt-get install '
                    'chromium)')
@waits_for_processes
def test_the_readme_recipe_checks_a_site_and_its_report_is_the_screenshot(serve, tmpdir):
    server, origin = serve(Site(seed=0, pages=30))
    html = str(tmpdir.join('report.html'))
    arguments = [origin + '/' if argument == 'https://example.org/' else
                 html if argument == 'report.html' else argument
                 for argument in recipe_arguments()]
    assert arguments[1:] == ['--link-check', '--report', html]
    status, report, err = yield wait_for(start_crawl(*arguments), timeout=60)
    assert status == 1, err  # the demo site has broken links
    assert 'Broken links: 6\n%s/error/0.html 500\n' % origin in report
    assert '%s/go/loop-a redirect loop\n' % origin in report
    shot = str(tmpdir.join('report.png'))
    status, _, err = yield wait_for(subprocess.Popen(
        [CHROMIUM] + CHROMIUM_FLAGS + ['--user-data-dir=' + str(tmpdir.mkdir('profile')),
                                       '--window-size=1200,2700', '--screenshot=' + shot,
                                       'file://' + html],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE), timeout=120)
    assert status == 0, err
    assert png_size(shot) == (1200, 2700)
    assert os.path.getsize(shot) > 20000  # charts and tables, not a blank page
    if os.environ.get('TINYTORNADO_UPDATE_DOCS') == '1':
        shutil.copy(shot, SCREENSHOT)
    assert png_size(SCREENSHOT) == (1200, 2700)  # the picture the README shows


# -- --check-external -----------------------------------------------------------------------------

class HeadRefusingServer(DemoServer):
    """Answers every HEAD with 405, as some servers do; notes it as 'HEAD path'."""

    def _answer(self, request):
        if request.method != 'HEAD':
            super(HeadRefusingServer, self)._answer(request)
            return
        self.note_request('HEAD ' + request.uri)
        respond(request, Resource(405, [], b'', 0.0))


@waits_for_processes
def test_check_external_fetches_each_out_of_scope_link_once(serve):
    other_site = Pages({'/fine': 'ok', '/moved': {
        'status': 301, 'headers': [('Location', '/gone')]}})
    other, other_origin = serve(other_site)
    other_origin = other_origin.replace('127.0.0.1', 'localhost')  # another host
    outside = [other_origin + path for path in ('/fine', '/missing', '/moved')]
    server, origin = serve(Pages({'/': links('/a', *outside), '/a': links('/', outside[1])}))
    status, report, err = yield wait_for(start_crawl(origin + '/', '--check-external'))
    assert status == 1, err
    section = report[report.index('External links: '):].splitlines()
    assert section == [
        'External links: 3 checked, 2 broken',
        '%s/missing 404' % other_origin,
        '    linked from %s/' % origin,
        '    linked from %s/a' % origin,
        '%s/moved 404' % other_origin,
        '    linked from %s/' % origin]
    # Each once (a HEAD), and the redirect followed; the site is not crawled.
    assert sorted(other.requests) == ['/fine', '/gone', '/missing', '/moved']
    # Without the option, no request leaves the scope.
    del other.requests[:]
    status, report, err = yield wait_for(start_crawl(origin + '/', '--link-check'))
    assert status == 0, err
    assert other.requests == [] and 'External links' not in report
    # A server refusing HEAD is asked again with a GET.
    refusing, refusing_origin = serve(other_site, server_class=HeadRefusingServer)
    refusing_origin = refusing_origin.replace('127.0.0.1', 'localhost')
    server.site.pages['/'] = links(refusing_origin + '/fine', refusing_origin + '/missing')
    status, report, err = yield wait_for(start_crawl(origin + '/', '--check-external'))
    assert status == 1, err
    assert 'External links: 2 checked, 1 broken\n%s/missing 404\n' % refusing_origin in report
    assert sorted(refusing.requests) == ['/fine', '/missing', 'HEAD /fine', 'HEAD /missing']
