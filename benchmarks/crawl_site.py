"""W6's site: generate the seeded demo site, serve it with nginx, and measure wrk on it.

The site is `tinytornado.crawler.demo.website.Site` with plain links (``variety=False``: the
peers' crawlers do not normalise URLs, and its traps are for tinytornado's tests) and no
charset oddities or slow pages, which a static server cannot express. run.py runs each
crawler in a fresh process (measure.py) against the same nginx; each must fetch exactly the
URL set the site's own `expected_crawl` computes from its link graph.
"""
from __future__ import absolute_import, division, print_function

import contextlib
import os
import shutil
import tempfile

import nginx_site
from common import import_optional, url_set_digest

__all__ = ['served_site', 'wrk_note', 'SITE_SEED', 'WRK_SECONDS']

SITE_SEED = 0
WRK_SECONDS = 5
WORK_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '_work')


def make_site(pages):
    demosite = import_optional('tinytornado.crawler.demo.website')
    return demosite.Site(seed=SITE_SEED, pages=pages, links_per_page=20, slow_fraction=0,
                         charset_cases=False, variety=False)


def file_paths(root):
    """The URL path of every file under `root`, sorted ('/index.html' stands for '/')."""
    paths = []
    for directory, _, names in os.walk(root):
        relative = os.path.relpath(directory, root)
        prefix = '/' if relative == '.' else '/' + relative.replace(os.sep, '/') + '/'
        paths.extend(prefix + name for name in names)
    return sorted(paths)


@contextlib.contextmanager
def served_site(pages):
    """nginx serving a fresh `pages`-page site; raises Unavailable without either.

    The server has `root_url`, `paths` (its files) and `expected` (the [count, digest] of
    the URLs a crawl from `root_url` fetches).
    """
    site = make_site(pages)
    if not os.path.isdir(WORK_ROOT):
        os.makedirs(WORK_ROOT)
    # A directory of its own, so two runs at once never serve each other's site.
    work_dir = tempfile.mkdtemp(prefix='crawl-', dir=WORK_ROOT)
    os.chmod(work_dir, 0o755)  # nginx's workers run as another user when started by root
    try:
        root = os.path.join(work_dir, 'site')
        redirects, statuses = site.write_static(root)
        with nginx_site.NginxSite(root, redirects, statuses, work_dir) as server:
            server.paths = file_paths(root)
            server.expected = url_set_digest(list(site.expected_crawl(server.root_url,
                                                                      obey_robots=False)))
            yield server
    finally:
        shutil.rmtree(work_dir)


def wrk_note(server, connections):
    """The ceiling line of the report: wrk's requests/s cycling through the site's files."""
    rate = nginx_site.wrk_requests_per_second(server.root_url, server.paths, WRK_SECONDS,
                                              connections, server.work_dir)
    if rate is None:
        return 'W6 ceiling: wrk is not installed (apt-get install -y wrk)'
    return ('W6 ceiling: wrk -t2 -c%d on the same nginx, cycling through its %d files: '
            '%.0f requests/s' % (connections, len(server.paths), rate))
