"""The initiator's side of a memory port (``hw/layouts.py``): requests with a tag, read
responses that carry it back.

A tag must be unique among a port's outstanding reads. :class:`ReadTagGate` makes a
:class:`~matndp.sim.drivers.stream.StreamSource` of requests respect that, as a GPU's
memory partition does: a read whose tag is still outstanding waits until the response
that frees the tag has been received.
"""

from collections import Counter

from matndp.sim.drivers.stream import Participant


__all__ = ["ReadTagGate"]


class ReadTagGate(Participant):
    """``gate(request)`` for the source of ``requests``; ``responses`` is the sink (or
    monitor) of the read responses. Both are read when the gate is asked, so the answer
    reflects every transfer up to the previous cycle whatever the order of the loop.

    Added to the cycle loop, the gate follows its reset: the reads outstanding when a
    reset begins are forgotten, as the design that would answer them forgets them.
    """

    def __init__(self, requests, responses):
        self.requests = requests
        self.responses = responses
        self.outstanding = Counter()
        self._requests_seen = 0
        self._responses_seen = 0

    def _catch_up(self):
        sent = self.requests.items
        while self._requests_seen < len(sent):
            request = sent[self._requests_seen]
            if not request["write"]:
                self.outstanding[request["id"]] += 1
            self._requests_seen += 1
        received = self.responses.items
        while self._responses_seen < len(received):
            tag = received[self._responses_seen]["id"]
            if not self.outstanding[tag]:
                raise AssertionError(f"a read response with tag {tag} arrived while no read "
                                     f"with that tag was outstanding")
            self.outstanding[tag] -= 1
            self._responses_seen += 1

    def outstanding_reads(self):
        """Reads sent whose response has not been received, as of the last transfers."""
        self._catch_up()
        return sum(self.outstanding.values())

    def __call__(self, request):
        if request["write"]:
            return True
        self._catch_up()
        return not self.outstanding[request["id"]]

    def reset(self, now):
        if not self.in_reset:
            self._catch_up()
            self.outstanding.clear()
