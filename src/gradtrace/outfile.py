"""Output files: gradtrace writes its pages, traces and pictures without harming anyone else's files.

Place in the pipeline: tracer -> model -> explain -> render -> **outfile** -> notebook/cli.
The ``gradtrace`` command, ``gradtrace demo`` and ``%%gradtrace --html`` write through here.

What gets written where:

- a missing path: a new file, made whole in a temporary file in the same folder
  and then linked into place, so a file that appears meanwhile is not replaced;
- a regular file gradtrace wrote (it carries a mark, see :func:`mark`), or any
  regular file when the user says ``force``: replaced whole by renaming the
  temporary file over it; the new file keeps the old one's permissions;
- a stream (a FIFO or a character device such as a terminal or ``/dev/null``,
  also behind a link such as ``/dev/stdout``): written in place, as
  ``cat > /dev/stdout`` would; nothing is renamed over it;
- anything else (a folder, a link to a file, a block device, a socket, a file
  gradtrace did not write) is refused with a one-line reason.

The temporary file is made by :func:`tempfile.mkstemp` (``O_EXCL``: it follows
no planted link) under a short fixed-length name, and removed on any failure.
Pictures are removed only by :func:`remove_own`, which removes a file only if
it carries the mark.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Refused", "Place", "check", "check_folder", "write", "mark", "is_ours", "remove_own", "short",
           "HTML_MARK", "SVG_MARK", "JSON_MARK"]

#: the marks gradtrace puts near the start of what it writes (each valid in its format)
HTML_MARK = '<meta name="generator" content="gradtrace">'
SVG_MARK = "<!-- written by gradtrace -->"
JSON_MARK = '{"generator": "gradtrace"'  # the first field; the trace reader ignores it
#: how far into a file the mark is looked for
MARK_WINDOW = 4096
_TEMP = (".gradtrace-", ".tmp")  # the temporary file's name: prefix + 8 random characters + suffix
_NAME_MAX = 255


class Refused(Exception):
    """gradtrace will not write this path: the message is one line that says what to do."""


@dataclass(frozen=True)
class Place:
    """A checked output path: ``stream`` when it is written in place (a FIFO or a character device)."""

    path: Path
    shown: str
    stream: bool = False


# ---------------------------------------------------------------- marks
def mark(kind: str, text: str) -> str:
    """``text`` (``kind``: ``"html"``, ``"json"`` or ``"svg"``) with gradtrace's mark near its start (once)."""
    if kind == "json":
        return _mark_json(text)
    if kind == "html":
        return _insert(text, HTML_MARK, after="<head>")
    if kind == "svg":
        return _insert(text, SVG_MARK + "\n", after="?>\n")  # after the XML declaration, which must come first
    raise ValueError(f"unknown output kind {kind!r}")


def _mark_json(text: str) -> str:
    if text.startswith(JSON_MARK):
        return text
    if not text.startswith("{"):
        raise ValueError("a JSON output must be an object")
    rest = text[1:].lstrip()
    return JSON_MARK + (rest if rest.startswith("}") else ", " + rest)


def _insert(text: str, what: str, after: str) -> str:
    """``what`` right after the first ``after`` near the start of ``text``, or first when there is none."""
    head = text[:MARK_WINDOW]
    if what.strip() in head:
        return text
    at = head.lower().find(after)
    if at < 0:
        return (what if what.endswith("\n") else what + "\n") + text
    at += len(after)
    return text[:at] + what + text[at:]


def _has_mark(head: bytes) -> bool:
    return (head.startswith(JSON_MARK.encode()) or HTML_MARK.encode() in head
            or SVG_MARK.encode() in head)


