"""When a config explores, and the universal oracles its explored cells are judged by.

A config that names no fault at all (no chaos profile, fault or scenario, no contract scenario, no
recorded session) would test nothing but its baselines, so it explores by default (docs/explore.md); one that
names faults keeps exactly what it wrote unless it asks for `chaos.explore` too. Either way the
oracles are invariants like any other, with `when: {scenario: explore}`, so they show in every
report and can be switched off or re-severed by name in `chaos.explore.oracles`.

Exploration also judges its own starting point: a fault-free baseline that hangs or crashes is the
plainest bug there is (every user meets it, no fault needed), so `baseline_answers` holds each
baseline to `completes` at critical — where the implicit `completes` is only high.
"""

from __future__ import annotations

from gate.config.explore import ExploreConfig
from gate.config.models import Config
from gate.contracts import INVARIANTS, InvariantBase, When
from gate.contracts.outcome_checks import Completes
from gate.contracts.universal import BASELINE_ORACLE, REWORDINGS, UNIVERSAL

SCENARIO = "explore"
BASELINE = "baseline"  # the fault-free contract cells


def explore_spec(config: Config) -> ExploreConfig | None:
    """The exploration this config asks for, or None."""
    chaos = config.chaos
    setting = chaos.explore
    if not chaos.enabled or setting is False:
        return None
    if isinstance(setting, ExploreConfig):
        return setting
    if setting is True:
        return ExploreConfig()
    # recorded sessions are what their config tests, as scenarios are
    names_faults = chaos.profiles or chaos.faults or chaos.scenarios or config.contract.scenarios or config.replay.sessions
    proxied = config.llm or config.tools or config.worlds
    return ExploreConfig() if proxied and not names_faults else None


def oracles(config: Config, spec: ExploreConfig | None = None) -> list[InvariantBase]:
    """The oracles of the config's exploration (or of `spec`: the pytest plugin's marker)."""
    spec = spec or explore_spec(config)
    if spec is None:
        return []
    declared = {inv.id for inv in config.contract.invariants}
    out = []
    for name in UNIVERSAL:
        setting = spec.oracles.get(name)
        if setting == "off" or name in declared:  # the team's own of the same id wins
            continue
        cls = INVARIANTS[name]
        severity = setting or cls.model_fields["severity"].default
        when = When(scenario="mutation", mutation=list(REWORDINGS)) if name == "understands_rewording" else \
            When(scenario=SCENARIO)  # rewording judges the mutation stage's meaning-keeping cells; the rest, faults
        out.append(cls(id=name, severity=severity, when=when))
    setting = spec.oracles.get(BASELINE_ORACLE)
    if setting != "off" and BASELINE_ORACLE not in declared:
        out.append(Completes(id=BASELINE_ORACLE, severity=setting or "critical", when=When(scenario=BASELINE)))
    return out
