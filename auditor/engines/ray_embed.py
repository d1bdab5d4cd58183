"""The Ray engine's embedding actor pool: the encoder loaded once per actor (on a GPU where the cluster
has one), the scan's tasks sending it their texts (docs/scale.md).

Without a pool every Ray worker that runs a scan task loads the model itself. With one
(:class:`EmbedPool`), the index a task receives carries a :class:`PooledModel` instead of the model:
its ``encode`` (sentence vectors of the cache's misses, and token alignment's token vectors) is a call
to one of the pool's :class:`EmbedActor` s; search, alignment scoring and the decision stay in the task.
An actor loads the index's own encoder (its model id must match, or the pool does not start) and gets
exactly the texts the task would have encoded, in one call: reports are identical with and without it.

:func:`place_actors`: a torch index on a cluster with GPUs gets GPU actors (``num_gpus`` 1 each, or an
equal share when there are more actors than GPUs), every other index CPU actors of one CPU each.
``embed_actors`` None (auto): one actor per GPU for a torch index on GPUs, else none; 0: never; N: N.

>>> place_actors({"CPU": 16.0, "GPU": 2.0}, "torch", "auto", None)
Placement(actors=2, device='cuda', num_gpus=1.0, num_cpus=0.0)
>>> place_actors({"CPU": 16.0, "GPU": 1.0}, "torch", "auto", 4)
Placement(actors=4, device='cuda', num_gpus=0.25, num_cpus=0.0)
>>> place_actors({"CPU": 2.0}, "onnx-int8", "auto", None)
Placement(actors=0, device='cpu', num_gpus=0.0, num_cpus=1.0)
>>> place_actors({"CPU": 4.0, "GPU": 1.0}, "onnx-int8", "auto", 2)
Placement(actors=2, device='cpu', num_gpus=0.0, num_cpus=1.0)

The pool lives for one scan: :meth:`EmbedPool.close` kills its actors (also when the scan fails).

Errors: :class:`~auditor.errors.ConfigError` (CPU actors that would leave no CPU for the tasks, an actor
with another encoder); :class:`~auditor.errors.ScanError` (an actor that does not start within
:data:`START_TIMEOUT_S`, or dies: the scan fails, never a hang, never a gap).
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import AuditorError, ConfigError, ScanError
from ..methods.base import SharedModel
from ..methods.embedding.align import host
from ..scan.job import ScanJob

START_TIMEOUT_S = 600.0  # for the actors to load their model (a node building the ONNX model: ~45 s)


@dataclass(frozen=True)
class Placement:
    """How many actors, on which device, requesting what of each node."""

    actors: int
    device: str  # "cuda" or "cpu"
    num_gpus: float
    num_cpus: float


def place_actors(resources: Mapping[str, float], backend: str, device: str, requested: int | None) -> Placement:
    """The pool for an index on ``backend`` (its resolved encoder) configured for ``device``, on a cluster
    with ``resources`` (``ray.cluster_resources()``); ``requested``: ``embed_actors`` (None: auto)."""
    gpus = float(resources.get("GPU", 0.0))
    if backend == "torch" and gpus >= 1 and device.strip().lower() != "cpu":
        n = int(gpus) if requested is None else requested
        share = 1.0 if n <= int(gpus) else int(gpus) / n if n else 0.0
        return Placement(n, "cuda", round(share, 4), 0.0)
    return Placement(0 if requested is None else requested, "cpu", 0.0, 1.0)


class EmbedActor:
    """A pool actor (``ray.remote`` with the placement's resources): the encoder, loaded once; another
    model id than ``expected``, the index's, is refused. A load's error is kept and raised by
    :meth:`info` (one in ``__init__`` would only say that the actor died)."""

    def __init__(self, model: str, backend: str, device: str, model_cache: str, expected: str):
        from ..methods.embedding.model import load_encoder_model

        self.texts = self.token_texts = self.calls = 0
        self.cpu_s = 0.0  # CPU seconds of the encode calls (the model's load not included)
        self.error: AuditorError | None = None
        t0 = time.perf_counter()
        try:
            self.model, mid, self.backend, self.device = load_encoder_model(model, backend, device, model_cache)
        except AuditorError as e:
            self.error = e
            return
        self.load_s = time.perf_counter() - t0
        if mid != expected:
            self.error = ConfigError(
                f"an embedding actor loaded encoder {mid}, not the index's {expected} (another model, or "
                "an ONNX export built apart on its node: give every node the calling process's model cache)"
            )

    def info(self) -> dict[str, Any]:
        """Where the actor runs and what it loaded; raises the load's error."""
        if self.error is not None:
            raise self.error
        return {"pid": os.getpid(), "backend": self.backend, "device": self.device, "load_s": self.load_s}

    def counts(self) -> dict[str, float]:
        return {"texts": self.texts, "token_texts": self.token_texts, "calls": self.calls, "cpu_s": self.cpu_s}

    def encode(self, texts: list[str], batch_size: int, normalize: bool, output_value: str) -> Any:
        """Sentence vectors (``(n, dim)`` float32) or, for ``"token_embeddings"``, one float32
        ``(tokens, dim)`` array per text."""
        cpu0, tokens = time.process_time(), output_value == "token_embeddings"
        self.calls += 1
        self.token_texts += len(texts) if tokens else 0
        self.texts += 0 if tokens else len(texts)
        kw = {"batch_size": batch_size, "normalize_embeddings": normalize, "show_progress_bar": False}
        out = self.model.encode(texts, convert_to_numpy=not tokens, output_value=output_value, **kw)
        vecs = [host(t).astype(np.float32) for t in out] if tokens else np.asarray(out, dtype=np.float32)
        self.cpu_s += time.process_time() - cpu0
        return vecs


class PooledModel:
    """Stands in for the encoder's model in a task: ``encode`` runs on a pool actor (the token aligner
    keeps its own copy of the tokenizer); the dimension is the index's model's."""

    def __init__(self, actors: Sequence[Any], dim: int):
        self.actors = list(actors)
        self.dim = dim
        self._turn: Iterator[int] | None = None

    def get_sentence_embedding_dimension(self) -> int:
        return self.dim

    get_embedding_dimension = get_sentence_embedding_dimension

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_turn": None}

    def encode(
        self,
        sentences: Sequence[str],
        batch_size: int = 64,
        normalize_embeddings: bool = False,
        show_progress_bar: bool = False,
        output_value: str = "sentence_embedding",
        **_: Any,
    ) -> Any:
        if self._turn is None:  # each process starts at another actor
            self._turn = itertools.cycle(np.roll(np.arange(len(self.actors)), -(os.getpid() % len(self.actors))))
        actor = self.actors[int(next(self._turn))]
        return _get(actor.encode.remote(list(sentences), batch_size, normalize_embeddings, output_value))


def _get(ref: Any, timeout: float | None = None) -> Any:
    """``ray.get`` with the pool's errors: an actor's own error as is, a dead actor as a ScanError."""
    import ray
    from ray.exceptions import GetTimeoutError, RayActorError, RayError, RayTaskError

    try:
        return ray.get(ref, timeout=timeout)
    except RayTaskError as e:
        cause = getattr(e, "cause", None)
        if isinstance(cause, AuditorError):
            raise cause from None
        raise ScanError(f"an embedding actor failed: {cause or e}") from None
    except GetTimeoutError:
        raise ScanError(
            f"the embedding actors did not start within {timeout:.0f} s (no node with the resources they ask?)"
        ) from None
    except RayActorError as e:
        raise ScanError(
            f"an embedding actor died ({type(e).__name__}); no report is written for a scan with a gap"
        ) from None
    except RayError as e:
        raise ScanError(f"an embedding actor call failed ({type(e).__name__})") from None


def shared_models(job: ScanJob) -> list[SharedModel]:
    """The models ``job``'s searchers offer to host (:meth:`~auditor.methods.base.Searcher.shared_models`:
    the embedding indexes' encoders, also behind boilerplate masking), one per searcher."""
    out: list[SharedModel] = []
    for searcher in job.searchers():
        for m in searcher.shared_models():
            if all(m.owner is not o.owner for o in out):
                out.append(m)
    return out


@dataclass
class EmbedPool:
    """The actors of one scan, per encoder (indexes with one model id share them)."""

    placement: Placement
    #: model id → (actors, the proxy the tasks' index copies carry)
    groups: dict[str, tuple[list[Any], PooledModel]] = field(default_factory=dict)
    models: list[SharedModel] = field(default_factory=list)
    info: list[dict[str, Any]] = field(default_factory=list)  # per actor: pid, backend, device, load_s

    @classmethod
    def start(cls, job: ScanJob, requested: int | None) -> EmbedPool:
        """The pool for the models ``job``'s searchers offer, started and loaded; without actors (the
        encoder runs in the tasks) when it offers none or :func:`place_actors` places none."""
        import ray

        models = shared_models(job)
        if not models or requested == 0:
            return cls(Placement(0, "cpu", 0.0, 0.0))
        resources = ray.cluster_resources()
        first = models[0]
        placement = place_actors(resources, first.backend, first.device, requested)
        if not placement.actors:
            return cls(placement)
        ids = {m.key: m for m in models}
        if placement.num_cpus and placement.actors * len(ids) >= float(resources.get("CPU", 0)):
            raise ConfigError(
                f"embed_actors = {placement.actors} CPU actor(s) per encoder would hold every CPU of the Ray "
                f"cluster ({resources.get('CPU', 0):g}); the scan's tasks need one too"
            )
        share = placement.num_gpus / len(ids) if placement.num_gpus else 0.0
        actor_cls: Any = ray.remote(EmbedActor)
        pool = cls(placement, models=models)
        try:
            for mid, m in ids.items():
                actors = [
                    actor_cls.options(
                        name=f"auditor-embed-{os.getpid()}-{id(pool):x}-{len(pool.info) + i}",
                        num_cpus=placement.num_cpus,
                        num_gpus=round(share, 4),
                        max_restarts=0,
                    ).remote(m.model, m.backend, placement.device, m.model_cache, mid)
                    for i in range(placement.actors)
                ]
                proxy = PooledModel(actors, m.dim)
                pool.groups[mid] = (actors, proxy)
                pool.info.extend(_get([a.info.remote() for a in actors], timeout=START_TIMEOUT_S))
        except BaseException:
            pool.close()
            raise
        return pool

    @property
    def actors(self) -> list[Any]:
        return [a for actors, _ in self.groups.values() for a in actors]

    def put(self, job: ScanJob) -> Any:
        """``ray.put(job)``, its embedding indexes carrying the pool's proxy instead of their model
        (the calling process's indexes are left as they are); the pool is closed if that fails."""
        import ray

        try:
            for m in self.models if self.groups else []:
                m.lend(self.groups[m.key][1])
            return ray.put(job)
        except BaseException:
            self.close()
            raise
        finally:
            for m in self.models:
                m.lend(None)

    def counts(self) -> dict[str, float]:
        """Sentence texts, token-alignment texts, calls and CPU seconds of the actors (summed), and how
        many models they loaded ({} without actors)."""
        if not self.groups:
            return {}
        try:
            per = _get([a.counts.remote() for a in self.actors])
        except ScanError:  # an actor died after the last unit: the scan is whole, only its counts are lost
            return {"actors": len(self.actors), "model_loads": len(self.info)}
        total = {k: sum(c[k] for c in per) for k in ("texts", "token_texts", "calls", "cpu_s")}
        return {"actors": len(per), "model_loads": len(self.info), **total, "cpu_s": round(total["cpu_s"], 3)}

    def close(self) -> None:
        """Kill the actors (idempotent)."""
        import ray

        for actor in self.actors:
            ray.kill(actor, no_restart=True)
        for actor in self.actors:  # ``ray.kill`` returns at once: wait until each is reported dead (its name freed)
            try:
                ray.get(actor.counts.remote(), timeout=60)
            except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError):
                pass
        self.groups.clear()
