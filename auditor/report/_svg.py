"""Inline SVG charts for the HTML report: no JavaScript, no network, one ``<svg>`` string each.

>>> svg = histogram([1.0, 0.9, 0.55], threshold=0.5, title="ngram")
>>> svg.startswith("<svg") and 'class="threshold"' in svg
True
"""

from __future__ import annotations

import re
from html import escape

W, H = 420, 210
PAD_L, PAD_B, PAD_T, PAD_R = 40, 34, 36, 16
CHAR_W = 7  # approximate width of one character of the 11-12 px chart text


#: each chart class's look as SVG presentation attributes, so a chart drawn where report.html's stylesheet
#: is absent (a notebook's output, nbconvert's HTML) looks as it does in the report (where the stylesheet's
#: rules, the same values, take precedence): without them a track is a full black bar
LOOK = {
    "bar": {"fill": "#3a6fb0"},
    "track": {"fill": "#e8ecf2"},
    "axis": {"stroke": "#555"},
    "title": {"font-size": "12", "font-weight": "600"},
    "tick": {"font-size": "11", "fill": "#333"},
    "thr": {"fill": "#c0262d"},
    "cellt": {"font-size": "11"},
    "threshold": {"stroke": "#c0262d", "stroke-width": "2", "stroke-dasharray": "5 3"},
}
_CLASS = re.compile(r'class="([\w ]+)"')


def _styled(m: re.Match) -> str:
    """``class="tick thr"`` with its classes' presentation attributes (later classes win); an attribute
    the element sets itself (a cell's ``fill``) is not repeated."""
    look: dict[str, str] = {}
    for name in m.group(1).split():
        look.update(LOOK.get(name, {}))
    return m.group(0) + "".join(f' {k}="{v}"' for k, v in look.items())


def _svg(width: int, height: int, body: list[str], label: str) -> str:
    """One chart: ``body`` in an ``<svg>``, each element carrying its class's look (:data:`LOOK`).

    >>> _svg(10, 10, ['<rect class="track" width="5" height="5"/>'], "x").count('fill="#e8ecf2"')
    1
    """
    inner = _CLASS.sub(_styled, "".join(body))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" aria-label="{escape(label)}" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">' + inner + "</svg>"
    )


def histogram(scores: list[float], threshold: float | None, title: str, bins: int = 20) -> str:
    """Score histogram over [0, 1] with the method's threshold as a dashed red line."""
    counts = [0] * bins
    for s in scores:
        counts[min(bins - 1, max(0, int(float(s) * bins)))] += 1
    top = max(counts) or 1
    pw, ph = W - PAD_L - PAD_R, H - PAD_T - PAD_B
    bw = pw / bins
    body = [
        f'<text x="{W / 2}" y="14" text-anchor="middle" class="title">{escape(title)} ({len(scores)} findings)</text>',
        f'<line x1="{PAD_L}" y1="{PAD_T + ph}" x2="{PAD_L + pw}" y2="{PAD_T + ph}" class="axis"/>',
        f'<line x1="{PAD_L}" y1="{PAD_T}" x2="{PAD_L}" y2="{PAD_T + ph}" class="axis"/>',
        f'<text x="{PAD_L - 4}" y="{PAD_T + 4}" text-anchor="end" class="tick">{top}</text>',
        f'<text x="{PAD_L - 4}" y="{PAD_T + ph}" text-anchor="end" class="tick">0</text>',
    ]
    for i, c in enumerate(counts):
        if c:
            h = ph * c / top
            body.append(
                f'<rect class="bar" x="{PAD_L + i * bw + 1:.1f}" y="{PAD_T + ph - h:.1f}" '
                f'width="{bw - 2:.1f}" height="{h:.1f}"><title>{i / bins:.2f}–{(i + 1) / bins:.2f}: '
                f"{c}</title></rect>"
            )
    for t in (0, 0.25, 0.5, 0.75, 1.0):
        body.append(
            f'<text x="{PAD_L + t * pw:.1f}" y="{PAD_T + ph + 14}" text-anchor="middle" class="tick">{t:g}</text>'
        )
    body.append(f'<text x="{PAD_L + pw / 2}" y="{H - 4}" text-anchor="middle" class="tick">score</text>')
    if threshold is not None:
        x = PAD_L + min(1.0, max(0.0, float(threshold))) * pw
        # the label sits between the title and the plot, on the side of the line with room for it
        body.append(
            f'<line class="threshold" x1="{x:.1f}" y1="{PAD_T - 6}" x2="{x:.1f}" y2="{PAD_T + ph}"/>'
            f'<text x="{x + (4 if x < W * 0.6 else -4):.1f}" y="{PAD_T - 8}" class="tick thr" '
            f'text-anchor="{"start" if x < W * 0.6 else "end"}">threshold {threshold:g}</text>'
        )
    return _svg(W, H, body, f"score distribution of {title}")


