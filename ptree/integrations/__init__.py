"""Adapters that plug a ptree session into agent frameworks (optional extras).

- :mod:`ptree.integrations.openai_agents`: :class:`~ptree.integrations.openai_agents.TreeSession`,
  the OpenAI Agents SDK's session protocol on a tree in a Pi file, with branches and
  undo (``pip install 'ptree[openai-agents]'``);
- :mod:`ptree.integrations.pydantic_ai`: pydantic-ai message history to and from a
  tree (``pip install 'ptree[pydantic-ai]'``);
- :mod:`ptree.integrations.langgraph`: :class:`~ptree.integrations.langgraph.TreeSaver`,
  a LangGraph checkpointer keeping each thread as a tree in any ptree store
  (``pip install 'ptree[langgraph]'``).

Each module imports its framework, so this package imports neither: import the module
you need.  Nothing else in ptree imports this package, so the core never needs a
framework installed.  Imports: the core, :mod:`ptree.pi` and :mod:`ptree.stores`.
"""

__all__: list[str] = []
