"""The hot path's modules from one file: a hook finds its ~50 modules' bytecode in one index. Hot path.

Python imports each module by searching the path, stat-ing the source, opening and reading
its ``.pyc`` and checking its header before the module's own code runs. A hook is a short
process that imports the same ~50 modules every time, so it reads them from one bundle,
``yupana/__pycache__/hot.<tag>.bundle``, beside the ``.pyc`` files it is made of: 0.8-1.3 ms
of an enforce pre-edit through the console script, 1.7 ms under ``-S``
(benchmarks/hot_import.py; unmarshalling and running each module's code, which it does not
save, is most of what importing costs):

* :func:`install` (first thing a hook does) reads the bundle's index and puts a finder first
  on ``sys.meta_path`` that serves the modules it holds, each read with one ``pread`` when it
  is imported (the bundle holds every module any hook has needed, ~1.4 MB; a pre-edit needs
  a third of it). A module is served only while its source
  has the size and modification time it had when the bundle was written (one ``stat``, the
  check a ``.pyc`` gets); any other module, a changed source, a bundle of another interpreter
  (its magic number) or an unreadable, truncated or damaged bundle falls back to Python's own
  import, module by module. Nothing is ever served that the ``.pyc`` would not have been.
* :func:`save` (after the hook has answered and written its records) runs only when this
  process imported one of our modules the ordinary way: it writes the bundle again from the
  ``.pyc`` files of every module of ours now loaded plus the still-valid entries of the old
  bundle, each ``.pyc`` taken only when its header matches its source. Atomic
  (:func:`yupana.state.atomic.write`), best effort: a read-only installation simply keeps importing the ordinary way.

The bundle holds code exactly as trusted as the ``.pyc`` files beside it, in the same
directory (yupana's installation: a protected control, docs/self-protection.md). A path there
that is not a regular file is never read or written.
"""

from __future__ import annotations

import marshal
import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hook start-up cost)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import CodeType, ModuleType

    # name -> (path of the source relative to the package's parent, is a package, st_mtime_ns, st_size,
    #          offset of the code in the file, its length)
    Entry = tuple[str, bool, int, int, int, int]

FORMAT = b"yupana-hot-1\n"
_PYC_HEADER = 16  # magic, flags, source mtime, source size (PEP 552)
_MAX_BYTES = 64 << 20  # a bundle larger than this is not ours to read

_finder: _BundleFinder | None = None


def _bootstrap() -> ModuleType:
    return sys.modules["_frozen_importlib_external"]


def bundle_path(package_dir: str) -> str:
    """Where the bundle of the package at ``package_dir`` lives (its ``__pycache__``)."""
    return os.path.join(package_dir, "__pycache__", f"hot.{sys.implementation.cache_tag}.bundle")


def _package_dir() -> str:
    return os.path.dirname(os.path.abspath(__file__))


