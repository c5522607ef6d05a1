"""`elicitkit.channels` imports with no optional dependency, and a channel whose extra is missing says which."""

from __future__ import annotations

import subprocess
import sys

BLOCK = "import sys\nfor m in ('httpx', 'jwt', 'slack_sdk', 'aiohttp'): sys.modules[m] = None\n"


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", BLOCK + code], capture_output=True, text=True, timeout=60)


def test_the_package_and_the_destination_helpers_import_without_any_channel_extra() -> None:
    done = run(
        "import elicitkit, elicitkit.channels as c\n"
        "assert c.web('a').channel == 'web' and c.slack('#x').channel == 'slack'\n"
        "assert 'elicitkit.channels._slack' not in sys.modules\n"
        "print(c.WebInbox.__name__)"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "WebInbox"


def test_a_channel_whose_extra_is_missing_names_the_extra_to_install() -> None:
    for name, extra in (("DiscordChannel", "discord"), ("TeamsChannel", "teams")):
        done = run(f"import elicitkit.channels as c\nc.{name}")
        assert done.returncode == 1
        assert f"{name} needs httpx: pip install 'elicitkit[{extra}]'" in done.stderr


def test_an_unknown_name_is_an_attribute_error() -> None:
    done = run("import elicitkit.channels as c\ntry:\n    c.SMSChannel\nexcept AttributeError as e:\n    print(e)")
    assert "has no attribute 'SMSChannel'" in done.stdout
