"""The link checker: which pages link to each URL, and which links are broken.

`LinkChecker` is fed as the crawl goes, by the Crawler's ``on_links`` (each page's links
that the crawl takes, every sighting), ``on_written_links`` (each HTML page's hrefs as
written, with where: a broken link is reported as each page wrote it) and ``on_statistic``
(each URL's outcome). A link is
broken when its URL ends, after the redirects it leads through, in a 4xx or 5xx status, in
an error (no response, refused connection, a given-up host...), in a redirect loop, or
beyond ``max_redirect`` redirects. A URL robots.txt kept the crawl from fetching, or one the
crawl never reached (out of scope, ``--max-pages``, an interrupted crawl), is not broken:
nothing is known about it. Nor is a URL left unchecked because its host was given up (it
kept failing as a whole: refused connections, timeouts): it is listed apart, with the
reason (`unchecked`).

Memory, bounded per URL: a URL found not broken costs one dict entry (its referrers are dropped
then, and later sightings ignored); any other keeps its first `max_referrers` referrers
and a count of the rest. Redirects and broken URLs keep their outcome until the end, to
follow chains. A resumed crawl's checker knows only what its own run fetched and parsed.
"""
from __future__ import absolute_import, division, print_function

import collections

from ..sitemaps import ROBOTS_DEPTH, SITEMAP_DEPTH, is_sitemap_depth
from ..stats import ROBOTS_DISALLOWED, is_unchecked

__all__ = ['LinkChecker', 'BrokenLink', 'Hop', 'MAX_REFERRERS', 'broken_link_lines',
           'as_written',
           'malformed_link_lines', 'sitemap_error_lines', 'unchecked_link_lines']

MAX_REFERRERS = 10  # referrers kept per URL; the others are only counted

# One step of a chain: a URL and its outcome ('404', '301', 'ConnectionRefusedError: ...').
Hop = collections.namedtuple('Hop', 'url outcome')

# A broken link: `url` as pages link to it, `chain` the Hops from it to where it broke
# (one Hop when it broke itself), `problem` the reason ('404', 'redirect loop', an error),
# `referrers` the pages linking to it (the first max_referrers) and `referrer_count` all of
# them; a root has none. `written`: for each referrer, the `links.WrittenLink` of its first
# href naming the URL (None for a sitemap); () when none is known.
BrokenLink = collections.namedtuple('BrokenLink',
                                    'url problem chain referrers referrer_count written')
BrokenLink.__new__.__defaults__ = ((),)  # written: none known

_NOT_BROKEN = object()  # the referrers entry of a URL fetched and found not broken


class _Referrers(object):
    """The first few pages that link to one URL, and how many do."""
    __slots__ = ('urls', 'written', 'count')

    def __init__(self):
        self.urls = []
        self.written = []  # the WrittenLink (or None) each of `urls` named it by
        self.count = 0


class LinkChecker(object):
    """Referrers and outcomes of a crawl's URLs, collected as it goes.

    Args:
        max_referrers: referrers kept per URL (the others are counted).
        max_redirect: the crawl's redirect budget: a chain longer than it is broken.
    """

    def __init__(self, max_referrers=MAX_REFERRERS, max_redirect=10):
        self.max_referrers = max_referrers
        self.max_redirect = max_redirect
        self.referrers = {}  # url -> _Referrers, or _NOT_BROKEN
        self.redirects = collections.OrderedDict()  # url -> (status, next_url)
        self.failures = {}  # url -> its outcome, for URLs that broke themselves
        self.malformed = []  # (page url, links.WrittenLink with a problem), as found
        self._written = None  # (page url, {url: its first WrittenLink}) until its add_links
        self.sitemap_errors = []  # (sitemap url, its problem), as they finish
        self.unchecked = {}  # url -> why it was never tried (its host was given up)

    def add_written_links(self, url, written):
        """Note the hrefs of page `url` as written (the Crawler's ``on_written_links``,
        `links.WrittenLink`s): a malformed one is a broken link; the others name the links
        of the `add_links` call for `url` that follows."""
        self.malformed.extend((url, link) for link in written if link.problem is not None)
        first = {}
        for link in written:
            if link.url is not None and link.url not in first:
                first[link.url] = link
        self._written = (url, first)

    def add_links(self, url, links):
        """Note that page `url` links to each of `links` (the Crawler's ``on_links``)."""
        written = {}
        if self._written is not None and self._written[0] == url:
            written = self._written[1]
        self._written = None
        referrers = self.referrers
        for link in links:
            entry = referrers.get(link)
            if entry is None:
                entry = referrers[link] = _Referrers()
            elif entry is _NOT_BROKEN:
                continue
            entry.count += 1
            if len(entry.urls) < self.max_referrers:
                entry.urls.append(url)
                entry.written.append(written.get(link))

    def add_statistic(self, statistic):
        """Note a URL's outcome (the Crawler's ``on_statistic``)."""
        url = statistic.url
        if is_sitemap_depth(statistic.depth):
            problem = _sitemap_problem(statistic)
            if problem is not None:
                self.sitemap_errors.append((url, problem))
        if statistic.next_url and statistic.status is not None:
            self.redirects[url] = (statistic.status, statistic.next_url)
        elif is_unchecked(statistic):
            self.unchecked[url] = statistic.exception
        elif _is_failure(statistic):
            self.failures[url] = _outcome(statistic)
        else:
            self.referrers[url] = _NOT_BROKEN

    def broken_links(self, roots=()):
        """The BrokenLinks among the linked URLs and the `roots`, in order of URL."""
        starts = set(url for url, entry in self.referrers.items() if entry is not _NOT_BROKEN)
        starts.update(roots)
        broken = []
        for url in sorted(starts):
            chain, problem = self.follow(url)
            if problem is not None:
                entry = self.referrers.get(url) or _Referrers()
                written = tuple(entry.written) if any(entry.written) else ()
                broken.append(BrokenLink(url, problem, chain, list(entry.urls), entry.count,
                                         written))
        return broken

    def follow(self, url):
        """(chain of Hops from `url`, the problem that breaks it or None)."""
        chain, visited = [], set()
        while url in self.redirects:
            if url in visited:
                chain.append(Hop(url, None))
                return chain, 'redirect loop'
            visited.add(url)
            status, next_url = self.redirects[url]
            chain.append(Hop(url, str(status)))
            url = next_url
            if len(chain) > self.max_redirect:  # the crawl, as a browser, stops there
                chain.append(Hop(url, None))
                return chain, 'more than %d redirects' % self.max_redirect
        if url in self.failures:
            chain.append(Hop(url, self.failures[url]))
            return chain, self.failures[url]
        chain.append(Hop(url, None))  # good, or not fetched: nothing known against it
        return chain, None

    def redirect_chains(self):
        """The chains (lists of Hops) from each redirect no other redirect leads to, then
        from one redirect of each loop that none leads into."""
        targets = set(next_url for _, next_url in self.redirects.values())
        starts = ([url for url in self.redirects if url not in targets] +
                  [url for url in self.redirects if url in targets])
        chains, covered = [], set()
        for url in starts:
            if url not in covered:
                chain = self.follow(url)[0]
                covered.update(hop.url for hop in chain)
                chains.append(chain)
        return chains


