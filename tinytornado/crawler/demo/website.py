"""A seeded, generated website: what ``--demo`` crawls, the tests assert and the benchmarks serve.

``Site(seed, pages, ...)`` builds a link graph once; `pages` renders each body on demand
from its own seed, so the same arguments give byte-identical resources on every run and on
2.7 and 3.x (only ``Random.random()`` is used: ``choice`` and ``randrange`` differ between
them). ``site.resource(target)`` is what a server sends for a request target: a
``Resource(status, headers, body, delay_seconds)`` with headers as (name, value) str pairs.

The site has, besides its HTML pages: links to other hosts (``*.invalid``), non-HTML files
(.pdf, .png, and a text/plain file), redirects (301/302/303/307/308, a chain, a cycle, two
redirects that join, one to another host, one to a 404), 404s, 500s, slow pages, pages whose
charset is declared in odd ways, a robots.txt that disallows ``/private/`` but allows
``/private/open/``, and pages only reachable through an ``<iframe>``. With ``variety=True``
(the default) links are written in every way the link extractor must read (relative, ``./``,
``..``, percent-escapes, ``&amp;``, entities, fragments, unquoted, whitespace, ``<base
href>``, ``<area>``) and pages hold trap links a regex would take but a parser must not (in
comments, scripts, a PDF and a text file). ``variety=False`` writes plain root-relative links
and no traps, for comparisons with crawlers that do not normalise URLs.

Paths: ``/`` (page 0), ``/s<k>/p<n>.html``, ``/files/<n>.pdf|png``, ``/go/...`` (redirects),
``/gone/<n>.html`` (404), ``/error/<n>.html`` (500), ``/private/...``, ``/embed/<n>.html``,
``/trap/...``, ``/robots.txt``.

Serving it statically (`Site.write_static`) with nginx, from ``(redirects, statuses)``::

    absolute_redirect off;   # optional: keep the relative Location the site uses
    location = /go/chain-1 { return 302 /go/chain-2; }     # each redirects item
    location = /error/0.html { return 500; }               # each statuses item

A static server cannot delay slow pages nor send the Content-Type of the charset cases.
"""
from __future__ import absolute_import, division, print_function

import collections
import os
import posixpath
import random

import six
from six.moves.urllib.parse import unquote

from .pages import (
    CHARSET_CASES, NAVIGATION_LINKS, charset_case, file_body, page_body, pick,
)
from ..robots import RobotsRules
from ..urls import normalize_url

__all__ = ['Site', 'Resource', 'PAGE', 'FILE', 'REDIRECT', 'MISSING', 'ERROR', 'TRAP', 'HTML_TYPE',
           'ROBOTS_TXT']

Resource = collections.namedtuple('Resource', ['status', 'headers', 'body', 'delay_seconds'])

# Kinds of path.
PAGE, FILE, REDIRECT, MISSING, ERROR, TRAP = 'page', 'file', 'redirect', 'missing', 'error', 'trap'

HTML_TYPE = 'text/html; charset=utf-8'
ROBOTS_TXT = ('User-agent: *\n'
              'Disallow: /private/\n'
              'Allow: /private/open/\n')
_SECTIONS = 5
_QUERY_LINK_FRACTION = 0.01
_OFFSITE_HOSTS = ('offsite-0.invalid', 'offsite-1.invalid', 'www.offsite-2.invalid')

# A node of the site graph. `links` are (href as written, target, tag): target is a site
# path (with a query if the link has one) or an absolute URL on another host.
_Node = collections.namedtuple('_Node', [
    'kind', 'status', 'content_type', 'location', 'delay_seconds', 'charset_case', 'links',
    'base_href'])

# A page whose path is not ASCII, linked only from the latin1-header page: reading that page
# with the wrong charset gives a different URL.
_NON_ASCII_HREF = u'/s0/caf\u00e9.html'
_NON_ASCII_PAGE = '/s0/caf%C3%A9.html'


