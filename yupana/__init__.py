"""yupana: governance-plane client for fleets of AI coding agents.

This module is imported by every hook invocation, so it imports nothing.
"""

__version__ = "0.1.0"
