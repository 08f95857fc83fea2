"""Which class a configurable base builds: the `configure` half of Tornado 5.1's Configurable.

`IOLoop`, `Resolver` and `AsyncHTTPClient` each let legacy code choose, once, the class that
calling the base makes (``IOLoop.configure('tornado.platform.asyncio.AsyncIOLoop')``). The
choice lives on the base class, so every subclass sees the same one. How the base then
builds that class is its own business (a small ``__new__`` or a metaclass): 5.1's generic
``__new__`` is not copied here.
"""
from __future__ import absolute_import, division, print_function

import importlib

from tinytornado._compat import string_types

__all__ = ['Configurable', 'import_class', 'import_object']


class Configurable(object):
    """A mixin of classmethods; a base defines `configurable_base` and
    `configurable_default`.

    Tornado 5.1's Configurable (``tinytornado.util.Configurable`` is this class) also had
    a ``__new__`` that built the configured class and called its ``initialize``. This one
    has neither: a subclass builds the configured class itself, as `IOLoop`, `Resolver` and
    `AsyncHTTPClient` do, so calling a base that does not gives an instance of the base.
    """

    _configured = (None, {})  # (class or None for the default, keyword arguments)

    @classmethod
    def configurable_base(cls):
        """The class whose calls build the configured class."""
        raise NotImplementedError()

    @classmethod
    def configurable_default(cls):
        """The class built when none is configured."""
        raise NotImplementedError()

    @classmethod
    def configure(cls, impl, **kwargs):
        """Make calls of the base build `impl`, with `kwargs` under the caller's arguments.

        Args:
            impl: a subclass of this class, its dotted name (``'tornado.'`` names mean
                tinytornado's), or None for the default.
        Raises:
            ImportError: no class by that name.
            TypeError: `impl` is neither a class nor a name.
            ValueError: `impl` is not a subclass of this class that can be built.
        """
        base = cls.configurable_base()
        if isinstance(impl, string_types):
            impl = import_class(impl)
        if impl is not None:
            if not isinstance(impl, type):
                raise TypeError('%s.configure takes a subclass or its dotted name, not %r'
                                % (cls.__name__, impl))
            abstract = impl is base and base is not base.configurable_default()
            if abstract or not issubclass(impl, cls):
                raise ValueError('Invalid subclass of %s: %s.%s' % (
                    cls.__name__, impl.__module__, impl.__name__))
        base._configured = (impl, kwargs)

    @classmethod
    def configured_class(cls):
        """The class calls of the base build now."""
        base = cls.configurable_base()
        return base.configured()[0] or base.configurable_default()

    @classmethod
    def configured(cls):
        """``(class or None, keyword arguments)`` as `configure` left them for this base."""
        # Read from the base's own __dict__: in a hierarchy with a configurable base below
        # another, the lower base must not inherit the upper one's choice.
        return cls.configurable_base().__dict__.get('_configured', (None, {}))

    @classmethod
    def _save_configuration(cls):
        return cls.configured()

    @classmethod
    def _restore_configuration(cls, saved):
        cls.configurable_base()._configured = saved


def import_class(name):
    """The class a dotted name names, for `Configurable.configure`: see `import_object`."""
    if '.' not in name:
        raise ImportError('cannot import %r: not a dotted name' % (name,))
    return import_object(name)


def import_object(name):
    """The module or object a dotted name names; ``tornado.x`` means ``tinytornado.x``.

    ``import_object('x.y.z')`` is ``from x.y import z`` (z may be a submodule) and
    ``import_object('x')`` is ``import x``. So legacy code that switched its imports keeps
    its ``configure`` strings. Tornado itself, even if installed, is never tried: its
    classes are not subclasses of ours.

    Raises:
        ImportError: no module, or no object in it, by that name.
    """
    path = 'tiny' + name if name == 'tornado' or name.startswith('tornado.') else name
    module_name, _, leaf = path.rpartition('.')
    if not module_name:
        return _import_module(name, path)
    module = _import_module(name, module_name)
    try:
        return getattr(module, leaf)
    except AttributeError:
        if not hasattr(module, '__path__'):  # not a package, so no submodule either
            raise ImportError('cannot import %r: module %s has no %s'
                              % (name, module_name, leaf))
    return _import_module(name, path)


def _import_module(name, module_name):
    try:
        return importlib.import_module(module_name)
    except ImportError as e:
        raise ImportError('cannot import %r: %s' % (name, e))
