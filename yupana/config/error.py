"""The one configuration error, and the top-level keys' variables: below the snapshot reader
(:mod:`yupana.settings`) and the resolver (:mod:`yupana.config.resolver`), which both use them.
Standard library only; imports nothing."""

# The top-level keys' variables (the schema's non-table keys; tests/config/test_resolver.py holds them equal).
TOP_LEVEL_ENV = ("YUPANA_BASE_REF", "YUPANA_ENABLE_LSP", "YUPANA_ENABLE_CPG", "YUPANA_LANGUAGES")


class ConfigError(Exception):
    """The configuration could not be resolved; the message names the file and key."""
