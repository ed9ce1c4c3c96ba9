"""The engine's units: integer picoseconds and bits per second, from the scenario's ms, us and
Gbps."""

PS_PER_US = 1_000_000
PS_PER_MS = 1_000_000_000
PS_PER_S = 1_000_000_000_000
#: The engine's times, rates and sizes are unsigned 64-bit.
U64_MAX = 2**64 - 1


def bps(gbps: float) -> int:
    return int(round(gbps * 1e9))


def us(x: float) -> int:
    return int(round(x * PS_PER_US))


def ms(x: float) -> int:
    return int(round(x * PS_PER_MS))
