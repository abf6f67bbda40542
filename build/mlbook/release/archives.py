"""Reproducible archives: the same files and epoch give the same bytes (sorted entries, fixed times and owners)."""

from __future__ import annotations

import gzip
import tarfile
import zipfile
from pathlib import Path

from ..provenance import as_datetime
from ..writers.outputs import atomic_path

ZIP_EPOCH = 315532800  # 1980-01-01: a zip entry cannot be older


def tar_gz(folder: Path, out: Path, top: str, epoch: int) -> int:
    """Pack every file under folder into out (a .tar.gz) below the folder name top; return the number of files.

    Entries are sorted, dated epoch (seconds since 1970, UTC), owned by 0:0 without names, modes 0644/0755;
    the gzip header carries epoch and no file name. Symbolic links and special files are refused (ValueError).
    """
    folder = Path(folder)
    paths = sorted(folder.rglob("*"), key=lambda p: p.relative_to(folder).as_posix())
    count = 0
    with atomic_path(out) as tmp, open(tmp, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=epoch, compresslevel=6) as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
                tar.addfile(_info(f"{top}/", tarfile.DIRTYPE, 0o755, epoch))
                for path in paths:
                    rel = path.relative_to(folder).as_posix()
                    if path.is_symlink() or not (path.is_file() or path.is_dir()):
                        raise ValueError(f"{path}:1: not a plain file: a release holds only files and folders")
                    if path.is_dir():
                        tar.addfile(_info(f"{top}/{rel}/", tarfile.DIRTYPE, 0o755, epoch))
                        continue
                    info = _info(f"{top}/{rel}", tarfile.REGTYPE, 0o644, epoch)
                    info.size = path.stat().st_size
                    with open(path, "rb") as data:
                        tar.addfile(info, data)
                    count += 1
    return count


def _info(name: str, kind: bytes, mode: int, epoch: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.mtime = kind, mode, epoch
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def zip_files(files: list[tuple[str, Path]], out: Path, epoch: int) -> int:
    """Pack (name in the archive, file) pairs into out (a .zip) sorted by name, dated epoch; return their number."""
    stamp = as_datetime(max(epoch, ZIP_EPOCH)).timetuple()[:6]
    with atomic_path(out) as tmp, zipfile.ZipFile(tmp, "w") as zf:
        for name, path in sorted(files):
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, whatever the machine, so the bytes do not depend on it
            info.external_attr = 0o644 << 16
            zf.writestr(info, Path(path).read_bytes())
    return len(files)
