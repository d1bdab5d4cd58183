"""The bundled eval sets are code-free package data, rebuilt by a maintainer script outside the package
(``scripts/bundle_data.py``) that reproduces them byte for byte from the public releases."""

from __future__ import annotations

import importlib.util
import shutil

from helpers import REPO, shared_file

DATA = REPO / "auditor" / "data"
#: written by hand, not by the script (the Apache-2.0 text it copies, the notices of three releases); the
#: confusables table and the gate's background and synonyms have their own scripts
#: (scripts/build_confusables.py, scripts/build_gate_background.py, scripts/build_gate_synonyms.py), and so
#: have the pinned public releases auditor data fetch downloads (scripts/build_releases.py)
OWN_SCRIPT = ("confusables", "gate_background", "gate_synonyms", "releases")
KEPT = {"stabletoolbench/LICENSE", "stabletoolbench/NOTICE", "tau2/NOTICE", "webshop/NOTICE"}


def test_the_package_data_holds_no_code():
    assert not [p.relative_to(DATA) for p in DATA.rglob("*.py")], "maintainer scripts belong in scripts/"


def test_the_bundle_script_rebuilds_the_bundled_data_byte_for_byte(tmp_path):
    shared = shared_file("webshop/baseline_models/data/human_goals.json").parents[3]
    spec = importlib.util.spec_from_file_location("bundle_data", REPO / "scripts" / "bundle_data.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    out = tmp_path / "data"
    shutil.copytree(DATA, out)
    for p in out.rglob("*"):  # what the script writes, removed first: it must write every byte of it
        if p.is_file() and str(p.relative_to(out)) not in KEPT and not p.name.startswith(OWN_SCRIPT):
            p.unlink()
    script.HERE, script.APACHE_TEXT = out, out / "stabletoolbench" / "LICENSE"
    script.main(str(shared))
    built = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert built == sorted(p.relative_to(DATA) for p in DATA.rglob("*") if p.is_file())
    changed = [rel for rel in built if (out / rel).read_bytes() != (DATA / rel).read_bytes()]
    assert not changed