def _is_failure(statistic):
    # A response's own exception (a body over the size cap) does not make the link broken.
    if statistic.status is None:
        return statistic.exception != ROBOTS_DISALLOWED
    return statistic.status >= 400


def _sitemap_problem(statistic):
    """What is wrong with a sitemap's statistic, or None. The robots.txt read for its
    Sitemap lines is checked as robots.txt; a /sitemap.xml the crawl guessed may be
    missing."""
    if statistic.depth == ROBOTS_DEPTH or statistic.next_url:
        return None
    if statistic.exception:
        return statistic.exception
    guessed = (statistic.depth == SITEMAP_DEPTH and
               statistic.url.split('/', 3)[3:] == ['sitemap.xml'])
    if statistic.status >= 400 and not guessed:
        return str(statistic.status)
    return None


def _outcome(statistic):
    return str(statistic.status) if statistic.status is not None else statistic.exception


def malformed_link_lines(malformed):
    """The text lines listing `malformed` ((page, links.MalformedLink) pairs), if any."""
    if not malformed:
        return []
    lines = ['Malformed links: %d' % len(malformed)]
    for page, link in malformed:
        lines.append('%r %s' % (link.href, link.problem))
        lines.append('    in %s%s' % (page, _position(link)))
    return lines


def _position(link):
    """' line L column C' where a WrittenLink is in its page, or ''."""
    return '' if link.line is None else ' line %d column %d' % (link.line, link.column)


def as_written(link):
    """' line L column C as HREF': where and how a referrer wrote a link (a WrittenLink),
    or '' for None (unknown)."""
    if link is None:
        return ''
    return '%s as %r' % (_position(link), link.href)


def sitemap_error_lines(errors):
    """The text lines listing the sitemaps that could not be read ((url, problem) pairs)."""
    if not errors:
        return []
    return ['Sitemap errors: %d' % len(errors)] + ['%s %s' % error for error in errors]


def unchecked_link_lines(unchecked):
    """The text lines listing `unchecked` ({url: reason}) for the terminal; none if
    every URL was checked."""
    if not unchecked:
        return []
    lines = ['Unchecked links (their host was given up): %d' % len(unchecked)]
    lines.extend('%s %s' % (url, unchecked[url]) for url in sorted(unchecked))
    return lines


def broken_link_lines(broken):
    """The text lines listing `broken` (BrokenLinks) for the terminal."""
    lines = ['Broken links: %d' % len(broken) if broken else 'Broken links: none']
    for link in broken:
        lines.append('%s %s' % (link.url, link.problem))
        if len(link.chain) > 1:
            lines.append('    redirects: %s' % ' -> '.join(
                ('%s %s' % hop if hop.outcome else hop.url) for hop in link.chain))
        written = link.written or [None] * len(link.referrers)
        lines.extend('    linked from %s%s' % (url, as_written(how))
                     for url, how in zip(link.referrers, written))
        more = link.referrer_count - len(link.referrers)
        if more:
            lines.append('    and from %d more pages' % more)
        if not link.referrer_count:
            lines.append('    (a root)')
    return lines
