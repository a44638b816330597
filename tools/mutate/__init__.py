"""Mutation testing of the repository (docs/testing.md): mutmut over ``host/``, and a
scripted catalog of single-point RTL mutants over ``hw/``, each run against the tests that
should catch it. Every mutant is applied to a copy of the tree under ``build/mutate``,
never to the working tree."""
