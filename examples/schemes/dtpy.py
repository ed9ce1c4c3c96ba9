"""Dynamic Thresholds written in Python: the example of docs/schemes/python.md.

Same rule as the built-in ``dt`` (crates/sharebuf-core/src/bm/dt.rs): a packet is admitted iff
q + size <= alpha_q * (B - Q(t)), with alpha given once or per queue (priority class), default
0.5. Run it with ``[switch.bm] scheme = "python"``, ``class = "dtpy:DT"``, ``alpha = 0.5``.
"""


class DT:
    def __init__(self, ctx, alpha=0.5):
        # One alpha for every queue, or one per queue (as the built-in dt's `alpha`).
        alphas = list(alpha) if isinstance(alpha, (list, tuple)) else [alpha] * ctx.n_queues
        if len(alphas) != ctx.n_queues or not all(a > 0 for a in alphas):
            raise ValueError(f"alpha = {alpha!r}: give one value > 0 or {ctx.n_queues} (one per queue)")
        self.alpha = [float(a) for a in alphas]

    def admit(self, state, port, queue, pkt, now_s):
        # The same float arithmetic as dt.rs: (q + size) as f64 <= alpha * (B - Q) as f64.
        return state.queue_bytes(port, queue) + pkt.size_bytes <= self.alpha[queue] * state.remaining_bytes
