"""Benchmark on real text, peers in the same run, the CPU of every process counted (issue 36, item 1).

    python -m benchmarks.bench_real --mb 100                  # the comparison (default 100 MB; 1000 allowed)
    python -m benchmarks.bench_real --profile --profile-mb 10 # cProfile of a default-methods run, --workers 1
    python -m benchmarks.bench_real --startup                 # CPU of start-up (imports, a 1-record audit,
                                                              # against StableToolBench and BFCL)
    python -m benchmarks.bench_real --code /tmp/old --repeat 3 --skip janitor decon   # another checkout, A/B

**Corpus.** Real text only, no invented words: prose from this machine (the man pages under
/usr/share/man, decompressed and stripped of roff/mdoc macros, less the pre-release gcloud_alpha/beta
copies; the docstrings of the standard library and of DOC_PACKAGES, read with ``inspect`` in a child
process, and pydoc's topics; the AWS API documentation in botocore's service files, HTML tags
dropped) and the records of public datasets
(/work/shared/data: LLaMA-Factory, Glaive, ToolBench, WebShop, BFCL, API-Bank, NESTFUL, tau-bench,
ToolAlpaca; tests/data/foreign), which give the user turns, instructions and answers. Left out:
stabletoolbench/, tool-mvr/ and steptool/ of shared/data, which hold StableToolBench test queries, and
any string or paragraph sharing a 13-word window (lower-cased, punctuation dropped) with a test query.
Records come in three
shapes, mixed in one JSON Lines file (by count 40 % chat, 25 % Alpaca, 35 % text; ``shape_mb`` in the
JSON gives the bytes): chat (``{"messages": [{"role", "content"}]}``: 1-3 user turns, an optional
system turn, assistant turns that are dataset answers or prose), Alpaca (``{"instruction", "input",
"output"}``, ``input`` prose or empty) and plain text (``{"text"}``: 200-2,500 words of consecutive
paragraphs). Prose is read from a cursor over shuffled blocks of consecutive documents, so no paragraph
recurs before the whole pool (62 MB here) is read; beyond it (``prose_passes`` > 1) paragraphs recur in
other documents, as they do in web crawls.
Everything is drawn from ``random.Random(seed)``; the pools are cached under --work-dir.

**Plants.** ``--plants`` (default 50) each of three kinds of distinct bundled StableToolBench test
queries, at evenly spaced byte offsets: *verbatim* (the whole user turn, instruction or text),
*embedded* (a paragraph of its own in a 1,500-3,000-word document: a text record, or a user turn
that pastes a document), *edited* (a word near the middle replaced by a near-synonym and a courtesy
phrase appended). ``plants.json`` in the run folder says which line holds which query.

**Runs**, one after another in this process, each a child process: (a) ``auditor audit`` with the
default methods, (b) ``auditor audit --method exact --method ngram`` (both ``--workers 2`` and a fresh
``--index-dir``: the eval index is built in the run, as the peers build theirs), (c) lm-eval's
``Janitor`` (13-gram, its pure-Python path: pip does not build janitor_util), (d) allenai/decon
(``decontaminate`` wheel, Rust, default ``simple`` mode, ``worker_threads=2``). (c) and (d) run under
--peer-python (a Python >= 3.12 venv holding ``decontaminate`` and ``lm-eval --no-deps``; the janitor
module file is loaded by path, so lm_eval's package imports are not run) and read the same records
flattened to ``{"text"}`` (every string of the record joined by blank lines, in the same line order):
decon reads one field, the Janitor one string.

**CPU of every process.** The local engine's workers are children of a forkserver that nothing waits
for, so ``time`` and getrusage(RUSAGE_CHILDREN) of a plain parent miss them. This process makes itself
the child subreaper (prctl(PR_SET_CHILD_SUBREAPER), as /work/shared/tools/cputime.py does), so the
orphans are re-parented here; after each run it reaps every descendant and takes the difference of
RUSAGE_CHILDREN (user + system); the corpus is synced to disk before the first run, so that no run
shares the cores with its write-back. ``--repeat N`` runs each audit N times and keeps the run of
median CPU (the higher middle one for an even N; ``all_cpu_s`` lists them: one tool's CPU varies by
5-10 % from run to run on a shared machine); ``--code DIR`` runs another checkout's auditor (first on
``PYTHONPATH``, the audits in their run folder; its C kernel built or copied in), to compare two
commits on one corpus. Before the runs every tool's Python is compiled to bytecode, as ``pip install``
does (``compile_bytecode``: this machine sets ``PYTHONDONTWRITEBYTECODE``, so otherwise each process
of each run compiles every module it loads; ``--from-source`` measures that way). Peak memory is the
largest sum of VmRSS over the whole process tree, polled every 0.2 s (a lower bound: peaks between
polls are missed). Wall time is the run's, from
start to the last descendant reaped.

**Findings.** A record is *found* by auditor when a conclusive finding names its line
(``train_ordinal``; suspected findings are counted apart), by the Janitor when one of its 13-grams is
registered, by decon when its report lists the line. Hits on unplanted lines are the false positives
column (real text may share a 13-gram with a query by chance; the JSON keeps the first lines to look at).

Prints a table and writes it as JSON to benchmarks/results/bench_real_<date>.json (``…_<date>_1gb.json``
for ``--mb 1000``, ``…_<date>_<MB>mb.json`` for other sizes)
(``bench_real_profile_<date>.json``, ``bench_real_startup_<date>.json`` for the other modes).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import importlib.util
import json
import os
import platform
import random
import re
import shutil
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks.common import (
    FOREIGN,
    REPO,
    RESULTS,
    SHARED,
    become_subreaper,
    command_line,
    measure,
    repo_env,
    write_json,
)

MAN = Path("/usr/share/man")
POOL_VERSION = 2

# --- real text --------------------------------------------------------------------------------------

_ESCAPES = {
    "em": "—",
    "en": "–",
    "hy": "-",
    "bu": "•",
    "aq": "'",
    "dq": '"',
    "lq": '"',
    "rq": '"',
    "oq": "'",
    "cq": "'",
    "co": "©",
    "rg": "®",
    "tm": "™",
    "mi": "-",
    "pl": "+",
    "mu": "×",
    "<=": "<=",
    ">=": ">=",
    "->": "->",
    "ti": "~",
    "ha": "^",
    "rs": "\\",
    "ba": "|",
    "at": "@",
    "sh": "#",
    "Do": "$",
}
#: macros whose arguments are running text (man and mdoc); other requests are dropped
_TEXT_MACROS = set("B I R BR RB IR RI BI IB SM SB UR MT".split()) | set(
    "Em Nm Ar Fl Pa Dq Sq Ql Xr Cm Va Ev Li Sy Dv Er Ic Op Ad An Cd Fa Fn Ft Ms No Ns Pq Qq Sx Tn Lk Mt Dl D1 Aq Bq Brq Nd".split()
)
_BREAK_MACROS = set("PP LP P Pp sp IP TP HP SH SS Sh Ss Bl El It TQ RS RE Bd Ed".split())
_MDOC_WORDS = set(
    "Em Nm Ar Fl Pa Dq Sq Ql Xr Cm Va Ev Li Sy Dv Er Ic Op Oo Oc Ad An Cd Fa Fn Ft Ms No Ns Pq Qq Sx Tn Ux Lk Mt Aq Bq Brq Ic".split()
)
_ESC = re.compile(
    r"\\(?:f(?:\[[^\]]*\]|\(..|.)|s[+-]?\d+|\*(?:\[[^\]]*\]|\(..|.)|\((..)|\[([^\]]*)\]|[hvwNlLbDxoXZ]'[^']*'|[-e&|^%c~0 .\\\"'`])"
)


def _unescape(line: str) -> str:
    def sub(m: re.Match[str]) -> str:
        s = m.group(0)
        name = m.group(1) or m.group(2)
        if name is not None:
            return _ESCAPES.get(name, "")
        if s.startswith("\\*"):
            key = s[2:].strip("[]()")
            return _ESCAPES.get(key, "")
        return {
            "\\-": "-",
            "\\e": "\\",
            "\\\\": "\\",
            "\\~": " ",
            "\\0": " ",
            "\\ ": " ",
            "\\.": ".",
            "\\'": "'",
            "\\`": "`",
        }.get(s, "")

    line = line.split('\\"', 1)[0]  # a comment to the end of the line
    return _ESC.sub(sub, line)


def roff_paragraphs(src: str) -> list[str]:
    """Running text of a man page (man or mdoc macros), one string per paragraph; tables (tbl),
    no-fill blocks (examples, synopses) and requests are dropped."""
    paras: list[str] = []
    cur: list[str] = []
    skip_until: str | None = None
    name = ""

    def flush() -> None:
        if cur:
            paras.append(" ".join(" ".join(cur).split()))
            cur.clear()

    for raw in src.splitlines():
        if skip_until is not None:
            if raw.startswith(skip_until):
                skip_until = None
            continue
        if raw.startswith(('.\\"', "'\\\"", '.\\"', '\\"')):
            continue
        if raw.startswith((".", "'")):
            parts = raw[1:].strip().split(None, 1)
            if not parts:
                continue
            macro, args = parts[0], (parts[1] if len(parts) > 1 else "")
            if macro in ("TS", "nf", "EX", "Bd", "de", "ig", "Vb"):
                flush()
                skip_until = {"TS": ".TE", "nf": ".fi", "EX": ".EE", "Bd": ".Ed", "de": "..", "ig": "..", "Vb": ".Ve"}[
                    macro
                ]
                continue
            if macro in _BREAK_MACROS:
                flush()
                continue
            if macro in _TEXT_MACROS:
                words = [w.strip('"') for w in _unescape(args).split()]
                if macro == "Nm":  # mdoc: the page's name, given once and implied after
                    name = name or " ".join(words[:1])
                    words = words or [name]
                if macro in ("Fl",):
                    words = ["-" + w for w in words]
                cur.append(" ".join(w for w in words if w and w not in _MDOC_WORDS))
            continue
        if not raw.strip():
            flush()
            continue
        cur.append(_unescape(raw))
    flush()
    return [p for p in paras if _prose_like(p)]


def _prose_like(p: str, min_words: int = 8) -> bool:
    words = p.split()
    if len(words) < min_words:
        return False
    if p.startswith(("$ ", "# ", "% ", "> ")):  # a shell example
        return False
    letters = sum(c.isalpha() for c in p)
    return letters >= 0.75 * len(p.replace(" ", "")) and sum(
        w.strip(",.;:()'\"").isalpha() for w in words
    ) >= 0.7 * len(words)


def botocore_documents() -> list[list[str]]:
    """The API documentation of the AWS services botocore describes (its service-2.json files, one
    document per service and version, HTML tags dropped), as lists of paragraphs."""
    spec = importlib.util.find_spec("botocore")
    if spec is None or not spec.origin:
        return []
    docs, seen = [], set()
    for path in sorted(Path(spec.origin).parent.glob("data/*/*/service-2.json*")):
        raw = path.read_bytes()
        data = json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)
        paras: list[str] = []
        stack = [data]
        while stack:
            o = stack.pop()
            if isinstance(o, dict):
                for k in sorted(o, reverse=True):
                    v = o[k]
                    if k == "documentation" and isinstance(v, str):
                        for block in re.split(r"</p>|<br\s*/?>|</li>", v):
                            p = " ".join(
                                re.sub(r"<[^>]+>", " ", block)
                                .replace("&lt;", "<")
                                .replace("&gt;", ">")
                                .replace("&amp;", "&")
                                .split()
                            )
                            if p not in seen and _prose_like(p):
                                seen.add(p)
                                paras.append(p)
                    else:
                        stack.append(v)
            elif isinstance(o, list):
                stack.extend(reversed(o))
        if paras:
            docs.append(paras)
    return docs


def man_documents() -> list[list[str]]:
    """The English man pages of this machine, as lists of paragraphs (sorted by path)."""
    docs = []
    seen: set[str] = set()
    for path in sorted(MAN.glob("man[0-9]*/*")):
        if path.name.startswith(("gcloud_alpha", "gcloud_beta")):  # pre-release copies of the gcloud pages
            continue
        try:
            raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        except (OSError, EOFError, gzip.BadGzipFile):
            continue
        text = raw.decode("utf-8", "replace")
        if text.lstrip().startswith(".so "):
            continue
        paras = [p for p in roff_paragraphs(text) if p not in seen]
        seen.update(paras)
        if paras:
            docs.append(paras)
    return docs


_HARVEST = r"""
import inspect, json, pkgutil, sys, warnings, io, contextlib
warnings.simplefilter("ignore")
skip = {"antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo", "test", "ensurepip", "lib2to3",
        "__main__", "__hello__", "__phello__", "pydoc", "webbrowser", "_pyrepl", "xxlimited", "xxlimited_35",
        "xxsubtype", "_xxtestfuzz", "msilib", "winreg", "winsound", "_winapi", "nt", "_msi", "_overlapped"}
