"""``auditor data fetch`` against a real HTTP server on loopback (python's http.server in a thread),
which serves the files of ../shared/data at the URLs raw.githubusercontent.com has them under
(``/OWNER/NAME/COMMIT/PATH``); ``--base-url`` points the fetcher at it. The pins themselves
(``auditor/data/releases.json``) are checked against ../shared/data and rebuilt by their script.
"""

from __future__ import annotations

import hashlib
import http.server
import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import threading
import urllib.parse
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from helpers import REPO, SHARED, shared_file

from auditor.cli import commands, main
from auditor.fetch import releases as rel

PINS = rel.releases()


class Server:
    """Serves ``files`` (URL path → bytes) on 127.0.0.1; ``requests`` lists the paths asked for."""

    def __init__(self, files: dict[str, bytes]):
        self.files = files
        self.requests: list[str] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                path = urllib.parse.unquote(self.path)
                outer.requests.append(path)
                body = outer.files.get(path)
                if body is None:
                    self.send_error(404, "Not Found")
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)  # bound and listening here
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


def _upstream(names: list[str]) -> dict[str, bytes]:
    """The URL paths and bytes of ``names``'s files, from ../shared/data (skips without it)."""
    files = {}
    for name in names:
        for f in PINS[name].files:
            files[f"/{f.repo}/{f.commit}/{f.upstream}"] = shared_file(f.path).read_bytes()
    return files


@pytest.fixture
def server(request):
    srv = Server(_upstream(getattr(request, "param", ["tool-mvr", "webshop"])))
    yield srv
    srv.close()


def fetch(*args: str):
    return CliRunner().invoke(main, ["data", "fetch", *args], catch_exceptions=False)


def _tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()
    }


def test_fetch_writes_the_pinned_files_where_the_tests_look(server, tmp_path):
    dest = tmp_path / "shared" / "data"
    done = fetch("tool-mvr", "--dest", str(dest), "--base-url", server.url)
    assert done.exit_code == 0, done.output
    want = {f.path: f.sha256 for f in PINS["tool-mvr"].files}
    assert _tree(dest) == want
    assert (dest / "tool-mvr/data/RefineToolBench/I3.json").read_bytes() == shared_file(
        "tool-mvr/data/RefineToolBench/I3.json"
    ).read_bytes()
    assert "tool-mvr: 7 files: 7 downloaded, 0 already present and verified (0.3 MB fetched)" in done.output
    assert "zhymma/Tool-MVR @ 6a3652bad4ef; licence: no LICENSE file" in done.output
    assert sorted(server.requests) == sorted(
        f"/zhymma/Tool-MVR/{f.commit}/{f.upstream}" for f in PINS["tool-mvr"].files
    )
    assert all(oct(p.stat().st_mode & 0o777) == "0o644" for p in dest.rglob("*") if p.is_file())


def test_a_rerun_downloads_only_what_is_missing_or_differs(server, tmp_path):
    dest = tmp_path / "d"
    assert fetch("webshop", "--dest", str(dest), "--base-url", server.url).exit_code == 0
    server.requests.clear()
    again = fetch("webshop", "--dest", str(dest), "--base-url", server.url)
    assert again.exit_code == 0 and server.requests == []  # present and verified: nothing asked for
    assert "webshop: 2 files: 0 downloaded, 2 already present and verified (0.0 MB fetched)" in again.output
    goals = dest / "webshop/baseline_models/data/human_goals.json"
    goals.write_text("[]")  # edited locally: not the pinned bytes, fetched again
    (dest / "webshop/baseline_models/data/goal_query_map.json").unlink()
    third = fetch("webshop", "--dest", str(dest), "--base-url", server.url)
    assert third.exit_code == 0 and len(server.requests) == 2
    assert (
        "2 files: 1 downloaded, 1 replaced (not the pinned bytes), 0 already present and verified (1.2 MB fetched)"
        in third.output
    )
    assert _tree(dest) == {f.path: f.sha256 for f in PINS["webshop"].files}


