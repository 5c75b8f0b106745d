"""A rank's own tensors handed to its local reshard-agent (docs/DESIGN.md
§6.6), so that `job run --tensor` moves them.

`empty(shape, dtype)` returns a numpy array whose memory is a sealed memfd:
registering it (or a CPU torch view of it, `torch.from_numpy`) passes that
memory to the agent with no copy, and what a run writes into it is read
back with no copy. Any other array or tensor is copied once into a new
memfd-backed array, which `register` returns: read results from that one.

    agent = LocalAgent("/run/reshard/agent-0.sock", job="train", rank=0)
    w = reshard.agent.empty((4, 1024), "float32")
    w[:] = weights
    agent.register("w", w)

Registrations live as long as the LocalAgent's connection: closing it, or
the process exiting, frees them. Needs the `client` extra (protobuf).
"""

from __future__ import annotations

import fcntl
import mmap
import os
import socket
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from reshard._errors import Error, StatusCode
from reshard._values import Mesh, dtype_name

__all__ = ["LocalAgent", "RegisteredLayout", "RegisteredTensor", "empty"]

_NUMPY = {
    "float32": np.float32,
    "float64": np.float64,
    "float16": np.float16,
    "int32": np.int32,
    "int64": np.int64,
}
_ITEMSIZE = {"bfloat16": 2, **{k: np.dtype(v).itemsize for k, v in _NUMPY.items()}}
# The agent refuses messages past 64 KiB (agent/tensor_endpoint.h).
_MAX_RESPONSE = 1 << 20


@dataclass
class _Memory:
    fd: int
    map: mmap.mmap
    address: int
    size: int
    dtype: str  # what `empty` made it for


# Every memfd this process made, by the address of its mapping.
_memories: dict[int, _Memory] = {}


def _memfd(size: int, dtype: str) -> _Memory:
    fd = os.memfd_create("reshard-tensor", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, max(size, 1))
    # Sealed against shrinking: a truncate cannot fault the agent.
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK)
    view = mmap.mmap(fd, max(size, 1))
    address = np.frombuffer(view, dtype=np.uint8).ctypes.data
    memory = _Memory(fd, view, address, size, dtype)
    _memories[address] = memory
    return memory


def _numpy_dtype(dtype: str) -> Any:
    name = dtype_name(dtype)
    if name == "bfloat16":
        return np.dtype("<u2")  # bfloat16's bits; numpy has no bfloat16
    return np.dtype(_NUMPY[name])


def empty(shape: tuple[int, ...] | list[int], dtype: str) -> np.ndarray:
    """An uninitialized C-contiguous array of `shape` and `dtype` (planner
    names: float32, f32, bfloat16, ...; bfloat16 as uint16 bits) in a sealed
    memfd, which registers with no copy."""
    count = 1
    for d in shape:
        if d < 0:
            raise Error(StatusCode.INVALID_ARGUMENT, f"shape: {d} is negative")
        count *= d
    np_dtype = _numpy_dtype(dtype)
    memory = _memfd(count * np_dtype.itemsize, dtype_name(dtype))
    flat = np.frombuffer(memory.map, dtype=np_dtype, count=count)
    return flat.reshape(tuple(shape))


def _pointer_and_bytes(array: Any) -> tuple[int, int, bool]:
    """The data pointer, byte size and C-contiguity of a numpy array or a
    CPU torch tensor."""
    if isinstance(array, np.ndarray):
        return array.ctypes.data, array.nbytes, bool(array.flags.c_contiguous)
    if hasattr(array, "data_ptr") and hasattr(array, "is_contiguous"):
        if getattr(array, "device", None) is not None and array.device.type != "cpu":
            raise Error(
                StatusCode.INVALID_ARGUMENT,
                f"tensor: on {array.device}; registered tensors are host memory",
            )
        nbytes = array.numel() * array.element_size()
        return int(array.data_ptr()), nbytes, bool(array.is_contiguous())
    raise Error(
        StatusCode.INVALID_ARGUMENT,
        f"tensor: a numpy array or CPU torch tensor, not {type(array).__name__}",
    )


