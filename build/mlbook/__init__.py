"""Publishing pipeline of The ML Engineering Book: book model, checks, and the PDF and EPUB writers."""

__version__ = "0.1.0"
