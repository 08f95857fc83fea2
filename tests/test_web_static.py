"""StaticFileHandler and static_url as Tornado 5.1 has them: ETag, Last-Modified and the
304s, byte ranges, the ?v= hash and its cache time, directories, and paths outside root."""
from __future__ import absolute_import, division, print_function

import hashlib
import os
import shutil
import tempfile

import pytest

from tinytornado import _staticfiles
from tinytornado.httputil import format_timestamp
from tinytornado.log import gen_log
from tinytornado.testing import AsyncHTTPTestCase, ExpectLog
from tinytornado.web import Application, RequestHandler, StaticFileHandler

CONTENT = b''.join(b'%04d\n' % i for i in range(1000))  # 5,000 bytes


class UrlHandler(RequestHandler):
    def get(self, path):
        self.write(self.static_url(path, include_host=self.get_argument('host', None) == '1'))


class StaticTest(AsyncHTTPTestCase):
    settings = {}

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix='tt-static-')
        os.mkdir(os.path.join(self.root, 'dir'))
        os.mkdir(os.path.join(self.root, 'bare'))
        for name, data in [('data.txt', CONTENT), ('dir/index.html', b'<p>index</p>'),
                           ('robots.txt', b'User-agent: *'), ('img.png', b'\x89PNG')]:
            with open(os.path.join(self.root, name), 'wb') as f:
                f.write(data)
        with open(os.path.join(os.path.dirname(self.root), 'tt-outside.txt'), 'wb') as f:
            f.write(b'secret')
        StaticFileHandler.reset()
        super(StaticTest, self).setUp()

    def tearDown(self):
        super(StaticTest, self).tearDown()
        shutil.rmtree(self.root)
        os.remove(os.path.join(os.path.dirname(self.root), 'tt-outside.txt'))

    def get_app(self):
        return Application([
            (r'/url/(.*)', UrlHandler),
            (r'/files/(.*)', StaticFileHandler, {'path': self.root,
                                                 'default_filename': 'index.html'}),
        ], static_path=self.root, **self.settings)

    def test_a_file_with_its_headers(self):
        response = self.fetch('/static/data.txt')
        self.assertEqual(response.code, 200)
        self.assertEqual(response.body, CONTENT)
        self.assertEqual(response.headers['Content-Type'], 'text/plain')
        self.assertEqual(response.headers['Accept-Ranges'], 'bytes')
        self.assertEqual(response.headers['Etag'],
                         '"%s"' % hashlib.md5(CONTENT).hexdigest())
        mtime = int(os.stat(os.path.join(self.root, 'data.txt')).st_mtime)
        self.assertEqual(response.headers['Last-Modified'], format_timestamp(mtime))
        self.assertNotIn('Cache-Control', response.headers)
        self.assertEqual(self.fetch('/static/img.png').headers['Content-Type'], 'image/png')

    def test_robots_and_favicon_routes(self):
        self.assertEqual(self.fetch('/robots.txt').body, b'User-agent: *')
        with ExpectLog(gen_log, '.*', required=False):
            self.assertEqual(self.fetch('/favicon.ico').code, 404)

    def test_if_none_match_and_if_modified_since(self):
        first = self.fetch('/static/data.txt')
        etag, modified = first.headers['Etag'], first.headers['Last-Modified']
        response = self.fetch('/static/data.txt', headers={'If-None-Match': etag})
        self.assertEqual((response.code, response.body), (304, b''))
        self.assertNotIn('Content-Length', response.headers)
        self.assertEqual(self.fetch('/static/data.txt',
                                    headers={'If-None-Match': '"x"'}).code, 200)
        self.assertEqual(self.fetch('/static/data.txt',
                                    headers={'If-Modified-Since': modified}).code, 304)
        self.assertEqual(self.fetch('/static/data.txt', headers={
            'If-Modified-Since': format_timestamp(0)}).code, 200)
        # If-None-Match wins over If-Modified-Since, as in 5.1.
        self.assertEqual(self.fetch('/static/data.txt', headers={
            'If-None-Match': '"x"', 'If-Modified-Since': modified}).code, 200)

    def test_ranges(self):
        for header, code, body, content_range in [
                ('bytes=0-9', 206, CONTENT[:10], 'bytes 0-9/5000'),
                ('bytes=4990-', 206, CONTENT[4990:], 'bytes 4990-4999/5000'),
                ('bytes=-5', 206, CONTENT[-5:], 'bytes 4995-4999/5000'),
                ('bytes=100-99999', 206, CONTENT[100:], 'bytes 100-4999/5000'),
                ('bytes=0-', 200, CONTENT, None),
                ('bytes=0-1,5-6', 200, CONTENT, None),  # several ranges: the whole file
                ('items=0-1', 200, CONTENT, None)]:
            response = self.fetch('/static/data.txt', headers={'Range': header})
            self.assertEqual((response.code, response.body), (code, body), header)
            self.assertEqual(response.headers.get('Content-Range'), content_range, header)
            self.assertEqual(response.headers['Content-Length'], str(len(body)))
        response = self.fetch('/static/data.txt', headers={'Range': 'bytes=5000-'})
        self.assertEqual(response.code, 416)
        self.assertEqual(response.headers['Content-Range'], 'bytes */5000')

    def test_head(self):
        response = self.fetch('/static/data.txt', method='HEAD')
        self.assertEqual((response.code, response.body), (200, b''))
        self.assertEqual(response.headers['Content-Length'], '5000')

    def test_static_url_and_its_cache_time(self):
        version = hashlib.md5(CONTENT).hexdigest()
        url = self.fetch('/url/data.txt').body.decode()
        self.assertEqual(url, '/static/data.txt?v=' + version)
        self.assertEqual(self.fetch('/url/data.txt?host=1').body.decode(),
                         'http://127.0.0.1:%d%s' % (self.get_http_port(), url))
        response = self.fetch(url)
        self.assertEqual(response.headers['Cache-Control'], 'max-age=315360000')
        self.assertIn('Expires', response.headers)
        with ExpectLog(gen_log, 'Could not open static file'):
            self.assertEqual(self.fetch('/url/absent.txt').body, b'/static/absent.txt')

    def test_directories_and_missing_files(self):
        response = self.fetch('/files/dir', follow_redirects=False)
        self.assertEqual((response.code, response.headers['Location']), (301, '/files/dir/'))
        self.assertEqual(self.fetch('/files/dir/').body, b'<p>index</p>')
        with ExpectLog(gen_log, '.*', required=False):
            self.assertEqual(self.fetch('/static/dir').code, 403)  # no default_filename
            self.assertEqual(self.fetch('/static/absent.txt').code, 404)
            self.assertEqual(self.fetch('/files/bare/').code, 404)

    def test_a_path_outside_root_is_refused(self):
        with ExpectLog(gen_log, '.*is not in root static directory'):
            response = self.fetch('/static/..%2Ftt-outside.txt')
        self.assertEqual(response.code, 403)
        self.assertNotIn(b'secret', response.body)


    def test_one_stat_per_request(self):
        path = os.path.join(self.root, 'data.txt')
        stats = []
        real_stat = os.stat

        def counting_stat(name, *args, **kwargs):
            if name == path:
                stats.append(name)
            return real_stat(name, *args, **kwargs)
        self.fetch('/static/data.txt')  # the hash is computed once, without a stat
        os.stat = counting_stat
        try:
            response = self.fetch('/static/data.txt')
        finally:
            os.stat = real_stat
        self.assertEqual((response.code, response.body), (200, CONTENT))
        self.assertEqual(len(stats), 1)

    def test_an_override_that_validates_another_path_is_stated_anew(self):
        robots = os.path.join(self.root, 'robots.txt')

        class Elsewhere(StaticFileHandler):
            def validate_absolute_path(self, root, absolute_path):
                super(Elsewhere, self).validate_absolute_path(root, absolute_path)
                return robots

        self._app.add_handlers('.*', [(r'/elsewhere/(.*)', Elsewhere, {'path': self.root})])
        response = self.fetch('/elsewhere/data.txt')
        self.assertEqual((response.code, response.body), (200, b'User-agent: *'))
        self.assertEqual(response.headers['Content-Length'], str(len(b'User-agent: *')))


