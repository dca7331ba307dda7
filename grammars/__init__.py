"""Grammar files shipped inside the wheel as ``mantle_lsp.grammars`` (data only)."""