def is_ours(path: str | Path) -> bool:
    """True when ``path`` is a regular file (not a link) that carries gradtrace's mark."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        return _has_mark(os.read(fd, MARK_WINDOW))
    except OSError:
        return False
    finally:
        os.close(fd)


# ---------------------------------------------------------------- checking
def check(path: str | Path, shown: str | None = None, *, force: bool = False, example: str = "trace.html") -> Place:
    """Raise :class:`Refused` now (before anything runs) if ``path`` may not be written; else its :class:`Place`.

    :func:`write` checks again when it writes: the file may have changed in between.
    """
    shown = str(path) if shown is None else shown
    p = Path(os.path.abspath(path))
    _check_name(p, shown)
    st = _lstat(p, shown)
    if st is None:
        check_folder(p.parent, shown)
        return Place(p, shown)
    if stat.S_ISLNK(st.st_mode):
        return _through_link(p, shown)
    if stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode):
        return _stream(p, shown)
    if stat.S_ISDIR(st.st_mode):
        raise Refused(f"cannot write {shown}: it is a folder; give a file name such as {os.path.join(shown, example)}")
    if not stat.S_ISREG(st.st_mode):
        raise Refused(f"cannot write {shown}: it is a {_kind(st.st_mode)}, not a file; give a file name")
    if not force and not is_ours(p):
        raise Refused(f"not writing {shown}: it exists and gradtrace did not write it; "
                      "choose another name, or add --force to replace it")
    if not os.access(p, os.W_OK):
        raise Refused(f"cannot write {shown}: permission denied")
    check_folder(p.parent, shown)
    return Place(p, shown)


def _check_name(p: Path, shown: str) -> None:
    size = len(os.fsencode(p.name))
    try:
        limit = os.pathconf(p.parent, "PC_NAME_MAX") if p.parent.is_dir() else _NAME_MAX
    except (OSError, ValueError):
        limit = _NAME_MAX
    if size > limit:
        raise Refused(f"cannot write {short(shown)}: the file name is {size} bytes long, longer than the "
                      f"{limit} this folder allows; give a shorter name")


def short(shown: str) -> str:
    """A path for a one-line message: a very long one keeps its start and end."""
    return shown if len(shown) <= 60 else shown[:28] + "..." + shown[-28:]


def _lstat(p: Path, shown: str) -> os.stat_result | None:
    try:
        return os.lstat(p)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Refused(f"cannot write {short(shown)}: {exc.strerror or exc}") from None


def check_folder(folder: Path, shown: str) -> None:
    """Raise :class:`Refused` unless ``folder`` exists and takes a new file (``shown`` names it in the message)."""
    try:
        is_dir = folder.is_dir()
    except OSError as exc:
        raise Refused(f"cannot write {short(shown)}: {exc.strerror or exc}") from None
    if not is_dir:
        raise Refused(f"cannot write {short(shown)}: folder {os.path.dirname(shown) or folder} does not exist")
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=_TEMP[0], suffix=_TEMP[1])
    except OSError as exc:
        raise Refused(f"cannot write {short(shown)}: {exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(tmp)


def _through_link(p: Path, shown: str) -> Place:
    """A link is followed only to a stream (``/dev/stdout``, a FIFO); anything else behind it is refused."""
    try:
        st = os.stat(p)
    except OSError:
        st = None
    if st is not None and (stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode)):
        return _stream(p, shown)
    raise Refused(f"not writing {short(shown)}: it is a symbolic link, and gradtrace neither follows nor replaces "
                  "links to files; give the file it points to, or another name")


def _stream(p: Path, shown: str) -> Place:
    if not os.access(p, os.W_OK):
        raise Refused(f"cannot write {short(shown)}: permission denied")
    return Place(p, shown, stream=True)


def _kind(mode: int) -> str:
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "special file"


# ---------------------------------------------------------------- writing
def write(place: Place, kind: str, text: str, *, force: bool = False) -> None:
    """Write ``text``, marked as gradtrace's (see :func:`mark`), to ``place`` by the rules above.

    Raises :class:`Refused` if the path became something gradtrace may not write,
    ``OSError`` if writing failed (then no temporary file is left and the old file is as it was).
    """
    data = mark(kind, text).encode("utf-8", "backslashreplace")  # a lone surrogate does not stop it
    now = check(place.path, place.shown, force=force)
    if now.stream:
        _write_in_place(now, data)
        return
    try:
        old = os.lstat(now.path)
    except FileNotFoundError:
        old = None
    _write_whole(now, data, old)


def _write_in_place(place: Place, data: bytes) -> None:
    fd = os.open(place.path, os.O_WRONLY | getattr(os, "O_NOCTTY", 0))  # no O_CREAT, no O_TRUNC
    try:
        st = os.fstat(fd)
        if not (stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode)):
            raise Refused(f"not writing {place.shown}: it changed into a file while the script ran")
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _write_whole(place: Place, data: bytes, old: os.stat_result | None) -> None:
    fd, tmp = tempfile.mkstemp(dir=place.path.parent, prefix=_TEMP[0], suffix=_TEMP[1])
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            _set_mode(f.fileno(), old)
        if old is None:
            _link_new(tmp, place)
        else:
            os.replace(tmp, place.path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _set_mode(fd: int, old: os.stat_result | None) -> None:
    """The replaced file's owner and permissions; for a new file, what ``open()`` gives under the umask."""
    if old is None:
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(fd, 0o666 & ~mask)
        return
    if (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
        try:
            os.fchown(fd, old.st_uid, old.st_gid)
        except OSError:
            pass  # not allowed: the file becomes the writer's, as any editor's save makes it
    os.fchmod(fd, old.st_mode & 0o777)  # permissions only: no set-id bit is carried over


def _link_new(tmp: str, place: Place) -> None:
    """Put the finished file at a path that was missing; a file that appeared there meanwhile stays."""
    try:
        os.link(tmp, place.path, follow_symlinks=False)
    except FileExistsError:
        raise Refused(f"not writing {place.shown}: a file appeared there while the script ran; "
                      "choose another name, or add --force to replace it") from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.EXDEV):
            raise
        if os.path.lexists(place.path):  # a folder without hard links: check, then rename
            raise Refused(f"not writing {place.shown}: a file appeared there while the script ran; "
                          "choose another name, or add --force to replace it") from None
        os.replace(tmp, place.path)
        return
    os.unlink(tmp)


def remove_own(path: str | Path) -> bool:
    """Remove ``path`` if it is a regular file gradtrace wrote (it carries the mark); True if removed."""
    if not is_ours(path):
        return False
    try:
        os.unlink(path)
    except OSError:
        return False
    return True
