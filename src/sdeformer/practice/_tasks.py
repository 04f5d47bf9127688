"""What the practice runs train (THEORY section 7): the task settings and their data, model, loss and metric.

``task_config(task)`` gives a task's default ``TaskConfig``; ``load_task(cfg)`` its data (cached per process)
as an object with ``model(net_cfg)``, ``batch(generator)``, ``loss(model, x, y)``, ``evaluate(model)`` (the
validation metric) and ``probe_inputs()`` (the fixed validation batch of the per-layer statistics).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import torch
import torch.nn.functional as F

from ..core._errors import ConfigError
from ..core._validate import positive_int
from ._data import CharCorpus, mnist
from ._networks import CharTransformer, NetConfig, ViT

TASKS = ("charlm", "mnist")


@dataclass(frozen=True)
class TaskConfig:
    task: str
    steps: int  # optimiser steps
    batch: int  # sequences (charlm) or images (mnist) per step
    lr: float  # AdamW peak learning rate (20-step warm-up, cosine decay to 10%)
    eval_every: int  # steps between validation points
    eval_size: int  # validation sequences / images
    target: float  # charlm: validation loss to reach; mnist: validation accuracy to reach
    model: NetConfig
    context: int = 128  # charlm sequence length
    max_data: int | None = None  # truncate the corpus (characters) / training images

    def to_dict(self) -> dict:
        return asdict(self)


DEFAULT = {
    "charlm": TaskConfig("charlm", 300, 32, 2e-3, 25, 64, 2.5, NetConfig(dim=64, layers=4, heads=4), context=128),
    "mnist": TaskConfig("mnist", 300, 128, 2e-3, 25, 1000, 0.9, NetConfig(dim=64, layers=4, heads=4)),
}
# the quick runs (about a second each; their model: dim 32, 2 blocks, 2 heads)
QUICK: dict[str, dict] = {
    "charlm": dict(steps=20, batch=8, eval_every=10, eval_size=8, target=3.0, context=32, max_data=200_000),
    "mnist": dict(steps=20, batch=16, eval_every=10, eval_size=100, target=0.3, max_data=2000),
}


def task_config(task: str, steps: int | None = None, quick: bool = False, context: int | None = None) -> TaskConfig:
    """Default settings of a task; ``quick`` shrinks model and data so a run takes about a second.

    ``context`` (charlm only) trains at another sequence length with the same characters per step (batch
    ``32 * 128 / context``, at least 1; quick: ``8 * 32 / context``) and about 10 validation points.
    Raises ConfigError for an unknown task, steps < 1 or a bad context.
    """
    if task not in TASKS:
        raise ConfigError("task", task, f"one of {list(TASKS)}")
    if steps is not None:
        steps = positive_int("steps", steps)
    if context is not None and (task != "charlm" or int(context) < 2):
        raise ConfigError("context", context, "an integer >= 2, for the charlm task only")
    cfg = DEFAULT[task]
    if quick:
        cfg = replace(cfg, **QUICK[task], model=NetConfig(dim=32, layers=2, heads=2))
    cfg = replace(cfg, steps=steps) if steps is not None else cfg
    if context is not None:
        cfg = replace(
            cfg,
            context=int(context),
            batch=max(1, cfg.batch * cfg.context // int(context)),
            eval_every=max(cfg.eval_every, cfg.steps // 10),
        )
    return cfg


class CharTask:
    """Next-character prediction on Shakespeare; metric: validation loss (nats per character)."""

    higher_is_better = False
    metric = "val_loss"

    def __init__(self, cfg: TaskConfig):
        self.cfg = cfg
        self.corpus = CharCorpus.load(max_chars=cfg.max_data)
        g = torch.Generator().manual_seed(1234)  # the same validation windows for every run
        self.val = self.corpus.batch("val", cfg.eval_size, cfg.context, g)

    def model(self, net: NetConfig) -> CharTransformer:
        return CharTransformer(net, len(self.corpus.vocab), self.cfg.context)

    def batch(self, g: torch.Generator):
        return self.corpus.batch("train", self.cfg.batch, self.cfg.context, g)

    @staticmethod
    def loss(model, x, y) -> torch.Tensor:
        logits = model(x)  # (B, N, vocab)
        return F.cross_entropy(logits.flatten(0, 1), y.flatten())

    def evaluate(self, model) -> float:
        x, y = self.val
        return float(torch.cat([self.loss(model, xb, yb)[None] for xb, yb in zip(x.split(32), y.split(32))]).mean())

    def probe_inputs(self) -> torch.Tensor:
        return self.val[0][:16]


class MnistTask:
    """MNIST digit classification with a ViT; metric: validation accuracy."""

    higher_is_better = True
    metric = "val_acc"

    def __init__(self, cfg: TaskConfig):
        self.cfg = cfg
        data = mnist(max_train=cfg.max_data, max_val=cfg.eval_size)
        self.train, self.val = data["train"], data["val"]

    def model(self, net: NetConfig) -> ViT:
        return ViT(net)

    def batch(self, g: torch.Generator):
        idx = torch.randint(len(self.train.y), (self.cfg.batch,), generator=g)  # (B,)
        return self.train.x[idx], self.train.y[idx]

    @staticmethod
    def loss(model, x, y) -> torch.Tensor:
        return F.cross_entropy(model(x), y)

    def evaluate(self, model) -> float:
        correct = sum(
            int((model(xb).argmax(-1) == yb).sum()) for xb, yb in zip(self.val.x.split(500), self.val.y.split(500))
        )
        return correct / len(self.val.y)

    def probe_inputs(self) -> torch.Tensor:
        return self.val.x[:64]


_DATA_CACHE: dict[tuple, CharTask | MnistTask] = {}


def load_task(cfg: TaskConfig) -> CharTask | MnistTask:
    """The task's data (cached per process: a suite loads it once)."""
    key = (cfg.task, cfg.max_data, cfg.eval_size, cfg.context, cfg.batch)
    if key not in _DATA_CACHE:
        _DATA_CACHE[key] = (CharTask if cfg.task == "charlm" else MnistTask)(cfg)
    return _DATA_CACHE[key]
