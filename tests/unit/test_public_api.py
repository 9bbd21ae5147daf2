from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest

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


def test_the_verifier_is_the_entry_point_and_is_imported_on_first_use():
    """``import sciverify`` stays light (no pipeline, no numpy) for a scorer; ``sciverify.Verifier`` is
    the pipeline's Verifier, loaded when asked for (tests/e2e/test_shipped_decision.py loads and runs it)."""
    code = (
        "import sys, sciverify\n"
        "print(sorted(m for m in ('numpy', 'sciverify.pipeline.verify') if m in sys.modules))\n"
        "from sciverify import Verifier\n"
        "print(Verifier.__module__, callable(Verifier.load), callable(Verifier.verify))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["[]", "sciverify.pipeline.verify True True"]


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Verifer'"):
        sciverify.Verifer  # noqa: B018
