"""The generated documents and parts of documents under ``docs/``, each rendered from the
one source that defines its content (``matndp docs`` writes them all)."""