def test_a_wrong_checksum_is_refused_and_leaves_nothing_behind(server, tmp_path):
    dest = tmp_path / "d"
    pin = next(f for f in PINS["tool-mvr"].files if f.path.endswith("I3.json"))
    key = f"/{pin.repo}/{pin.commit}/{pin.upstream}"
    server.files[key] = server.files[key].replace(b"Task", b"Tusk", 1)  # same length, other bytes
    done = CliRunner().invoke(main, ["data", "fetch", "tool-mvr", "--dest", str(dest), "--base-url", server.url])
    assert done.exit_code == 2
    lines = done.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {server.url}{urllib.parse.quote(key)}: SHA-256 ")
    assert f"is not the pinned {pin.sha256} ({pin.bytes} bytes); nothing written to {pin.path}" in lines[0]
    assert not (dest / pin.path).exists()
    assert not [p for p in dest.rglob("*") if p.name.endswith(".tmp")]  # no temp file either
    # a longer file (same start) is refused too: the download reads one byte past the pinned size
    server.files[key] = shared_file(pin.path).read_bytes() + b"\n"
    longer = CliRunner().invoke(main, ["data", "fetch", "tool-mvr", "--dest", str(dest), "--base-url", server.url])
    assert longer.exit_code == 2 and f"({pin.bytes + 1} bytes) is not the pinned" in longer.output
    assert not (dest / pin.path).exists()


def test_an_unreachable_host_is_one_line_naming_it(tmp_path):
    with socket.socket() as s:  # a port nobody listens on: bound, then closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    cmd = [
        sys.executable,
        "-m",
        "auditor",
        "data",
        "fetch",
        "webshop",
        "--dest",
        str(tmp_path / "d"),
        "--base-url",
        base,
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    first = PINS["webshop"].files[0]
    assert done.stderr == (
        f"Error: cannot reach 127.0.0.1:{port} ({first.url(base)}): [Errno 111] Connection refused\n"
    ), done.stderr
    assert not (tmp_path / "d").exists()


def test_an_http_error_and_an_unknown_name_are_one_line(server, tmp_path):
    server.files.clear()
    done = CliRunner().invoke(main, ["data", "fetch", "webshop", "--dest", str(tmp_path), "--base-url", server.url])
    assert done.exit_code == 2 and done.output.count("\n") == 1 and ": HTTP 404 Not Found" in done.output
    assert not list(tmp_path.iterdir())
    typo = CliRunner().invoke(main, ["data", "fetch", "webshp", "--dest", str(tmp_path)])
    assert typo.exit_code == 2
    assert typo.output.startswith("Error: no public release named 'webshp' (did you mean 'webshop'?); known: all, ")


def _docs_block() -> list[str]:
    text = (REPO / "docs" / "data.md").read_text()
    block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


