"""A description of the machine and the versions a benchmark table was measured with."""
from __future__ import absolute_import, division, print_function

import os
import platform
import sys

from common import Unavailable, import_optional

__all__ = ['describe']

PEERS = ['tinytornado', 'tornado', 'aiohttp', 'uvloop']


def _cpu_model():
    try:
        with open('/proc/cpuinfo') as cpuinfo:
            for line in cpuinfo:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except IOError:
        pass
    return platform.processor() or 'unknown CPU'


def _version(name):
    try:
        module = import_optional(name)
    except Unavailable:
        return None
    return getattr(module, 'version', None) or getattr(module, '__version__', '?')


def describe():
    """One line: interpreter, peers' versions, CPU, core count, kernel."""
    versions = ['%s %s' % (name, _version(name)) for name in PEERS if _version(name)]
    return 'Python %s (%s); %s; %s, %d cores; %s %s' % (
        platform.python_version(), sys.executable, ', '.join(versions), _cpu_model(),
        os.sysconf('SC_NPROCESSORS_ONLN'), platform.system(), platform.release())
