"""Defaults that a user sets once: the collection, the ranker, the agent's model and backbone.

Each default is looked up, first found wins:

1. the command line (the caller passes it; this module never sees it);
2. an environment variable (``SIEVE_LITE_COLLECTION``, ``SIEVE_LITE_RANKER``,
   ``SIEVE_LITE_MODEL``, ``SIEVE_LITE_BACKBONE``; an empty one counts as unset);
3. the config file, a small TOML table of ``key = "value"`` lines in the user's config folder
   (``platformdirs``: ``~/.config/sieve-lite/config.toml`` on Linux), or the file named by
   ``SIEVE_LITE_CONFIG``;
4. the built-in default of the command.

The file is read with ``tomllib`` and written with ``tomli_w``, atomically (a temporary file
renamed over it), so an interrupted ``sieve-lite config set`` never leaves half a file. A file
that is not valid TOML, or holds a key or value we do not know, is refused with one line that
names the file; nothing is guessed.
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CONFIG_ENV = "SIEVE_LITE_CONFIG"
APP_NAME = "sieve-lite"


@dataclass(frozen=True)
class Key:
    name: str
    env: str
    meaning: str


KEYS: dict[str, Key] = {k.name: k for k in (
    Key("collection", "SIEVE_LITE_COLLECTION",
        "the collection file used when a command is given none"),
    Key("ranker", "SIEVE_LITE_RANKER", "the ranker of search, ask, eval and mcp (see --ranker)"),
    Key("model", "SIEVE_LITE_MODEL",
        "the model of ask and eval: a GGUF file, or with a backbone the model name"),
    Key("backbone", "SIEVE_LITE_BACKBONE",
        "the OpenAI-compatible endpoint of ask and eval, e.g. http://127.0.0.1:8080/v1"),
)}


@dataclass(frozen=True)
class Setting:
    """One key's effective value and where it came from (``env``, ``file`` or None)."""

    key: str
    value: str | None
    source: str | None
    env: str
    meaning: str

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "value": self.value, "source": self.source, "env": self.env,
                "meaning": self.meaning}


def config_path() -> Path:
    """The config file: ``$SIEVE_LITE_CONFIG``, else the user's config folder."""
    override = os.environ.get(CONFIG_ENV)
    if override:
        return Path(override).expanduser()
    from platformdirs import user_config_path

    return user_config_path(APP_NAME, appauthor=False) / "config.toml"


def _unknown(key: str, where: str) -> ConfigError:
    return ConfigError(f"{where}: unknown setting {key!r}; the settings are "
                       f"{', '.join(KEYS)}")


def check(key: str, value: Any, where: str) -> str:
    """A valid value of ``key`` (paths made absolute), or ``ConfigError`` naming ``where``."""
    if key not in KEYS:
        raise _unknown(key, where)
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: {key} must be a non-empty string, not {value!r}")
    value = value.strip()
    if key == "ranker":
        from .options import RANKERS

        if value not in RANKERS:
            raise ConfigError(f"{where}: ranker {value!r} is not one of {', '.join(RANKERS)}")
    elif key == "backbone":
        if not value.startswith(("http://", "https://")):
            raise ConfigError(f"{where}: backbone must be an http:// or https:// URL, "
                              f"not {value!r}")
    elif key == "collection" or (key == "model" and value.endswith(".gguf")):
        value = str(Path(value).expanduser().absolute())
    return value


def read_file(path: Path | None = None, validate: bool = True) -> dict[str, Any]:
    """The settings in the config file ({} when there is none)."""
    path = path or config_path()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read the config file {path}: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"the config file {path} is not valid TOML ({e}); fix or delete "
                          "it") from None
    if validate:
        data = {k: check(k, v, f"config file {path}") for k, v in data.items()}
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    import tomli_w

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".config-", suffix=".toml", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            tomli_w.dump(data, f)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def set_value(key: str, value: str, path: Path | None = None) -> str:
    """Store ``key = value`` in the config file; returns the value as stored."""
    path = path or config_path()
    value = check(key, value, "sieve-lite config set")
    data = read_file(path)
    data[key] = value
    _write(path, data)
    return value


def unset_value(key: str, path: Path | None = None) -> bool:
    """Remove ``key`` from the config file (an unknown key too: that is how one is fixed);
    False when it was not there."""
    path = path or config_path()
    data = read_file(path, validate=False)
    if key not in data:
        if key not in KEYS:
            raise _unknown(key, "sieve-lite config unset")
        return False
    del data[key]
    _write(path, data)
    return True


def setting(key: str, path: Path | None = None) -> Setting:
    """The effective value of ``key`` from the environment or the config file."""
    spec = KEYS[key]
    env_value = os.environ.get(spec.env, "")
    if env_value.strip():
        return Setting(key, check(key, env_value, f"environment variable {spec.env}"), "env",
                       spec.env, spec.meaning)
    data = read_file(path)
    if key in data:
        return Setting(key, data[key], "file", spec.env, spec.meaning)
    return Setting(key, None, None, spec.env, spec.meaning)


def default(key: str) -> str | None:
    """The configured default of ``key`` (environment, then file), or None."""
    return setting(key).value


def settings(path: Path | None = None) -> list[Setting]:
    return [setting(k, path) for k in KEYS]


__all__ = ["CONFIG_ENV", "KEYS", "Setting", "check", "config_path", "default", "read_file",
           "set_value", "setting", "settings", "unset_value"]
