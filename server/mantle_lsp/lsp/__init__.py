"""The language server: pygls 2 wiring around the ``ide`` features.

This is the only package that imports ``pygls`` or ``lsprotocol``. It converts between
protocol types and the ``ide`` layer's plain data (``convert.py``), keeps the open
documents and the diagnostics schedule, and otherwise delegates every request to
``mantle_lsp.ide``. Start it with ``mantle-lsp serve``.
"""
