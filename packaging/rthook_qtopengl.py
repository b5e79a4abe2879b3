"""Runtime hook of the bundle: a stand-in for ``PySide6.QtOpenGL``, which the bundle leaves out.

The module's bindings are 8.5 MB. pyqtgraph imports it when it starts (``pyqtgraph.Qt.OpenGLHelpers``, the
curve and colour-mesh items) but uses it only to draw with OpenGL, which the app never turns on. Where the real
module is missing, a module of that name stands in; anything asked of it raises an AttributeError that says
why. (Its finder is the last one asked: an installed QtOpenGL is always found first.)
"""

import importlib.abc
import importlib.machinery
import sys
import types

NAME = "PySide6.QtOpenGL"


class _Absent(types.ModuleType):
    def __getattr__(self, attr: str) -> object:
        raise AttributeError(f"{NAME}.{attr}: OpenGL drawing is not part of the standalone app")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        return importlib.machinery.ModuleSpec(fullname, self) if fullname == NAME else None

    def create_module(self, spec):
        return _Absent(spec.name)

    def exec_module(self, module):
        return None


sys.meta_path.append(_Finder())