names = sorted(n for n in sys.stdlib_module_names if n not in skip) + sys.argv[1:]
mods = []
for n in names:
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            m = __import__(n)
    except BaseException:
        continue
    mods.append(m)
    if hasattr(m, "__path__"):
        for info in pkgutil.walk_packages(m.__path__, n + "."):
            parts = info.name.split(".")
            if any(p in skip or p.startswith("test") or p in ("tests", "testing") for p in parts[1:]):
                continue
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    mods.append(__import__(info.name, fromlist=["_"]))
            except BaseException:
                pass
docs, seen = [], set()
for m in mods:
    items = [m] + [v for _, v in sorted(vars(m).items(), key=lambda kv: kv[0]) if getattr(v, "__module__", None) == m.__name__]
    for obj in items:
        for o in [obj] + ([v for _, v in sorted(vars(obj).items(), key=lambda kv: kv[0])] if inspect.isclass(obj) else []):
            try:
                d = inspect.getdoc(o) if (inspect.ismodule(o) or inspect.isclass(o) or inspect.isroutine(o) or isinstance(o, property)) else None
            except Exception:
                d = None
            if d and id(d) not in seen and d not in seen:
                seen.add(d)
                docs.append(d)
try:
    import pydoc_data.topics as t
    docs.extend(t.topics[k] for k in sorted(t.topics))
