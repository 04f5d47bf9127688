"""Reading a config or spec file (docs/design.md: one place for bad-input errors): TOML or YAML into a dict,
with YAML 1.2 numbers (``1e-2`` is a number), keys given twice refused, and one-line errors naming the file."""

from __future__ import annotations

import functools
import re
import stat
import tomllib
from pathlib import Path
from typing import Any

from ._errors import ConfigError

CONFIG_MAX_BYTES = 1_000_000  # a config holds a few dozen parameters; anything larger is a wrong file


def _read_text(path: Path) -> str:
    """The file's UTF-8 text; ConfigError if it is missing, not a regular file, larger than 1 MB or not text."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a FIFO would block, /dev/zero never end: never opened
            raise ConfigError("config", str(path), "not a regular file (a folder, a FIFO or a device)")
        if path.stat().st_size > CONFIG_MAX_BYTES:
            raise ConfigError("config", str(path), f"larger than {CONFIG_MAX_BYTES // 1000} kB; not a config file")
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError("config", str(path), f"cannot read file ({exc.strerror})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError("config", str(path), "not a text file (not valid UTF-8)") from None


# YAML 1.2 (core schema) numbers, as people write them: 1e-2 and 1E5 are floats (YAML 1.1, PyYAML's default,
# reads them as strings), 012 is twelve (not octal ten), 0o12 octal, 0x1F hex, .inf/.nan; 1_000 is still read
# (a YAML 1.1 digit separator), 1:30 is a string (no base-60 numbers)
_INT = r"^[-+]?[0-9][0-9_]*$|^0o[0-7_]+$|^0x[0-9a-fA-F_]+$"
_FLOAT = (
    r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)?$"
    r"|^[-+]?\.(?:inf|Inf|INF)$|^\.(?:nan|NaN|NAN)$"
)
_INT_TAG, _FLOAT_TAG = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
# YAML 1.2 booleans: true/false only (YAML 1.1's on/off/yes/no stay strings: ``attention: off`` names a part)
_BOOL_TAG, _BOOL = "tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$"


def _yaml_int(loader: Any, node: Any) -> int:
    text = str(loader.construct_scalar(node)).replace("_", "")
    base = {"0o": 8, "0x": 16}.get(text[:2], 10)
    return int(text[2:] if base != 10 else text, base)


def _yaml_load(text: str) -> Any:
    """``yaml.safe_load`` with YAML 1.2 numbers and booleans (``_INT``, ``_FLOAT``, ``_BOOL``) that refuses a key
    given twice in one mapping (instead of keeping the last), naming the key."""

    import yaml

    class StrictLoader(yaml.SafeLoader):
        pass

    StrictLoader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag not in (_INT_TAG, _FLOAT_TAG, _BOOL_TAG)]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    StrictLoader.add_implicit_resolver(_INT_TAG, re.compile(_INT), list("-+0123456789"))
    StrictLoader.add_implicit_resolver(_BOOL_TAG, re.compile(_BOOL), list("tTfF"))
    StrictLoader.add_implicit_resolver(_FLOAT_TAG, re.compile(_FLOAT), list("-+0123456789."))
    StrictLoader.add_constructor(_INT_TAG, _yaml_int)

    def mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict:
        seen = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node)  # pyright: ignore[reportArgumentType]
            if isinstance(key, (str, int, float, bool)):
                if key in seen:
                    raise ConfigError("config key", key, "given twice; each key may appear once")
                seen.add(key)
        return loader.construct_mapping(node)

    StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    return yaml.load(text, Loader=StrictLoader)


def load_config_file(path: str | Path) -> dict[str, Any]:
    """Read a TOML (.toml) or YAML (.yaml/.yml) file into a dict; unreadable, binary, over-large files and
    duplicate keys raise ConfigError."""
    path = Path(path)
    text = _read_text(path)
    try:
        if path.suffix.lower() == ".toml":
            data = tomllib.loads(text)
        elif path.suffix.lower() in (".yaml", ".yml"):
            data = _yaml_load(text)
        else:
            raise ConfigError("config", str(path), "must end in .toml, .yaml or .yml")
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        if isinstance(exc, ConfigError):
            raise
        kind = path.suffix[1:].upper()
        raise ConfigError("config", str(path), f"not valid {kind}: {str(exc).splitlines()[0]}") from None
    except Exception as exc:  # yaml.YAMLError
        raise ConfigError("config", str(path), f"not valid YAML: {str(exc).splitlines()[0]}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("config", str(path), "must hold a mapping of parameter names to values")
    return data


def parse_assignments(items: list[str] | tuple[str, ...], name: str = "param", dotted: bool = True) -> dict[str, Any]:
    """``["KIND.NAME=VALUE", ...]`` (a command's repeatable ``--param``; ``NAME=VALUE`` where not ``dotted``) as
    a mapping, each value read as a YAML 1.2 scalar (``0.3`` a float, ``true`` a boolean, ``off`` a string).
    ConfigError naming ``name`` for an item without ``=``, a key given twice or a value that is not a scalar."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key or (dotted and "." not in key):
            raise ConfigError(
                name, item, "must be KIND.NAME=VALUE, e.g. noise.fraction=0.3" if dotted else "NAME=VALUE"
            )
        if key in out:
            raise ConfigError(name, key, "given twice; each key may appear once")
        value = _yaml_load(text) if text.strip() else ""
        if isinstance(value, (dict, list)) or value is None:
            raise ConfigError(name, item, "the value must be one number, boolean or word")
        out[key] = value
    return out


def token_starts(path: str | Path) -> list[str]:
    """The ``x0`` values of a token file (a sweep's ``x0`` key): ``[path]`` for one start ``(N, d)``, one
    ``path#b`` per start of ``(B, N, d)``. Raises ConfigError for a file that is not such an array."""
    path = str(Path(path).resolve())
    array = _token_array(path, *_stamp(path))
    return [path] if array.ndim == 2 else [f"{path}#{b}" for b in range(array.shape[0])]


def file_tokens(value: str, tokens: int, dim: int) -> Any:  # (N, d) numpy
    """The start ``(N, d)`` named by an ``x0`` value (``FILE`` or ``FILE#b``). Raises ConfigError for a missing
    or unreadable file, a bad index, a shape other than ``(tokens, dim)``, or non-finite or zero tokens."""
    import numpy as np  # here: reading a config file needs no numpy

    path, hashed, index = value.partition("#")
    array = _token_array(path, *_stamp(path))
    if hashed and not (index.isdigit() and array.ndim == 3 and int(index) < array.shape[0]):
        raise ConfigError("x0", value, f"FILE#b needs a (B, N, d) file and 0 <= b < B; {path} is {array.shape}")
    if not hashed and array.ndim != 2:
        raise ConfigError("x0", value, f"holds {array.shape[0]} starts: name one as FILE#b")
    x = array[int(index)] if hashed else array
    if x.shape != (tokens, dim) or not np.isfinite(x).all() or not np.linalg.norm(x, axis=-1).all():
        raise ConfigError("x0", value, f"must hold finite non-zero tokens of shape {(tokens, dim)}, not {x.shape}")
    return x


def _stamp(path: str) -> tuple[int, int]:
    try:
        info = Path(path).stat()
    except OSError as exc:
        raise ConfigError("x0", path, f"cannot read the token file ({exc.strerror})") from None
    if not stat.S_ISREG(info.st_mode):  # a FIFO would block forever, /dev/zero be read until memory runs out
        raise ConfigError("x0", path, "a regular .npy file (not a FIFO, a device or a folder)")
    return info.st_mtime_ns, info.st_size


@functools.lru_cache(maxsize=64)
def _token_array(path: str, mtime_ns: int, size: int) -> Any:  # numpy
    """A .npy token file, ``(N, d)`` or ``(B, N, d)`` floats (cached per path and modification)."""
    import numpy as np

    try:
        array = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise ConfigError("x0", path, f"not a .npy array file ({type(exc).__name__})") from None
    if array.ndim not in (2, 3) or not np.issubdtype(array.dtype, np.floating):
        raise ConfigError("x0", path, f"must hold floats (N, d) or (B, N, d), not {array.dtype} {array.shape}")
    return array
