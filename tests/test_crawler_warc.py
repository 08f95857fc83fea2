"""The crawl's WARC archive (--warc): records as on the wire, read back with warcio.

A `WireServer` on the test's loop answers each path with canned bytes, written in pieces,
and keeps every byte it read and wrote per request: each request record must hold exactly
what it read, each response record exactly what it wrote; warcio's own tools (check,
index, recompress) must accept the file.
"""
from __future__ import absolute_import, division, print_function

import gzip
import io
import os
import subprocess
import sys

import pytest
from warcio.archiveiterator import ArchiveIterator

from crawler_sites import UNTHROTTLED
from tinytornado import gen
from tinytornado.crawler.application.cli import main
from tinytornado.crawler.engine import Crawler
from tinytornado.iostream import StreamClosedError
from tinytornado.tcpserver import TCPServer
from tinytornado.testing import bind_unused_port


def html(*hrefs):
    return ''.join('<a href="%s">link</a>' % href for href in hrefs).encode('ascii')


def plain(body, status='200 OK', content_type='text/html', extra=b''):
    return [b'HTTP/1.1 ' + status.encode('ascii') + b'\r\nContent-Type: ' +
            content_type.encode('ascii') + b'\r\nContent-Length: %d\r\n' % len(body) + extra +
            b'\r\n', body]


def chunked(*chunks):
    pieces = [b'HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n']
    pieces.extend(b'%x\r\n%s\r\n' % (len(chunk), chunk) for chunk in chunks)
    return pieces + [b'0\r\n\r\n']


def gzipped(body):
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode='wb', mtime=0) as out:
        out.write(body)
    return plain(buffer.getvalue(), extra=b'Content-Encoding: gzip\r\n')


SITE = {
    '/robots.txt': plain(b'User-agent: *\nDisallow: /private\n', content_type='text/plain'),
    '/': plain(html('/chunked', '/gzip', '/redirect', '/missing')),
    '/chunked': chunked(b'<a href="/in-chunks">', b'a link</a>', b' and more'),
    '/gzip': gzipped(html('/from-gzip') * 20),
    '/redirect': plain(b'', status='302 Found', extra=b'Location: /target\r\n'),
    '/target': plain(html()),
    '/in-chunks': plain(html()),
    '/from-gzip': plain(html()),
    '/missing': plain(b'no such page', status='404 Not Found'),
}


class WireServer(TCPServer):
    """Answers each path with its pieces of bytes (a list, or a function of the stream
    that writes them itself); `exchanges` lists (path, bytes read, bytes written)."""

    def __init__(self, site):
        super(WireServer, self).__init__()
        self.site = site
        self.exchanges = []
        sock, self.port = bind_unused_port()
        self.add_socket(sock)

    def url(self, path='/'):
        return 'http://127.0.0.1:%d%s' % (self.port, path)

    @gen.coroutine
    def handle_stream(self, stream, address):
        try:
            while True:
                head = yield stream.read_until(b'\r\n\r\n')
                path = head.split(b' ')[1].decode('ascii')
                pieces = self.site.get(path) or plain(b'?', status='404 Not Found')
                if callable(pieces):
                    written = yield pieces(stream)
                else:
                    for piece in pieces:  # each its own write: the client reads in pieces
                        yield stream.write(piece)
                    written = b''.join(pieces)
                self.exchanges.append((path, head, written))
        except StreamClosedError:
            pass


@pytest.fixture
def wire_server(io_loop):
    made = []

    def make(site):
        made.append(WireServer(site))
        return made[-1]
    yield make
    for server in made:
        server.stop()


def read_records(path):
    """[(type, headers dict, block bytes)] of the file, in order."""
    records = []
    with io.open(path, 'rb') as archive:
        for record in ArchiveIterator(archive, no_record_parse=True):
            records.append((record.rec_type, dict(record.rec_headers.headers),
                            record.raw_stream.read()))
    return records


def exchanges_in(records):
    """{(uri, request bytes): response bytes or None}, with the pairs' links checked."""
    by_id = dict((headers['WARC-Record-ID'], (kind, headers, block))
                 for kind, headers, block in records)
    found = {}
    for kind, headers, block in records:
        if kind != 'request':
            continue
        response = by_id.get(headers.get('WARC-Concurrent-To'))
        if response is not None:
            _, response_headers, response_block = response
            assert response_headers['WARC-Concurrent-To'] == headers['WARC-Record-ID']
            for name in ('WARC-Target-URI', 'WARC-Date', 'WARC-IP-Address'):
                assert response_headers[name] == headers[name]
        assert headers['WARC-IP-Address'] == '127.0.0.1'
        found[headers['WARC-Target-URI'], block] = response and response[2]
    return found