class Site(object):
    """A generated website; see the module docstring.

    Args:
        seed: picks the graph and the text; equal arguments give an equal site.
        pages: number of HTML pages in the main graph (at least 2).
        links_per_page: links in each page's body, besides the fixed navigation.
        page_size: (min, max) size in bytes the pages are padded to.
        offsite_fraction, file_fraction, redirect_fraction, missing_fraction,
        error_fraction, private_fraction: the chance that a body link goes to another
            host, a file, a redirect, a 404, a 500 or under /private/. A non-zero fraction
            also makes sure each such resource is linked at least once.
        slow_fraction, slow_delay: the share of pages served after `slow_delay` seconds.
        charset_cases: whether some pages declare their charset in odd ways.
        variety: write links in every spelling, with traps; see the module docstring.
        origin: 'http://host:port' the site is served at, if known: then some links are
            absolute URLs (one with an upper-case scheme).
    """

    def __init__(self, seed=0, pages=200, links_per_page=20, page_size=(4096, 8192),
                 offsite_fraction=0.05, file_fraction=0.05, redirect_fraction=0.02,
                 missing_fraction=0.01, error_fraction=0.01, private_fraction=0.01,
                 slow_fraction=0.02, slow_delay=0.1, charset_cases=True, variety=True,
                 origin=None):
        if pages < 2:
            raise ValueError('a site needs at least 2 pages')
        self.seed = seed
        self.pages = pages
        self.links_per_page = links_per_page
        self.page_size = page_size
        self.fractions = collections.OrderedDict([
            (FILE, file_fraction), (REDIRECT, redirect_fraction),
            (MISSING, missing_fraction), (ERROR, error_fraction),
            ('private', private_fraction), ('offsite', offsite_fraction)])
        self.slow_fraction = slow_fraction
        self.slow_delay = slow_delay
        self.charset_cases = charset_cases
        self.variety = variety
        self.origin = origin.rstrip('/') if origin else None
        self._rendered = {}
        self._nodes = _build_graph(self)

    def paths(self):
        """Every URL path (normalised, percent-encoded) the site serves or links to, sorted;
        404 paths included."""
        return sorted(self._nodes)

    def kind(self, target):
        """PAGE, FILE, REDIRECT, MISSING, ERROR or TRAP; None for a path the site lacks."""
        node = self._nodes.get(_site_path(target))
        return node.kind if node else None

    def resource(self, target):
        """The Resource for a request target ('/path?query'); 404 for unknown paths."""
        path = _site_path(target)
        resource = self._rendered.get(path)
        if resource is None:
            resource = self._rendered[path] = self._render(path)
        return resource

    def expected_encodings(self):
        """{path: codec name a correct reader reports} for every HTML page."""
        return dict((path, _expected_encoding(node)) for path, node in self._nodes.items()
                    if node.status == 200 and node.content_type.startswith('text/html'))

    def expected_crawl(self, root_url, obey_robots=True, frames=False, max_redirects=10):
        """{normalised URL: status} that a correct crawl from `root_url` fetches.

        Computed from the graph: HTML pages are followed (status 200 only), redirects lead
        to their Location, other hosts and /robots.txt are not included. Redirect chains
        here are at most 3 long, so any `max_redirects` >= 3 gives the same set whatever
        the order of fetching. `root_url` must be on this site's origin.
        """
        root_url = normalize_url(root_url)
        origin = root_url[:root_url.index('/', root_url.index('//') + 2)]
        robots = RobotsRules.parse(ROBOTS_TXT) if obey_robots else RobotsRules.allow_all()
        seen = {}
        queue = collections.deque([(root_url[len(origin):], max_redirects)])
        while queue:
            target, redirects_left = queue.popleft()
            if target in seen or not robots.allowed(origin + target, 'tinycrawl'):
                continue
            node = self._nodes.get(target.split('?', 1)[0])
            seen[target] = node.status if node else 404
            for next_target, is_redirect in _out_links(node, frames):
                if next_target.startswith('/') and (redirects_left > 0 or not is_redirect):
                    queue.append((next_target, redirects_left - 1 if is_redirect
                                  else max_redirects))
        return dict((origin + target, status) for target, status in seen.items())

    def write_static(self, directory):
        """Write every 200 resource as a file under `directory`.

        Returns ``(redirects, statuses)``: {path: (status, location)} for the redirects and
        {path: status} for the error statuses a file cannot express (500s; a 404 is a file
        that is not there). Paths are URL paths; file names are their percent-decoded form,
        and '/' is index.html.
        """
        redirects, statuses = {}, {}
        for path, node in self._nodes.items():
            if node.kind == REDIRECT:
                redirects[path] = (node.status, node.location)
            elif node.status == 200:
                _write_file(directory, path, self.resource(path).body)
            elif node.status != 404:
                statuses[path] = node.status
        return redirects, statuses

    def _render(self, path):
        node = self._nodes.get(path)
        if node is None:
            return _missing_resource()
        if node.kind == REDIRECT:
            return Resource(node.status, [('Content-Type', HTML_TYPE),
                                          ('Location', node.location)],
                            b'<html><body>Moved</body></html>\n', 0.0)
        if node.status == 404:
            return _missing_resource()
        return Resource(node.status, [('Content-Type', node.content_type)],
                        self._body(path, node), node.delay_seconds)

    def _body(self, path, node):
        if node.status >= 500:
            return b'<html><body><h1>Internal Server Error</h1></body></html>\n'
        if path == '/robots.txt':
            return ROBOTS_TXT.encode('ascii')
        if node.kind == FILE:
            return file_body(self, path)
        return page_body(self, path, [(href, tag) for href, _, tag in node.links],
                         node.base_href, node.charset_case)


