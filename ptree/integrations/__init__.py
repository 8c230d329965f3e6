"""Adapters that plug a ptree session into agent frameworks (optional extras).

- :mod:`ptree.integrations.openai_agents`: :class:`~ptree.integrations.openai_agents.TreeSession`,
  the OpenAI Agents SDK's session protocol on a tree in a Pi file, with branches and
  undo (``pip install 'ptree[openai-agents]'``);
- :mod:`ptree.integrations.pydantic_ai`: pydantic-ai message history to and from a
  tree (``pip install 'ptree[pydantic-ai]'``);
- :mod:`ptree.integrations.claude_agent`:
  :class:`~ptree.integrations.claude_agent.TreeSessionStore`, the Claude Agent SDK's
  session store on any ptree store URL (``pip install 'ptree[claude-agent]'``).

Each module imports its framework, so this package imports neither: import the module
you need.  Nothing else in ptree imports this package, so the core never needs a
framework installed (the CLI imports ``claude_agent``, which needs its SDK only to
append).  Imports: anything but :mod:`ptree.cli`.
"""

__all__: list[str] = []
