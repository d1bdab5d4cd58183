"""Formats users have (issue 37, item 6): bzip2 / xz and compression told by magic number, zip and tar
archives, YAML, Arrow IPC files and Hugging Face ``datasets`` folders, UTF-16 / UTF-32 and declared
encodings, semicolon / pipe / headerless CSV, field names in another case.

Every format is checked end to end on real files written here: a training file holding the planted
eval item ``LEAK`` fails the audit (exit 1) and its clean counterpart passes (exit 0); a damaged
input is one line on stderr naming it, exit 2, never a traceback.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import struct
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pyarrow as pa
import pyarrow.feather as feather
import pytest
import zstandard
from hostile import EVAL_ITEMS, LEAK, REPO, cli, jl, report, write_eval

from auditor.adapters import detect
from auditor.adapters._csvlayout import csv_layout
from auditor.datasets.dataset import Dataset, DatasetSpec
from auditor.io import archive as archive_io

LEAKY = [
    {"id": "t1", "text": f"User: {LEAK}\nAssistant: sure"},
    {"id": "t2", "text": "an unrelated training record about cooking pasta al dente"},
]
CLEAN = [
    {"id": "t1", "text": "an unrelated training record about cooking pasta al dente"},
    {"id": "t2", "text": "the museum opens at nine and closes at five on weekdays"},
]


def audit(tmp_path: Path, train: str | Path, *extra: str, eval_: str | Path | None = None, name: str = "r"):
    ev = eval_ if eval_ is not None else write_eval(tmp_path)
    out = tmp_path / name
    res = cli("audit", "--eval", str(ev), "--train", str(train), "--report-dir", str(out), *extra)
    return res, out


def assert_one_line_error(res, *words: str) -> str:
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    err = res.stderr.strip()
    assert "\n" not in err and "Traceback" not in res.output, err
    for w in words:
        assert w in err, err
    return err


def check_pair(tmp_path: Path, write, *extra: str) -> dict:
    """``write(folder, records) -> path`` for the leaky and the clean records: exit 1, then exit 0."""
    (tmp_path / "leaky").mkdir()
    (tmp_path / "clean").mkdir()
    leaky = write(tmp_path / "leaky", LEAKY)
    res, out = audit(tmp_path, leaky, *extra, name="r1")
    assert res.exit_code == 1, res.output
    doc = report(out)
    assert doc["checks"][0]["contaminated_items"] == 1, doc["checks"][0]
    clean = write(tmp_path / "clean", CLEAN)
    res, out2 = audit(tmp_path, clean, *extra, name="r0")
    assert res.exit_code == 0, res.output
    assert report(out2)["verdict"] == "pass"
    return doc


def _flat(record: dict) -> str:
    """A record's text on one line (an unquoted CSV cell)."""
    return record["text"].replace("\n", " ")


def _sources(doc: dict) -> set[str]:
    return {f["train_source"] for f in doc["findings"]}


# --- compression -----------------------------------------------------------------------------------

COMPRESSORS = {
    "bz2": bz2.compress,
    "xz": lzma.compress,
    "gz": gzip.compress,
    "zst": zstandard.ZstdCompressor().compress,
}


@pytest.mark.parametrize("kind", ["bz2", "xz"])
def test_bz2_and_xz_files(tmp_path, kind):
    def write(folder, records):
        p = folder / f"train.jsonl.{kind}"
        p.write_bytes(COMPRESSORS[kind](jl(*records)))
        return p

    check_pair(tmp_path, write)


@pytest.mark.parametrize("kind", sorted(COMPRESSORS))
@pytest.mark.parametrize("name", ["train", "train.jsonl"])
def test_compression_told_by_magic_number_whatever_the_name(tmp_path, kind, name):
    def write(folder, records):
        p = folder / name
        p.write_bytes(COMPRESSORS[kind](jl(*records)))
        return p

    check_pair(tmp_path, write)


def test_compressed_csv_by_magic(tmp_path):
    def write(folder, records):
        p = folder / "train.csv"
        body = "id,text\n" + "".join(f'{r["id"]},"{r["text"]}"\n' for r in records)
        p.write_bytes(gzip.compress(body.encode()))
        return p

    check_pair(tmp_path, write)


@pytest.mark.parametrize("kind", ["bz2", "xz", "gz", "zst"])
def test_truncated_compressed_file_is_one_line(tmp_path, kind):
    p = tmp_path / f"train.jsonl.{kind}"
    p.write_bytes(COMPRESSORS[kind](jl(*LEAKY) * 200)[:-40])
    res, _ = audit(tmp_path, p)
    assert_one_line_error(res, str(p), "truncated compressed data")


def test_corrupt_xz_is_one_line(tmp_path):
    data = bytearray(lzma.compress(jl(*LEAKY) * 200))
    data[40] ^= 0xFF
    p = tmp_path / "train.jsonl.xz"
    p.write_bytes(bytes(data))
    res, _ = audit(tmp_path, p)
    assert_one_line_error(res, str(p), "compressed data")