def _find_memory(pointer: int, nbytes: int) -> tuple[_Memory, int] | None:
    for memory in _memories.values():
        if memory.address <= pointer and pointer + nbytes <= memory.address + max(
            memory.size, 1
        ):
            return memory, pointer - memory.address
    return None


def _dtype_of(array: Any, memory: _Memory | None) -> str:
    if isinstance(array, np.ndarray):
        if (
            memory is not None
            and memory.dtype == "bfloat16"
            and array.dtype == np.uint16
        ):
            return "bfloat16"
        for name, np_type in _NUMPY.items():
            if array.dtype == np.dtype(np_type):
                return name
        raise Error(
            StatusCode.INVALID_ARGUMENT,
            f"tensor: dtype {array.dtype} (bfloat16 bits: pass dtype='bfloat16')",
        )
    return str(array.dtype).removeprefix("torch.")


def _host_copy(array: Any) -> np.ndarray:
    """`array`'s elements as a numpy array (bfloat16 as its bits)."""
    if isinstance(array, np.ndarray):
        return array
    tensor = array.detach().contiguous()
    if str(tensor.dtype) == "torch.bfloat16":
        import torch

        tensor = tensor.view(torch.int16)
    return np.asarray(tensor.numpy())


@dataclass(frozen=True)
class RegisteredTensor:
    """A tensor registered at the agent, as it lists them."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    bytes: int


@dataclass(frozen=True)
class RegisteredLayout:
    """The layout a registered block is of (docs/DESIGN.md §6.6): the global
    shape, the mesh with its rank map (dim names are labels) and the
    placements, as plan requests write them ("S(0),R")."""

    global_shape: tuple[int, ...]
    mesh: Mesh
    placements: str


class LocalAgent:
    """A connection to one rank's agent endpoint (its --tensor_socket).

    `token` defaults to $RESHARD_JOB_TOKEN; every request presents it with
    the job and the rank, which must be the agent's.
    """

    def __init__(
        self,
        socket_path: str,
        *,
        job: str,
        rank: int,
        token: str | None = None,
        timeout: float = 10.0,
    ) -> None:
        from reshard.v1 import agent_local_pb2  # the client extra

        self._pb = agent_local_pb2
        self._job = job
        self._rank = rank
        self._token = (
            token if token is not None else os.environ.get("RESHARD_JOB_TOKEN", "")
        )
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(timeout)
        try:
            self._sock.connect(socket_path)
        except OSError as e:
            self._sock.close()
            raise Error(
                StatusCode.UNAVAILABLE, f"cannot reach the agent at {socket_path}: {e}"
            ) from None
        # Arrays copied in, kept alive while registered.
        self._copies: dict[str, np.ndarray] = {}

    def __enter__(self) -> LocalAgent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the connection: the agent frees every registration made
        through it."""
        self._sock.close()
        self._copies.clear()

    def _request(self) -> Any:
        request = self._pb.LocalRequest()
        request.token = self._token
        request.job = self._job
        request.rank = self._rank
        return request

    def _call(self, request: Any, fd: int | None = None) -> Any:
        response, received = self._exchange(request, fd)
        for extra in received:
            os.close(extra)
        return response

    def _exchange(self, request: Any, fd: int | None = None) -> tuple[Any, list[int]]:
        """Sends `request` (with `fd`); the response and the descriptors
        that came with it."""
        body = request.SerializeToString()
        framed = struct.pack("<I", len(body)) + body
        if fd is None:
            self._sock.sendall(framed)
        else:
            socket.send_fds(self._sock, [framed], [fd])
        first, received, _, _ = socket.recv_fds(self._sock, 4, 1)
        if not first:
            raise Error(StatusCode.UNAVAILABLE, "the agent closed the connection")
        size = struct.unpack("<I", first + self._read(4 - len(first)))[0]
        if size > _MAX_RESPONSE:
            raise Error(StatusCode.INTERNAL, f"a response of {size} bytes")
        response = self._pb.LocalResponse()
        response.ParseFromString(self._read(size))
        if response.code != 0:
            for extra in received:
                os.close(extra)
            raise Error(response.code, response.error)
        return response, list(received)

    def _read(self, size: int) -> bytes:
        data = b""
        while len(data) < size:
            chunk = self._sock.recv(size - len(data))
            if not chunk:
                raise Error(StatusCode.UNAVAILABLE, "the agent closed the connection")
            data += chunk
        return data

    def register(
        self,
        name: str,
        array: Any,
        dtype: str | None = None,
        layout: RegisteredLayout | None = None,
    ) -> Any:
        """Registers `array` (numpy, or a CPU torch tensor) as `name` on this
        rank; again under the same name replaces it. Memory from `empty`
        (or a contiguous view into it) goes with no copy and is returned as
        is; anything else is copied once into a new memfd-backed array,
        which is returned: runs write there. `dtype` overrides the array's
        (bfloat16 bits in uint16). With `layout` (whose block at this rank
        `array` must be: else INVALID_ARGUMENT naming the layout) a run
        binds the tensor only where it moves it as laid out; otherwise every
        rank stops before any data moves, naming this rank and `name`."""
        from reshard._wire import mesh_to_proto
        from reshard.v1 import planner_pb2

        pointer, nbytes, contiguous = _pointer_and_bytes(array)
        found = _find_memory(pointer, nbytes) if contiguous else None
        if dtype is None:
            dtype = _dtype_of(array, found[0] if found else None)
        dtype = dtype_name(dtype)
        shape = tuple(int(d) for d in array.shape)
        if found is None:
            copy = empty(shape, dtype)
            np.copyto(copy, _host_copy(array).reshape(shape).view(copy.dtype))
            self._copies[name] = copy
            array = copy
            found = (_memories[copy.ctypes.data], 0)
        memory, offset = found
        request = self._request()
        r = request.register
        r.name = name
        r.dtype = planner_pb2.DType.Value("DTYPE_" + dtype.upper())
        r.shape.extend(shape)
        r.offset = offset
        r.length = nbytes
        if layout is not None:
            r.layout.global_shape.extend(layout.global_shape)
            r.layout.mesh.CopyFrom(mesh_to_proto(layout.mesh))
            r.layout.placements = layout.placements
        self._call(request, memory.fd)
        return array

    def unregister(self, name: str) -> None:
        """Frees `name` at the agent (once no run uses it)."""
        request = self._request()
        request.unregister.name = name
        self._call(request)
        self._copies.pop(name, None)

    def fetch(self, name: str) -> np.ndarray:
        """The tensor the agent allocated under `name` (a run's destination
        with `allocate`), mapped with no copy: what later runs write there
        shows in the array (bfloat16 as uint16 bits)."""
        from reshard.v1 import planner_pb2

        request = self._request()
        request.fetch.name = name
        response, received = self._exchange(request)
        if len(received) != 1 or len(response.tensors) != 1:
            for extra in received:
                os.close(extra)
            raise Error(StatusCode.INTERNAL, f"fetch {name}: no memory came back")
        t = response.tensors[0]
        try:
            view = mmap.mmap(received[0], max(t.bytes, 1))
        finally:
            os.close(received[0])  # the mapping keeps its own
        dtype = planner_pb2.DType.Name(t.dtype).removeprefix("DTYPE_").lower()
        np_dtype = _numpy_dtype(dtype)
        count = t.bytes // np_dtype.itemsize
        return np.frombuffer(view, dtype=np_dtype, count=count).reshape(tuple(t.shape))

    def list(self) -> list[RegisteredTensor]:
        """Every tensor registered at the agent, by name."""
        from reshard.v1 import planner_pb2

        request = self._request()
        request.list.SetInParent()
        response = self._call(request)
        return [
            RegisteredTensor(
                t.name,
                planner_pb2.DType.Name(t.dtype).removeprefix("DTYPE_").lower(),
                tuple(t.shape),
                t.bytes,
            )
            for t in response.tensors
        ]
