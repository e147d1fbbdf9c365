"""Config: the YAML schema (pydantic models), reading with located errors, secrets.

`read_config` validates everything a config says on its own; `gate.plan.load_config` adds the
checks that need the plan and is what callers use to load a config to run.
"""

from gate.config.loader import LoadedConfig, read_config
from gate.config.models import STAGES, Config
from gate.config.secrets import Redactor

__all__ = ["STAGES", "Config", "LoadedConfig", "Redactor", "read_config"]
