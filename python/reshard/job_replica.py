"""Which replica serves a job: rendezvous (highest-random-weight) hashing,
as common/job_replica.h defines it, so that a Python caller reaches the
replica the job's agents chose. Test vectors shared with the C++ tests:
tests/data/job_replica_vectors.json."""

from __future__ import annotations

from collections.abc import Sequence

_MASK = (1 << 64) - 1


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for byte in data:
        h ^= byte
        h = (h * 0x100000001B3) & _MASK
    return h


def _score(replica: str, job: str) -> int:
    # FNV-1a, then MurmurHash3's 64-bit finalizer (common/job_replica.h).
    h = fnv1a64(f"{replica}\n{job}".encode())
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & _MASK
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & _MASK
    return h ^ (h >> 33)


def split_replicas(text: str) -> list[str]:
    """ "h1:p1, h2:p2" -> ["h1:p1", "h2:p2"]: blanks trimmed, empties
    dropped."""
    return [part.strip() for part in text.split(",") if part.strip()]


def replica_index(job: str, replicas: Sequence[str]) -> int:
    """The index of the replica that serves `job`; len(replicas) for none.
    Equal scores go to the smaller text, so the order never matters."""
    best, best_score = len(replicas), 0
    for i, replica in enumerate(replicas):
        score = _score(replica, job)
        if (
            best == len(replicas)
            or score > best_score
            or (score == best_score and replica < replicas[best])
        ):
            best, best_score = i, score
    return best
