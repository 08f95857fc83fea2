"""What a fetched URL leads to: link extractors, chosen by the response.

`Extractors` asks each extractor in turn whether it ``wants`` a response, and the first
that does ``extract``s from it: a redirect's target (`RedirectTarget`), the pages and
sitemaps a sitemap lists (`SitemapEntries`: items of negative depth, see sitemaps.py), the
links of an HTML page (`HtmlLinks`); a response none wants leads nowhere (`no_links`).
An extractor returns an `Extraction` and queues what it found through the crawl's
`Admission`: the seen set first (most links were seen before, and it is the cheap test),
then the scope, then the crawl's budget.
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
           'HtmlLinks', 'no_links', 'REDIRECT_STATUSES']

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
    """

    def __init__(self, seen_urls, scope, admit, max_redirect, on_links,
                 on_written_links=None, on_external_links=None):
        self.on_written_links = on_written_links
        self.on_external_links = on_external_links
        self.seen_urls = seen_urls
        self.scope = scope
        self.admit = admit
        self.max_redirect = max_redirect
        self.on_links = on_links

    def report_links(self, url, urls):
        # Every sighting, not only the first: a link checker names all referrers.
        if self.on_links is not None:
            self.on_links(url, [link for link in urls if link in self.seen_urls])


class RedirectTarget(object):
    """A redirect's Location: recorded, and queued with one redirect less to go."""

    def __init__(self, admission):
        self.admission = admission

    def wants(self, item, fetched):
        # Only a redirect's Location counts: the others are not looked up.
        return fetched.status in REDIRECT_STATUSES and bool(fetched.headers.get('Location'))

    def extract(self, item, fetched, new_items):
        location = fetched.headers.get('Location')
        try:
            next_url = urljoin(item.url, location)
        except ValueError:  # not http(s): recorded, never followed
            return Extraction(location, None, fetched.exception, 0)
        admission = self.admission
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

    def __init__(self, admission):
        self.admission = admission
        self.sitemaps_left = MAX_SITEMAPS  # child sitemaps this crawl may still queue

    def wants(self, item, fetched):
        return is_sitemap_depth(item.depth)

    def extract(self, item, fetched, new_items):
        if fetched.exception is not None or not 200 <= fetched.status < 300:
            return Extraction(None, None, fetched.exception, 0)  # a body over the cap, say
        try:
            sitemap = read_sitemap(fetched.body, item.depth)
        except SitemapError as e:
            return Extraction(None, None, describe_exception(e), 0)
        admission = self.admission
        entries = sitemap_entries(item.url, item.depth, sitemap)
        for url, depth in entries:
            if url not in admission.seen_urls and self._allowed(url, depth):
                admission.admit(url, depth, admission.max_redirect, new_items)
        admission.report_links(item.url, [url for url, _ in entries])
        return Extraction(None, None, too_deep(item.depth, sitemap),
                          len(sitemap.pages) + len(sitemap.sitemaps))

    def _allowed(self, url, depth):
        if not is_sitemap_depth(depth):
            return self.admission.scope.allows(url)
        # A sitemap file need only be on a host in scope: include/exclude choose pages.
        if self.sitemaps_left <= 0 or not self.admission.scope.host_allowed(url_host(url)):
            return False
        self.sitemaps_left -= 1
        return True


class HtmlLinks(object):
    """The links of an HTML page (``<frame>`` and ``<iframe>`` too if `frames`), one
    level deeper, up to `max_depth` (None: no limit)."""

    def __init__(self, admission, frames=False, max_depth=None):
        self.admission = admission
        self.frames = frames
        self.max_depth = max_depth

    def wants(self, item, fetched):
        return 200 <= fetched.status < 300 and is_html_content_type(fetched.content_type)

    def extract(self, item, fetched, new_items):
        text, encoding = decode_html(fetched.body, fetched.content_type)
        on_written = self.admission.on_written_links
        if on_written is None:
            links = extract_links(text, item.url, frames=self.frames)
        else:
            links, written = extract_links_as_written(text, item.url, self.frames)
            on_written(item.url, written)
        depth = item.depth + 1
        if self.max_depth is None or depth <= self.max_depth:
            admission = self.admission
            seen_urls, allows, admit = (admission.seen_urls, admission.scope.allows,
                                        admission.admit)
            max_redirect = admission.max_redirect
            for link in links:
                if link not in seen_urls and allows(link):
                    admit(link, depth, max_redirect, new_items)
        self.admission.report_links(item.url, links)
        on_external = self.admission.on_external_links
        if on_external is not None:
            allows = self.admission.scope.allows
            external = [link for link in links if not allows(link)]
            if external:
                on_external(item.url, external)
        return Extraction(None, encoding, fetched.exception, len(links))


def no_links(fetched):
    """The Extraction of a response no extractor wants: its charset, nothing found."""
    return Extraction(None, content_type_charset(fetched.content_type), fetched.exception, 0)


class Extractors(object):
    """The first of `extractors` that wants a response extracts from it."""

    def __init__(self, extractors):
        self.extractors = list(extractors)

    def extract(self, item, fetched, new_items):
        """The `Extraction` of `fetched`, the response of `item` (which has a status);
        what it leads to is admitted into `new_items`."""
        for extractor in self.extractors:
            if extractor.wants(item, fetched):
                return extractor.extract(item, fetched, new_items)
        return no_links(fetched)