except Exception:
    pass
json.dump(docs, sys.stdout)
"""


#: installed packages whose docstrings join the standard library's (those not installed are passed over)
DOC_PACKAGES = [
    "numpy",
    "scipy",
    "pandas",
    "sympy",
    "networkx",
    "sklearn",
    "docutils",
    "pygments",
    "jinja2",
    "click",
    "requests",
    "hypothesis",
    "pyarrow",
    "rich",
    "yaml",
    "attr",
    "pydantic",
    "werkzeug",
    "flask",
    "urllib3",
]


def docstring_documents(python: str = sys.executable) -> list[list[str]]:
    """Docstrings of the standard library and DOC_PACKAGES, and pydoc's topics, as lists of paragraphs."""
    out = subprocess.run([python, "-c", _HARVEST, *DOC_PACKAGES], capture_output=True, text=True, timeout=900, cwd="/")
    docs = []
    for d in json.loads(out.stdout or "[]"):
        paras = []
        for block in re.split(r"\n\s*\n", d):
            lines = [ln for ln in block.splitlines() if not ln.lstrip().startswith((">>>", "...", "$ ", "| "))]
            p = " ".join(" ".join(lines).split())
            if _prose_like(p):
                paras.append(p)
        if paras:
            docs.append(paras)
    return docs


_USER_KEYS = {"instruction", "question", "query", "prompt", "goal", "reason_for_call", "task_instructions", "request"}
_ANSWER_KEYS = {"output", "response", "answer", "chosen", "final_answer", "completion"}
_USER_ROLES = {"user", "human", "prompter", "USER"}
_ANSWER_ROLES = {"assistant", "gpt", "AI", "bot", "ASSISTANT", "model"}


def _walk(obj: Any, out: dict[str, list[str]], key: str | None = None) -> None:
    if isinstance(obj, dict):
        role = obj.get("role", obj.get("from", obj.get("speaker")))
        text = obj.get("content", obj.get("value", obj.get("text", obj.get("utterance"))))
        if isinstance(role, str) and isinstance(text, str):
            if role in _USER_ROLES:
                out["user"].append(text)
            elif role in _ANSWER_ROLES:
                out["answer"].append(text)
        for k, v in obj.items():
            _walk(v, out, k)
    elif isinstance(obj, list):
        for v in obj:
            _walk(v, out, key)
    elif isinstance(obj, str):
        if key in _USER_KEYS:
            out["user"].append(obj)
        elif key in _ANSWER_KEYS:
            out["answer"].append(obj)
        elif key is None and len(obj.split()) >= 4:  # a bare list of strings (WebShop goals)
            out["user"].append(obj)


def _json_values(path: Path) -> Iterator[Any]:
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    text = raw.decode("utf-8", "replace")
    try:
        yield json.loads(text)
        return
    except ValueError:
        pass
    for line in text.splitlines():
        try:
            yield json.loads(line)
        except ValueError:
            continue


#: shared/data folders that hold StableToolBench test queries (answers, trajectories, training examples)
EXCLUDED_SOURCES = ("stabletoolbench", "tool-mvr", "steptool")


def dataset_strings() -> tuple[list[str], list[str], list[str]]:
    """User turns / instructions and answers from the public datasets, and the source files read."""
    out: dict[str, list[str]] = {"user": [], "answer": []}
    files = []
    for root in (SHARED, FOREIGN):
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root)
            if root == SHARED and rel.parts[0] in EXCLUDED_SOURCES:
                continue
            if not path.is_file() or not path.name.endswith((".json", ".jsonl", ".jsonl.gz")):
                continue
            files.append(str(path))
            for value in _json_values(path):
                _walk(value, out)
    keep = {
        k: list(dict.fromkeys(s.strip() for s in v if 4 <= len(s.split()) and len(s) <= 6000)) for k, v in out.items()
    }
    return keep["user"], keep["answer"], files


_PUNCT = str.maketrans(string.ascii_uppercase, string.ascii_lowercase, string.punctuation)


def _windows(text: str, n: int = 13) -> set[str]:
    w = text.translate(_PUNCT).split()
    return {" ".join(w[i : i + n]) for i in range(len(w) - n + 1)}


def eval_queries() -> list[tuple[str, str]]:
    """(id, query) of the bundled StableToolBench test set, in order."""
    from auditor.datasets.dataset import Dataset, DatasetSpec

    return [
        (str(r.id), r.view("query")) for r in Dataset(DatasetSpec("ev", ["stabletoolbench"], role="eval")).records()
    ]


def load_pools(work: Path, evals: list[tuple[str, str]]) -> dict[str, Any]:
    """Prose documents, user strings and answers (cached in WORK/pool.json.gz), with no 13-word window
    of any eval query."""
    cache = work / "pool.json.gz"
    if cache.exists():
        pool = json.loads(gzip.decompress(cache.read_bytes()))
        if pool.get("version") == POOL_VERSION:
            return pool
    t = time.time()
    dirty: set[str] = set()
    for _, q in evals:
        dirty |= _windows(q)

    def clean(s: str) -> bool:
        return not (_windows(s) & dirty)

    man = man_documents()
    docs = docstring_documents()
    aws = botocore_documents()
    users, answers, files = dataset_strings()
    dropped = 0
    prose = []
    for d in man + docs + aws:
        kept = [p for p in d if clean(p)]
        dropped += len(d) - len(kept)
        if kept:
            prose.append(kept)
    cu, ca = [s for s in users if clean(s)], [s for s in answers if clean(s)]
    dropped += len(users) - len(cu) + len(answers) - len(ca)
    pool = {
        "version": POOL_VERSION,
        "prose": prose,
        "users": cu,
        "answers": ca,
        "sources": {
            "man_pages": len(man),
            "docstring_documents": len(docs),
            "botocore_services": len(aws),
            "dataset_files": files,
            "dropped_for_eval_13gram": dropped,
        },
        "seconds": round(time.time() - t, 1),
    }
    pool["pool_mb"] = {
        "prose": round(sum(len(p) + 2 for d in prose for p in d) / 1e6, 2),
        "users": round(sum(map(len, cu)) / 1e6, 2),
        "answers": round(sum(map(len, ca)) / 1e6, 2),
    }
    pool["sha256"] = hashlib.sha256(json.dumps([prose, cu, ca]).encode()).hexdigest()[:16]
    work.mkdir(parents=True, exist_ok=True)
    cache.write_bytes(gzip.compress(json.dumps(pool).encode(), 5))
    return pool


