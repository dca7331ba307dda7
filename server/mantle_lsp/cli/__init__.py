"""cli layer of mantle-lsp."""
