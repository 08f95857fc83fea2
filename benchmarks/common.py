"""Helpers every benchmark process shares: optional imports and the site's URL-set digest."""
from __future__ import absolute_import, division, print_function

import hashlib
import importlib
import json
import socket
import subprocess
import sys

try:
    from importlib.util import find_spec
except ImportError:  # Python 2.7
    from pkgutil import find_loader as find_spec

__all__ = ['Unavailable', 'import_optional', 'DEFAULT_PEERS', 'print_measurement', 'url_set_digest', 'MESSAGE_SIZE', 'echo_payload',
           'loopback_listener', 'json_from_child', 'failures']

MESSAGE_SIZE = 64


class Unavailable(Exception):
    """This implementation cannot run the workload here (a peer or module is missing)."""


def import_optional(name):
    """Import module `name`, or raise Unavailable if it is not installed.

    A module that exists but fails to import is a bug and raises its own error, so a
    broken tinytornado module shows as a failure, never as "not available".
    """
    try:
        found = find_spec(name) is not None
    except ImportError:  # its parent package is missing
        found = False
    if not found:
        raise Unavailable('%s is not installed' % name)
    return importlib.import_module(name)


def url_set_digest(fetched_urls):
    """[fetches, sha256 of the sorted distinct URLs]: what every crawler must agree on.

    Counting fetches rather than distinct URLs makes a crawler that fetched a URL twice
    disagree with the others even if the sets match.
    """
    text = '\n'.join(sorted(set(fetched_urls)))
    return [len(fetched_urls), hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]]


def echo_payload(client_id):
    """MESSAGE_SIZE bytes that differ per client, so a stream that crossed wires is caught."""
    return (b'%07d|' % client_id) * (MESSAGE_SIZE // 8)


def loopback_listener():
    """A non-blocking listening socket on 127.0.0.1 and a free port."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(('127.0.0.1', 0))
    listener.listen(1024)
    listener.setblocking(False)
    return listener


def json_from_child(command):
    """Run `command`, a measurement in a fresh process: the JSON of its last output line,
    or {'error': what it printed} if there is none."""
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = child.communicate()
    try:
        return json.loads(out.decode('utf-8').strip().splitlines()[-1])
    except (IndexError, ValueError):
        return {'error': 'exit %s: %s%s' % (child.returncode, out.decode('utf-8', 'replace'),
                                            err.decode('utf-8', 'replace'))}


def failures(reports):
    """'FAILED key: error' lines for the {key: [report per round]} with an error."""
    failed = [key for key, runs in reports.items() if any('error' in run for run in runs)]
    return ['FAILED %s: %s' % (key, [run['error'] for run in reports[key] if 'error' in run][0])
            for key in failed]


# What a benchmark compares by default: asyncio where there is one.
DEFAULT_PEERS = 'tinytornado' if sys.version_info[0] < 3 else 'tinytornado,asyncio'


def print_measurement(measure):
    """A child's ``--measure``: run `measure()` here and print its report as JSON (or
    why it is unavailable) for the parent, which reads the last line; returns 0."""
    try:
        report = measure()
    except Unavailable as exc:
        report = {'unavailable': str(exc)}
    print(json.dumps(report))
    return 0
