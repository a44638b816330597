"""Developer tools of the repository (not part of the installed package)."""
