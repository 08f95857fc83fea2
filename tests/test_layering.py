"""The layering of ../shared/STYLE.md, enforced: each module imports only from below it."""
from __future__ import absolute_import, division, print_function

import ast
import io
import os

import tinytornado
from tinytornado._compat import PY2

PACKAGE_DIR = os.path.dirname(tinytornado.__file__)

# Each layer and the layers it may import directly; what those may import is allowed too.
# `log` (the loggers) and the package root (its version) are open to every layer.
LAYERS = {
    '_clock': [],
    '_compat': ['_clock'],
    '_timerqueue': [],
    '_bytebuffer': ['_compat'],
    'concurrent': ['_compat'],
    '_poller': ['_compat'],
    'ioloop': ['concurrent', '_timerqueue', '_poller'],
    '_speedups': [],  # C: gen.coroutine's wrapper, which gen configures.
    '_gen_legacy': ['concurrent'],  # gen's legacy yieldables, which gen configures.
    'gen': ['ioloop', '_speedups', '_gen_legacy'],
    '_waiters': ['gen'],
    'locks': ['_waiters'],
    'queues': ['_waiters', 'locks'],
    'netutil': ['gen'],
    'iostream': ['gen', 'netutil', '_bytebuffer'],
    'tcpclient': ['iostream', 'netutil'],
    'tcpserver': ['iostream', 'netutil'],
    '_http1parser': ['_compat'],
    'httputil': ['_compat', '_http1parser'],
    '_httperrors': [],
    '_httprequest': ['httputil', 'netutil'],
    '_httppool': ['concurrent', '_httperrors'],
    '_http1connection': ['iostream', 'httputil', '_httperrors', '_httprequest'],
    'httpclient': ['tcpclient', '_http1connection', '_httppool'],
    'crawler': ['httpclient', 'queues', 'tcpserver'],
    'testing': ['gen', 'netutil'],
    'pytest_plugin': ['testing'],
    'platform': ['gen'],
}
OPEN_TO_ALL = {'log', '__init__'}


def allowed_imports(layer):
    allowed, todo = set(), list(LAYERS[layer])
    while todo:
        name = todo.pop()
        if name not in allowed:
            allowed.add(name)
            todo.extend(LAYERS[name])
    return allowed | OPEN_TO_ALL | {layer}


def layer_of(module):
    """'tinytornado.crawler.links' -> 'crawler'; 'gen_py3' counts as 'gen'."""
    parts = module.split('.')
    top = parts[1] if len(parts) > 1 else '__init__'
    return top[:-len('_py3')] if top.endswith('_py3') else top


def package_modules():
    for directory, _, files in os.walk(PACKAGE_DIR):
        for filename in files:
            # 2.7 cannot parse the Python-3-only modules; 3.x checks them.
            if filename.endswith('.py') and not (PY2 and filename.endswith('_py3.py')):
                path = os.path.join(directory, filename)
                relative = os.path.relpath(path, os.path.dirname(PACKAGE_DIR))[:-3]
                module = relative.replace(os.sep, '.')
                if module.endswith('.__init__'):
                    module = module[:-len('.__init__')]
                yield module, path


def is_submodule(name):
    path = os.path.join(PACKAGE_DIR, name)
    return os.path.isdir(path) or os.path.exists(path + '.py') or os.path.exists(path + '.c')


def internal_imports(module, path):
    with io.open(path, encoding='utf-8') as f:
        tree = ast.parse(f.read(), path)
    package = module if path.endswith('__init__.py') else module.rpartition('.')[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                anchor = package.split('.')
                anchor = anchor[:len(anchor) - node.level + 1]
                base = '.'.join(anchor + ([base] if base else []))
            names = [base + '.' + alias.name if base == 'tinytornado' and
                     is_submodule(alias.name) else base for alias in node.names]
        else:
            continue
        for name in names:
            if name == 'tinytornado' or name.startswith('tinytornado.'):
                yield node.lineno, name


def test_every_module_has_a_layer():
    unknown = sorted(set(layer_of(m) for m, _ in package_modules()) - set(LAYERS) -
                     OPEN_TO_ALL)
    assert unknown == [], 'add these to LAYERS (and to STYLE.md): %s' % unknown


def test_no_module_imports_upward():
    violations = []
    for module, path in package_modules():
        layer = layer_of(module)
        if layer not in LAYERS:
            continue
        for lineno, name in internal_imports(module, path):
            if layer_of(name) not in allowed_imports(layer):
                violations.append('%s:%d imports %s' % (module, lineno, name))
    assert violations == []


def test_the_checker_sees_imports_inside_functions(tmpdir):
    source = tmpdir.join('probe.py')
    source.write('def f():\n    from tinytornado import gen\n')
    found = list(internal_imports('tinytornado.concurrent', str(source)))
    assert found == [(2, 'tinytornado.gen')]
    assert 'gen' not in allowed_imports('concurrent')
