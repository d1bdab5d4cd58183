"""The pieces every part of ``report.html`` is built from: the page's inline CSS and JavaScript, values
escaped for HTML (:func:`_e`), and tables (:func:`_table`; every cell escaped unless it is HTML built here).

>>> _table(["name", "n"], [[_e("<b>x</b>"), 3]], numeric={1})
'<div class="scroll"><table class="sortable"><thead><tr><th>name</th><th>n</th></tr></thead><tbody><tr><td>&lt;b&gt;x&lt;/b&gt;</td><td class="n">3</td></tr></tbody></table></div>'
"""

from __future__ import annotations

from collections.abc import Set
from html import escape
from typing import Any

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
main{max-width:1200px;margin:0 auto;padding:18px 24px 60px}
h1{font-size:24px;margin:6px 0} h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid #d8dce3;padding-bottom:4px}
h3{font-size:15px;margin:16px 0 6px}
.verdict{display:inline-block;padding:3px 12px;border-radius:12px;color:#fff;font-weight:700;letter-spacing:.5px}
.v-pass{background:#1b8a3a}.v-fail{background:#c0262d}.v-incomplete{background:#b86e00}
table{border-collapse:collapse;background:#fff;margin:6px 0 10px;width:100%}
th,td{border:1px solid #dde1e7;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef1f5;cursor:pointer;user-select:none} td.n{text-align:right;font-variant-numeric:tabular-nums}
code,.src{font:12px ui-monospace,Menlo,Consolas,monospace}
.plots{display:flex;flex-wrap:wrap;gap:14px}.plots figure{margin:0;background:#fff;border:1px solid #dde1e7;padding:6px}
svg .bar{fill:#3a6fb0} svg .track{fill:#e8ecf2} svg .axis{stroke:#555} svg .title{font-size:12px;font-weight:600}
svg .tick{font-size:11px;fill:#333} svg .thr{fill:#c0262d} svg .cellt{font-size:11px}
svg .threshold{stroke:#c0262d;stroke-width:2;stroke-dasharray:5 3}
.finding{background:#fff;border:1px solid #dde1e7;margin:10px 0;padding:8px 10px}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:10px}.pair>div{white-space:pre-wrap;word-break:break-word;
max-height:320px;overflow:auto;background:#fafbfc;border:1px solid #e3e6eb;padding:6px}
mark{background:#ffe066;padding:0 1px}.where{font:12px ui-monospace,Menlo,Consolas,monospace;color:#445;margin-bottom:4px}.cut{color:#889;font-style:italic}.muted{color:#667}.ev{color:#667;font-style:italic}
.st{font-size:12px;padding:0 5px;border-radius:8px;white-space:nowrap}.st-conclusive{background:#f6d5d7}
.st-suspected{background:#fbe7c4}.st-evidence-only{background:#e8ecf2}.unreviewed,.gap{color:#8a4b00}
pre{white-space:pre-wrap;background:#fff;border:1px solid #dde1e7;padding:6px;max-height:300px;overflow:auto}
.scroll{overflow-x:auto;max-width:100%} th,td{overflow-wrap:break-word} .path{overflow-wrap:anywhere}
td.n,.verdict{white-space:nowrap} td.n .muted{white-space:normal} .plots figure{max-width:100%;overflow-x:auto}
@media (max-width:900px){main{padding:12px 10px 40px}.pair{grid-template-columns:1fr}th,td{padding:3px 5px}}
"""

JS = """
document.querySelectorAll('table.sortable th').forEach(function(th){th.addEventListener('click',function(){
 var t=th.closest('table'),i=Array.prototype.indexOf.call(th.parentNode.children,th),b=t.tBodies[0];
 var rows=Array.prototype.slice.call(b.rows),asc=th.dataset.asc!=='1';th.dataset.asc=asc?'1':'0';
 rows.sort(function(x,y){var a=x.cells[i].innerText,c=y.cells[i].innerText,p=parseFloat(a),q=parseFloat(c);
  var r=(!isNaN(p)&&!isNaN(q))?p-q:a.localeCompare(c);return asc?r:-r;});rows.forEach(function(r){b.appendChild(r);});});});
document.body.setAttribute('data-charts',String(Array.prototype.filter.call(document.querySelectorAll('svg.chart'),
 function(s){var r=s.getBoundingClientRect();return r.width>0&&r.height>0&&s.querySelector('text');}).length));
document.body.setAttribute('data-clipped',String(Array.prototype.filter.call(document.querySelectorAll('main,.scroll'),
 function(e){return e.scrollWidth>e.clientWidth+1;}).length));
document.body.setAttribute('data-ready','1');
"""


def _e(v: Any) -> str:
    return escape(str(v))


def _path(value: Any) -> str:
    """A name or path (no spaces to wrap at): escaped, and allowed to wrap anywhere (no clipped table)."""
    return f"<span class='path'>{_e(value)}</span>"


def _cell(value: Any) -> str:
    """A table cell's HTML: a string is HTML built here (its values escaped with :func:`_e`), anything
    else (a count) is escaped as text."""
    return value if isinstance(value, str) else _e(value)


def status_html(status: str) -> str:
    """A finding's status as a tag (``class='st st-suspected'`` ...), so a suspected row never reads
    as a conclusive one."""
    kind = status.split(":")[0].replace(" ", "-")
    return f"<span class='st st-{_e(kind)}'>{_e(status)}</span>"


def _table(headers: list[str], rows: list[list[Any]], numeric: Set[int] = frozenset()) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(f'<td class="n">{_cell(c)}</td>' if i in numeric else f"<td>{_cell(c)}</td>" for i, c in enumerate(r))
        + "</tr>"
        for r in rows
    )
    return (
        f'<div class="scroll"><table class="sortable"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'
    )
