"""syntax layer of mantle-lsp."""
