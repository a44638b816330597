"""A sub-core's issue pipeline, one module per stage (docs/engine.md, "µthreads and the
pipeline"): :mod:`.pick`, :mod:`.fetch`, :mod:`.decode`, :mod:`.operands`,
:mod:`.dispatch`, :mod:`.writeback`, the µthread slots (:mod:`.slots`) and the records
the stages hand on (:mod:`.layouts`). :class:`~..sub_core.SubCore` composes them."""
