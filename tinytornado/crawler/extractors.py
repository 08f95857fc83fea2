"""What a fetched URL leads to: link extractors, chosen by the response.

`Extractors` asks each extractor in turn whether it ``wants`` a response, and the first
that does ``extract``s from it. The crawl's are given to it (``Crawler(extractors=[...])``)
or `default_extractors`: a redirect's target (`RedirectTarget`), the pages and sitemaps a
sitemap lists (`SitemapEntries`: items of negative depth, see sitemaps.py), the links of an
HTML page (`HtmlLinks`); a response none wants leads nowhere (`no_links`).

An extractor is any object with two methods:

- ``wants(item, fetched)``: True if it reads `fetched` (a `fetch.Fetched` with a status),
  the response of `item` (an `engine.WorkItem`);
- ``extract(item, fetched, admission, new_items)``: the `Extraction` of it; it queues what
  it found through the crawl's `Admission` into the list `new_items` (a page's links:
  ``admission.follow_links(item, links, new_items)``).

An extractor that raises makes its exception the URL's statistic's, and the crawl goes on.
`Admission` tests the seen set first (most links were seen before, and it is the cheap
test), then the scope, then the crawl's budget.
"""
from __future__ import absolute_import, division, print_function

import collections

from .fetch import describe_exception
from .links import (content_type_charset, decode_html, extract_links,
                    extract_links_as_written, is_html_content_type)
from .sitemaps import (MAX_SITEMAPS, SitemapError, is_sitemap_depth, read_sitemap,
                       sitemap_entries, too_deep)
from .urls import url_host, urljoin

__all__ = ['Extraction', 'Admission', 'Extractors', 'RedirectTarget', 'SitemapEntries',
           'HtmlLinks', 'default_extractors', 'checked_extractors', 'no_links',
           'REDIRECT_STATUSES']

REDIRECT_STATUSES = frozenset([300, 301, 302, 303, 307, 308])

# What a response led to: `next_url` (a redirect's), the `encoding` of its text,
# the `exception` of its statistic, and `num_urls`, the URLs it named.
Extraction = collections.namedtuple('Extraction', 'next_url encoding exception num_urls')


class Admission(object):
    """How extractors queue URLs: the crawl's seen set, scope and admit step.

    Args:
        seen_urls: the URLs queued so far (``in``).
        scope: a `scope.Scope`.
        admit: called with (url, depth, max_redirect, new_items) for a URL not seen and
            in scope; it adds a work item to `new_items` if the crawl's budget allows.
        max_redirect: the redirect budget of a URL found on a page.
        on_links: called with (url, the URLs it names that the crawl took), or None.
        on_written_links: called with (url, its http(s) hrefs as `links.WrittenLink`s)
            for an HTML page, before `on_links`, or None.
        on_external_links: called with (url, the URLs out of scope it links to) for a
            page with some, or None.
        max_depth: follow at most this many links from a root (None: no limit).
    """

    def __init__(self, seen_urls, scope, admit, max_redirect, on_links,
                 on_written_links=None, on_external_links=None, max_depth=None):
        self.on_written_links = on_written_links
        self.on_external_links = on_external_links
        self.seen_urls = seen_urls
        self.scope = scope
        self.admit = admit
        self.max_redirect = max_redirect
        self.on_links = on_links
        self.max_depth = max_depth

    def report_links(self, url, urls):
        # Every sighting, not only the first: a link checker names all referrers.
        if self.on_links is not None:
            self.on_links(url, [link for link in urls if link in self.seen_urls])

    def follow_links(self, item, links, new_items):
        """Queue into `new_items` the `links` (absolute, normalised URLs) of `item`'s page
        not seen and in scope, one level deeper, up to `max_depth`; tell `on_links` and
        `on_external_links` of them. Returns how many links there were."""
        depth = item.depth + 1
        if self.max_depth is None or depth <= self.max_depth:
            seen_urls, allows, admit = self.seen_urls, self.scope.allows, self.admit
            max_redirect = self.max_redirect
            for link in links:
                if link not in seen_urls and allows(link):
                    admit(link, depth, max_redirect, new_items)
        self.report_links(item.url, links)
        on_external = self.on_external_links
        if on_external is not None:
            allows = self.scope.allows
            external = [link for link in links if not allows(link)]
            if external:
                on_external(item.url, external)
        return len(links)


