"""A text that is not plain ASCII as a :class:`~auditor.text.batch.TokenBatch` takes it into its buffer,
before translation (:func:`piece`): the per-text path of the batch, for the texts the kernel's
``not_plain`` names; plain ASCII is copied as it is. No errors are raised for any ``str``.
"""

from __future__ import annotations

from .evasion import percent_decode
from .kernel import blank_lines, line_runs
from .markup import strip_tags
from .normalize import ascii_typography, has_ascii_evasion, is_plain, normalize_spaced, undo_evasion


def piece(text: str) -> bytes:
    """A text that is not plain ASCII as the batch's buffer takes it (before translation): percent-escapes
    decoded first, where that leaves plain ASCII; tags stripped first from ASCII markup without escapes
    or entities; typography that normalizes as ASCII made ASCII; any other text read as
    :func:`_undone_by_line` says.

    >>> piece("a%20b"), piece("<b>Bo</b>ok"), piece("caf\u00e9 &amp; co")
    (b'a b', b'Book', b'cafe   co')
    """
    return piece_by_lines(text)[0]


def piece_by_lines(text: str) -> tuple[bytes, bool]:
    """:func:`piece` of ``text``, and whether that piece is, line for line, what each line alone reads
    as (its own piece, or that piece normalized) and holds a byte of ASCII whitespace where, and only
    where, the line holds whitespace (``str.strip``) — known without piecing a line:

    * ASCII, or ASCII but for typography (:func:`~auditor.text.normalize.ascii_typography`, which maps
      each of its characters alone: a space for a space, a comma for any other), without ``<``, ``%``,
      ``&``, NUL, ESC or a hyphen ending a line: the piece is the text so mapped, and so is each line's;
    * ASCII markup without escapes or entities whose tags ``strip_tags`` leaves as they are: the piece
      is the text, and so is each line's (a tag it would strip in a line alone it strips in the whole
      text: a tag holds no ``<`` but its first, so no tag found in the whole text overlaps it, and a
      name closed in the line is closed in the text);
    * any other text that undoing evasion leaves as it is (:func:`_undone_by_line`), where each line
      normalized alone holds more than whitespace when, and only when, the line does.

    Any other text: False (its lines' pieces are compared with its piece, :mod:`auditor.text.lines`).

    >>> piece_by_lines("List<String> x\\nok"), piece_by_lines("It\\u2019s\\nok"), piece_by_lines("<b>Bo</b>ok\\nx")
    ((b'List<String> x\\nok', True), (b'It,s\\nok', True), (b'Book\\nx', False))
    >>> piece_by_lines("Caf\\u00e9 &\\nok"), piece_by_lines("Caf\\u00e9 &amp;\\nok"), piece_by_lines("\\u2600\\nok")
    ((b'cafe  \\nok', True), (b'cafe  \\nok', False), (b' \\nok', False))
    """
    plain = text if text.isascii() else ascii_typography(text)  # typography that normalizes as ASCII
    if (
        plain.isascii()
        and "&" not in plain
        and "\x00" not in plain
        and "\x1b" not in plain
        and "-\n" not in plain
        and ("\r" not in plain or "-\r\n" not in plain)
    ):
        if "<" in plain:  # ASCII markup: ``normalize`` strips its tags, then reads it as plain ASCII
            if plain is text and "%" not in plain:
                stripped = strip_tags(plain) if ">" in plain else plain
                return stripped.encode("ascii"), stripped == plain
        elif "%" not in plain:
            return plain.encode("ascii"), True
        elif _simple(t := percent_decode(plain)):
            return t.encode("ascii"), False
    if plain is not text and plain.isascii() and is_plain(plain):  # as normalize reads it: plain but for typography
        return plain.encode("ascii"), False
    return _undone_by_line(text)


def _undone_by_line(text: str) -> tuple[bytes, bool]:
    """``normalized_bytes`` of a text that is not plain ASCII, but for runs of ASCII whitespace (the
    batch's squeeze makes each one space): its evasion undone as a whole
    (:func:`~auditor.text.normalize.undo_evasion`), then line by line, as ``normalize`` reads it
    (:func:`~auditor.text.normalize.normalize_undone` reads no further than a line): lines left ASCII
    without a NUL are copied for the batch's plain path, only the others normalized, in runs of lines
    (:func:`~auditor.text.kernel.line_runs`, :func:`~auditor.text.normalize.normalize_spaced`). So a 2 MB record holding one
    accented word costs what plain text costs, but for that word's line.

    And whether that is each line's own piece, with the line's mark: when undoing evasion left the
    text as it is, it leaves each line as it is (what it undoes in a line alone it undoes in the whole
    text: an escape, an entity, a terminal sequence or an override lies in one line, a hyphenated wrap
    in none, and a tag stripped in a line is stripped in the text, :func:`piece_by_lines`), so a line's
    piece is the line where it is copied and ``normalize_undone`` of it where it is normalized (its
    words apart by ASCII whitespace); and each normalized line holds more than whitespace when, and
    only when, the line does (``str.strip``; a line of a sign alone normalizes to nothing: a line blank
    before is blank after, so the runs' counts of blank lines tell).

    >>> _undone_by_line("Caf\\u00e9 <b>menu</b>\\nOrderTwoCoffeesPlease &amp; thanks")
    (b'cafe menu\\nOrderTwoCoffeesPlease & thanks', False)
    >>> _undone_by_line("Caf\\u00e9 menu\\nOrderTwoCoffeesPlease & thanks")
    (b'cafe menu\\nOrderTwoCoffeesPlease & thanks', True)
    """
    undone = undo_evasion(text)
    kept = undone == text
    if undone.isascii() and "\x00" not in undone:
        return undone.encode("ascii"), kept
    pieces: list[bytes] = []
    done = 0  # where the text not copied yet starts
    for start, end in line_runs(undone, BLOCK_CHARS):
        block = undone[start:end]
        normalized = normalize_spaced(block)
        if kept and blank_lines(normalized) != blank_lines(block):  # a line of a sign alone
            kept = False
        pieces += (undone[done:start].encode("ascii"), normalized.encode("utf-8"))
        done = end
    pieces.append(undone[done:].encode("ascii"))
    return b"".join(pieces), kept


#: the characters a run of lines (:func:`~auditor.text.kernel.line_runs`) holds at most (but for one long
#: line): enough to share a run's work, few enough that replacing a character scans little text without it
BLOCK_CHARS = 8192


def _simple(t: str) -> bool:
    """ASCII that ``normalize`` only lowers, translates and splits (camel-cased runs and ``%`` apart):
    no markup character, NUL, ESC or hyphen ending a line (:func:`~auditor.text.normalize.has_ascii_evasion`)."""
    return t.isascii() and not has_ascii_evasion(t)
