"""What ``sdeformer real`` accepts as input, and the content key of its result folder (docs/real.md, "Inputs").

``read_text`` takes regular UTF-8 files of at most ``MAX_TEXT_BYTES`` only: a FIFO, a device (``/dev/zero``), a
folder, another encoding (UTF-16, latin-1, random bytes) or a larger file is refused in one line before anything
is read from it (a FIFO is never opened). ``content_key`` ties a result folder to the *content* of its inputs:
the SHA-256 of the text's bytes (or of the installed Shakespeare text), of the model's configuration and every
tensor of its weights, and of the tokenizer's vocabulary, whatever path they came from; an edited corpus, tokenizer
or model makes the folder hold "another config", which is recomputed with ``--force`` or refused, never returned
stale.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

import torch

from ..core._errors import ConfigError

MAX_TEXT_BYTES = 64 * 2**20


def read_text(path: str | Path, name: str = "text") -> str:
    """The text of a regular UTF-8 file of at most ``MAX_TEXT_BYTES`` (a leading BOM dropped); ConfigError naming
    ``name`` for anything else."""
    path = Path(path)
    try:
        info = path.stat()
    except OSError as exc:
        raise ConfigError(name, str(path), f"cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(name, str(path), "is not a regular file (a folder, FIFO or device): give a text file")
    if info.st_size > MAX_TEXT_BYTES:
        raise ConfigError(name, str(path), f"is larger than {MAX_TEXT_BYTES // 2**20} MiB ({info.st_size} bytes)")
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_TEXT_BYTES + 1)
    except OSError as exc:
        raise ConfigError(name, str(path), f"cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_TEXT_BYTES:
        raise ConfigError(name, str(path), f"grew beyond {MAX_TEXT_BYTES // 2**20} MiB while read")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(name, str(path), f"is not UTF-8 text (invalid byte at offset {exc.start})") from None
    if "\x00" in text:
        raise ConfigError(name, str(path), "holds NUL characters: not a text file")
    return text.removeprefix("\ufeff")


def check_threads(threads: int) -> int:
    """``threads`` if it is an integer in [1, the machine's cores]; ConfigError naming ``threads`` otherwise."""
    cores = os.cpu_count() or 1
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= cores:
        raise ConfigError("threads", threads, f"must be an integer in [1, {cores}] (this machine's cores)")
    return threads


def model_digest(model: Any) -> str:
    """SHA-256 of a loaded model's configuration (JSON) and of every tensor of its state (names, dtypes, shapes,
    bytes)."""
    digest = hashlib.sha256()
    config = getattr(model, "config", None)
    dump = getattr(config, "to_json_string", None)
    digest.update(str(dump() if callable(dump) else repr(config)).encode())
    for key, tensor in sorted(model.state_dict().items()):
        t = tensor.detach().cpu().contiguous()
        digest.update(f"{key}|{t.dtype}|{tuple(t.shape)}".encode())
        digest.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return digest.hexdigest()


def tokenizer_digest(tokenizer: Any) -> str:
    """SHA-256 of a tokenizer's vocabulary (token -> id), its special tokens and its context length."""
    vocab = tokenizer.get_vocab() if hasattr(tokenizer, "get_vocab") else {}
    special = getattr(tokenizer, "all_special_tokens", [])
    body = json.dumps([sorted(vocab.items()), list(special), getattr(tokenizer, "model_max_length", None)])
    return hashlib.sha256(body.encode()).hexdigest()


def content_key(text: str | Path | None, loaded: tuple[Any, Any]) -> dict[str, str]:
    """The content hashes a result folder is claimed for: ``text_sha256`` (the file's bytes, or the installed
    Shakespeare text's), ``model_sha256`` (``model_digest``) and ``tokenizer_sha256`` (``tokenizer_digest``) of a
    loaded (tokenizer, model)."""
    if text is None:
        from ..practice._data import shakespeare_text

        body = shakespeare_text().encode()
    else:
        body = read_text(text).encode()
    return {
        "text_sha256": hashlib.sha256(body).hexdigest(),
        "model_sha256": model_digest(loaded[1]),
        "tokenizer_sha256": tokenizer_digest(loaded[0]),
    }