class RedirectTarget(object):
    """A redirect's Location: recorded, and queued with one redirect less to go."""

    def wants(self, item, fetched):
        # Only a redirect's Location counts: the others are not looked up.
        return fetched.status in REDIRECT_STATUSES and bool(fetched.headers.get('Location'))

    def extract(self, item, fetched, admission, new_items):
        location = fetched.headers.get('Location')
        try:
            next_url = urljoin(item.url, location)
        except ValueError:  # not http(s): recorded, never followed
            return Extraction(location, None, fetched.exception, 0)
        if (item.max_redirect > 0 and next_url not in admission.seen_urls and
                admission.scope.allows(next_url)):
            admission.admit(next_url, item.depth, item.max_redirect - 1, new_items)
        return Extraction(next_url, None, fetched.exception, 1)


class SitemapEntries(object):
    """A sitemap (or a robots.txt read for its sitemaps): the pages it lists in scope,
    as roots, and the sitemaps it lists on hosts in scope, at most `MAX_SITEMAPS`.

    A sitemap that cannot be read is its statistic's exception ('SitemapError: ...'), a
    missing one its status: either is counted in the report, and the crawl goes on.
    """

    def __init__(self):
        self.sitemaps_left = MAX_SITEMAPS  # child sitemaps this crawl may still queue

    def wants(self, item, fetched):
        return is_sitemap_depth(item.depth)

    def extract(self, item, fetched, admission, new_items):
        if fetched.exception is not None or not 200 <= fetched.status < 300:
            return Extraction(None, None, fetched.exception, 0)  # a body over the cap, say
        try:
            sitemap = read_sitemap(fetched.body, item.depth)
        except SitemapError as e:
            return Extraction(None, None, describe_exception(e), 0)
        entries = sitemap_entries(item.url, item.depth, sitemap)
        for url, depth in entries:
            if url not in admission.seen_urls and self._allowed(admission.scope, url, depth):
                admission.admit(url, depth, admission.max_redirect, new_items)
        admission.report_links(item.url, [url for url, _ in entries])
        return Extraction(None, None, too_deep(item.depth, sitemap),
                          len(sitemap.pages) + len(sitemap.sitemaps))

    def _allowed(self, scope, url, depth):
        if not is_sitemap_depth(depth):
            return scope.allows(url)
        # A sitemap file need only be on a host in scope: include/exclude choose pages.
        if self.sitemaps_left <= 0 or not scope.host_allowed(url_host(url)):
            return False
        self.sitemaps_left -= 1
        return True


class HtmlLinks(object):
    """The links of an HTML page (``<frame>`` and ``<iframe>`` too if `frames`)."""

    def __init__(self, frames=False):
        self.frames = frames

    def wants(self, item, fetched):
        return 200 <= fetched.status < 300 and is_html_content_type(fetched.content_type)

    def extract(self, item, fetched, admission, new_items):
        text, encoding = decode_html(fetched.body, fetched.content_type)
        on_written = admission.on_written_links
        if on_written is None:
            links = extract_links(text, item.url, frames=self.frames)
        else:
            links, written = extract_links_as_written(text, item.url, self.frames)
            on_written(item.url, written)
        found = admission.follow_links(item, links, new_items)
        return Extraction(None, encoding, fetched.exception, found)


def default_extractors(frames=False):
    """A crawl's extractors unless it is given others: redirects, sitemaps, HTML pages
    (``<frame>`` and ``<iframe>`` too if `frames`)."""
    return [RedirectTarget(), SitemapEntries(), HtmlLinks(frames)]


def no_links(fetched):
    """The Extraction of a response no extractor wants: its charset, nothing found."""
    return Extraction(None, content_type_charset(fetched.content_type), fetched.exception, 0)


def checked_extractors(extractors):
    """`extractors` as a list, each checked to have the two methods of an extractor.

    Raises:
        TypeError: one lacks ``wants`` or ``extract``.
    """
    extractors = list(extractors)
    for extractor in extractors:
        if not (callable(getattr(extractor, 'wants', None)) and
                callable(getattr(extractor, 'extract', None))):
            raise TypeError('extractors: %r has no wants(item, fetched) or '
                            'extract(item, fetched, admission, new_items) method'
                            % (extractor,))
    return extractors


class Extractors(object):
    """The first of `extractors` that wants a response extracts from it, and queues what
    it found through `admission`."""

    def __init__(self, extractors, admission):
        self.extractors = extractors
        self.admission = admission

    def extract(self, item, fetched, new_items):
        """The `Extraction` of `fetched`, the response of `item` (which has a status);
        what it leads to is admitted into `new_items`."""
        for extractor in self.extractors:
            if extractor.wants(item, fetched):
                return extractor.extract(item, fetched, self.admission, new_items)
        return no_links(fetched)
