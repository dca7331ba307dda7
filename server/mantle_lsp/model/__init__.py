"""model layer of mantle-lsp."""