def warcio_tool(*args):
    """Run warcio's command line (as a module of this interpreter): its output."""
    process = subprocess.Popen([sys.executable, '-m', 'warcio.cli'] + list(args),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output = process.communicate()[0].decode('utf-8', 'replace')
    assert process.returncode == 0, output
    return output


def test_every_exchange_is_archived_as_it_went_over_the_wire(wire_server, tmpdir):
    server = wire_server(SITE)
    path = str(tmpdir.join('crawl.warc.gz'))
    yield Crawler([server.url()], warc=path, max_tasks=3, **UNTHROTTLED).crawl()
    records = read_records(path)
    assert records[0][0] == 'warcinfo'
    assert records[0][1]['WARC-Filename'] == 'crawl.warc.gz'
    assert b'robots: obey' in records[0][2]
    assert [kind for kind, _, _ in records[1:]] == ['request', 'response'] * 9
    assert all(headers.get('WARC-Truncated') is None for _, headers, _ in records)
    expected = dict(((server.url(path), read), written)
                    for path, read, written in server.exchanges)
    assert exchanges_in(records) == expected
    assert sorted(path for path, _, _ in server.exchanges) == sorted(SITE)


def test_warcio_checks_indexes_and_recompresses_the_file(wire_server, tmpdir):
    server = wire_server(SITE)
    path = str(tmpdir.join('crawl.warc.gz'))
    yield Crawler([server.url()], warc=path, **UNTHROTTLED).crawl()
    checked = warcio_tool('check', '-v', path)
    assert checked.count('digest pass') == 1 + 2 * len(SITE)
    index = warcio_tool('index', '-f', 'warc-type,warc-target-uri,http:status', path)
    assert '"http:status": "302"' in index and '"http:status": "404"' in index
    recompressed = str(tmpdir.join('again.warc.gz'))
    warcio_tool('recompress', path, recompressed)
    assert read_records(recompressed) == read_records(path)


def test_a_response_cut_short_is_kept_marked_truncated(wire_server, tmpdir):
    @gen.coroutine
    def hang_up(stream):
        written = b'HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100\r\n\r\nhalf'
        yield stream.write(written)
        stream.close()
        raise gen.Return(written)
    @gen.coroutine
    def bad_chunk(stream):  # the client's error is also an HTTPStreamClosedError
        written = (b'HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n'
                   b'Transfer-Encoding: chunked\r\n\r\nzz\r\n')
        yield stream.write(written)
        raise gen.Return(written)
    big = plain(b'x' * 5000)
    server = wire_server({'/robots.txt': plain(b'', status='404 Not Found'),
                          '/': plain(html('/cut', '/big', '/bad')), '/cut': hang_up,
                          '/big': big, '/bad': bad_chunk})
    path = str(tmpdir.join('crawl.warc.gz'))
    yield Crawler([server.url()], warc=path, max_body_size=1000, max_tries=1,
                  **UNTHROTTLED).crawl()
    records = read_records(path)
    responses = dict((headers['WARC-Target-URI'], (headers.get('WARC-Truncated'), block))
                     for kind, headers, block in records if kind == 'response')
    assert responses[server.url('/cut')] == ('disconnect', written_for(server, '/cut'))
    assert responses[server.url('/bad')] == ('unspecified', written_for(server, '/bad'))
    truncated, block = responses[server.url('/big')]
    assert truncated == 'length' and b''.join(big).startswith(block) and len(block) > 1000
    assert responses[server.url('/')] == (None, written_for(server, '/'))
    warcio_tool('check', path)


def written_for(server, path):
    """What the server wrote for its one request of `path`."""
    [written] = [written for asked, _, written in server.exchanges if asked == path]
    return written


def test_the_command_line_writes_the_archive(tmpdir):
    path = str(tmpdir.join('demo.warc.gz'))
    assert main(['--demo', '--demo-pages', '5', '--no-progress', '--warc', path]) == 0
    records = read_records(path)
    uris = set(headers.get('WARC-Target-URI') for _, headers, _ in records[1:])
    assert any(uri.endswith('/robots.txt') for uri in uris)
    assert len([kind for kind, _, _ in records if kind == 'response']) == len(uris)


def test_an_unwritable_warc_path_is_refused_before_the_crawl(tmpdir):
    with pytest.raises(ValueError, match='cannot write the WARC file'):
        Crawler(['http://127.0.0.1:1/'], warc=str(tmpdir))  # a directory
    assert os.listdir(str(tmpdir)) == []


def test_a_resumed_crawl_adds_to_its_archive(wire_server, tmpdir):
    server = wire_server({'/robots.txt': plain(b'', status='404 Not Found'),
                          '/': plain(html())})
    path = str(tmpdir.join('crawl.warc.gz'))
    state = str(tmpdir.join('state.sqlite'))
    yield Crawler([server.url()], warc=path, state=state, **UNTHROTTLED).crawl()
    before = read_records(path)
    yield Crawler([], warc=path, state=state, resume=True).crawl()
    after = read_records(path)
    # The first run's records, then the second's warcinfo: nothing was left to fetch.
    assert after[:len(before)] == before
    assert [kind for kind, _, _ in after[len(before):]] == ['warcinfo']
    warcio_tool('check', path)