class StaticDebugTest(StaticTest):
    settings = {'debug': True}

    def test_the_hash_follows_the_file_without_the_cache(self):
        first = self.fetch('/url/data.txt').body.decode()
        self.assertEqual(first, '/static/data.txt?v=' + hashlib.md5(CONTENT).hexdigest())
        with open(os.path.join(self.root, 'data.txt'), 'wb') as f:
            f.write(b'changed')
        self.assertEqual(self.fetch('/url/data.txt').body.decode(),
                         '/static/data.txt?v=' + hashlib.md5(b'changed').hexdigest())


def test_static_url_needs_static_path():
    class Handler(RequestHandler):
        pass
    handler = Handler.__new__(Handler)
    handler.application = Application([])
    with pytest.raises(Exception) as caught:
        handler.static_url('a.css')
    assert "You must define the 'static_path' setting" in str(caught.value)


@pytest.mark.parametrize('header, expected', [
    ('bytes=0-0', (0, 1)), ('bytes=5-', (5, None)), ('bytes=-3', (-3, None)),
    ('bytes=-0', (None, 0)), ('bytes=9-3', None), ('bytes=a-b', None), ('bytes=', None),
    (' bytes = 1-2 ', (1, 3)),
])
def test_parse_request_range(header, expected):
    assert _staticfiles.parse_request_range(header) == expected


def test_read_file_in_pieces(tmpdir):
    path = tmpdir.join('big')
    path.write_binary(b'x' * (200 * 1024))
    pieces = list(_staticfiles.read_file(str(path)))
    assert [len(p) for p in pieces] == [65536, 65536, 65536, 8192]
    assert b''.join(_staticfiles.read_file(str(path), 65530, 65540)) == b'x' * 10
    path.write_binary(b'x' * 65536)  # a whole piece: read on, to find the end
    assert [len(p) for p in _staticfiles.read_file(str(path))] == [65536]