# --- corpus -----------------------------------------------------------------------------------------

#: near-synonyms for the light edit (a word of the query, lower-cased, -> its replacement)
SYNONYMS = {
    "help": "assist",
    "need": "require",
    "get": "obtain",
    "show": "display",
    "find": "locate",
    "recommend": "suggest",
    "suggest": "propose",
    "fetch": "retrieve",
    "provide": "give",
    "tell": "inform",
    "want": "wish",
    "interested": "keen",
    "latest": "newest",
    "popular": "well-known",
    "planning": "preparing",
    "also": "additionally",
    "trip": "journey",
    "current": "present",
    "check": "verify",
    "list": "rundown",
    "details": "particulars",
    "information": "info",
    "friends": "pals",
    "company": "firm",
    "upcoming": "forthcoming",
}
#: a prose block holds consecutive documents up to at least this many words
BLOCK_WORDS = 3000
COURTESY = ["Thanks a lot!", "Thank you in advance.", "Much appreciated!", "Please and thank you.", "Cheers!"]


def light_edit(query: str, k: int) -> str | None:
    """The table word nearest the middle of ``query`` replaced by its near-synonym and a courtesy
    phrase appended; None when no word of the table is in the query."""
    words = query.split(" ")
    cand = [i for i, w in enumerate(words) if w.lower().strip(",.?!;:") in SYNONYMS]
    if not cand:
        return None
    i = min(cand, key=lambda j: abs(j - len(words) / 2))
    bare = words[i].lower().strip(",.?!;:")
    new = SYNONYMS[bare].capitalize() if words[i][:1].isupper() else SYNONYMS[bare]
    words[i] = words[i].lower().replace(bare, new)
    return " ".join(words) + " " + COURTESY[k % len(COURTESY)]


class Corpus:
    """Draws records of the three shapes from the pools."""

    def __init__(self, pool: dict[str, Any], rng: random.Random) -> None:
        self.prose: list[list[str]] = pool["prose"]
        self.users: list[str] = pool["users"]
        self.answers: list[str] = pool["answers"]
        self.rng = rng
        # blocks of consecutive documents (a man page, the docstrings of a module one after another, an AWS
        # service) of at least BLOCK_WORDS words, read in a shuffled order from a cursor, so that no
        # paragraph recurs before the whole pool has been read; each later pass reshuffles
        self.blocks: list[list[str]] = []
        cur: list[str] = []
        n = 0
        for d in self.prose:
            cur.extend(d)
            n += sum(len(p.split()) for p in d)
            if n >= BLOCK_WORDS:
                self.blocks.append(cur)
                cur, n = [], 0
        if cur:
            self.blocks.append(cur)
        self.passes = 0
        self._reshuffle()

    def _reshuffle(self) -> None:
        self.order = list(range(len(self.blocks)))
        self.rng.shuffle(self.order)
        self.block = 0
        self.para = self.rng.randrange(len(self.blocks[self.order[0]])) if self.passes else 0

    def paragraphs(self, words: int) -> list[str]:
        """The next paragraphs from the cursor, about ``words`` words."""
        out: list[str] = []
        n = 0
        while n < words:
            b = self.blocks[self.order[self.block]]
            if self.para >= len(b):
                self.block += 1
                self.para = 0
                if self.block == len(self.order):
                    self.passes += 1
                    self._reshuffle()
                continue
            out.append(b[self.para])
            n += len(b[self.para].split())
            self.para += 1
        return out

    def answer(self) -> str:
        if self.rng.random() < 0.5:
            return self.rng.choice(self.answers)
        return "\n\n".join(self.paragraphs(self.rng.randint(60, 400)))

    def chat(self, user: str | None = None) -> dict:
        msgs = []
        if self.rng.random() < 0.3:
            msgs.append(
                {"role": "system", "content": self.rng.choice(self.blocks[self.rng.randrange(len(self.blocks))])}
            )
        turns = self.rng.choice((1, 1, 2, 3))
        for t in range(turns):
            msgs.append(
                {"role": "user", "content": user if (user is not None and t == 0) else self.rng.choice(self.users)}
            )
            msgs.append({"role": "assistant", "content": self.answer()})
        return {"messages": msgs}

    def alpaca(self, instruction: str | None = None) -> dict:
        inp = "\n\n".join(self.paragraphs(self.rng.randint(40, 200))) if self.rng.random() < 0.4 else ""
        return {"instruction": instruction or self.rng.choice(self.users), "input": inp, "output": self.answer()}

    def text(self, words: tuple[int, int] = (200, 2500)) -> dict:
        return {"text": "\n\n".join(self.paragraphs(self.rng.randint(*words)))}

    def record(self) -> dict:
        r = self.rng.random()
        return self.text() if r < 0.35 else self.chat() if r < 0.75 else self.alpaca()

    def plant(self, kind: str, query: str, k: int) -> tuple[dict, str]:
        shape = ("chat", "alpaca", "text")[k % 3] if kind != "embedded" else ("text", "chat")[k % 2]
        if kind == "embedded":
            paras = self.paragraphs(self.rng.randint(1500, 3000))
            paras.insert(self.rng.randint(1, len(paras) - 1) if len(paras) > 1 else 1, query)
            doc = "\n\n".join(paras)
            if shape == "text":
                return {"text": doc}, shape
            return self.chat(user=doc), shape
        if shape == "chat":
            return self.chat(user=query), shape
        if shape == "alpaca":
            return self.alpaca(instruction=query), shape
        return {"text": query}, shape


def flatten(rec: dict) -> str:
    """Every string of a record, joined by blank lines: what the peers read."""
    if "text" in rec:
        return rec["text"]
    if "messages" in rec:
        return "\n\n".join(m["content"] for m in rec["messages"])
    return "\n\n".join(s for s in (rec["instruction"], rec["input"], rec["output"]) if s)


