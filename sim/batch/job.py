"""A batch run as a list of steps: programming through the host runtime, loads of requests
and memory, phases, dumps. :class:`BatchJob` collects them and writes them (the stimulus
as hex files, the steps as ``job.pickle``) for a testbench to carry out
(``sim/tb/slice_harness_tb.py`` in batch mode, ``sim/tb/slice_replay_tb.py`` cycle by cycle).
"""

from dataclasses import dataclass, field
import pathlib
import pickle

import numpy as np

from matndp.sim.batch.parameters import LOGS, UNTIL, BatchTiming, HarnessShape, SliceFormats
from matndp.sim.batch.stimulus import MemoryImage, RequestStream, StimulusError


__all__ = ["BatchJob", "RuntimeCall", "JobError", "JOB_FILE", "RESULTS_FILE", "default_budget"]


JOB_FILE = "job.pickle"
RESULTS_FILE = "results.pickle"


class JobError(ValueError):
    """A step the harness cannot carry out as asked."""


@dataclass(frozen=True)
class RuntimeCall:
    """A call of :class:`~matndp.host.runtime.NDPRuntime` method ``method``, picklable so
    that the testbench can make it."""

    method: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)

    def __call__(self, runtime):
        return getattr(runtime, self.method)(*self.args, **self.kwargs)


def default_budget(records):
    """A phase's cycle limit when none is given: generous for ``records`` requests
    behind a busy engine, yet finite, so that a hung run ends."""
    return 256 * records + 1_000_000


@dataclass
class _Load:
    requests: RequestStream | None
    image: MemoryImage | None


