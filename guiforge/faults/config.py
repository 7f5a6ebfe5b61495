"""The ``faults:`` section of a pipeline file: which faults to inject, how often. Off by
default (no section, or every rate 0).

A rate is the share of units of work that meet the fault: an episode (a rollout sample, a
package gate's attempt), a judged trajectory, a relabelled step, a diagnosed pair. Whether a
unit meets it, and at which of its first operations it strikes, is a hash of (seed, stage,
task, sample, what): the same config injects the same faults, whatever the load.

```yaml
faults:
  seed: 0
  env: {crash: 0.1, hang: 0.1, lose_page: 0.1}       # a step of the episode
  model: {rate_limit: 0.1, server_error: 0.1, timeout: 0.1, truncated: 0.1, malformed: 0.1}
  verifier: {crash: 0.1, hang: 0.1}                    # an evaluation
```
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

Rate = Field(default=0.0, ge=0, le=1)


class _Rates(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def rates(self) -> dict[str, float]:
        return {k: v for k, v in self.model_dump().items() if v > 0}

    @model_validator(mode="after")
    def _at_most_one(self):
        total = sum(self.model_dump().values())
        if total > 1:
            raise ValueError(f"the rates add up to {total:g}; a unit meets at most one of them, "
                             "so they must add up to 1 or less")
        return self


class EnvFaults(_Rates):
    """The real process is killed (Chromium, LibreOffice, the sandbox shell), an operation
    hangs past its deadline, or the page navigates away from the apps (web, mobile)."""

    crash: float = Rate
    hang: float = Rate
    lose_page: float = Rate


class ModelFaults(_Rates):
    """What the endpoint answers, on every attempt of the call (so the retries meet it too):
    429, 500, no answer before the client's timeout, a body cut in half, an HTML page."""

    rate_limit: float = Rate
    server_error: float = Rate
    timeout: float = Rate
    truncated: float = Rate
    malformed: float = Rate


class VerifierFaults(_Rates):
    """The verifier's worker process exits, or hangs past the deadline, in the fresh worker
    of the retry as well."""

    crash: float = Rate
    hang: float = Rate


class FaultsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seed: int = Field(default=0, ge=0, description="with the same seed, the same units meet the same faults")
    env: EnvFaults = Field(default_factory=EnvFaults)
    model: ModelFaults = Field(default_factory=ModelFaults)
    verifier: VerifierFaults = Field(default_factory=VerifierFaults)

    @property
    def enabled(self) -> bool:
        return any(self.rates(site) for site in ("env", "model", "verifier"))

    def rates(self, site: str) -> dict[str, float]:
        return getattr(self, site).rates()