# --- archives --------------------------------------------------------------------------------------


def _zip(folder: Path, records, name="data.zip", method=zipfile.ZIP_DEFLATED) -> Path:
    p = folder / name
    with zipfile.ZipFile(p, "w", method) as z:
        z.writestr("README.md", "# a dataset card: not data\n")
        z.writestr("LICENSE", "CC-BY-4.0\n")
        z.writestr("__MACOSX/._train.jsonl", b"\x00\x05\x16\x07 resource fork")
        z.writestr("data/", "")
        z.writestr("data/part-0.jsonl", jl(records[1]))
        z.writestr("data/part-1.csv", "id,text\n" + "".join(f'{r["id"]},"{r["text"]}"\n' for r in records[:1]))
    return p


@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_zip_members_read_by_their_own_format(tmp_path, method):
    doc = check_pair(tmp_path, lambda folder, records: _zip(folder, records, method=method))
    (src,) = _sources(doc)
    assert src == f"{tmp_path / 'leaky' / 'data.zip'}!data/part-1.csv:2"
    ds = next(iter(d for d in doc["datasets"].values() if d["role"] == "train"))
    assert ds["records"] == 2 and ds["skipped"] == 0


def _tar(folder: Path, records, name: str, mode: str) -> Path:
    p = folder / name
    with tarfile.open(p, mode) as t:
        for member, data in (
            ("./README.md", b"# card\n"),
            ("./train/a.json", json.dumps(records[1:]).encode()),
            ("./train/b.jsonl.gz", gzip.compress(jl(records[0]))),
        ):
            info = tarfile.TarInfo(member)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("./train/link.jsonl")
        link.type, link.linkname = tarfile.SYMTYPE, "b.jsonl.gz"
        t.addfile(link)
    return p


@pytest.mark.parametrize(
    ("name", "mode"),
    [("d.tar", "w"), ("d.tar.gz", "w:gz"), ("d.tgz", "w:gz"), ("d.tar.bz2", "w:bz2"), ("d.tar.xz", "w:xz")],
)
def test_tar_members_read_by_their_own_format(tmp_path, name, mode):
    doc = check_pair(tmp_path, lambda folder, records: _tar(folder, records, name, mode))
    (src,) = _sources(doc)
    assert src == f"{tmp_path / 'leaky' / name}!train/b.jsonl.gz:1"


def test_tar_zst_and_an_archive_told_by_content(tmp_path):
    def write(folder, records):
        plain = _tar(folder, records, "x.tar", "w")
        p = folder / "dataset.bin"  # neither name says tar nor zstd
        p.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
        plain.unlink()
        return p

    check_pair(tmp_path, write)
    z = _zip(tmp_path, LEAKY, name="blob")
    assert detect(z).name == "archive"


def test_big_tar_member_of_a_compressed_stream_goes_through_a_temp_file(tmp_path, monkeypatch):
    monkeypatch.setattr(archive_io, "SPOOL_MEMORY", 64)  # every member is "large"
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr("tempfile.tempdir", None)
    p = _tar(tmp_path, LEAKY, "d.tar.gz", "w:gz")
    ds = Dataset(DatasetSpec("d", [str(p)]))
    assert sorted(r.source for r in ds.records()) == [f"{p}!train/a.json#0", f"{p}!train/b.jsonl.gz:1"]
    assert list(tmp.iterdir()) == []  # the spooled copies are gone


def test_archive_format_given_applies_to_its_members(tmp_path):
    p = tmp_path / "d.zip"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("q.data", jl({"question": LEAK}))
    res, out = audit(tmp_path, p, "--train-format", "jsonl")
    assert res.exit_code == 1, res.output
    assert _sources(report(out)) == {f"{p}!q.data:1"}


def test_corrupt_zip_is_one_line(tmp_path):
    good = _zip(tmp_path, LEAKY)
    p = tmp_path / "cut.zip"
    p.write_bytes(good.read_bytes()[:-30])  # the central directory is cut
    res, _ = audit(tmp_path, p)
    assert_one_line_error(res, f"Error: {p}:", "corrupt zip archive")


def test_zip_member_with_bad_data_is_one_line_naming_it(tmp_path):
    p = tmp_path / "d.zip"
    body = jl(*LEAKY) * 50
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("train.jsonl", body)
    raw = bytearray(p.read_bytes())
    raw[30 + len("train.jsonl") + 20] ^= 0xFF  # inside the member's deflate data
    p.write_bytes(bytes(raw))
    res, _ = audit(tmp_path, p)
    assert_one_line_error(res, f"Error: {p}!train.jsonl", "corrupt zip member")


def _encrypted(p: Path) -> None:
    """Set the 'encrypted' flag of every entry (zipfile writes no encrypted archive; the flag is what a
    reader sees first), in the local headers and the central directory."""
    raw = bytearray(p.read_bytes())
    for sig, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        i = raw.find(sig)
        while i != -1:
            (flags,) = struct.unpack_from("<H", raw, i + offset)
            struct.pack_into("<H", raw, i + offset, flags | 0x1)
            i = raw.find(sig, i + 4)
    p.write_bytes(bytes(raw))


