"""W6's site: generate the seeded demo site, serve it with nginx, and measure wrk on it.

The site comes from `tinytornado.crawler.demosite` (`Site(seed, pages).write_static(dir)`);
run.py runs each crawler in a fresh process (measure.py) against the same nginx.
"""
from __future__ import absolute_import, division, print_function

import contextlib
import os
import shutil

import nginx_site
from common import import_optional

__all__ = ['served_site', 'wrk_note', 'SITE_SEED', 'WRK_SECONDS']

SITE_SEED = 0
WRK_SECONDS = 5
WORK_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), '_work', 'crawl')


def write_site(pages, directory):
    """Write the site's files under `directory`; its (redirects, statuses) for nginx."""
    demosite = import_optional('tinytornado.crawler.demosite')
    if os.path.isdir(directory):
        shutil.rmtree(directory)
    site = demosite.Site(seed=SITE_SEED, pages=pages)
    return site.write_static(directory)


def file_paths(root):
    """The URL path of every file under `root`, sorted."""
    paths = []
    for directory, _, names in os.walk(root):
        relative = os.path.relpath(directory, root)
        prefix = '/' if relative == '.' else '/' + relative.replace(os.sep, '/') + '/'
        paths.extend(prefix + name for name in names)
    return sorted(paths)


@contextlib.contextmanager
def served_site(pages):
    """nginx serving a fresh `pages`-page demo site; raises Unavailable without either."""
    root = os.path.join(WORK_DIR, 'site')
    redirects, statuses = write_site(pages, root)
    with nginx_site.NginxSite(root, redirects, statuses, WORK_DIR) as server:
        server.paths = file_paths(root)
        yield server


def wrk_note(server, connections):
    """The ceiling line of the report: wrk's requests/s cycling through the site's files."""
    rate = nginx_site.wrk_requests_per_second(server.root_url, server.paths, WRK_SECONDS,
                                              connections, WORK_DIR)
    if rate is None:
        return 'W6 ceiling: wrk is not installed (apt-get install -y wrk)'
    return ('W6 ceiling: wrk -t2 -c%d on the same nginx, cycling through its %d files: '
            '%.0f requests/s' % (connections, len(server.paths), rate))