def build_corpus(
    folder: Path, mb: float, seed: int, pool: dict[str, Any], evals: list[tuple[str, str]], per_kind: int
) -> dict:
    """Write FOLDER/train.jsonl (the shapes), FOLDER/peers/train.jsonl (``{"text"}``, same lines) and
    FOLDER/plants.json; return the corpus's description."""
    rng = random.Random(seed)
    corpus = Corpus(pool, rng)
    ids = list(range(len(evals)))
    rng.shuffle(ids)
    seen_texts: set[str] = set()
    chosen: dict[str, list[int]] = {"verbatim": [], "embedded": [], "edited": []}
    for i in ids:  # distinct query texts; the edited ones need a word of the synonym table
        q = evals[i][1]
        if q in seen_texts:
            continue
        for kind in ("edited", "verbatim", "embedded"):
            if len(chosen[kind]) < per_kind and (kind != "edited" or light_edit(q, 0) is not None):
                chosen[kind].append(i)
                seen_texts.add(q)
                break
    plan = [(kind, i, k) for kind in chosen for k, i in enumerate(chosen[kind])]
    rng.shuffle(plan)
    target = int(mb * 1e6)
    offsets = [int(target * (j + 0.5) / len(plan)) for j in range(len(plan))] if plan else []
    (folder / "peers").mkdir(parents=True, exist_ok=True)
    plants: dict[str, dict] = {}
    size = line = 0
    shapes: dict[str, int] = {"chat": 0, "alpaca": 0, "text": 0}
    shape_bytes: dict[str, int] = {"chat": 0, "alpaca": 0, "text": 0}
    with (
        open(folder / "train.jsonl", "w", encoding="utf-8") as f,
        open(folder / "peers" / "train.jsonl", "w", encoding="utf-8") as g,
    ):
        while size < target:
            if plan and size >= offsets[0]:
                kind, i, k = plan.pop(0)
                offsets.pop(0)
                query = evals[i][1]
                text = light_edit(query, k) if kind == "edited" else query
                assert text is not None
                rec, shape = corpus.plant(kind, text, k)
                plants[str(line)] = {"kind": kind, "shape": shape, "eval_id": evals[i][0], "eval_ordinal": i}
            else:
                rec = corpus.record()
                shape = "text" if "text" in rec else "chat" if "messages" in rec else "alpaca"
            shapes[shape] += 1
            s = json.dumps(rec, ensure_ascii=False) + "\n"
            f.write(s)
            g.write(json.dumps({"text": flatten(rec)}, ensure_ascii=False) + "\n")
            size += len(s.encode("utf-8"))
            shape_bytes[shape] += len(s.encode("utf-8"))
            line += 1
    (folder / "plants.json").write_text(json.dumps(plants, indent=1))
    return {
        "mb": round(size / 1e6, 2),
        "records": line,
        "shapes": shapes,
        "shape_mb": {k: round(v / 1e6, 2) for k, v in shape_bytes.items()},
        "peers_mb": round((folder / "peers" / "train.jsonl").stat().st_size / 1e6, 2),
        "plants": {k: len(v) for k, v in chosen.items()},
        "seed": seed,
        "prose_passes": corpus.passes + 1,
    }


# --- measuring every process ------------------------------------------------------------------------


# become_subreaper and measure: benchmarks/common.py


# --- the tools ------------------------------------------------------------------------------------


def auditor_cmd() -> list[str]:
    exe = shutil.which("auditor")
    return [exe] if exe else [sys.executable, "-m", "auditor"]


def auditor_found(report: Path) -> tuple[set[int], set[int]]:
    """Lines with a conclusive finding, and lines with only suspected ones."""
    findings = json.loads(report.read_text())["findings"]
    conclusive = {f["train_ordinal"] for f in findings if f.get("conclusive")}
    suspected = {f["train_ordinal"] for f in findings if not f.get("conclusive")} - conclusive
    return conclusive, suspected


def janitor_worker(eval_path: str, train_path: str, out_path: str) -> None:
    """Runs under the peer venv: lm-eval's Janitor, 13-grams of every eval query, over every line."""
    spec = importlib.util.find_spec("lm_eval")  # finds the package without running its __init__
    assert spec is not None and spec.submodule_search_locations
    path = Path(list(spec.submodule_search_locations)[0]) / "decontamination" / "janitor.py"
    mspec = importlib.util.spec_from_file_location("lm_eval_janitor", path)
    assert mspec is not None and mspec.loader is not None
    jan_mod = importlib.util.module_from_spec(mspec)
    mspec.loader.exec_module(jan_mod)
    janitor = jan_mod.Janitor(ngram_n=13)
    for q in json.loads(Path(eval_path).read_text()):
        janitor.register_contaminant_python(q)
    dirt, norm = janitor.dirt_ngrams, janitor.normalize_string
    flagged = []
    with open(train_path, encoding="utf-8") as f:
        for i, line in enumerate(f):
            text = json.loads(line)["text"]
            # clean_python's own steps: its contaminated 13-grams, then the clean chunks; flagged when a
            # 13-gram is registered (clean_python(text) != [text] would also flag every clean string of
            # under 200 characters: _split_chunks keeps no slice shorter than minimum_slice_length)
            hits = [(None, *idx) for g, idx in jan_mod.word_ngrams_indices(text, 13) if norm(g) in dirt]
            janitor._split_chunks(text, hits)
            if hits:
                flagged.append(i)
    Path(out_path).write_text(json.dumps({"flagged": flagged, "janitor_file": str(path)}))


def decon_worker(evals_dir: str, train_dir: str, report_dir: str, threads: str) -> None:
    """Runs under the peer venv: decon's detect with its defaults and ``worker_threads``."""
    import decon

    cfg = decon.Config(
        training_dir=train_dir, evals_dir=evals_dir, report_output_dir=report_dir, worker_threads=int(threads)
    )
    decon.detect(cfg)
    Path(report_dir, "bench_version.txt").write_text(str(decon.__version__))


def decon_found(report_dir: Path) -> set[int]:
    lines: set[int] = set()
    for p in sorted(report_dir.rglob("*.jsonl")):
        for ln in p.read_text().splitlines():
            if ln.strip():
                lines.add(int(json.loads(ln)["training_line"]))
    return lines


def score(found: set[int], plants: dict[str, dict]) -> dict:
    by_kind: dict[str, int] = {"verbatim": 0, "embedded": 0, "edited": 0}
    for ln in found:
        p = plants.get(str(ln))
        if p:
            by_kind[p["kind"]] += 1
    fp = sorted(ln for ln in found if str(ln) not in plants)
    missed = {
        k: sorted(int(ln) for ln, p in plants.items() if p["kind"] == k and int(ln) not in found) for k in by_kind
    }
    return {"found": by_kind, "false_positives": len(fp), "fp_lines": fp[:20], "missed_lines": missed}


