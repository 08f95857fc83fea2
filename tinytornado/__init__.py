"""tinytornado: Tornado-style ``yield`` coroutines, an IOLoop and a web crawler."""
from __future__ import absolute_import, division, print_function

__all__ = ['version', 'version_info']

version = '0.1.0'
version_info = (0, 1, 0, 0)
