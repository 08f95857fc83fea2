from __future__ import absolute_import, division, print_function

import io
import os

import pytest

import tinytornado

PACKAGE_DIR = os.path.dirname(os.path.abspath(tinytornado.__file__))


def package_sources():
    for directory, _, files in os.walk(PACKAGE_DIR):
        for filename in sorted(files):
            if filename.endswith('.py'):
                yield os.path.join(directory, filename)


@pytest.mark.parametrize('path', list(package_sources()),
                         ids=lambda path: os.path.relpath(path, PACKAGE_DIR))
def test_every_module_compiles_on_this_interpreter(path):
    # What `python2.7 -m compileall tinytornado` checks: the Python-3-only modules too
    # must at least compile on 2.7, so their 3.x syntax is compiled from strings.
    with io.open(path, 'rb') as source_file:
        source = source_file.read()
    compile(source, path, 'exec')
