"""Sitemaps (sitemaps.org 0.9): the pages and the child sitemaps a sitemap lists, read safely.

With ``sitemaps=True`` a crawl queues, next to its roots, each root site's robots.txt (for its
``Sitemap:`` lines) and ``/sitemap.xml``. They are ordinary work items, so they go through
the crawl's fetcher, its per-host delay and cap, robots.txt and retries; what marks them is a
negative depth, which redirects and the journal keep like any depth:

- ``ROBOTS_DEPTH`` (-1): a robots.txt, read only for its ``Sitemap:`` lines;
- ``SITEMAP_DEPTH`` (-2): ``/sitemap.xml`` and the sitemaps robots.txt lists;
- one less for each sitemap index level below, down to ``DEEPEST_SITEMAP_DEPTH``: an index
  deeper than that has its sitemaps ignored (counted in its ``num_urls``, not queued), and
  says so in its statistic's exception (``SitemapTooDeep``, which the report counts).

A sitemap's pages are queued at depth 0, as roots, so ``max_depth`` counts links from them.

A body is a urlset or a sitemapindex, in XML, or a text sitemap (one URL a line, UTF-8, as
sitemaps.org allows; told by its first character not being '<'), whole or gzip-compressed
(told by its magic bytes, whatever the URL or Content-Type says). Parsing is streamed
through expat, with the decompressed size capped (``MAX_SITEMAP_SIZE``, the protocol's own
limit) against gzip bombs, and a document type declaration refused outright: with no DTD
there can be no entity to expand, internal (billion laughs) or external (local files,
requests). Elements count in the sitemap namespace or in none, so an ``<image:loc>`` is not
taken for a page.
"""
from __future__ import absolute_import, division, print_function

import collections
import zlib
from xml.parsers import expat

from .robots import RobotsRules, robots_url
from .urls import urljoin

__all__ = ['Sitemap', 'SitemapError', 'parse_sitemap', 'read_sitemap', 'sitemap_sources',
           'sitemap_entries', 'too_deep', 'is_sitemap_depth', 'ROBOTS_DEPTH', 'SITEMAP_DEPTH',
           'DEEPEST_SITEMAP_DEPTH', 'MAX_SITEMAP_SIZE', 'MAX_SITEMAPS']

ROBOTS_DEPTH = -1
SITEMAP_DEPTH = -2
MAX_INDEX_LEVELS = 3  # the protocol allows none; some sites nest indexes anyway
DEEPEST_SITEMAP_DEPTH = SITEMAP_DEPTH - MAX_INDEX_LEVELS
MAX_SITEMAP_SIZE = 50 * 1024 * 1024  # sitemaps.org: 50 MB uncompressed at most
MAX_SITEMAPS = 1000  # sitemaps one crawl fetches beyond robots.txt and /sitemap.xml

_GZIP_MAGIC = b'\x1f\x8b'
_PIECE_SIZE = 64 * 1024  # bytes decompressed and parsed at a time
_SITEMAP_NAMESPACES = frozenset([
    '', 'http://www.sitemaps.org/schemas/sitemap/0.9',
    'http://www.google.com/schemas/sitemap/0.84',  # Google's, before sitemaps.org
])
# A document's element -> the element whose <loc> it lists.
_ENTRY = {'urlset': 'url', 'sitemapindex': 'sitemap'}

# What one sitemap lists: `pages` from a urlset, `sitemaps` from an index or a robots.txt;
# each a list of <loc> texts, whitespace stripped, not yet resolved.
Sitemap = collections.namedtuple('Sitemap', 'pages sitemaps')


class SitemapError(Exception):
    """A body that is not a sitemap that can be read safely."""


def is_sitemap_depth(depth):
    """True if a work item of `depth` is a sitemap or a robots.txt read for its sitemaps."""
    return depth < 0


def sitemap_sources(roots):
    """(url, depth) of the robots.txt and /sitemap.xml of each site of the normalised `roots`."""
    sources = []
    for root in roots:
        robots_txt = robots_url(root)
        for source in ((robots_txt, ROBOTS_DEPTH),
                       (robots_txt[:-len('robots.txt')] + 'sitemap.xml', SITEMAP_DEPTH)):
            if source not in sources:
                sources.append(source)
    return sources


def read_sitemap(body, depth, max_size=MAX_SITEMAP_SIZE):
    """The `Sitemap` of the body of a work item of sitemap `depth` (robots.txt or sitemap).

    Raises:
        SitemapError: the body is not a sitemap, or is unsafe or too large to read.
    """
    if depth == ROBOTS_DEPTH:
        return Sitemap([], RobotsRules.parse(body).sitemaps())
    return parse_sitemap(body, max_size)


def sitemap_entries(url, depth, sitemap):
    """(url, depth) of what to queue from `sitemap`, read from `url` at `depth`.

    Pages come at depth 0, child sitemaps one level down (none below the deepest level);
    each is resolved against `url` and normalised, and those that are not http(s) URLs
    are left out.
    """
    entries = [(page, 0) for page in _resolve_all(url, sitemap.pages)]
    if depth - 1 >= DEEPEST_SITEMAP_DEPTH:
        entries.extend((child, depth - 1) for child in _resolve_all(url, sitemap.sitemaps))
    return entries


def too_deep(depth, sitemap):
    """The exception text of a sitemap read at `depth` whose child sitemaps are too deep to
    queue (so that they are counted as left out), or None."""
    if depth - 1 >= DEEPEST_SITEMAP_DEPTH or not sitemap.sitemaps:
        return None
    return 'SitemapTooDeep: its %d sitemaps are left out (indexes are read %d levels down)' % (
        len(sitemap.sitemaps), MAX_INDEX_LEVELS)


