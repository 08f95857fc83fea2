"""Which URLs a crawl may follow: the hosts its roots name, then ``--include``/``--exclude``.

Strict matching (the default, as in the 500 Lines crawler) admits a root's host and its
``www.`` twin: a root at example.com admits www.example.com and the reverse. Lenient matching
admits every host under the same registrable domain, found with the Public Suffix List that
the ``publicsuffixlist`` package ships (read offline, never downloaded at run time): a root at
news.bbc.co.uk admits www.bbc.co.uk but not evil.co.uk, where the chapter's "last two
labels" rule admitted all of co.uk. IP addresses, IPv6 literals and hosts that are themselves
public suffixes (localhost, github.io) match only exactly. Ports and schemes are not
compared: http://example.com/ admits https://example.com:8443/.

A URL in scope must also match one ``include`` pattern if any is given, and no ``exclude``
pattern (``re.search`` on the normalised URL).
"""
from __future__ import absolute_import, division, print_function

import re

import six
from publicsuffixlist import PublicSuffixList

from .urls import is_http_url, normalize_url, url_host

__all__ = ['Scope', 'registrable_domain']

_IP_ADDRESS_RE = re.compile(r'\A(?:\[.*\]|[0-9.]+)\Z')
_public_suffix_list = None
_MAX_CACHED_ORIGINS = 1024


def registrable_domain(host):
    """The registrable domain of a normalised host ('bbc.co.uk' for 'news.bbc.co.uk'), or
    None for an IP address or a public suffix."""
    global _public_suffix_list
    if _IP_ADDRESS_RE.match(host):
        return None
    if _public_suffix_list is None:
        # Loaded on first use: reading the list takes a tenth of a second.
        _public_suffix_list = PublicSuffixList()
    return _public_suffix_list.privatesuffix(host)


class Scope(object):
    """The URLs a crawl from `roots` may follow.

    Args:
        roots: the crawl's root URLs.
        strict: True for same host (and its www. twin), False for same registrable domain.
        include: a pattern or a list of patterns (text or compiled); URLs must match one.
        exclude: a pattern or a list of patterns; URLs matching any are out of scope.
    """

    def __init__(self, roots, strict=True, include=None, exclude=None):
        self.strict = strict
        self.root_hosts = frozenset(url_host(normalize_url(root)) for root in roots)
        self.root_domains = frozenset(
            domain for domain in (registrable_domain(host) for host in self.root_hosts)
            if domain is not None)
        self.include = _compile_all(include)
        self.exclude = _compile_all(exclude)
        self._origins = {}  # origin -> whether its URLs are http(s) on a host admitted

    def allows(self, url):
        """True if the crawl may fetch the normalised `url`."""
        if not self._origin_allowed(url):
            return False
        if self.include and not any(pattern.search(url) for pattern in self.include):
            return False
        return not (self.exclude and any(pattern.search(url) for pattern in self.exclude))

    def host_allowed(self, host):
        """True if the normalised `host` is one the roots admit."""
        if host in self.root_hosts:
            return True
        twin = _www_twin(host)
        if twin in self.root_hosts and not _IP_ADDRESS_RE.match(twin):
            return True
        if self.strict:
            return False
        domain = registrable_domain(host)
        return domain is not None and domain in self.root_domains

    def _origin_allowed(self, url):
        # A crawl's links name few origins, each many times: each is split and judged once.
        # The scheme and authority of an http(s) URL end before its first '/' past
        # 'https://', so two URLs that agree up to that slash agree on both.
        end = url.find('/', 8)
        origin = url if end < 0 else url[:end]
        allowed = self._origins.get(origin)
        if allowed is None:
            if len(self._origins) >= _MAX_CACHED_ORIGINS:
                self._origins.clear()
            allowed = self._origins[origin] = (
                is_http_url(url) and self.host_allowed(url_host(url)))
        return allowed


def _www_twin(host):
    return host[len('www.'):] if host.startswith('www.') else 'www.' + host


def _compile_all(patterns):
    if patterns is None:
        return ()
    if isinstance(patterns, six.string_types) or hasattr(patterns, 'search'):
        patterns = [patterns]
    return tuple(re.compile(pattern) for pattern in patterns)
