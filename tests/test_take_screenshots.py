"""docs/take_screenshots.py: its command line (the README's screenshots are regenerated with it,
one at a time when only one is stale)."""

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "docs" / "take_screenshots.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("take_screenshots", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_help_explains_and_starts_no_browser(script, capsys):
    with pytest.raises(SystemExit) as stopped:
        script.parse_args(["--help"])
    assert stopped.value.code == 0
    out = capsys.readouterr().out
    assert "--only" in out and "expert-evidence" in out and "reader-conflict" in out


def test_only_chooses_screenshots_and_the_predictions_file_is_an_option(script):
    args = script.parse_args(["pw", "http://127.0.0.1:8031", "--only", "expert-evidence"])
    assert (args.password, args.base, args.only) == (
        "pw",
        "http://127.0.0.1:8031",
        ["expert-evidence"],
    )
    args = script.parse_args(["pw", "--only", "reader", "--predictions", "p.csv"])
    assert args.only == ["reader-case"] and args.predictions == Path("p.csv")
    assert args.base == "http://127.0.0.1:8000"
    # The upload preview needs a predictions file: asking for it without one is an error.
    with pytest.raises(SystemExit):
        script.parse_args(["pw", "--only", "pi-upload-preview"])
    with pytest.raises(SystemExit):
        script.parse_args(["pw", "--only", "nonsense"])
