"""`ObjectDict`, a dict whose keys are also attributes, as Tornado 5.1's ``tornado.util`` has it.

A module of its own, below everything that uses it: `util` re-exports it under Tornado's
name, and httputil's `HTTPFile` (an uploaded file) is one, as in 5.1. `util` sits above the
loop, and the sans-IO HTTP modules must not load the loop to get a dict.
"""
from __future__ import absolute_import, division, print_function

__all__ = ['ObjectDict']


class ObjectDict(dict):
    """A dict whose keys are also attributes: ``d.name`` is ``d['name']``."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name)

    def __setattr__(self, name, value):
        self[name] = value
