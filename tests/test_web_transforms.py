"""Response compression as Tornado 5.1 has it: the ``compress_response`` setting (``gzip``,
its old name), GZipContentEncoding's rules (what is compressed, Vary, the Content-Length),
and OutputTransforms given to the Application."""
from __future__ import absolute_import, division, print_function

import gzip
import io
import os
import shutil
import tempfile
import zlib

from tinytornado import gen
from tinytornado.escape import url_escape
from tinytornado.httpclient import AsyncHTTPClient
from tinytornado.locks import Event
from tinytornado.testing import AsyncHTTPTestCase, gen_test
from tinytornado.web import (
    Application, GZipContentEncoding, OutputTransform, RequestHandler,
)

TEXT = b'compressible text. ' * 200  # 3,800 bytes, over MIN_LENGTH
RAW = {'Accept-Encoding': 'gzip'}  # ask for gzip, but see the bytes as sent


def gunzip(data):
    return gzip.GzipFile(fileobj=io.BytesIO(data)).read()


class TextHandler(RequestHandler):
    def get(self):
        self.set_header('Content-Type', self.get_argument('type', 'text/plain'))
        if self.get_argument('encoding', None):
            self.set_header('Content-Encoding', self.get_argument('encoding'))
        for vary in self.get_arguments('vary'):
            self.add_header('Vary', vary)
        self.write(TEXT[:int(self.get_argument('size', len(TEXT)))])

    head = get


class StreamHandler(RequestHandler):
    """Sends its body in two flushes, the second only once the test has read the first."""
    first_read = None

    @gen.coroutine
    def get(self):
        self.write(b'first piece ' * 10)
        yield self.flush()
        yield StreamHandler.first_read.wait()
        self.write(b'second piece ' * 10)


class NoContentHandler(RequestHandler):
    def get(self):
        self.set_status(304)