def _resolve_all(base, locs):
    urls = []
    for loc in locs:
        try:
            urls.append(urljoin(base, loc))
        except ValueError:
            continue  # not http(s), or invalid: the statistic's num_urls still counts it
    return urls


def parse_sitemap(body, max_size=MAX_SITEMAP_SIZE):
    """The `Sitemap` of a sitemap `body` (bytes), XML or text, gzip-compressed or not.

    Raises:
        SitemapError: bad XML or gzip, a DOCTYPE, a root element other than urlset or
            sitemapindex, a text line that is no http(s) URL, or more than `max_size`
            bytes.
    """
    reader = None
    pieces = _gunzip(body, max_size) if body.startswith(_GZIP_MAGIC) else _plain(body, max_size)
    try:
        for piece in pieces:
            if reader is None:
                # Blank lines before the XML declaration are a common slip of generators.
                piece = piece.lstrip(b' \t\r\n')
                if not piece:
                    continue
                reader = _SitemapReader() if piece.startswith(b'<') else _TextSitemapReader()
            reader.feed(piece)
        if reader is None:  # nothing but blanks: XML's error says so
            reader = _SitemapReader()
        reader.close()
    except expat.ExpatError as e:
        raise SitemapError('bad XML: %s' % e)
    except zlib.error as e:
        raise SitemapError('bad gzip data: %s' % e)
    return reader.sitemap


def _plain(body, max_size):
    if len(body) > max_size:
        raise SitemapError('the sitemap is over %d bytes' % max_size)
    return [body]


def _gunzip(body, max_size):
    """The decompressed pieces of the gzip `body` (its members in turn), `max_size` bytes
    at most, decompressed as they are asked for."""
    size = 0
    data = body
    while data:
        decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
        # A member's end shows as unused_data: past it, CPython leaves the next member in
        # unconsumed_tail too, and would decompress nothing from it forever.
        while data and not decompressor.unused_data:
            piece = decompressor.decompress(data, _PIECE_SIZE)
            data = decompressor.unconsumed_tail
            if not data:
                piece += decompressor.flush()  # no more than the member's window
            size += len(piece)
            if size > max_size:
                raise SitemapError('the sitemap is over %d bytes decompressed' % max_size)
            yield piece
        data = decompressor.unused_data  # the next member, if any


class _TextSitemapReader(object):
    """Collects the URLs of a text sitemap, one a line, fed to it in pieces."""

    def __init__(self):
        self.sitemap = Sitemap([], [])
        self._rest = b''  # the start of a line the next piece ends
        self._line = 0

    def feed(self, data):
        lines = (self._rest + data).split(b'\n')
        self._rest = lines.pop()
        for line in lines:
            self._take(line)

    def close(self):
        self._take(self._rest)

    def _take(self, line):
        self._line += 1
        url = line.strip()
        if not url:
            return
        if not url.lower().startswith((b'http://', b'https://')):
            raise SitemapError('not a sitemap: line %d of the text is not an http(s) URL'
                               % self._line)
        try:
            self.sitemap.pages.append(url.decode('utf-8'))
        except UnicodeDecodeError:
            raise SitemapError('not a sitemap: line %d of the text is not UTF-8' % self._line)


class _SitemapReader(object):
    """Collects the <loc>s of a urlset or a sitemapindex from XML fed to it in pieces."""

    def __init__(self):
        self.sitemap = Sitemap([], [])
        self._path = []  # the local names of the open elements
        self._locs = None  # the list the document's <loc>s go to, once its root is known
        self._text = None  # the character data of the <loc> open, if one is
        parser = self._parser = expat.ParserCreate(namespace_separator=' ')
        parser.StartElementHandler = self._start
        parser.EndElementHandler = self._end
        parser.CharacterDataHandler = self._characters
        parser.StartDoctypeDeclHandler = _refuse_doctype
        parser.EntityDeclHandler = _refuse_doctype
        parser.ExternalEntityRefHandler = _refuse_doctype

    def feed(self, data):
        self._parser.Parse(data, False)

    def close(self):
        self._parser.Parse(b'', True)

    def _start(self, name, attributes):
        local = _local_name(name)
        path = self._path
        if not path:
            if local not in _ENTRY:
                raise SitemapError('not a sitemap: the root element is not a urlset or a '
                                   'sitemapindex')
            self._locs = (self.sitemap.pages if local == 'urlset' else self.sitemap.sitemaps)
        path.append(local)
        if len(path) == 3 and path[1] == _ENTRY[path[0]] and local == 'loc':
            self._text = []

    def _end(self, name):
        if self._text is not None and len(self._path) == 3:
            loc = u''.join(self._text).strip()
            if loc:
                self._locs.append(loc)
            self._text = None
        self._path.pop()

    def _characters(self, data):
        # Entity references and line ends split a text into several calls.
        if self._text is not None and len(self._path) == 3:
            self._text.append(data)


def _local_name(name):
    """'urlset' for expat's 'http://www.sitemaps.org/schemas/sitemap/0.9 urlset'; a name in
    another namespace stays whole, so it matches none of the sitemap's names."""
    namespace, _, local = name.rpartition(' ')
    return local if namespace in _SITEMAP_NAMESPACES else name


def _refuse_doctype(*args):
    raise SitemapError('a sitemap with a DOCTYPE is refused: its entities could be an attack')