class BatchJob:
    """The steps of one run of the harness for slice configuration ``config``.

    Each method adds a step and returns its key, under which the run's result holds what
    the step gave (a runtime call's return value, a phase's measurements, a dump)."""

    def __init__(self, config, *, shape=HarnessShape(), timing=BatchTiming(), logs=tuple(LOGS)):
        if not isinstance(shape, HarnessShape):
            raise TypeError(f"shape must be a HarnessShape, not {shape!r}")
        if not isinstance(timing, BatchTiming):
            raise TypeError(f"timing must be a BatchTiming, not {timing!r}")
        timing.check_for(shape)
        unknown = set(logs) - set(LOGS)
        if unknown:
            raise JobError(f"unknown log(s) {', '.join(sorted(unknown))}; the harness has "
                           f"{', '.join(LOGS)}")
        self.config = config
        self.formats = SliceFormats(config)
        self.shape = shape
        self.timing = timing
        self.current_timing = timing    # as the last retime step left it
        self.logs = tuple(logs)
        self.steps = []
        self.loads = {}                 # key -> _Load
        self.layouts = {}               # key of an image load -> ImageLayout
        self.images = {}                # key of an image load -> the image's sectors
        self.entries = {}               # filter index -> FilterRange, as programmed
        self._loaded_requests = False

    def _add(self, kind, **values):
        key = f"{len(self.steps)}-{kind}"
        self.steps.append({"kind": kind, "key": key, **values})
        return key

    # --- steps --------------------------------------------------------------------------------
    def runtime(self, function, *args, **kwargs):
        """Call ``function(runtime)`` (e.g. a :class:`RuntimeCall`) on the host runtime
        between phases; its return value is kept."""
        if isinstance(function, str):
            function = RuntimeCall(function, args, kwargs)
        elif args or kwargs:
            raise JobError("arguments go into the RuntimeCall, not beside a callable")
        if not callable(function):
            raise JobError(f"a runtime step is a callable of the runtime, not {function!r}")
        try:
            pickle.dumps(function)
        except Exception as error:
            raise JobError(f"a runtime step must be picklable (a module-level function or a "
                           f"RuntimeCall): {error}") from None
        return self._add("runtime", function=function)

    def program(self, index, entry):
        """Program filter entry ``index`` with ``entry`` (a FilterRange); the checks take
        the entries programmed so from the job."""
        self.entries[index] = entry
        return self.runtime(RuntimeCall("program", (index, entry)))

    def load(self, *, requests=None, image=None):
        """Load a chunk of GPU requests (a :class:`RequestStream`, at most
        ``shape.depth``) and/or a memory image (a :class:`MemoryImage`, with its region
        map) between phases. A new chunk replaces the one before; the cycle count and
        everything in the slice carry on."""
        if requests is None and image is None:
            raise JobError("a load needs requests, an image or both")
        if requests is not None:
            if not isinstance(requests, RequestStream):
                raise JobError(f"requests must be a RequestStream, not {type(requests).__name__}")
            if requests.config != self.config:
                raise JobError("the request stream was made for another slice configuration")
            if len(requests) > self.shape.depth:
                raise StimulusError(f"a chunk of {len(requests)} requests does not fit the harness "
                                    f"(HarnessShape.depth = {self.shape.depth}); split the stream "
                                    f"(BatchJob.stream does)")
        layout = sectors = None
        if image is not None:
            if not isinstance(image, MemoryImage):
                raise JobError(f"image must be a MemoryImage, not {type(image).__name__}")
            if image.sector_bytes != self.config.sector_bytes:
                raise JobError(f"the image has {image.sector_bytes}-byte sectors; the slice "
                               f"{self.config.sector_bytes}")
            layout, sectors = image.layout(self.shape)
        key = self._add("load", requests=None if requests is None else len(requests),
                        image=None if image is None else len(sectors),
                        regions=None if image is None else len(layout.base))
        self.loads[key] = _Load(requests, image)
        if image is not None:
            self.layouts[key] = layout
            self.images[key] = sectors
        self._loaded_requests |= requests is not None
        return key

    def run(self, *, until=("sent", "answered"), budget=None, responses=None):
        """A phase: the GPU offers the current chunk until every condition of ``until``
        holds (``"sent"``, ``"answered"``, ``"responses"``: ``responses`` GPU responses in
        the phase, ``"irq"``) or for at most ``budget`` cycles (default
        :func:`default_budget` of the chunk). Register accesses wait for its end."""
        until = tuple(until)
        unknown = set(until) - set(UNTIL)
        if unknown:
            raise JobError(f"unknown phase condition(s) {', '.join(sorted(unknown))}; known: "
                           f"{', '.join(UNTIL)}")
        if ("responses" in until) != (responses is not None):
            raise JobError("give responses=N exactly when 'responses' is among the conditions")
        if responses is not None and (isinstance(responses, bool) or not isinstance(responses, int)
                                      or responses < 1):
            raise JobError(f"responses must be a positive int, not {responses!r}")
        if budget is None:
            if not until:
                raise JobError("a phase without a condition needs a budget")
            budget = default_budget(self._current_chunk_length())
        if isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget < 1 << 64:
            raise JobError(f"budget must be a positive number of cycles, not {budget!r}")
        if not self._loaded_requests and ("sent" in until or "answered" in until):
            raise JobError("a phase waits for requests to be sent before any were loaded")
        mask = sum(1 << UNTIL[name] for name in until)
        return self._add("run", until=mask, until_names=until, budget=budget,
                         responses=responses or 0)

    def retime(self, timing):
        """From the next phase on, memory and the streams behave as ``timing`` (a
        :class:`BatchTiming`) says; the pseudo-random sequence carries on from where it is
        (``timing.seed`` acts only at the start of a run). Memory may not switch between
        answering in order and reordering: answers waiting in the reorder pool would stay
        there."""
        if not isinstance(timing, BatchTiming):
            raise JobError(f"timing must be a BatchTiming, not {timing!r}")
        timing.check_for(self.shape)
        if (timing.reorder > 1) != (self.current_timing.reorder > 1):
            raise JobError(f"memory cannot switch from reorder {self.current_timing.reorder} to "
                           f"{timing.reorder} within a run: between answering in order and "
                           f"reordering, answers in the reorder pool would stay there")
        self.current_timing = timing
        ports = timing.ports()
        del ports["seed"]
        return self._add("timing", ports=ports)

    def dump(self):
        """Write the memory image (every sector of the last image load's layout) out."""
        if not self.layouts:
            raise JobError("nothing to dump: no image was loaded")
        return self._add("dump", layout=list(self.layouts)[-1])

    def stream(self, requests, *, until=("sent", "answered"), budget=None):
        """Load ``requests`` chunk by chunk (``shape.depth`` each) and run a phase for
        each; returns the phase keys."""
        keys = []
        for start in range(0, len(requests), self.shape.depth):
            self.load(requests=requests[start:start + self.shape.depth])
            keys.append(self.run(until=until, budget=budget))
        return keys

    # --- what the checks use ------------------------------------------------------------------
    def _current_chunk_length(self):
        for key in reversed(list(self.loads)):
            if self.loads[key].requests is not None:
                return len(self.loads[key].requests)
        return 0

    def requests(self):
        """Every request chunk loaded, in order, as one stream (empty when none)."""
        chunks = [load.requests for load in self.loads.values() if load.requests is not None]
        if not chunks:
            return RequestStream(self.config, addr=np.zeros(0, dtype=np.uint64),
                                 write=np.zeros(0, dtype=bool), id=np.zeros(0, dtype=np.uint64))
        return RequestStream.concatenate(chunks)

    # --- files --------------------------------------------------------------------------------
    def write(self, directory):
        """The stimulus files and ``job.pickle`` in ``directory``."""
        directory = pathlib.Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        formats = self.formats
        for key, load in self.loads.items():
            if load.requests is not None:
                (directory / f"requests-{key}.hex").write_bytes(formats.stimulus.pack(load.requests.columns()))
            if load.image is not None:
                (directory / f"image-{key}.hex").write_bytes(
                    formats.sector.pack({"data": self.images[key]}))
                (directory / f"regions-{key}.hex").write_bytes(
                    formats.region.pack(self.layouts[key].records()))
        document = {"config": self.config, "shape": self.shape, "timing": self.timing,
                    "logs": self.logs, "steps": self.steps}
        (directory / JOB_FILE).write_bytes(pickle.dumps(document))
        return directory