def test_encrypted_zip_is_one_line(tmp_path):
    p = tmp_path / "secret.zip"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("train.jsonl", jl(*LEAKY))
    _encrypted(p)
    with zipfile.ZipFile(p) as z:  # the crafted flag is what zipfile itself refuses
        with pytest.raises(RuntimeError, match="encrypted"):
            z.read("train.jsonl")
    res, _ = audit(tmp_path, p)
    assert_one_line_error(res, f"Error: {p}!train.jsonl", "encrypted")


def test_bad_member_skipped_with_on_error_skip_and_the_rest_read(tmp_path):
    p = tmp_path / "d.zip"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("a.jsonl", b'{"id": "x", "text": "caf\xe9"}\n')
        z.writestr("notes.dat", b"\x00\x01 not a format auditor reads")
        z.writestr("b.jsonl", jl(*LEAKY))
    res, out = audit(tmp_path, p, "--on-error", "skip")
    assert res.exit_code == 1, res.output
    doc = report(out)
    check = doc["checks"][0]
    assert check["contaminated_items"] == 1 and check["verdict"] in ("fail", "incomplete")
    ds = next(d for d in doc["datasets"].values() if d["role"] == "train")
    assert ds["records"] == 2 and ds["skipped"] == 2, ds
    assert any("not valid UTF-8" in r for r in ds["skip_reasons"]) and any(
        "notes.dat" in e for e in ds["skip_examples"]
    )


