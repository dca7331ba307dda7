"""mantle-lsp: language server and checker for Rasa Mantle agent projects."""

__version__ = "0.1.0"
