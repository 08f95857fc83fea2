"""Links out of the crawl's scope, checked but not crawled (``--check-external``).

`ExternalLinks` collects, as the crawl goes (the Crawler's ``on_external_links``), each
out-of-scope http(s) URL a page links to and its first referrers. Once the crawl is over,
`check_external` fetches each URL once: a HEAD, and a GET where the server refuses HEAD (405,
501, and 403 or 400, which some servers answer to HEAD alone), following redirects as a
browser would. It is polite as the crawl is: one request at a time to a host, `delay`
seconds apart, and at most `max_hosts` hosts at once. Only the status (or the error) is
looked at: a body is never kept.

A link is broken when its answer, after redirects, is a 4xx or 5xx status or no answer at
all. robots.txt is not read for these single checks, as LinkChecker does not for its
``--check-extern`` HEADs.
"""
from __future__ import absolute_import, division, print_function

import collections

from tinytornado import gen
from tinytornado.httpclient import HTTPRequest

from .fetch import describe_exception
from .urls import url_host

__all__ = ['ExternalLinks', 'ExternalLink', 'check_external', 'external_link_lines',
           'HEAD_REFUSED']

HEAD_REFUSED = frozenset([400, 403, 405, 501])  # statuses a GET is tried after
_MAX_REFERRERS = 10

# A broken external link: its url, its problem ('404', an error), the first referrers and
# how many pages link to it.
ExternalLink = collections.namedtuple('ExternalLink', 'url problem referrers referrer_count')


class ExternalLinks(object):
    """The out-of-scope URLs pages link to, with their first `max_referrers` referrers."""

    def __init__(self, max_referrers=_MAX_REFERRERS):
        self.max_referrers = max_referrers
        self.referrers = collections.OrderedDict()  # url -> [referrers], in order found
        self.counts = collections.Counter()

    def add_links(self, url, links):
        """Note that page `url` links to each out-of-scope URL of `links`."""
        for link in links:
            referrers = self.referrers.setdefault(link, [])
            self.counts[link] += 1
            if len(referrers) < self.max_referrers:
                referrers.append(url)


@gen.coroutine
def check_external(external, http_client, delay, max_hosts, **request_options):
    """Check each URL of `external` (ExternalLinks) once; a Future of the broken ones, as
    `ExternalLink`s in order of URL.

    `request_options` go to each HTTPRequest (user_agent, timeouts, validate_cert,
    ca_certs, max_redirects).
    """
    by_host = collections.OrderedDict()
    for url in external.referrers:
        by_host.setdefault(url_host(url), []).append(url)
    problems = {}
    hosts = list(by_host.values())
    while hosts:
        batch, hosts = hosts[:max_hosts], hosts[max_hosts:]
        yield [_check_host(urls, http_client, delay, problems, request_options)
               for urls in batch]
    raise gen.Return([
        ExternalLink(url, problems[url], external.referrers[url], external.counts[url])
        for url in sorted(problems)])


@gen.coroutine
def _check_host(urls, http_client, delay, problems, request_options):
    """Check `urls`, all of one host, one at a time, `delay` seconds apart."""
    for index, url in enumerate(urls):
        if index and delay:
            yield gen.sleep(delay)
        response = yield _fetch(http_client, url, 'HEAD', request_options)
        if response.code in HEAD_REFUSED:
            if delay:
                yield gen.sleep(delay)
            response = yield _fetch(http_client, url, 'GET', request_options)
        problem = _problem(response)
        if problem is not None:
            problems[url] = problem


def _fetch(http_client, url, method, request_options):
    request = HTTPRequest(url, method=method, follow_redirects=True,
                          # GET: only the status matters, so no body is kept.
                          streaming_callback=_drop if method == 'GET' else None,
                          **request_options)
    return http_client.fetch(request, raise_error=False)


def _drop(chunk):
    pass


def _problem(response):
    if response.code == 599:
        return describe_exception(response.error)
    if response.code >= 400:
        return str(response.code)
    return None


def external_link_lines(broken, checked):
    """The text lines of the check of `checked` external URLs: `broken` (ExternalLinks)."""
    lines = ['External links: %d checked, %d broken' % (checked, len(broken))]
    for link in broken:
        lines.append('%s %s' % (link.url, link.problem))
        lines.extend('    linked from %s' % url for url in link.referrers)
        more = link.referrer_count - len(link.referrers)
        if more:
            lines.append('    and from %d more pages' % more)
    return lines
