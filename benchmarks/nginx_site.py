"""Serve a static directory with nginx on 127.0.0.1, and measure it with wrk.

    with NginxSite(root, redirects, statuses, work_dir) as site:
        fetch(site.root_url)

nginx runs in the foreground (``daemon off``) as a child of this process, with its config,
pid file, logs and temp files in `work_dir`; it is stopped by its pid (SIGQUIT, then
SIGKILL if it lingers). Install on Debian: ``apt-get update && apt-get install -y nginx wrk``.
"""
from __future__ import absolute_import, division, print_function

import os
import re
import signal
import socket
import subprocess
import time

from common import Unavailable

__all__ = ['NginxSite', 'find_program', 'wrk_requests_per_second']

START_TIMEOUT = 10.0
STOP_TIMEOUT = 10.0
MIME_TYPES = '/etc/nginx/mime.types'

CONFIG = """\
daemon off;
worker_processes 1;
pid {work_dir}/nginx.pid;
error_log {work_dir}/error.log warn;
events {{ worker_connections 4096; }}

http {{
    {mime_types}
    default_type application/octet-stream;
    access_log off;
    sendfile on;
    absolute_redirect off;  # the site's relative Locations, as its own server sends
    keepalive_requests 100000;
    client_body_temp_path {work_dir}/client_body;
    proxy_temp_path {work_dir}/proxy;
    fastcgi_temp_path {work_dir}/fastcgi;
    uwsgi_temp_path {work_dir}/uwsgi;
    scgi_temp_path {work_dir}/scgi;

    server {{
        listen 127.0.0.1:{port};
        root {root};
        index index.html;
{locations}
    }}
}}
"""


def find_program(name):
    """The path of executable `name` on PATH or in the sbin directories, or None."""
    directories = os.environ.get('PATH', '').split(os.pathsep) + ['/usr/sbin', '/sbin']
    for directory in directories:
        path = os.path.join(directory, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def free_port():
    """A port nothing listens on now (nginx binds it a moment later)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]
    finally:
        probe.close()


def location_blocks(redirects, statuses):
    """nginx `location =` blocks: {path: (status, target)} redirects, {path: status} errors."""
    blocks = []
    for path, (status, target) in sorted(redirects.items()):
        blocks.append('        location = %s { return %d %s; }' % (path, status, target))
    for path, status in sorted(statuses.items()):
        blocks.append('        location = %s { return %d; }' % (path, status))
    return '\n'.join(blocks)


class NginxSite(object):
    """nginx serving `root` with extra redirects and error statuses, for a `with` block."""

    def __init__(self, root, redirects, statuses, work_dir):
        self.nginx = find_program('nginx')
        if self.nginx is None:
            raise Unavailable('nginx is not installed (apt-get install -y nginx)')
        self.root = os.path.abspath(root)
        self.work_dir = os.path.abspath(work_dir)
        self.redirects, self.statuses = redirects, statuses
        self.port = free_port()
        self.root_url = 'http://127.0.0.1:%d/' % self.port
        self.process = None

    def write_config(self):
        path = os.path.join(self.work_dir, 'nginx.conf')
        mime_types = 'include %s;' % MIME_TYPES if os.path.exists(MIME_TYPES) else ''
        with open(path, 'w') as config:
            config.write(CONFIG.format(
                work_dir=self.work_dir, mime_types=mime_types, port=self.port,
                root=self.root, locations=location_blocks(self.redirects, self.statuses)))
        return path

    def __enter__(self):
        if not os.path.isdir(self.work_dir):
            os.makedirs(self.work_dir)
        config = self.write_config()
        self.log = open(os.path.join(self.work_dir, 'nginx.out'), 'w')
        self.process = subprocess.Popen([self.nginx, '-c', config, '-p', self.work_dir],
                                        stdout=self.log, stderr=subprocess.STDOUT)
        try:
            self.wait_listening()
        except Exception:
            self.stop()
            raise
        return self

    def __exit__(self, *exc_info):
        self.stop()

    def wait_listening(self):
        deadline = time.time() + START_TIMEOUT
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError('nginx exited with %s; see %s' % (
                    self.process.returncode, os.path.join(self.work_dir, 'error.log')))
            try:
                socket.create_connection(('127.0.0.1', self.port), timeout=1).close()
                return
            except socket.error:
                time.sleep(0.05)
        raise RuntimeError('nginx did not listen on port %d' % self.port)

    def stop(self):
        """SIGQUIT (finish open requests, then exit) to the master's pid; SIGKILL if stuck."""
        if self.process is None or self.process.poll() is not None:
            return
        os.kill(self.process.pid, signal.SIGQUIT)
        deadline = time.time() + STOP_TIMEOUT
        while self.process.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.log.close()


WRK_SCRIPT = """\
local paths = {%s}
local index = 0
request = function()
  index = index %% #paths + 1
  return wrk.format("GET", paths[index])
end
"""


def wrk_requests_per_second(root_url, paths, seconds, connections, work_dir):
    """Requests/s that wrk reaches cycling through `paths`; None if wrk is not installed."""
    wrk = find_program('wrk')
    if wrk is None:
        return None
    script = os.path.join(work_dir, 'paths.lua')
    with open(script, 'w') as out:
        out.write(WRK_SCRIPT % ', '.join('"%s"' % p for p in paths))
    output = subprocess.check_output([
        wrk, '-t2', '-c%d' % connections, '-d%ds' % seconds, '-s', script, root_url])
    match = re.search(r'Requests/sec:\s+([\d.]+)', output.decode('utf-8', 'replace'))
    if match is None:
        raise RuntimeError('no Requests/sec in wrk output:\n%s' % output)
    return float(match.group(1))
