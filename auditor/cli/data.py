"""``auditor data list`` and ``auditor data fetch NAME|all``: the public releases the tests and notebooks
read, downloaded from their upstream repositories at pinned commits (:mod:`auditor.fetch.releases`)."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import ConfigError
from ..fetch.releases import DEFAULT_BASE_URL, checkout_data_folder, fetch_releases, select, status
from . import AuditorGroup, main
from ._common import library_errors

DEST_HELP = (
    "Folder the releases go in, as <release>/<path> ($AUDITOR_SHARED_DATA; default: shared/data beside "
    "the checkout auditor runs from, where the tests and notebooks look)."
)
dest_option = click.option("--dest", envvar="AUDITOR_SHARED_DATA", default=None, metavar="DIR", help=DEST_HELP)


def _dest(given: str | None) -> Path:
    if given:
        return Path(given).expanduser()
    found = checkout_data_folder()
    if found is None:
        raise ConfigError(
            "no folder for the releases: this auditor is installed, not run from a checkout; "
            "pass --dest DIR or set AUDITOR_SHARED_DATA"
        )
    return found


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


@main.group("data", cls=AuditorGroup)
def data_group() -> None:
    """The public releases the tests and notebooks read (docs/data.md)."""


@data_group.command("list")
@dest_option
def list_cmd(dest):
    """List the public releases: files, size, repository and commit, licence, and how many are in DEST."""
    with library_errors():
        folder = _dest(dest)
        click.echo(f"releases in {folder}:")
        for rel in select("all"):
            commits = ", ".join(c[:12] for c in rel.commits)
            have = status(rel, folder)
            click.echo(
                f"{rel.name:<19} {have:>3}/{len(rel.files):<3} files  {_mb(rel.size):>8}  {rel.repo} @ {commits}"
            )
            click.echo(f"{'':<19} licence: {rel.licence}")


@data_group.command("fetch")
@click.argument("name", metavar="NAME|all")
@dest_option
@click.option(
    "--base-url",
    envvar="AUDITOR_DATA_BASE_URL",
    default=DEFAULT_BASE_URL,
    show_default=True,
    metavar="URL",
    help="Where files are fetched from, as URL/OWNER/REPO/COMMIT/PATH ($AUDITOR_DATA_BASE_URL; a mirror, file://...).",
)
@click.option("--timeout", default=60.0, show_default=True, metavar="SECONDS", help="Per-file network timeout.")
def fetch_cmd(name, dest, base_url, timeout):
    """Download public release NAME (or all of them) at its pinned commit, check every file's SHA-256
    and write it into DEST; files already there with the pinned SHA-256 are not downloaded again."""
    with library_errors():
        releases = select(name)
        folder = _dest(dest)
        total = present = 0
        for done in fetch_releases(releases, folder, base_url, timeout):
            rel = done.release
            total += len(rel.files)
            present += done.present
            replaced = f", {done.replaced} replaced (not the pinned bytes)" if done.replaced else ""
            click.echo(
                f"{rel.name}: {len(rel.files)} files: {done.downloaded} downloaded{replaced}, "
                f"{done.present} already present and verified ({_mb(done.bytes)} fetched)"
            )
            click.echo(f"  from {rel.repo} @ {', '.join(c[:12] for c in rel.commits)}; licence: {rel.licence}")
        click.echo(f"{total} files verified in {folder} ({present} were there already)")