def _missing_resource():
    return Resource(404, [('Content-Type', HTML_TYPE)],
                    b'<html><body><h1>Not Found</h1></body></html>\n', 0.0)


def _site_path(target):
    """The normalised path of a request target ('/%7Ea b?q' -> '/~a%20b'), or None."""
    target = six.ensure_text(target, 'utf-8').split('?', 1)[0]
    if not target.startswith('/'):
        return None
    try:
        return normalize_url('http://site' + target)[len('http://site'):]
    except ValueError:
        return None


def _out_links(node, frames):
    """(target, is_redirect) pairs a crawler follows from `node`."""
    if node is None:
        return []
    if node.kind == REDIRECT:
        return [(node.location, True)]
    if node.status != 200 or not node.content_type.startswith('text/html'):
        return []
    return [(target, False) for _, target, tag in node.links
            if target is not None and (frames or tag != 'iframe')]


def _expected_encoding(node):
    case = charset_case(node.charset_case)
    return case.expected_encoding if case else 'utf-8'


def _write_file(directory, path, body):
    relative = unquote(path).lstrip('/') or 'index.html'
    filename = os.path.join(directory, *relative.split('/'))
    if not os.path.isdir(os.path.dirname(filename)):
        os.makedirs(os.path.dirname(filename))
    with open(filename, 'wb') as out:
        out.write(body)


# -- building the graph ---------------------------------------------------------------------

def _page_path(number):
    return '/' if number == 0 else '/s%d/p%d.html' % (number % _SECTIONS, number)


def _count(fraction, pages, minimum=2):
    # Not round(): 3.x rounds halves to even, 2.7 away from zero.
    return max(minimum, int(fraction * pages + 0.5)) if fraction > 0 else 0


def _build_graph(site):
    """{path: _Node} for the whole site."""
    rng = random.Random(site.seed)
    nodes = {}
    pools = _add_targets(site, nodes)
    slow = set(pick(rng, range(1, site.pages)) for _ in range(_count(
        site.slow_fraction, site.pages, minimum=1 if site.slow_fraction > 0 else 0)))
    charset_pages = _charset_pages(site)
    required = _required_links(site, pools)
    for number in range(site.pages):
        page_rng = random.Random(site.seed * 1000003 + number)
        path = _page_path(number)
        case = charset_pages.get(number)
        base = _base_href(site, number)
        links = _page_links(site, page_rng, number, pools, required.get(number, []), case,
                            base)
        nodes[path] = _Node(PAGE, 200, _charset_content_type(case), None,
                            site.slow_delay if number in slow else 0.0, case, links, base)
    return nodes


