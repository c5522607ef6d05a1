"""Loading the runnable examples as modules, the way `python examples/NAME.py` would."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load_example(name: str, module_name: str | None = None) -> ModuleType:
    """Import examples/NAME.py under `module_name` (registered, so pydantic resolves its annotations)."""
    spec = importlib.util.spec_from_file_location(module_name or f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
