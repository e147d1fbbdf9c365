"""Config: the YAML schema (pydantic models), loading with located errors, secrets."""

from gate.config.loader import LoadedConfig, load_config
from gate.config.models import STAGES, Config
from gate.config.secrets import Redactor

__all__ = ["STAGES", "Config", "LoadedConfig", "Redactor", "load_config"]
