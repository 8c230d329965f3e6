"""Adapters that plug a ptree session into agent frameworks (optional extras).

Reserved for issue #18.  Each module imports its framework; nothing else in ptree
imports this package, so the core never needs a framework installed.
"""

__all__: list[str] = []