def matrix(rows: list[str], cols: list[str], cells: dict[tuple[str, str], tuple[int, int]]) -> str:
    """Heat map: rows = training sets, columns = eval sets, cell = (contaminated items, eval items)."""
    cw, ch, top = 110, 34, 60
    left = max(90, CHAR_W * min(24, max((len(r) for r in rows), default=0)) + 14)
    width, height = max(300, left + cw * len(cols) + 10), top + ch * len(rows) + 10
    body = []
    for j, c in enumerate(cols):
        body.append(
            f'<text x="{left + j * cw + cw / 2}" y="{top - 8}" text-anchor="middle" class="tick">'
            f"{escape(c[:18])}<title>{escape(c)}</title></text>"
        )
    body.append('<text x="8" y="16" class="title">rows: training sets; columns: eval sets</text>')
    for i, r in enumerate(rows):
        body.append(
            f'<text x="{left - 6}" y="{top + i * ch + ch / 2 + 4}" text-anchor="end" class="tick">'
            f"{escape(r[:24])}<title>{escape(r)}</title></text>"
        )
        for j, c in enumerate(cols):
            k, n = cells.get((r, c), (0, 0))
            share = k / n if n else 0.0
            colour = f"rgba(200,30,30,{0.08 + 0.92 * share:.3f})" if k else "#eef5ee"
            body.append(
                f'<rect class="cell" x="{left + j * cw}" y="{top + i * ch}" width="{cw - 2}" height="{ch - 2}" '
                f'fill="{colour}"><title>{escape(r)} × {escape(c)}: {k}/{n}</title></rect>'
                f'<text x="{left + j * cw + cw / 2}" y="{top + i * ch + ch / 2 + 4}" text-anchor="middle" '
                f'class="cellt">{k}/{n} ({100 * share:.1f}%)</text>'
            )
    return _svg(width, height, body, "train by eval contamination matrix")


def bars(items: list[tuple[str, int, int]], title: str) -> str:
    """Horizontal bars: contaminated share of each eval subset ``(label, contaminated, items)``."""
    bh, shown = 22, 40
    labels = [label if len(label) <= shown else label[: shown - 1] + "…" for label, _, _ in items]
    left = max(60, CHAR_W * max((len(s) for s in labels), default=0) + 14)
    width = max(left + 330, CHAR_W * len(title) + 20)
    pw = width - left - 110
    height = 30 + bh * len(items) + 10
    body = [f'<text x="8" y="16" class="title">{escape(title)}</text>']
    for i, (label, k, n) in enumerate(items):
        share = k / n if n else 0.0
        y = 26 + i * bh
        body.append(
            f'<text x="{left - 6}" y="{y + 14}" text-anchor="end" class="tick">{escape(labels[i])}'
            f"<title>{escape(label)}</title></text>"
            f'<rect class="track" x="{left}" y="{y + 2}" width="{pw}" height="{bh - 6}"/>'
            f'<rect class="bar" x="{left}" y="{y + 2}" width="{pw * share:.1f}" height="{bh - 6}">'
            f"<title>{escape(label)}: {k}/{n}</title></rect>"
            f'<text x="{left + pw + 6}" y="{y + 14}" class="tick">{k}/{n} ({100 * share:.1f}%)</text>'
        )
    return _svg(width, height, body, title)
