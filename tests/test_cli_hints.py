"""Unknown names get a "did you mean" (difflib), and a bad split shows the split syntax."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from auditor.cli import main


def _error(*args: str) -> str:
    res = CliRunner().invoke(main, ["audit", *args])
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert len(res.output.strip().splitlines()) == 1
    return res.output


@pytest.mark.parametrize(
    "args, hint",
    [
        (["--eval", "webshop:0:10", "--train", "webshop:10:20", "--method", "embeding"], "did you mean 'embedding'?"),
        (["--eval", "webshop:0:10", "--train", "webshop:10:20", "--train-format", "chatt"], "did you mean 'chat'?"),
        (["--eval", "webshp:0:10", "--train", "webshop:10:20"], "did you mean 'webshop'?"),
        (["--eval", "tau2-airline:tset", "--train", "webshop:10:20"], "did you mean 'test'?"),
        (["--eval", "webshop:0-500", "--train", "webshop:10:20"], "did you mean '0:500'?"),
    ],
)
def test_did_you_mean(args, hint):
    assert hint in _error(*args)


def test_bad_split_shows_the_split_syntax():
    out = _error("--eval", "webshop:0-500", "--train", "webshop:500:")
    assert "NAME:START:END" in out and "NAME:SPLIT" in out and "webshop:0:500" in out


def test_manifest_dataset_name_hint(tmp_path):
    m = tmp_path / "split.toml"
    m.write_text(
        '[datasets.test]\npath = "webshop:0:5"\nrole = "eval"\n[datasets.train]\npath = "webshop:5:9"\n'
        'role = "train"\n[[checks]]\nname = "c"\ntrain = ["trian"]\neval = ["test"]\n'
    )
    res = CliRunner().invoke(main, ["verify", str(m)])
    assert res.exit_code == 2 and "unknown dataset 'trian' (did you mean 'train'?)" in res.output
