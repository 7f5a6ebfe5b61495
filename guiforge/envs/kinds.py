"""Environment kinds by domain: the ``guiforge.envs`` entry-point group (guiforge's own web,
mobile, desktop and tools kinds too, guiforge/envs/kinds_builtin.py) plus ``module:Name``
references, each an :class:`~guiforge.envs.kind.EnvKind` (or its class).

Facts (action sets, prompt surface, touch) are looked up by a task's domain anywhere
(:func:`kind_of`); the environments a run acquires come from the run's own choice of kinds
(:class:`RunKinds`, resolved by the compile step from the pipeline's ``envs:``), never from
a fixed table. A kind's adapter module is imported only when one of its instances starts
(Playwright and X clients stay unloaded otherwise).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from guiforge.envs.base import Environment, EnvSpec
from guiforge.envs.kind import EnvKind
from guiforge.plugins import Plugin, PluginError, Registry


def _is_kind(obj: object) -> bool:
    if isinstance(obj, EnvKind):
        return True
    # a kind's class (made once), or an adapter class alone: it stands in for the kind of
    # the domain it declares (a remote pool of web instances: the web kind's facts)
    return isinstance(obj, type) and (issubclass(obj, EnvKind) or issubclass(obj, Environment))


ENV_KINDS: Registry[Any] = Registry(
    "guiforge.envs", "environment kind", "an EnvKind (guiforge.envs.kind) or its class", _is_kind)

_made: dict[str, tuple[object, EnvKind]] = {}
_lock = threading.RLock()


class KindOf(EnvKind):
    """Another kind's facts (``facts``) under a kind that changes only how its instances are
    made. Every method is the wrapped kind's (methods EnvKind defines are not reached by
    ``__getattr__``, so each is passed on by name): variants, looks, prompt, setup, health
    check and reward stay those of the kind wrapped."""

    FACTS = ("domain", "surface", "notes", "action_sets", "touch", "capacity", "success_at", "default_variant",
             "computer", "reference_dialect")

    def __init__(self, facts: EnvKind):
        self.facts = facts
        for name in self.FACTS:  # EnvKind's defaults would hide the wrapped kind's values
            if not isinstance(getattr(type(self), name, None), property):  # a subclass's own answer wins
                setattr(self, name, getattr(facts, name))

    def __getattr__(self, name: str) -> Any:  # every fact the wrapper does not change
        return getattr(self.__dict__["facts"], name)

    def setup(self, task, world):
        return self.facts.setup(task, world)

    def spec(self, variant=None, presentation=None, **options):
        return self.facts.spec(variant, presentation, **options)

    def points(self, variant=None):
        return self.facts.points(variant)

    def surface_for(self, variant=None):
        return self.facts.surface_for(variant)

    def notes_for(self, variant=None):
        return self.facts.notes_for(variant)

    def variants(self):
        return self.facts.variants()

    def looks_for(self, variant=None):
        return self.facts.looks_for(variant)

    def actions(self, variant=None):
        return self.facts.actions(variant)

    def healthy(self, env):
        return self.facts.healthy(env)

    def evaluate(self, task, state):
        return self.facts.evaluate(task, state)

    @property
    def graded(self) -> bool:
        return self.facts.graded

    def evaluator(self) -> str | None:
        # the worker makes a fresh instance of the class it names: the wrapped kind's
        return self.facts.evaluator()


class AdapterKind(KindOf):
    """An adapter class registered on its own: the facts of the kind of its ``domain``, its
    own instances (a remote pool of an outside kind's instances keeps that kind's variants,
    health check and reward)."""

    def __init__(self, cls: type[Environment], facts: EnvKind):
        super().__init__(facts)
        self.adapter = cls


def resolve_kind(ref: str) -> EnvKind:
    """The kind ``ref`` names (a registered domain or ``module:Name``), made once per process."""
    obj = ENV_KINDS.get(ref)
    with _lock:
        hit = _made.get(ref)
        if hit is not None and hit[0] is obj:
            return hit[1]
        if isinstance(obj, EnvKind):
            kind = obj
        elif issubclass(obj, EnvKind):
            kind = obj()
        else:
            domain = getattr(obj, "domain", None)
            if not isinstance(domain, str) or domain == ref:
                raise PluginError(f"environment kind {ref!r} is an adapter class alone ({obj.__module__}."
                                  f"{obj.__qualname__}); register an EnvKind (guiforge.envs.kind) that names it")
            kind = AdapterKind(obj, resolve_kind(domain))
        if not kind.domain:
            raise PluginError(f"environment kind {ref!r} ({type(kind).__qualname__}) declares no domain; set `domain`")
        _made[ref] = (obj, kind)
        return kind


def kind_of(domain: str) -> EnvKind:
    """The kind registered for ``domain``; a one-line error when none is."""
    try:
        return resolve_kind(domain)
    except PluginError as exc:
        raise ValueError(f"no environment kind for domain {domain!r}: {exc}") from None


def facts_of(domain: str) -> EnvKind:
    """The kind registered for ``domain``, or a kind with no facts (EnvKind's defaults) when
    none is: code that only asks a fact (touch, looks, dialect) never fails on a new label."""
    try:
        return kind_of(domain)
    except ValueError:
        return EnvKind()


def is_touch(domain: str) -> bool:
    """Whether a domain's pointer actions are touch (taps, swipes): codecs ask this, never a name."""
    return facts_of(domain).touch


def action_set(domain: str, variant: str | None = None) -> frozenset[str]:
    """The actions a task of ``domain`` (and ``variant``) may take: its kind's."""
    return kind_of(domain).actions(variant)


def kind_plugin(ref: str) -> Plugin:
    """Where a kind comes from (its distribution and version): for fingerprints."""
    return ENV_KINDS.plugin(ref)


class RunKinds(Mapping[str, Callable[[EnvSpec], Environment]]):
    """The kinds one run uses: domain -> kind, from the pipeline's ``envs:`` (a domain given
    another kind) and otherwise the kind registered for the domain. As a mapping it gives
    the environment manager its factories (domain -> make(spec)); ``capacity`` its limits."""

    def __init__(self, declared: Mapping[str, str] | None = None):
        self.declared = dict(declared or {})

    def ref(self, domain: str) -> str:
        return self.declared.get(domain, domain)

    def kind(self, domain: str) -> EnvKind:
        ref = self.ref(domain)
        try:
            return resolve_kind(ref)
        except PluginError as exc:
            raise ValueError(f"no environment kind for domain {domain!r}: {exc}") from None

    def __getitem__(self, domain: str) -> Callable[[EnvSpec], Environment]:
        try:
            return self.kind(domain).make
        except ValueError:
            raise KeyError(domain) from None

    def __iter__(self):
        return iter(sorted(set(ENV_KINDS.names()) | set(self.declared)))

    def __len__(self) -> int:
        return len(list(iter(self)))

    def capacity(self, domain: str) -> int | None:
        try:
            return self.kind(domain).capacity
        except ValueError:
            return None

    def identity(self, domain: str) -> dict[str, str | None]:
        """The plugin behind ``domain``'s kind in this run: name, where, distribution, version."""
        return kind_plugin(self.ref(domain)).identity()


def kind_for(factories: Mapping[str, Any], domain: str) -> EnvKind:
    """The kind behind ``domain`` in a manager's factories: the run's (RunKinds), else the
    registered one (a plain mapping of adapters, as tests build)."""
    if isinstance(factories, RunKinds):
        return factories.kind(domain)
    try:
        return kind_of(domain)
    except ValueError:
        return EnvKind()  # an adapter given by hand for a domain no kind serves: the rubric decides


def adapter_factory(domain: str) -> Callable[[EnvSpec], Environment]:
    return kind_of(domain).make


def default_factories() -> RunKinds:
    """domain -> factory(spec) for every installed environment kind (each loaded on first use)."""
    return RunKinds()