def _add_targets(site, nodes):
    """Add every non-page resource to `nodes`; {kind: [target, ...]} to link to."""
    pools = collections.OrderedDict((kind, []) for kind in site.fractions)
    fractions = site.fractions
    for number in range(_count(fractions[FILE], site.pages)):
        extension, content_type = (('pdf', 'application/pdf') if number % 2 == 0
                                   else ('png', 'image/png'))
        path = '/files/%d.%s' % (number, extension)
        nodes[path] = _Node(FILE, 200, content_type, None, 0.0, None, [], None)
        pools[FILE].append(path)
    for number in range(_count(fractions[MISSING], site.pages)):
        path = '/gone/%d.html' % number
        nodes[path] = _Node(MISSING, 404, HTML_TYPE, None, 0.0, None, [], None)
        pools[MISSING].append(path)
    for number in range(_count(fractions[ERROR], site.pages)):
        path = '/error/%d.html' % number
        nodes[path] = _Node(ERROR, 500, HTML_TYPE, None, 0.0, None, [], None)
        pools[ERROR].append(path)
    if pools[FILE] and site.variety:
        # A text file holding markup: a crawler that parses it finds a trap link.
        nodes['/files/notes.txt'] = _Node(FILE, 200, 'text/plain', None, 0.0, None, [], None)
        pools[FILE].append('/files/notes.txt')
    if fractions[REDIRECT] > 0:
        pools[REDIRECT] = _add_redirects(site, nodes)
    for number in range(_count(fractions['private'], site.pages)):
        for prefix in ('/private/', '/private/open/'):
            path = '%s%d.html' % (prefix, number)
            links = [(_page_path(1), _page_path(1), 'a')]
            nodes[path] = _Node(PAGE, 200, HTML_TYPE, None, 0.0, None, links, None)
            pools['private'].append(path)
    if fractions['offsite'] > 0:
        pools['offsite'] = ['http://%s/page%d.html' % (host, number)
                            for number, host in enumerate(_OFFSITE_HOSTS)]
    _add_fixed_pages(site, nodes)
    return pools


