"""Batch-mode runs of the NDP slice with its engine (docs/simulation.md): the GPU's
request stream, the memory image and the region map loaded in bulk into the harness
``sim/harnesses/slice_harness.v``, phases run with no Python per cycle, the logs read
back as numpy columns and checked in bulk.
"""

from matndp.sim.batch.check import CheckFailed, check_gpu_path, check_events
from matndp.sim.batch.job import BatchJob, JobError, RuntimeCall
from matndp.sim.batch.parameters import BatchTiming, HarnessShape
from matndp.sim.batch.records import HexFormatError
from matndp.sim.batch.run import BatchResult, MemoryContents, replay_batch, run_batch
from matndp.sim.batch.stimulus import MemoryImage, RequestStream, StimulusError


__all__ = ["BatchJob", "BatchTiming", "HarnessShape", "RequestStream", "MemoryImage",
           "RuntimeCall", "run_batch", "replay_batch", "BatchResult", "MemoryContents",
           "check_gpu_path", "check_events", "CheckFailed", "JobError", "StimulusError",
           "HexFormatError"]
