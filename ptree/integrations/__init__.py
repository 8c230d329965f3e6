"""Adapters that plug a ptree session into agent frameworks (optional extras).

- :mod:`ptree.integrations.openai_agents`: :class:`~ptree.integrations.openai_agents.TreeSession`,
  the OpenAI Agents SDK's session protocol on a tree in a Pi file, with branches and
  undo (``pip install 'ptree[openai-agents]'``);
- :mod:`ptree.integrations.pydantic_ai`: pydantic-ai message history to and from a
  tree (``pip install 'ptree[pydantic-ai]'``).

Each module imports its framework, so this package imports neither: import the module
you need.  Nothing else in ptree imports this package, so the core never needs a
framework installed.

Imports: the core, :mod:`ptree.pi`, :mod:`ptree.providers`, :mod:`ptree.formats` and
:mod:`ptree.stores`; each module its own framework.
"""

__all__: list[str] = []
