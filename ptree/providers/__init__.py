"""Request bodies for LLM provider APIs built from a branch, and replies back into it.

Reserved for issue #13.  Imports: the core only; never a provider SDK at run time.
"""

__all__: list[str] = []
