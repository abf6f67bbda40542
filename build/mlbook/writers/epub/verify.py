"""The EPUB's self-check before it replaces the last good one: the rules of EPUB 3 that our pipeline can break.

Checked on the written zip, not on what we meant to write: file names are safe and unique after case folding;
the manifest lists every file and every listed file exists; each XHTML document parses, its ids are unique, each
href and src resolves to a packaged file (and its fragment to an id there) and each fragment is a valid URL
fragment; the nav has no empty list; the NCX's ids are unique and its targets exist. EPUBCheck (in the tests)
checks far more; these are the rules a chapter's content or our own code can violate, named per chapter.
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from collections import Counter
from pathlib import Path
from urllib.parse import unquote, urlsplit

from lxml import etree

from ...diagnostics import Finding

NS = {
    "x": "http://www.w3.org/1999/xhtml",
    "opf": "http://www.idpf.org/2007/opf",
    "ncx": "http://www.daisy.org/z3986/2005/ncx/",
    "c": "urn:oasis:names:tc:opendocument:xmlns:container",
}
SAFE_FILE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*(/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*")
# A URL fragment: URL code points and well-formed percent escapes, no second '#' (WHATWG URL, EPUBCheck RSC-020).
FRAGMENT = re.compile(r"(?:[A-Za-z0-9!$&'()*+,;=:@/?._~-]|%[0-9A-Fa-f]{2}|[^\x00-\x7f\s])*")
REMOTE_SCHEMES = ("http", "https", "mailto")
PACKAGE_FILES = {"mimetype", "META-INF/container.xml"}
# Attributes through which an XHTML document refers to another file.
REFERENCES = ("href", "src", "data", "poster", "{http://www.w3.org/1999/xlink}href")


class _Check:
    """One pass over the zip; findings are attributed to chapters through docs (packaged name -> src_uri)."""

    def __init__(self, zf: zipfile.ZipFile, docs: dict[str, str]) -> None:
        self.zf, self.docs = zf, docs
        self.names = set(zf.namelist())
        self.findings: list[Finding] = []
        self.ids: dict[str, set[str]] = {}
        self.trees: dict[str, etree._Element] = {}

    def add(self, name: str, kind: str, detail: str, needle: str = "") -> None:
        """Record a finding about the packaged file name."""
        base = posixpath.basename(name)
        self.findings.append(Finding(self.docs.get(base, ""), kind, detail, needle))

    def file_names(self) -> None:
        folded = Counter(n.casefold() for n in self.names)
        for name in sorted(self.names):
            if not SAFE_FILE.fullmatch(name):
                self.add(name, "unsafe EPUB file name", f"'{name}' is not spelt with A-Z, a-z, 0-9, '_', '-', '.'")
            elif folded[name.casefold()] > 1:
                self.add(name, "EPUB file names collide", f"'{name}' differs from another file only in case")

    def package(self) -> tuple[str, dict[str, str]]:
        """The OPF's path and its manifest (href relative to the zip root -> media type); checks completeness."""
        container = etree.fromstring(self.zf.read("META-INF/container.xml"))
        opf_path = container.xpath("//c:rootfile/@full-path", namespaces=NS)[0]
        opf = etree.fromstring(self.zf.read(opf_path))
        base = posixpath.dirname(opf_path)
        manifest = {}
        for item in opf.xpath("//opf:manifest/opf:item", namespaces=NS):
            path = posixpath.normpath(posixpath.join(base, unquote(item.get("href", ""))))
            manifest[path] = item.get("media-type", "")
            if path not in self.names:
                self.add(path, "EPUB manifest", f"the manifest lists '{path}', which is not in the package")
        for name in sorted(self.names - set(manifest) - PACKAGE_FILES - {opf_path}):
            if not name.endswith("/"):
                self.add(name, "EPUB manifest", f"'{name}' is in the package but not in the manifest")
        return opf_path, manifest

    def parse(self, name: str) -> etree._Element | None:
        try:
            tree = etree.fromstring(self.zf.read(name))
        except etree.XMLSyntaxError as exc:
            self.add(name, "invalid XHTML", f"{name} does not parse as XML: {exc}")
            return None
        ids = [el.get("id") for el in tree.iter() if isinstance(el.tag, str) and el.get("id")]
        for dup in sorted(i for i, n in Counter(ids).items() if n > 1):
            self.add(name, "duplicate id", f"the id '{dup}' is defined more than once in {name}", dup)
        self.ids[name] = set(ids)
        self.trees[name] = tree
        return tree

    def reference(self, doc: str, ref: str, what: str) -> None:
        """Check one href or src written in the document doc."""
        parts = urlsplit(ref)
        if parts.scheme:
            if parts.scheme not in REMOTE_SCHEMES:
                self.add(doc, "link the EPUB cannot follow", f"{what} '{ref}' uses the scheme '{parts.scheme}:'", ref)
            elif " " in ref or not FRAGMENT.fullmatch(parts.fragment):
                self.add(doc, "invalid link", f"{what} '{ref}' is not a valid URL", ref)
            return
        if "#" in parts.fragment or not FRAGMENT.fullmatch(parts.fragment) or " " in parts.path:
            self.add(doc, "invalid link fragment", f"{what} '{ref}' is not a valid URL", unquote(parts.fragment) or ref)
            return
        target = posixpath.normpath(posixpath.join(posixpath.dirname(doc), unquote(parts.path))) if parts.path else doc
        if target not in self.names:
            detail = f"{what} '{ref}' points to a file the EPUB does not hold (it packages chapters and images only)"
            self.add(doc, "broken link in EPUB", detail, ref)
        elif parts.fragment and target in self.ids and unquote(parts.fragment) not in self.ids[target]:
            self.add(doc, "broken anchor in EPUB", f"{what} '{ref}': no id '{unquote(parts.fragment)}'", ref)

    def documents(self, manifest: dict[str, str]) -> None:
        xhtml = sorted(p for p, t in manifest.items() if t == "application/xhtml+xml" and p in self.names)
        for name in xhtml:
            self.parse(name)
        for name, tree in self.trees.items():
            for el in tree.iter():
                if not isinstance(el.tag, str):
                    continue
                for attr in REFERENCES:
                    if el.get(attr) is not None:
                        self.reference(name, el.get(attr), f"the {attr.rsplit('}', 1)[-1]}")
                if el.tag == f"{{{NS['x']}}}ol" and not len(el):
                    self.add(name, "empty list in EPUB", f"{name} holds an empty <ol/>, which EPUB readers reject")

    def ncx(self, manifest: dict[str, str]) -> None:
        for name in (p for p, t in manifest.items() if t == "application/x-dtbncx+xml" and p in self.names):
            tree = etree.fromstring(self.zf.read(name))
            ids = tree.xpath("//ncx:navPoint/@id", namespaces=NS)
            for dup in sorted(i for i, n in Counter(ids).items() if n > 1):
                self.add(name, "duplicate id", f"the NCX id '{dup}' is used more than once")
            for src in tree.xpath("//ncx:content/@src", namespaces=NS):
                self.reference(name, src, "the NCX entry")


def check(path: Path, docs: dict[str, str]) -> list[Finding]:
    """Every violation found in the EPUB at path; docs maps a document's file name to its chapter's src_uri."""
    with zipfile.ZipFile(path) as zf:
        run = _Check(zf, docs)
        run.file_names()
        _, manifest = run.package()
        run.documents(manifest)
        run.ncx(manifest)
    return run.findings