def _add_redirects(site, nodes):
    """The redirects, each a (status, target) with a relative Location; their paths."""
    last = _page_path(site.pages - 1)
    missing = '/gone/moved.html'
    redirects = collections.OrderedDict([
        ('/go/1', (301, _page_path(1))),
        ('/go/chain-1', (302, '/go/chain-2')),
        ('/go/chain-2', (307, '/go/chain-3')),
        ('/go/chain-3', (308, last)),
        ('/go/loop-a', (301, '/go/loop-b')),
        ('/go/loop-b', (302, '/go/loop-a')),
        ('/go/join-1', (301, _page_path(site.pages // 2))),
        ('/go/join-2', (303, _page_path(site.pages // 2))),
        ('/go/away', (302, 'http://%s/landing.html' % _OFFSITE_HOSTS[0])),
        ('/go/broken', (301, missing)),
    ])
    for path, (status, location) in redirects.items():
        nodes[path] = _Node(REDIRECT, status, HTML_TYPE, location, 0.0, None, [], None)
    nodes[missing] = _Node(MISSING, 404, HTML_TYPE, None, 0.0, None, [], None)
    # Links go to the head of each chain, not into its middle.
    return [path for path in redirects if path not in ('/go/chain-2', '/go/chain-3',
                                                       '/go/loop-b')]


def _add_fixed_pages(site, nodes):
    """robots.txt, the iframe-only pages, the traps and the non-ASCII page."""
    nodes['/robots.txt'] = _Node(FILE, 200, 'text/plain', None, 0.0, None, [], None)
    home = [('/', '/', 'a')]
    for number in range(2):
        nodes['/embed/%d.html' % number] = _Node(PAGE, 200, HTML_TYPE, None, 0.0, None,
                                                  home, None)
    if site.variety:
        for name in ('comment', 'script', 'style', 'pdf', 'text'):
            nodes['/trap/%s.html' % name] = _Node(TRAP, 200, HTML_TYPE, None, 0.0, None,
                                                   home, None)
        if site.charset_cases:
            nodes[_NON_ASCII_PAGE] = _Node(PAGE, 200, HTML_TYPE, None, 0.0, None, home, None)


def _charset_pages(site):
    """{page number: charset case name}, spread over the site, never the home page."""
    if not site.charset_cases:
        return {}
    step = max(1, (site.pages - 1) // len(CHARSET_CASES))
    return dict((1 + (index * step) % (site.pages - 1), case.name)
                for index, case in enumerate(CHARSET_CASES))


def _charset_content_type(name):
    case = charset_case(name)
    return case.content_type if case else HTML_TYPE


def _required_links(site, pools):
    """{page number: [target]} so that every pooled resource is linked at least once."""
    required = collections.defaultdict(list)
    targets = [target for pool in pools.values() for target in pool]
    for index, target in enumerate(targets):
        required[1 + (index * 7919) % (site.pages - 1)].append(target)
    return required


def _base_href(site, number):
    """Every seventh page (with variety) has a <base href> to another section."""
    if site.variety and number % 7 == 3:
        return '/s%d/' % ((number // 7) % _SECTIONS)
    return None


def _page_links(site, rng, number, pools, required, case, base):
    """The (href, target, tag) links of page `number`, in document order."""
    # The navigation: the home page and the next few.
    targets = [_page_path(n) for n in range(NAVIGATION_LINKS) if n < site.pages]
    if number + 1 < site.pages:
        targets.append(_page_path(number + 1))  # every page is reachable from the root
    targets.extend(required)
    while len(targets) < site.links_per_page + NAVIGATION_LINKS:
        targets.append(_random_target(site, rng, pools))
    page_dir = posixpath.dirname(_page_path(number)) + '/'
    links = [_spell_link(site, rng, target, base or page_dir) for target in targets]
    if case == 'latin1-header' and site.variety:
        links.append((_NON_ASCII_HREF, _NON_ASCII_PAGE, 'a'))
    if site.variety and number % 11 == 5:
        embed = '/embed/%d.html' % ((number // 11) % 2)
        links.append((embed, embed, 'iframe'))
    return links


def _random_target(site, rng, pools):
    draw = rng.random()
    for kind, fraction in site.fractions.items():
        if draw < fraction and pools[kind]:
            return pick(rng, pools[kind])
        draw -= fraction
    return _page_path(int(rng.random() * site.pages))


def _spell_link(site, rng, target, base_dir):
    """(href, target, tag): `target` written in one of the ways a browser reads as it."""
    if target.startswith('http'):
        href = target if rng.random() < 0.5 else target[len('http:'):]
        return href, target, 'a'
    if not site.variety:
        return target, target, 'a'
    if rng.random() < _QUERY_LINK_FRACTION and target.endswith('.html'):
        # Each of these makes a new URL for the same page: keep them few.
        return target + '?a=1&amp;b=2', target + '?a=1&b=2', 'a'
    spelling = pick(rng, _SPELLING_NAMES)
    if spelling == 'absolute' and site.origin:
        origin = site.origin
        if rng.random() < 0.5:
            origin = 'HTTP' + origin[len('http'):]
        return origin + target, target, 'a'
    return _SPELLINGS[spelling](target, base_dir), target, 'area' if spelling == 'area' else 'a'


def _relative(target, base_dir):
    relative = posixpath.relpath(target, base_dir)
    return relative + u'/' if target.endswith('/') and relative != '.' else relative


_SPELLINGS = collections.OrderedDict([
    ('plain', lambda target, base: target),
    ('relative', _relative),
    ('dot', lambda target, base: u'./' + _relative(target, base)),
    ('fragment', lambda target, base: target + u'#part-2'),
    ('absolute', lambda target, base: target),
    ('percent', lambda target, base: target.replace(u'p', u'%70', 1)),
    ('dot-segments', lambda target, base: u'/s9/..' + target),
    ('entity', lambda target, base: target.replace(u'/', u'&#47;', 1)),
    ('whitespace', lambda target, base: u'\n  ' + target + u'  '),
    ('area', lambda target, base: target),
])
_SPELLING_NAMES = list(_SPELLINGS)
