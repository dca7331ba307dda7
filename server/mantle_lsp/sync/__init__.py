"""Sync a ``memory-layers/`` folder with Cadenya through the official SDK (``cadenya``,
the optional extra ``mantle-lsp[cadenya]``); docs/memory-layers.md, "Sync".

- :mod:`.state`: what the folder asks for and what the service holds, as plain data;
- :mod:`.local`: read the folder byte for byte (and its ``sync.yml`` id);
- :mod:`.holdable`: what one side cannot hold of the other (left alone by both commands);
- :mod:`.plan`: the changes a push makes (pure) and their reviewable diff;
- :mod:`.service`: the SDK calls (read the service, apply a plan, read it all for a pull);
- :mod:`.folder`: write the folder from the service (pull).

Only this package and ``cli/layers_sync.py`` reach the network, and only when a user runs
``mantle-lsp layers diff|push|pull``; the editor features never do.
"""