@pytest.mark.parametrize("server", [list(PINS)], indirect=True)
def test_the_documented_commands_rebuild_the_shared_data_folder(server, tmp_path):
    """docs/data.md's commands, run in bash as written (an ``auditor`` on PATH running this checkout,
    the fetch pointed at the loopback server by $AUDITOR_DATA_BASE_URL): ``fetch all`` writes every
    pinned file of every release, byte for byte the folder the tests read."""
    bin_dir, home, dest = tmp_path / "bin", tmp_path / "home", tmp_path / "data"
    bin_dir.mkdir()
    home.mkdir()
    (bin_dir / "auditor").write_text(f'#!/bin/sh\nexec {sys.executable} -m auditor "$@"\n')
    (bin_dir / "auditor").chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", PYTHONPATH=str(REPO), HOME=str(home))
    env |= {"AUDITOR_DATA_BASE_URL": server.url, "AUDITOR_SHARED_DATA": str(dest)}
    lines = _docs_block()
    assert [line.split()[-2:] for line in lines if " fetch " in line] == [["fetch", "all"], ["fetch", "tool-mvr"]]
    outputs = []
    for line in lines:
        done = subprocess.run(["bash", "-c", line], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (line, done.stdout, done.stderr)
        outputs.append(done.stdout)
    assert _tree(dest) == {k: v for k, v in _tree(SHARED).items() if k != "PROVENANCE.md"}
    total = sum(len(r.files) for r in PINS.values())
    assert f"{total} files verified in {dest} (0 were there already)" in outputs[1]
    assert _tree(home / "auditor-data") == {f.path: f.sha256 for f in PINS["tool-mvr"].files}
    assert f"releases in {dest}:" in outputs[0] and "webshop               0/2 " in outputs[0]


def test_the_documented_releases_are_the_pinned_ones():
    """docs/data.md's table: each release with its repository, commits, file count and size, and the
    total its example states."""
    text = (REPO / "docs" / "data.md").read_text()
    rows = re.findall(r"^\| `([\w-]+)` \| \[([\w./-]+)\]\([^)]*\)[^|]* \| ([^|]+) \| (\d+) \| ([\d.]+) \|", text, re.M)
    assert [r[0] for r in rows] == list(PINS)
    for name, repo, commits, files, mb in rows:
        pin = PINS[name]
        assert (repo, len(pin.files), f"{pin.size / 1e6:.1f}") == (pin.repo, int(files), mb), name
        assert sorted(re.findall(r"`(\w+)`", commits)) == sorted(c[:12] for c in pin.commits), name
    total = sum(len(r.files) for r in PINS.values())
    size = round(sum(r.size for r in PINS.values()) / 1e6)
    assert f"every release ({total} files, {size} MB)" in text and f"each of the {total} was checked" in text


def test_every_data_option_is_in_the_cli_table():
    """The CLI table (README's CLI section, or docs/cli.md where it lives) names each option of the
    ``auditor data`` commands."""
    cli_doc = REPO / "docs" / "cli.md"
    table = cli_doc.read_text() if cli_doc.exists() else (REPO / "README.md").read_text().split("\n## CLI\n")[1]
    group = commands()["data"]
    assert isinstance(group, click.Group) and set(group.commands) == {"fetch", "list"}
    assert "`auditor data fetch NAME\\|all`" in table and "`auditor data list`" in table
    for cmd in group.commands.values():
        for param in cmd.params:
            if isinstance(param, click.Option):
                flag = max(param.opts, key=len)
                assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", table), f"auditor data {cmd.name} {flag}"


def test_the_destination_is_shared_data_by_default_or_as_set(server, tmp_path, monkeypatch):
    """Without --dest: $AUDITOR_SHARED_DATA (as tests/helpers.py and the notebooks read it), else
    shared/data beside this checkout (helpers.py's default)."""
    assert rel.checkout_data_folder() == REPO.parent / "shared" / "data"
    monkeypatch.setenv("AUDITOR_SHARED_DATA", str(tmp_path / "env"))
    assert fetch("webshop", "--base-url", server.url).exit_code == 0
    assert len(_tree(tmp_path / "env")) == 2
    listing = CliRunner().invoke(main, ["data", "list"], catch_exceptions=False).output
    assert f"releases in {tmp_path / 'env'}:" in listing
    assert "webshop               2/2   files    1.2 MB  princeton-nlp/WebShop @ 64fa2a5c15c7" in listing
    assert "tool-mvr              0/7   files" in listing


def test_the_pins_are_the_shared_data_files_and_the_script_rebuilds_them(tmp_path):
    """releases.json names every file of ../shared/data (PROVENANCE.md aside) with its SHA-256 and
    size, and scripts/build_releases.py writes it byte for byte from that folder."""
    shared_file("PROVENANCE.md")
    pinned = {f.path: (f.sha256, f.bytes) for r in PINS.values() for f in r.files}
    on_disk = {p: (sha, (SHARED / p).stat().st_size) for p, sha in _tree(SHARED).items() if p != "PROVENANCE.md"}
    assert pinned == on_disk
    assert all(len(f.commit) == 40 and f.path.startswith(f"{r.name}/") for r in PINS.values() for f in r.files)
    spec = importlib.util.spec_from_file_location("build_releases", REPO / "scripts" / "build_releases.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    script.main(str(SHARED), tmp_path / "releases.json")
    assert (tmp_path / "releases.json").read_bytes() == rel.RELEASES.read_bytes()
    assert json.loads(rel.RELEASES.read_text())["format"] == rel.RELEASES_FORMAT


def test_a_skipped_test_names_the_command_that_fetches_its_data(tmp_path, monkeypatch):
    import helpers

    monkeypatch.setattr(helpers, "SHARED", tmp_path)
    with pytest.raises(pytest.skip.Exception) as skipped:
        helpers.shared_file("webshop/baseline_models/data/human_goals.json")
    assert "auditor data fetch webshop" in str(skipped.value) and str(tmp_path) in str(skipped.value)