def run_all(args: argparse.Namespace) -> dict:
    state = machine(args.code)  # the commit measured and the load, before the runs
    work = Path(args.work_dir)
    evals = eval_queries()
    pool = load_pools(work, evals)
    print(
        f"pool: {pool['pool_mb']} MB (prose, users, answers), {pool['sources']['man_pages']} man pages, "
        f"{pool['sources']['docstring_documents']} docstrings, {len(pool['sources']['dataset_files'])} dataset files",
        flush=True,
    )
    run = work / f"run-{args.mb:g}mb-s{args.seed}"
    if run.exists():
        shutil.rmtree(run)
    run.mkdir(parents=True)
    t = time.time()
    corpus = build_corpus(run, args.mb, args.seed, pool, evals, args.plants)
    corpus["build_s"] = round(time.time() - t, 1)
    print(f"corpus: {corpus}", flush=True)
    plants = json.loads((run / "plants.json").read_text())
    uniq = list(dict.fromkeys(q for _, q in evals))
    (run / "evals.json").write_text(json.dumps(uniq))
    (run / "decon-evals").mkdir()
    with open(run / "decon-evals" / "stabletoolbench.jsonl", "w") as f:
        for i, q in enumerate(uniq):
            f.write(
                json.dumps(
                    {
                        "eval_key": "stabletoolbench",
                        "eval_instance_index": i,
                        "split": "test",
                        "question": q,
                        "doc_id": i,
                        "fingerprint": hashlib.sha256(q.encode()).hexdigest()[:16],
                    }
                )
                + "\n"
            )
    bytecode = "from source (--from-source)" if args.from_source else compile_bytecode(args.code, args.peer_python)
    # the inputs just written (~200 MB) reach the disk now, not while the first tool runs: the kernel's
    # write-back shares the cores and slowed whichever tool came first by ~10 % (CPU-s 6.1 -> 6.7-7.0)
    os.sync()
    become_subreaper()
    rows = []
    train = str(run / "train.jsonl")
    tools = [
        ("auditor default", ["default"], "auditor"),
        ("auditor exact+ngram", ["exact", "ngram"], "auditor"),
        ("lm-eval janitor", None, "janitor"),
        ("allenai/decon", None, "decon"),
    ]
    for name, methods, key in tools:
        if key in args.skip:
            continue
        tag = re.sub(r"\W+", "-", name)
        log = run / f"{tag}.log"
        if methods is not None:
            cmd = auditor_cmd() + [
                "audit",
                "--train",
                train,
                "--eval",
                "stabletoolbench",
                "--report-dir",
                str(run / f"{tag}-report"),
                "--index-dir",
                str(run / f"{tag}-index"),
                "--workers",
                str(args.workers),
            ]
            for meth in methods if methods != ["default"] else []:
                cmd += ["--method", meth]
        elif name == "lm-eval janitor":
            cmd = [
                args.peer_python,
                "-m",
                "benchmarks.bench_real",
                "--janitor-worker",
                str(run / "evals.json"),
                str(run / "peers" / "train.jsonl"),
                str(run / "janitor.json"),
            ]
        else:
            cmd = [
                args.peer_python,
                "-m",
                "benchmarks.bench_real",
                "--decon-worker",
                str(run / "decon-evals"),
                str(run / "peers"),
                str(run / "decon-report"),
                "2",
            ]
        print(f"running {name}: {' '.join(cmd)}", flush=True)
        if methods is None:
            m = measure(cmd, log)
        else:  # the auditor of --code, --repeat times: the run of median CPU is kept, every CPU-s listed
            ms = []
            for _ in range(max(1, args.repeat)):
                shutil.rmtree(run / f"{tag}-index", ignore_errors=True)  # each run builds its eval index
                # in the run folder: the forkserver (``python -c``) puts its working folder first on its path
                ms.append(measure(cmd, log, env=repo_env(args.code), cwd=run))
            m = sorted(ms, key=lambda x: x["cpu_s"])[len(ms) // 2] | {"all_cpu_s": [x["cpu_s"] for x in ms]}
        row: dict[str, Any] = {"tool": name, "cmd": cmd, **m}
        try:
            if methods is not None:
                conc, susp = auditor_found(run / f"{tag}-report" / "report.json")
                row.update(score(conc, plants))
                row["suspected_only"] = score(susp, plants)
                rj = json.loads((run / f"{tag}-report" / "report.json").read_text())
                row["methods"] = sorted({f["method"] for f in rj["findings"]})
                row["workers"] = rj.get("run", {}).get("workers")
            elif name == "lm-eval janitor":
                row.update(score(set(json.loads((run / "janitor.json").read_text())["flagged"]), plants))
            else:
                row.update(score(decon_found(run / "decon-report"), plants))
                row["decon_version"] = (run / "decon-report" / "bench_version.txt").read_text()
        except (OSError, ValueError, KeyError) as e:
            row["error"] = f"{type(e).__name__}: {e}; log {log}: {log.read_text()[-2000:]}"
        print(
            f"  -> {json.dumps({k: v for k, v in row.items() if k not in ('cmd', 'missed_lines', 'suspected_only')})}",
            flush=True,
        )
        rows.append(row)
    mb = corpus["mb"]
    jan = next((r for r in rows if r["tool"] == "lm-eval janitor"), None)
    for r in rows:
        r["mb"] = mb
        # a run that failed has no speed: its seconds are those of a crash
        r["mb_per_cpu_s"] = round(mb / r["cpu_s"], 2) if r["cpu_s"] and "error" not in r else None
    for r in rows:
        ok = jan is not None and jan["mb_per_cpu_s"] and r["mb_per_cpu_s"]
        r["x_janitor"] = round(r["mb_per_cpu_s"] / jan["mb_per_cpu_s"], 2) if ok and jan is not None else None
    return {
        "bench": "bench_real",
        "date": time.strftime("%Y-%m-%d"),
        "machine": state
        | {"loadavg_at_start": state["loadavg"], "loadavg_at_end": list(os.getloadavg()), "bytecode": bytecode},
        "command": command_line("benchmarks.bench_real"),
        "corpus": corpus,
        "pool": {k: pool[k] for k in ("pool_mb", "sha256", "seconds")}
        | {"sources": {**pool["sources"], "dataset_files": len(pool["sources"]["dataset_files"])}},
        "runs": rows,
    }


def compile_bytecode(code: Path | str, peer_python: str) -> str:
    """Every tool's Python compiled to bytecode before the runs, as ``pip install`` does for a wheel (and
    as a first run does for an editable install): with ``PYTHONDONTWRITEBYTECODE`` set (as on this
    machine) no ``.pyc`` is written, and each process of each run would compile every module it loads
    from source (its calling process and its forkserver each load ~330 auditor modules: paired runs at
    100 MB, `benchmarks/results/paired_cputime_2026-12-07_s28.md`, took 0.87 CPU-s more a default-methods
    audit, 0.36 more an exact + ngram one). ``auditor/`` of ``code`` and ``benchmarks/`` (the peers' worker module) are compiled
    by this Python, ``benchmarks/`` and lm-eval's ``janitor.py`` also by the peers' (their ``.pyc``
    tags differ); a ``.pyc`` is written only where none matches its source. ``--from-source`` skips
    this (the runs before session 28 were measured so)."""
    code = Path(code)
    cmds = [[sys.executable, "-m", "compileall", "-q", str(code / "auditor"), str(REPO / "benchmarks")]]
    if Path(peer_python).exists():
        find = "import importlib.util as u; print(list(u.find_spec('lm_eval').submodule_search_locations)[0])"
        where = subprocess.run([peer_python, "-c", find], capture_output=True, text=True).stdout.strip()
        jan = [str(Path(where) / "decontamination" / "janitor.py")] if where else []
        cmds.append([peer_python, "-m", "compileall", "-q", str(REPO / "benchmarks"), *jan])
    for cmd in cmds:
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return "compiled before the runs (as pip install does)"


def machine(code: Path | str = REPO) -> dict:
    load = os.getloadavg()
    return {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "loadavg": [round(x, 2) for x in load],
        "note": "shared with other agents",
        "git": git_state(code),
        "kernel": kernel_name(code),
    }


def kernel_name(code: Path | str = REPO) -> str:
    """The token batch's kernel the audits of ``code``'s auditor/ run on: ``auditor.text._batchc`` (C,
    built at install) or ``auditor.text._batchpy`` (its Python twin, where no compiler was found)."""
    ask = "import auditor; from auditor.text import kernel; print(kernel.impl.__name__, auditor.__file__)"
    done = subprocess.run(
        [sys.executable, "-c", ask], capture_output=True, text=True, env=repo_env(code), cwd=tempfile.gettempdir()
    )
    name, _, where = done.stdout.strip().partition(" ")
    if not name or not Path(where).resolve().is_relative_to(Path(code).resolve()):
        raise SystemExit(
            f"--code {code}: its auditor is not the one imported ({done.stdout.strip() or done.stderr[-300:]})"
        )
    return name


def git_state(code: Path | str = REPO) -> dict:
    """The commit measured, and the files under auditor/ that differ from it (others edit the tree)."""

    def git(*a: str) -> str:
        return subprocess.run(["git", "-C", str(code), *a], capture_output=True, text=True).stdout.strip()

    return {
        "commit": git("rev-parse", "--short", "HEAD"),
        "uncommitted_auditor_files": git("status", "--porcelain", "--", "auditor").splitlines(),
    }


def suspected(r: dict) -> str:
    """Planted lines (and unplanted ones) with only suspected findings: auditor's review list."""
    s = r.get("suspected_only")
    if not s:
        return "-"
    return f"{sum(s['found'].values())} planted ({', '.join(f'{v} {k}' for k, v in s['found'].items() if v) or 'none'}), {s['false_positives']} unplanted"


def print_table(res: dict) -> None:
    hdr = [
        "tool",
        "MB",
        "CPU-s",
        "MB/CPU-s",
        "× janitor",
        "wall-s",
        "peak MB",
        "verbatim",
        "embedded",
        "edited",
        "FP",
        "suspected only",
    ]
    n = res["corpus"]["plants"]
    rows = []
    for r in res["runs"]:
        f = r.get("found", {})
        if "error" in r:
            rows.append([r["tool"], f"{r['mb']:g}", *["failed"] * 4, *["-"] * (len(hdr) - 6)])
            continue
        rows.append(
            [
                r["tool"],
                f"{r['mb']:g}",
                f"{r['cpu_s']:.1f}",
                f"{r['mb_per_cpu_s']}",
                f"{r['x_janitor']}",
                f"{r['wall_s']:.1f}",
                f"{r['peak_tree_rss_mb']:.0f}",
                *(f"{f.get(k, '-')}/{n[k]}" for k in ("verbatim", "embedded", "edited")),
                str(r.get("false_positives", "-")),
                suspected(r),
            ]
        )
    w = [max(len(x) for x in col) for col in zip(hdr, *rows)]
    print("| " + " | ".join(h.ljust(k) for h, k in zip(hdr, w)) + " |")
    print("|" + "|".join("-" * (k + 2) for k in w) + "|")
    for row in rows:
        print("| " + " | ".join(c.ljust(k) for c, k in zip(row, w)) + " |")


# --- profile and start-up -------------------------------------------------------------------------


def profile(args: argparse.Namespace) -> dict:
    import pstats

    work = Path(args.work_dir)
    evals = eval_queries()
    pool = load_pools(work, evals)
    run = work / f"profile-{args.profile_mb:g}mb"
    if run.exists():
        shutil.rmtree(run)
    run.mkdir(parents=True)
    corpus = build_corpus(run, args.profile_mb, args.seed, pool, evals, max(1, args.plants // 5))
    prof = run / "audit.prof"
    cmd = [
        sys.executable,
        "-m",
        "cProfile",
        "-o",
        str(prof),
        "-m",
        "auditor",
        "audit",
        "--train",
        str(run / "train.jsonl"),
        "--eval",
        "stabletoolbench",
        "--report-dir",
        str(run / "report"),
        "--index-dir",
        str(run / "index"),
        "--workers",
        "1",
    ]
    print("running", " ".join(cmd), flush=True)
    become_subreaper()
    m = measure(cmd, run / "profile.log")
    st = pstats.Stats(str(prof))
    total = sum(v[2] for v in st.stats.values())  # type: ignore[attr-defined]
    top = sorted(st.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:25]  # type: ignore[attr-defined]
    rows = []
    for (fn, ln, name), (_cc, nc, tt, ct, _callers) in top:
        short = fn.split("/site-packages/")[-1].replace(str(REPO) + "/", "")
        rows.append(
            {
                "function": f"{short}:{ln}({name})",
                "calls": nc,
                "own_s": round(tt, 2),
                "own_share": round(tt / total, 3),
                "cum_s": round(ct, 2),
            }
        )
    auditor_fns = [(k, v) for k, v in st.stats.items() if "/auditor/" in k[0]]  # type: ignore[attr-defined]
    cumulative = [
        {
            "function": f"{fn.replace(str(REPO) + '/', '')}:{ln}({name})",
            "cum_s": round(v[3], 2),
            "cum_share": round(v[3] / total, 3),
        }
        for (fn, ln, name), v in sorted(auditor_fns, key=lambda kv: kv[1][3], reverse=True)[:30]
    ]
    print(f"profile: {corpus['mb']} MB, CPU {m['cpu_s']} s (profiled), own time total {total:.1f} s")
    print(f"| {'function':70} | calls | own s | share | cum s |")
    for r in rows:
        print(f"| {r['function'][:70]:70} | {r['calls']} | {r['own_s']} | {r['own_share']:.1%} | {r['cum_s']} |")
    return {
        "bench": "bench_real --profile",
        "date": time.strftime("%Y-%m-%d"),
        "machine": machine(),
        "command": command_line("benchmarks.bench_real"),
        "corpus": corpus,
        "run": m,
        "profile_cmd": cmd,
        "own_time_total_s": round(total, 2),
        "top": rows,
        "top_cumulative_auditor": cumulative,
    }


def startup(args: argparse.Namespace) -> dict:
    work = Path(args.work_dir).resolve() / "startup"  # the audits run there: absolute paths
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    one = work / "one.jsonl"
    one.write_text(json.dumps({"text": "How do I list the files of a directory, newest first?"}) + "\n")
    become_subreaper()
    runs = {}

    def best(name: str, cmd: list[str], reps: int = 3, fresh_index: bool = False) -> None:
        ms = []
        for k in range(reps):
            c = [x.replace("{k}", str(k)) for x in cmd]
            ms.append(measure(c, work / f"{name}.log", env=repo_env(args.code), cwd=work))
        ms.sort(key=lambda m: m["cpu_s"])
        runs[name] = {"cmd": cmd, "median": ms[len(ms) // 2], "all_cpu_s": [m["cpu_s"] for m in ms]}
        print(
            f"{name:40} CPU {ms[len(ms) // 2]['cpu_s']:.2f} s (runs {[m['cpu_s'] for m in ms]}), wall {ms[len(ms) // 2]['wall_s']:.2f} s",
            flush=True,
        )

    best("python -c pass", [sys.executable, "-c", "pass"])
    best("import auditor.cli", [sys.executable, "-c", "import auditor.cli"])
    best("auditor --help", auditor_cmd() + ["--help"])
    audit = auditor_cmd() + [
        "audit",
        "--train",
        str(one),
        "--eval",
        "stabletoolbench",
        "--report-dir",
        str(work / "r{k}"),
    ]
    best("audit 1 record, cold index", audit + ["--index-dir", str(work / "i{k}")])
    best("audit 1 record, warm index", audit + ["--index-dir", str(work / "iwarm")])
    best(
        "audit 1 record exact+ngram, cold index",
        audit + ["--method", "exact", "--method", "ngram", "--index-dir", str(work / "j{k}")],
    )
    # what an eval set's size costs each run: BFCL's 4,696 items read, indexed, normalized
    vs_bfcl = [("bfcl" if x == "stabletoolbench" else x) for x in audit]
    best("audit 1 record vs bfcl, cold index", vs_bfcl + ["--index-dir", str(work / "b{k}")])
    best(
        "audit 1 record exact+ngram vs bfcl, cold index",
        vs_bfcl + ["--method", "exact", "--method", "ngram", "--index-dir", str(work / "c{k}")],
    )
    imp = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import auditor.cli"],
        capture_output=True,
        text=True,
        env=repo_env(args.code),
        cwd=work,
    )
    cum = []
    for ln in imp.stderr.splitlines():
        parts = ln.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            cum.append((int(parts[1]), parts[2].rstrip()))
    top_level = sorted((c for c in cum if not c[1].startswith("  ")), reverse=True)[:1]
    heavy = sorted(cum, reverse=True)[:15]
    print("import time, cumulative µs (top 15):")
    for us, name in heavy:
        print(f"  {us:>9} {name}")
    return {
        "bench": "bench_real --startup",
        "date": time.strftime("%Y-%m-%d"),
        "machine": machine(args.code),
        "runs": runs,
        "importtime_top": [{"cumulative_us": us, "module": n} for us, n in heavy],
        "importtime_root": top_level,
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--janitor-worker":
        return janitor_worker(*sys.argv[2:5])
    if len(sys.argv) > 1 and sys.argv[1] == "--decon-worker":
        return decon_worker(*sys.argv[2:6])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=100, help="corpus size in MB (default 100; 1000 allowed)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plants", type=int, default=50, help="plants of each kind (verbatim, embedded, edited)")
    ap.add_argument("--workers", type=int, default=2, help="auditor --workers (default 2, as decon's 2 threads)")
    ap.add_argument(
        "--peer-python",
        default="/tmp/real-peers-venv/bin/python",
        help="Python >= 3.12 with `decontaminate` and `lm-eval` (pip install --no-deps)",
    )
    ap.add_argument("--skip", nargs="*", default=[], help="tools to leave out: auditor janitor decon")
    ap.add_argument(
        "--code",
        default=str(REPO),
        help="the checkout whose auditor/ the audits run (default: this one; its C kernel built)",
    )
    ap.add_argument(
        "--repeat", type=int, default=1, help="run each audit this many times, keep the median (the peers run once)"
    )
    ap.add_argument(
        "--from-source",
        action="store_true",
        help="do not compile the tools' bytecode before the runs (each process compiles what it loads)",
    )
    ap.add_argument("--work-dir", default="/tmp/bench_real")
    ap.add_argument("--out", help="JSON to write (default benchmarks/results/bench_real[_MODE]_<date>.json)")
    ap.add_argument("--profile", action="store_true", help="cProfile a default-methods audit, --workers 1")
    ap.add_argument("--profile-mb", type=float, default=10)
    ap.add_argument("--startup", action="store_true", help="CPU of start-up: imports, a 1-record audit")
    ap.add_argument("--show", metavar="JSON", help="print the table of a results file and stop")
    args = ap.parse_args()
    if args.show:
        return print_table(json.loads(Path(args.show).read_text()))
    RESULTS.mkdir(parents=True, exist_ok=True)
    date = time.strftime("%Y-%m-%d")
    if args.profile:
        res, default = profile(args), RESULTS / f"bench_real_profile_{date}.json"
    elif args.startup:
        res, default = startup(args), RESULTS / f"bench_real_startup_{date}.json"
    else:
        size = (
            "" if args.mb == 100 else "_1gb" if args.mb == 1000 else f"_{args.mb:g}mb"
        )  # a 1 GB run keeps the 100 MB one
        res, default = run_all(args), RESULTS / f"bench_real_{date}{size}.json"
        print_table(res)
    out = Path(args.out) if args.out else default
    write_json(out, res)
    print(f"wrote {out}")
    failed = [r["tool"] for r in res.get("runs", []) if "error" in r]
    if failed:
        sys.exit(f"failed: {', '.join(failed)} (its error is in {out})")


if __name__ == "__main__":
    main()
