from __future__ import annotations

import importlib
import pkgutil

import sciverify


def test_exported_members_exist():
    for name in sciverify.__all__:
        assert hasattr(sciverify, name), name


def test_every_module_declares_all_and_imports_cleanly():
    for info in pkgutil.walk_packages(sciverify.__path__, "sciverify."):
        if info.name.endswith("__main__") or ".migrations" in info.name:
            continue
        module = importlib.import_module(info.name)
        if not info.ispkg:
            assert hasattr(module, "__all__"), f"{info.name} has no __all__"
            for name in module.__all__:
                assert hasattr(module, name), f"{info.name}.{name}"
