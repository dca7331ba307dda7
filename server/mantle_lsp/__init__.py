"""mantle-lsp: language server and checker for Rasa Mantle agent projects.

Importing the package changes nothing global (``sys.path`` included): run it as
``python -m mantle_lsp`` (``__main__.py``, which starts safely from any folder) or with the
``mantle-lsp`` console script.
"""

__version__ = "0.1.0"