class _BundleFinder:
    """A ``sys.meta_path`` finder (and loader) for the modules a bundle holds."""

    def __init__(self, root: str, package: str, entries: dict[str, Entry], fd: int) -> None:
        self.root = root  # the directory that holds the package
        self.package = package
        self.entries = entries
        self.fd = fd  # the bundle, open for the process's life (-1: none)
        self.served: set[str] = set()
        self.before = set(sys.modules)  # imported before the finder was installed: never ours to serve
        self.codes: dict[str, CodeType] = {}

    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        entry = self.entries.get(name)
        if entry is None:
            return None
        relpath, is_pkg, mtime_ns, size, offset, length = entry
        origin = os.path.join(self.root, relpath)
        try:
            st = os.stat(origin)
            if st.st_mtime_ns != mtime_ns or st.st_size != size:
                return None
            code = marshal.loads(self.blob(offset, length))
        except (OSError, ValueError, EOFError, TypeError):
            return None
        self.codes[name] = code
        spec: ModuleSpec = sys.modules["_frozen_importlib"].ModuleSpec(name, self, origin=origin, is_package=is_pkg)
        spec.has_location = True
        # named here, as a .pyc's would be: left unset, the import system derives it (~4 µs a module)
        folder, _, file = origin.rpartition("/")
        spec.cached = f"{folder}/__pycache__/{file[:-3]}.{sys.implementation.cache_tag}.pyc"
        if is_pkg:
            spec.submodule_search_locations = [folder]
        return spec

    def blob(self, offset: int, length: int) -> bytes:
        data = os.pread(self.fd, length, offset)
        if len(data) != length:
            raise EOFError("the bundle is shorter than its index says")
        return data

    def create_module(self, spec: ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        name = module.__name__
        code = self.codes.pop(name)
        self.served.add(name)
        exec(code, module.__dict__)


def install() -> None:
    """Serve our modules from the bundle, when there is a usable one. Never raises."""
    global _finder
    if _finder is not None:
        return
    package_dir = _package_dir()
    entries: dict[str, Entry] = {}
    fd = -1
    try:
        fd = os.open(bundle_path(package_dir), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not hang a hook
        entries = _read_index(fd)
    except (OSError, ValueError, EOFError, TypeError, KeyError, IndexError):
        entries = {}
    if not entries and fd >= 0:
        os.close(fd)
        fd = -1
    _finder = _BundleFinder(os.path.dirname(package_dir), __name__.partition(".")[0], entries, fd)
    if entries:
        sys.meta_path.insert(0, _finder)


def _read_index(fd: int) -> dict[str, Entry]:
    """The index of the bundle open at ``fd``: module name -> entry, offsets from the file's start."""
    st = os.fstat(fd)
    if (st.st_mode & 0o170000) != 0o100000 or st.st_size > _MAX_BYTES:
        return {}
    head = len(FORMAT) + 8
    data = os.pread(fd, 1 << 14, 0)
    if not data.startswith(FORMAT) or data[len(FORMAT):len(FORMAT) + 4] != _bootstrap().MAGIC_NUMBER:
        return {}
    index_len = int.from_bytes(data[len(FORMAT) + 4:head], "little")
    if head + index_len > len(data):
        data += os.pread(fd, head + index_len - len(data), len(data))
    entries = marshal.loads(data[head:head + index_len])
    if not isinstance(entries, dict):
        return {}
    base = head + index_len
    return {name: (e[0], e[1], e[2], e[3], e[4] + base, e[5]) for name, e in entries.items()
            if base + e[4] + e[5] <= st.st_size}


def missed() -> list[str]:
    """Our modules this process imported the ordinary way (not from the bundle)."""
    if _finder is None:
        return []
    prefix = _finder.package + "."
    return [name for name, module in list(sys.modules.items())
            if (name == _finder.package or name.startswith(prefix)) and name not in _finder.served
            and name not in _finder.before and getattr(module, "__file__", None)]


def save() -> bool:
    """Write the bundle again when this process imported one of our modules the ordinary way.
    True when a bundle was written. Never raises."""
    try:
        names = missed()
        return bool(names) and _write(names)
    except (OSError, ValueError, EOFError, TypeError, KeyError):
        return False


def _write(names: list[str]) -> bool:
    from yupana.state import atomic  # only when a module came the ordinary way

    assert _finder is not None
    package_dir = _package_dir()
    path = bundle_path(package_dir)
    if not os.access(os.path.dirname(path), os.W_OK):
        return False
    try:
        if (os.lstat(path).st_mode & 0o170000) != 0o100000:
            return False  # something else holds the name: leave it alone
    except FileNotFoundError:
        pass
    codes: dict[str, tuple[str, bool, int, int, bytes]] = {}
    for name, (relpath, is_pkg, mtime_ns, size, offset, length) in _finder.entries.items():
        try:
            st = os.stat(os.path.join(_finder.root, relpath))
            if (st.st_mtime_ns, st.st_size) == (mtime_ns, size):
                codes[name] = (relpath, is_pkg, mtime_ns, size, _finder.blob(offset, length))
        except (OSError, EOFError):
            continue
    for name in names:
        module = sys.modules.get(name)
        source = getattr(module, "__file__", None)
        if not source or not source.endswith(".py"):
            continue
        compiled = _pyc(source)
        if compiled is not None:
            st, blob = compiled
            relpath = os.path.relpath(source, _finder.root)
            codes[name] = (relpath, hasattr(module, "__path__"), st.st_mtime_ns, st.st_size, blob)
    old = {name: entry[:4] for name, entry in _finder.entries.items()}
    if {name: code[:4] for name, code in codes.items()} == old:
        return False  # nothing this process could add (no matching .pyc): leave the file as it is
    index: dict[str, tuple[str, bool, int, int, int, int]] = {}
    blobs: list[bytes] = []
    offset = 0
    for name, (relpath, is_pkg, mtime_ns, size, blob) in sorted(codes.items()):
        index[name] = (relpath, is_pkg, mtime_ns, size, offset, len(blob))
        blobs.append(blob)
        offset += len(blob)
    packed = marshal.dumps(index)
    atomic.write(path, [FORMAT, _bootstrap().MAGIC_NUMBER, len(packed).to_bytes(4, "little"), packed, *blobs],
                 make_dirs=False)
    return True


def _pyc(source: str) -> tuple[os.stat_result, bytes] | None:
    """The code in ``source``'s ``.pyc``, when that ``.pyc`` is a timestamp one for this very source."""
    external = _bootstrap()
    try:
        compiled = external.cache_from_source(source)
        st = os.stat(source)
        with open(compiled, "rb") as f:
            data = f.read()
    except (OSError, ValueError, NotImplementedError):
        return None
    if (len(data) <= _PYC_HEADER or data[:4] != external.MAGIC_NUMBER or data[4:8] != b"\0\0\0\0"
            or int.from_bytes(data[8:12], "little") != int(st.st_mtime) & 0xFFFFFFFF
            or int.from_bytes(data[12:16], "little") != st.st_size & 0xFFFFFFFF):
        return None
    return st, data[_PYC_HEADER:]
