"""Adapters that plug a ptree session into agent frameworks (optional extras).

- :mod:`ptree.integrations.openai_agents`: :class:`~ptree.integrations.openai_agents.TreeSession`,
  the OpenAI Agents SDK's session protocol on a tree in a Pi file, with branches and
  undo (``pip install 'ptree[openai-agents]'``);
- :mod:`ptree.integrations.pydantic_ai`: pydantic-ai message history to and from a
  tree (``pip install 'ptree[pydantic-ai]'``);
- :mod:`ptree.integrations.langgraph`: :class:`~ptree.integrations.langgraph.TreeSaver`,
  a LangGraph checkpointer keeping each thread as a tree in any ptree store
  (``pip install 'ptree[langgraph]'``);
- :mod:`ptree.integrations.claude_agent`:
  :class:`~ptree.integrations.claude_agent.TreeSessionStore`, the Claude Agent SDK's
  session store on any ptree store URL (``pip install 'ptree[claude-agent]'``).

Each module imports its framework, so this package imports none: import the module
you need.  Only the CLI imports from here (``claude_agent``, to read stored transcripts,
which needs no SDK), so the core never needs a framework installed.

Imports: the core, :mod:`ptree.pi`, :mod:`ptree.providers`, :mod:`ptree.formats` and
:mod:`ptree.stores`; each module its own framework.
"""

__all__: list[str] = []