@pytest.mark.parametrize("cut", ["header", "boundary"])
def test_truncated_tar_is_one_line(tmp_path, cut):
    full = _tar(tmp_path, LEAKY, "full.tar", "w").read_bytes()
    with tarfile.open(tmp_path / "full.tar") as t:
        members = t.getmembers()
    if cut == "boundary":  # where the second member's data ends: no further header, no end-of-archive marker
        m = members[1]
        end = m.offset_data + ((m.size + 511) // 512) * 512
    else:  # inside the third member's header
        end = members[2].offset + 100
    for name, data in (("cut.tar", full[:end]), ("cut.tar.gz", gzip.compress(full[:end]))):
        p = tmp_path / name
        p.write_bytes(data)
        res, _ = audit(tmp_path, p, name=f"r-{name}")
        assert_one_line_error(res, f"Error: {p}", "tar archive")


def test_archive_without_data_is_an_error(tmp_path):
    p = tmp_path / "docs.zip"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("README.md", "# nothing here")
    res, _ = audit(tmp_path, p)
    assert_one_line_error(res, str(p), "no data file in the archive", "README.md")


def test_zip_inside_a_zip_is_refused_by_name(tmp_path):
    inner = _zip(tmp_path, LEAKY, name="inner.zip")
    p = tmp_path / "outer.zip"
    with zipfile.ZipFile(p, "w") as z:
        z.write(inner, "inner.zip")
    res, _ = audit(tmp_path, p)
    assert_one_line_error(res, f"{p}!inner.zip", "an archive inside an archive")


def test_inspect_lists_the_members_read_and_left_out(tmp_path):
    p = _zip(tmp_path, LEAKY)
    res = cli("inspect", str(p))
    assert res.exit_code == 0, res.output
    assert "format archive" in res.output and "2 members read (data/part-0.jsonl, data/part-1.csv)" in res.output
    assert "left out as not data: README.md, LICENSE, __MACOSX/._train.jsonl" in res.output


def test_write_clean_of_an_archive(tmp_path):
    p = _zip(tmp_path, LEAKY)
    res, _ = audit(tmp_path, p, "--write-clean", str(tmp_path / "clean"))
    assert res.exit_code == 1, res.output
    written = json.loads((tmp_path / "clean" / "data" / "data.zip.jsonl").read_text().splitlines()[0])
    assert written["source"] == f"{p}!data/part-0.jsonl:1"
    res = cli("verify", str(tmp_path / "clean" / "split.toml"))
    assert res.exit_code == 0, res.output


# --- YAML ------------------------------------------------------------------------------------------


def _yaml_list(folder, records):
    import yaml

    p = folder / "train.yaml"
    p.write_text(yaml.safe_dump(records, sort_keys=False))
    return p


def _yaml_docs(folder, records):
    import yaml

    p = folder / "train.yml"
    p.write_text("".join("---\n" + yaml.safe_dump(r) for r in records) + "---\n")
    return p


def _yaml_map(folder, records):
    p = folder / "train.yaml"
    p.write_text("".join(f"{r['id']}: {json.dumps(r['text'])}\n" for r in records))
    return p


@pytest.mark.parametrize("write", [_yaml_list, _yaml_docs, _yaml_map], ids=["list", "documents", "mapping"])
def test_yaml(tmp_path, write):
    doc = check_pair(tmp_path, write)
    assert {f["train_id"] for f in doc["findings"]} == {"t1"}


def test_yaml_eval_set_and_named_reader(tmp_path):
    import yaml

    ev = tmp_path / "eval.yaml"
    ev.write_text(yaml.safe_dump([{"instruction": i["text"], "input": "", "output": "ok"} for i in EVAL_ITEMS]))
    assert detect(ev).name == "alpaca"
    train = tmp_path / "t.jsonl"
    train.write_bytes(jl(*LEAKY))
    res, out = audit(tmp_path, train, eval_=ev)
    assert res.exit_code == 1, res.output
    assert report(out)["checks"][0]["contaminated_items"] == 1


def test_yaml_unsafe_tag_and_bad_yaml_are_one_line(tmp_path):
    p = tmp_path / "evil.yaml"
    p.write_text("- id: 1\n  text: !!python/object/apply:os.system ['touch pwned']\n")
    res, _ = audit(tmp_path, p)
    assert_one_line_error(res, f"{p}:line 2", "invalid YAML", "could not determine a constructor")
    assert not (REPO / "pwned").exists() and not Path("pwned").exists()
    p = tmp_path / "bad.yaml"
    p.write_text("- id: 1\n  text: [unclosed\n- id: 2\n")
    res, _ = audit(tmp_path, p, name="r2")
    assert_one_line_error(res, f"{p}:line", "invalid YAML")


def test_yaml_alias_bomb_is_refused(tmp_path):
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, cur in zip("abcdefg", "bcdefgh"):
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    p = tmp_path / "bomb.yaml"
    p.write_text("\n".join(lines) + "\n")
    res, _ = audit(tmp_path, p)
    assert_one_line_error(res, str(p), "alias bomb")


def test_yaml_without_pyyaml_is_one_line(tmp_path):
    p = _yaml_list(tmp_path, LEAKY)
    ev = write_eval(tmp_path)
    code = (
        "import sys; sys.modules['yaml'] = None\n"  # as if PyYAML were not installed
        "from auditor.cli import main\n"
        f"main(['audit', '--eval', {str(ev)!r}, '--train', {str(p)!r}, '--report-dir', {str(tmp_path / 'r')!r}])\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == 2, r.stderr
    err = r.stderr.strip()
    assert "\n" not in err and "pip install 'auditor[yaml]'" in err, err


# --- Arrow and Hugging Face datasets folders -------------------------------------------------------


def _table(records) -> pa.Table:
    return pa.table({"id": [r["id"] for r in records], "text": [r["text"] for r in records]})


def _arrow_file(folder, records):
    p = folder / "train.arrow"
    t = _table(records)
    with pa.ipc.new_file(str(p), t.schema) as w:
        w.write_table(t, max_chunksize=1)  # a batch per row
    return p


def _arrow_stream(folder, records):
    p = folder / "train.arrow"
    t = _table(records)
    with pa.ipc.new_stream(str(p), t.schema) as w:
        w.write_table(t)
    return p


def _feather(folder, records):
    p = folder / "train.feather"
    feather.write_feather(_table(records), str(p))
    return p


def save_to_disk(folder: Path, records, name: str = "ds", shards: int = 1) -> Path:
    """A folder in the exact layout ``datasets.Dataset.save_to_disk`` writes: Arrow stream shards,
    ``dataset_info.json`` and ``state.json`` listing the shards."""
    d = folder / name
    d.mkdir()
    t = _table(records)
    meta = {"huggingface": json.dumps({"info": {"features": {"id": {"dtype": "string", "_type": "Value"}}}})}
    t = t.replace_schema_metadata(meta)
    files = []
    per = -(-len(records) // shards)
    for i in range(shards):
        fname = f"data-{i:05d}-of-{shards:05d}.arrow"
        with pa.ipc.new_stream(str(d / fname), t.schema) as w:
            w.write_table(t.slice(i * per, per))
        files.append({"filename": fname})
    (d / "dataset_info.json").write_text(
        json.dumps(
            {
                "citation": "",
                "description": "",
                "features": {
                    "id": {"dtype": "string", "_type": "Value"},
                    "text": {"dtype": "string", "_type": "Value"},
                },
                "homepage": "",
                "license": "",
            },
            indent=2,
        )
    )
    (d / "state.json").write_text(
        json.dumps(
            {
                "_data_files": files,
                "_fingerprint": "0123456789abcdef",
                "_format_columns": None,
                "_format_kwargs": {},
                "_format_type": None,
                "_output_all_columns": False,
                "_split": None,
            },
            indent=2,
        )
    )
    return d


@pytest.mark.parametrize("write", [_arrow_file, _arrow_stream, _feather], ids=["file", "stream", "feather"])
def test_arrow_ipc(tmp_path, write):
    doc = check_pair(tmp_path, write)
    assert {f["train_id"] for f in doc["findings"]} == {"t1"}


def test_save_to_disk_folder(tmp_path):
    doc = check_pair(tmp_path, lambda folder, records: save_to_disk(folder, records, shards=2))
    (src,) = _sources(doc)
    assert src == f"{tmp_path / 'leaky' / 'ds' / 'data-00000-of-00002.arrow'}#0"


def test_save_to_disk_folder_as_eval_set(tmp_path):
    ds = save_to_disk(tmp_path, EVAL_ITEMS, name="ev")
    train = tmp_path / "t.jsonl"
    train.write_bytes(jl(*LEAKY))
    res, out = audit(tmp_path, train, eval_=ds)
    assert res.exit_code == 1, res.output
    ev = next(d for d in report(out)["datasets"].values() if d["role"] == "eval")
    assert ev["records"] == 3 and ev["files"] == [str(ds / "data-00000-of-00001.arrow")]


@pytest.mark.parametrize("given", ["*.json", "state.json", "dataset_info.json", "*info*"])
def test_save_to_disk_metadata_alone_never_passes(tmp_path, given):
    ds = save_to_disk(tmp_path, LEAKY)
    for role in ("train", "eval"):
        if role == "train":
            res, _ = audit(tmp_path, f"{ds}/{given}", name=f"r-{role}")
        else:
            train = tmp_path / "t.jsonl"
            train.write_bytes(jl(*CLEAN))
            res, _ = audit(tmp_path, train, eval_=f"{ds}/{given}", name=f"r-{role}")
        assert_one_line_error(res, "metadata of a Hugging Face datasets folder", "data-00000-of-00001.arrow")


def test_save_to_disk_glob_with_its_data_reads_the_data(tmp_path):
    ds = save_to_disk(tmp_path, LEAKY)
    res, out = audit(tmp_path, f"{ds}/*")
    assert res.exit_code == 1, res.output
    tr = next(d for d in report(out)["datasets"].values() if d["role"] == "train")
    assert tr["files"] == [str(ds / "data-00000-of-00001.arrow")] and tr["records"] == 2


def test_dataset_dict_folder_names_its_splits(tmp_path):
    dd = tmp_path / "dd"
    dd.mkdir()
    save_to_disk(dd, LEAKY, name="train")
    save_to_disk(dd, CLEAN, name="test")
    (dd / "dataset_dict.json").write_text(json.dumps({"splits": ["train", "test"]}))
    res, _ = audit(tmp_path, dd)
    assert_one_line_error(res, "DatasetDict", "train, test", str(dd / "train"))
    res, out = audit(tmp_path, dd / "train", name="r2")
    assert res.exit_code == 1, res.output


def test_hf_cache_folder(tmp_path):
    d = tmp_path / "cache" / "squad" / "plain_text" / "1.0.0" / "abc123"
    d.mkdir(parents=True)
    (d / "dataset_info.json").write_text(json.dumps({"builder_name": "squad", "features": {}}))
    for split, records in (("train", LEAKY), ("validation", CLEAN)):
        t = _table(records)
        with pa.ipc.new_stream(str(d / f"squad-{split}.arrow"), t.schema) as w:
            w.write_table(t)
    res, _ = audit(tmp_path, d)
    assert_one_line_error(res, "several splits", "train, validation")
    res, out = audit(tmp_path, f"{d}/*-train*.arrow", name="r2")
    assert res.exit_code == 1, res.output
    (d / "squad-validation.arrow").unlink()
    res, out = audit(tmp_path, d, name="r3")
    assert res.exit_code == 1, res.output


def test_corrupt_arrow_is_one_line(tmp_path):
    good = _arrow_stream(tmp_path, LEAKY)
    p = tmp_path / "cut.arrow"
    p.write_bytes(good.read_bytes()[:-60])
    res, _ = audit(tmp_path, p)
    assert_one_line_error(res, str(p), "unreadable Arrow IPC data")


def test_arrow_rows_come_in_bounded_slices(tmp_path):
    """One batch of 5,000 rows is handed out 1,024 rows at a time, in order."""
    from auditor.io import arrowread

    p = tmp_path / "big.arrow"
    t = pa.table({"text": [f"row {i}" for i in range(5000)]})
    with pa.ipc.new_stream(str(p), t.schema) as w:
        w.write_table(t, max_chunksize=5000)
    rows = arrowread.arrow_rows(p)
    first = [next(rows) for _ in range(3)]
    assert first == [(0, {"text": "row 0"}), (1, {"text": "row 1"}), (2, {"text": "row 2"})]
    assert sum(1 for _ in rows) == 4997


def test_write_clean_of_arrow_and_yaml_keeps_their_format(tmp_path):
    arrow = _arrow_stream(tmp_path, LEAKY)
    res, _ = audit(tmp_path, arrow, "--write-clean", str(tmp_path / "c1"), name="r1")
    assert res.exit_code == 1, res.output
    (written,) = (tmp_path / "c1").glob("*/train.arrow")
    assert pa.ipc.open_stream(str(written)).read_all().to_pylist() == [LEAKY[1]]
    y = _yaml_list(tmp_path, LEAKY)
    res, _ = audit(tmp_path, y, "--write-clean", str(tmp_path / "c2"), name="r2")
    assert res.exit_code == 1, res.output
    import yaml

    (written,) = (tmp_path / "c2").glob("*/train.yaml")
    assert yaml.safe_load(written.read_text()) == [LEAKY[1]]
    assert cli("verify", str(tmp_path / "c2" / "split.toml")).exit_code == 0


# --- encodings -------------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig"])
def test_byte_order_marks(tmp_path, codec):
    bom = {"utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff"}.get(codec, b"")

    def write(folder, records):
        p = folder / "train.jsonl"
        p.write_bytes(bom + jl(*records).decode().encode(codec))
        return p

    check_pair(tmp_path, write)


def test_utf16_csv_and_json_document(tmp_path):
    def write(folder, records):
        p = folder / "train.csv"
        body = "id;text\n" + "".join(f"{r['id']};{_flat(r)}\n" for r in records)
        p.write_bytes(body.encode("utf-16"))
        q = folder / "train.json"
        q.write_bytes(json.dumps(records, indent=2).encode("utf-32"))
        return folder / "*"

    check_pair(tmp_path, write)


def _latin1(folder, records):
    p = folder / "train.jsonl"
    lines = [json.dumps({**r, "note": "café crème"}, ensure_ascii=False) for r in records]
    p.write_bytes(("\n".join(lines) + "\n").encode("latin-1"))
    return p


def test_latin1_fails_loudly_then_reads_with_encoding(tmp_path):
    p = _latin1(tmp_path, LEAKY)
    res, _ = audit(tmp_path, p)
    err = assert_one_line_error(res, f"Error: {p}:line 1:", "not valid UTF-8", "--encoding latin-1")
    assert 'encoding = "latin-1"' in err
    (tmp_path / "x").mkdir()
    check_pair(tmp_path / "x", _latin1, "--train-encoding", "latin-1")


def test_latin1_eval_set_with_encoding(tmp_path):
    ev = tmp_path / "eval.csv"
    ev.write_bytes(("id,text\n" + "".join(f"{i['id']},{i['text']} (é)\n" for i in EVAL_ITEMS)).encode("cp1252"))
    train = tmp_path / "t.jsonl"
    train.write_bytes(jl(*LEAKY))
    res, _ = audit(tmp_path, train, eval_=ev)
    assert_one_line_error(res, "not valid UTF-8")
    res, out = audit(tmp_path, train, "--eval-encoding", "cp1252", eval_=ev, name="r2")
    assert res.exit_code == 1, res.output
    ev_doc = next(d for d in report(out)["datasets"].values() if d["role"] == "eval")
    assert ev_doc["records"] == 3


def test_encoding_in_the_manifest(tmp_path):
    _latin1(tmp_path, LEAKY)
    write_eval(tmp_path)
    m = tmp_path / "split.toml"
    body = (
        '[datasets.ev]\npath = "eval.jsonl"\nrole = "eval"\n'
        '[datasets.tr]\npath = "train.jsonl"\nrole = "train"\n{enc}'
        '[[checks]]\nname = "c"\ntrain = ["tr"]\neval = ["ev"]\n'
    )
    m.write_text(body.format(enc=""))
    assert_one_line_error(cli("verify", str(m), "--report-dir", str(tmp_path / "r0")), "not valid UTF-8")
    m.write_text(body.format(enc='encoding = "latin-1"\n'))
    res = cli("verify", str(m), "--report-dir", str(tmp_path / "r1"))
    assert res.exit_code == 1, res.output
    m.write_text(body.format(enc='encoding = "klingon"\n'))
    assert_one_line_error(cli("verify", str(m)), "unknown text encoding 'klingon'")


def test_invalid_utf16_names_the_line(tmp_path):
    p = tmp_path / "t.jsonl"
    good = "\n".join(json.dumps(r) for r in LEAKY) + "\n"
    p.write_bytes(b"\xff\xfe" + good.encode("utf-16-le") + "\ud800".encode("utf-16-le", "surrogatepass") + b"x\x00")
    res, _ = audit(tmp_path, p)
    assert_one_line_error(res, f"{p}:line 3:", "not valid UTF-16")


def test_transcoded_files_are_not_cut_into_byte_ranges(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_bytes(("".join(json.dumps({"id": i, "text": f"record {i}"}) + "\n" for i in range(2000))).encode("utf-16"))
    ds = Dataset(DatasetSpec("t", [str(p)]))
    assert len(ds.plan(split_bytes=4096)) == 1
    assert [r.id for r in ds.records()][-1] == "1999"
    q = tmp_path / "u.jsonl"
    q.write_bytes(p.read_bytes().decode("utf-16").encode("utf-8"))
    assert len(Dataset(DatasetSpec("u", [str(q)])).plan(split_bytes=4096)) > 1
    assert len(Dataset(DatasetSpec("u", [str(q)], encoding="latin-1")).plan(split_bytes=4096)) == 1


# --- CSV layout and field names --------------------------------------------------------------------


@pytest.mark.parametrize("delimiter", [";", "|", "\t"])
def test_csv_delimiters(tmp_path, delimiter):
    def write(folder, records):
        p = folder / "train.csv"
        # commas inside the text: the delimiter is told by every row, not by counting commas
        body = f"id{delimiter}text\n" + "".join(f"{r['id']}{delimiter}{_flat(r)}, indeed\n" for r in records)
        p.write_text(body)
        return p

    check_pair(tmp_path, write)


def test_headerless_csv_eval_set(tmp_path):
    ev = tmp_path / "questions.csv"
    ev.write_text("".join(f"{i['text']}\n" for i in EVAL_ITEMS))
    layout = csv_layout(ev)
    assert not layout.header and layout.columns == ["col0"] and layout.text_column == "col0"
    train = tmp_path / "t.jsonl"
    train.write_bytes(jl(*LEAKY))
    res, out = audit(tmp_path, train, eval_=ev)
    assert res.exit_code == 1, res.output
    doc = report(out)
    ev_doc = next(d for d in doc["datasets"].values() if d["role"] == "eval")
    assert ev_doc["records"] == 3 and ev_doc["skipped"] == 0  # the first question is an item, not a header
    assert {f["eval_source"] for f in doc["findings"]} == {f"{ev}:1"}


def test_headerless_csv_with_ids(tmp_path):
    ev = tmp_path / "q.csv"
    ev.write_text("".join(f"{n};{i['text']}\n" for n, i in enumerate(EVAL_ITEMS, 1)))
    train = tmp_path / "t.jsonl"
    train.write_bytes(jl(*LEAKY))
    res, out = audit(tmp_path, train, eval_=ev)
    assert res.exit_code == 1, res.output
    res, out = audit(tmp_path, train, "--eval-text-field", "col1", "--eval-id-field", "col0", eval_=ev, name="r2")
    assert res.exit_code == 1, res.output
    assert {f["eval_id"] for f in report(out)["findings"]} == {"1"}


@pytest.mark.parametrize(
    ("text", "header"),
    [
        ("id,text\n1,What is the capital of France today?\n", True),
        ("What is your favourite colour of all?,age\nblue,3\nred,4\n", True),  # a question heading short answers
        ("1,What is the capital of France today?\n2,Who wrote the novel War and Peace?\n", False),
        ("question\nWhat is the capital of France today?\n", True),
        ("10,20\n30,40\n50,60\n", False),
    ],
)
def test_csv_header_detection(tmp_path, text, header):
    p = tmp_path / "t.csv"
    p.write_text(text)
    assert csv_layout(p).header is header


def test_write_clean_of_a_headerless_csv(tmp_path):
    p = tmp_path / "train.csv"
    p.write_text("".join(f'{r["id"]},"{r["text"]}"\n' for r in LEAKY))
    res, _ = audit(tmp_path, p, "--write-clean", str(tmp_path / "c"))
    assert res.exit_code == 1, res.output
    (written,) = (tmp_path / "c").glob("*/train.csv")
    assert written.read_text() == f"t2,{LEAKY[1]['text']}\n"


@pytest.mark.parametrize(
    ("column", "flag"), [("Query", ("--eval-text-field", "query")), ("TEXT", ()), ("Question", ())]
)
def test_field_names_in_another_case(tmp_path, column, flag):
    ev = tmp_path / "eval.csv"
    ev.write_text(f"ID,{column}\n" + "".join(f"{i['id']},{i['text']}\n" for i in EVAL_ITEMS))
    train = tmp_path / "t.jsonl"
    train.write_bytes(jl(*LEAKY))
    res, out = audit(tmp_path, train, *flag, eval_=ev)
    assert res.exit_code == 1, res.output
    assert {f["eval_id"] for f in report(out)["findings"]} == {"e1"}  # the ID column too


def test_exact_name_wins_and_two_case_variants_are_refused(tmp_path):
    train = tmp_path / "t.jsonl"
    train.write_bytes(jl(*LEAKY))
    ev = tmp_path / "eval.jsonl"
    ev.write_text(
        "".join(json.dumps({"id": i["id"], "Text": "decoy " + i["id"], "query": i["text"]}) + "\n" for i in EVAL_ITEMS)
    )
    res, out = audit(tmp_path, train, eval_=ev)
    assert res.exit_code == 1, res.output  # `query` (exact) read, not `Text`
    ev2 = tmp_path / "eval2.jsonl"
    ev2.write_text("".join(json.dumps({"Query": i["text"], "QUERY": i["text"]}) + "\n" for i in EVAL_ITEMS))
    res, _ = audit(tmp_path, train, "--eval-text-field", "query", eval_=ev2, name="r2")
    assert_one_line_error(res, f"{ev2}:line 1", "'Query' and 'QUERY'", "differ only in case")


def test_nothing_is_written_beside_the_inputs(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    _zip(d, LEAKY)
    _tar(d, LEAKY, "d.tar.gz", "w:gz")
    _yaml_list(d, LEAKY)
    save_to_disk(d, LEAKY)
    before = sorted(str(p.relative_to(d)) + str(p.stat().st_mtime_ns) for p in d.rglob("*"))
    for i, target in enumerate(["data.zip", "d.tar.gz", "train.yaml", "ds"]):
        res, _ = audit(tmp_path, d / target, name=f"r{i}")
        assert res.exit_code == 1, (target, res.output)
    assert sorted(str(p.relative_to(d)) + str(p.stat().st_mtime_ns) for p in d.rglob("*")) == before


# --- combinations ----------------------------------------------------------------------------------


def test_parquet_and_arrow_members_and_a_zipped_save_to_disk_folder(tmp_path):
    import pyarrow.parquet as pq

    def write(folder, records):
        ds = save_to_disk(folder, records[:1])
        pq.write_table(_table(records[1:]), folder / "rest.parquet")
        p = folder / "hf.zip"
        with zipfile.ZipFile(p, "w") as z:
            for f in sorted(ds.iterdir()):
                z.write(f, f"ds/{f.name}")  # the metadata JSON is left out, its .arrow data read
            z.write(folder / "rest.parquet", "rest.parquet")
        return p

    doc = check_pair(tmp_path, write)
    assert _sources(doc) == {f"{tmp_path / 'leaky' / 'hf.zip'}!ds/data-00000-of-00001.arrow#0"}
    tr = next(d for d in doc["datasets"].values() if d["role"] == "train")
    assert tr["records"] == 2


def test_archive_through_a_url(tmp_path):
    pytest.importorskip("fsspec", reason="the [remote] extra is not installed")
    (tmp_path / "leaky").mkdir()
    p = _tar(tmp_path / "leaky", LEAKY, "d.tar.gz", "w:gz")
    z = _zip(tmp_path / "leaky", LEAKY)
    for i, f in enumerate((p, z)):
        res, out = audit(tmp_path, f"file://{f}", name=f"r{i}")
        assert res.exit_code == 1, res.output
        assert report(out)["checks"][0]["contaminated_items"] == 1


def test_inspect_with_encoding_and_a_datasets_folder(tmp_path):
    p = _latin1(tmp_path, LEAKY)
    res = cli("inspect", str(p))
    assert res.exit_code == 0 and "not valid UTF-8" in res.output  # inspect skips and says why
    res = cli("inspect", str(p), "--encoding", "latin-1", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["records"] == 2 and "café crème" in json.dumps(doc["first"], ensure_ascii=False)
    ds = save_to_disk(tmp_path, LEAKY)
    res = cli("inspect", str(ds), "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["formats"] == {str(ds / "data-00000-of-00001.arrow"): "arrow"}


def test_new_formats_read_alike_in_workers(tmp_path):
    """The scan's workers read archives, encodings and Arrow files as the serial reader does."""
    d = tmp_path / "in"
    d.mkdir()
    _zip(d, LEAKY)
    _latin1(d, LEAKY)
    save_to_disk(d, LEAKY)
    ev = write_eval(tmp_path)
    for i, target in enumerate([d / "data.zip", d / "train.jsonl", d / "ds"]):
        extra = ("--train-encoding", "latin-1") if target.name == "train.jsonl" else ()
        out = tmp_path / f"r{i}"
        res = cli(
            "audit", "--eval", str(ev), "--train", str(target), "--workers", "2", "--report-dir", str(out), *extra
        )
        assert res.exit_code == 1, (target, res.output)
        assert report(out)["checks"][0]["contaminated_items"] == 1


@pytest.mark.parametrize("name", ["train.jsonl.bz2", "train.jsonl.xz", "train.csv"])
def test_write_clean_keeps_compression_and_writes_utf8(tmp_path, name):
    p = tmp_path / name
    if name.endswith(".csv"):  # cp1252 with a declared encoding; the cleaned copy is UTF-8
        body = "id;text\n" + "".join(f"{r['id']};{_flat(r)} – café\n" for r in LEAKY)
        p.write_bytes(body.encode("cp1252"))
        extra: tuple[str, ...] = ("--train-encoding", "cp1252")
    else:
        p.write_bytes(COMPRESSORS[name.rsplit(".", 1)[1]](jl(*LEAKY)))
        extra = ()
    res, _ = audit(tmp_path, p, "--write-clean", str(tmp_path / "c"), *extra)
    assert res.exit_code == 1, res.output
    (written,) = (tmp_path / "c").glob(f"*/{name}")
    data = written.read_bytes()
    if name.endswith(".csv"):
        assert data.decode("utf-8") == f"id;text\nt2;{LEAKY[1]['text']} – café\n"
    else:
        assert json.loads(bz2.decompress(data) if name.endswith("bz2") else lzma.decompress(data)) == LEAKY[1]
    res = cli("verify", str(tmp_path / "c" / "split.toml"))
    assert res.exit_code == 0, res.output
