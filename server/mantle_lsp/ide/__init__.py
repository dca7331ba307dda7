"""ide layer of mantle-lsp."""