class CompressionTest(AsyncHTTPTestCase):
    settings = {'compress_response': True}

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix='tt-gzip-')
        with open(os.path.join(self.root, 'page.html'), 'wb') as f:
            f.write(TEXT)
        StreamHandler.first_read = Event()
        super(CompressionTest, self).setUp()

    def tearDown(self):
        super(CompressionTest, self).tearDown()
        shutil.rmtree(self.root)

    def get_app(self):
        return Application([('/text', TextHandler), ('/stream', StreamHandler),
                            ('/304', NoContentHandler)],
                           static_path=self.root, **self.settings)

    def test_a_long_text_response_is_gzipped_with_its_length(self):
        response = self.fetch('/text', headers=RAW, decompress_response=False)
        self.assertEqual(response.headers['Content-Encoding'], 'gzip')
        self.assertEqual(response.headers['Vary'], 'Accept-Encoding')
        self.assertEqual(int(response.headers['Content-Length']), len(response.body))
        self.assertLess(len(response.body), len(TEXT) // 10)
        self.assertEqual(gunzip(response.body), TEXT)

    def test_the_client_decodes_it(self):
        response = self.fetch('/text')
        self.assertEqual(response.body, TEXT)
        self.assertEqual(response.headers['X-Consumed-Content-Encoding'], 'gzip')

    def test_not_gzipped_unless_asked_for_but_vary_all_the_same(self):
        response = self.fetch('/text', decompress_response=False)
        self.assertNotIn('Content-Encoding', response.headers)
        self.assertEqual(response.headers['Vary'], 'Accept-Encoding')
        self.assertEqual(response.body, TEXT)

    def test_a_short_body_is_left_alone(self):
        size = GZipContentEncoding.MIN_LENGTH - 1
        response = self.fetch('/text?size=%d' % size, headers=RAW, decompress_response=False)
        self.assertNotIn('Content-Encoding', response.headers)
        self.assertEqual(response.body, TEXT[:size])
        response = self.fetch('/text?size=%d' % (size + 1), headers=RAW,
                              decompress_response=False)
        self.assertEqual(response.headers['Content-Encoding'], 'gzip')

    def test_only_compressible_types(self):
        for content_type, compressed in [('image/png', False), ('application/json', True),
                                         ('text/html; charset=UTF-8', True),
                                         ('application/octet-stream', False)]:
            response = self.fetch('/text?type=' + url_escape(content_type), headers=RAW,
                                  decompress_response=False)
            self.assertEqual(response.headers.get('Content-Encoding') == 'gzip', compressed,
                             content_type)
            self.assertEqual(gunzip(response.body) if compressed else response.body, TEXT)

    def test_an_encoded_body_is_not_encoded_again(self):
        response = self.fetch('/text?encoding=br', headers=RAW, decompress_response=False)
        self.assertEqual(response.headers['Content-Encoding'], 'br')
        self.assertEqual(response.body, TEXT)

    def test_vary_keeps_the_handlers_values(self):
        response = self.fetch('/text?vary=Accept-Language&vary=Cookie', headers=RAW,
                              decompress_response=False)
        self.assertEqual([value.strip() for value in response.headers['Vary'].split(',')],
                         ['Accept-Language', 'Cookie', 'Accept-Encoding'])

    def test_head_says_what_get_would(self):
        get = self.fetch('/text', headers=RAW, decompress_response=False)
        head = self.fetch('/text', method='HEAD', headers=RAW, decompress_response=False)
        self.assertEqual(head.body, b'')
        self.assertEqual(head.headers['Content-Encoding'], 'gzip')
        self.assertEqual(head.headers['Content-Length'], get.headers['Content-Length'])

    def test_a_304_has_vary_and_no_encoding(self):
        response = self.fetch('/304', headers=RAW, decompress_response=False)
        self.assertEqual(response.code, 304)
        self.assertEqual(response.headers['Vary'], 'Accept-Encoding')
        self.assertNotIn('Content-Encoding', response.headers)

    def test_a_static_file_is_gzipped_chunked(self):
        response = self.fetch('/static/page.html', headers=RAW, decompress_response=False)
        self.assertEqual(response.headers['Content-Encoding'], 'gzip')
        self.assertNotIn('Content-Length', response.headers)
        self.assertEqual(response.headers['Transfer-Encoding'], 'chunked')
        self.assertEqual(gunzip(response.body), TEXT)

    @gen_test
    def test_each_flush_can_be_decoded_as_it_comes(self):
        # A streamed response must not wait for the end to be readable: each piece is
        # sync-flushed, so the client decodes the first before the second is written.
        decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
        decoded = []

        def on_chunk(chunk):
            decoded.append(decoder.decompress(chunk))
            StreamHandler.first_read.set()
        response = yield AsyncHTTPClient().fetch(
            self.get_url('/stream'), headers=RAW, decompress_response=False,
            streaming_callback=on_chunk)
        self.assertEqual(response.headers['Content-Encoding'], 'gzip')
        self.assertEqual(decoded[0], b'first piece ' * 10)
        self.assertEqual(b''.join(decoded), b'first piece ' * 10 + b'second piece ' * 10)


class GzipSettingTest(CompressionTest):
    """`gzip`, the setting's name before Tornado 4.0, does the same."""
    settings = {'gzip': True}


class UpperCaseTransform(OutputTransform):
    def transform_first_chunk(self, status_code, headers, chunk, finishing):
        headers['X-Transformed'] = 'yes'
        return status_code, headers, chunk.upper()

    def transform_chunk(self, chunk, finishing):
        return chunk.upper()


class TransformsTest(AsyncHTTPTestCase):
    def get_app(self):
        return Application([('/text', TextHandler), ('/stream', StreamHandler)],
                           transforms=[UpperCaseTransform], compress_response=True)

    def setUp(self):
        StreamHandler.first_read = Event()
        StreamHandler.first_read.set()
        super(TransformsTest, self).setUp()

    def test_given_transforms_replace_the_default(self):
        response = self.fetch('/text?size=20', headers=RAW, decompress_response=False)
        self.assertEqual(response.body, TEXT[:20].upper())
        self.assertEqual(response.headers['X-Transformed'], 'yes')
        self.assertNotIn('Content-Encoding', response.headers)

    def test_later_pieces_are_transformed_too(self):
        response = self.fetch('/stream')
        self.assertEqual(response.body, (b'first piece ' * 10 + b'second piece ' * 10).upper())

    def test_add_transform_runs_after_the_others(self):
        self._app.add_transform(GZipContentEncoding)
        response = self.fetch('/text', headers=RAW, decompress_response=False)
        self.assertEqual(response.headers['X-Transformed'], 'yes')
        self.assertEqual(gunzip(response.body), TEXT.upper())


def test_no_transforms_by_default():
    assert Application([]).transforms == []
    assert Application([], compress_response=True).transforms == [GZipContentEncoding]
    assert Application([], gzip=True, transforms=[]).transforms == []
