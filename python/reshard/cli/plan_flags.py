"""The plan flags `plan` and `job run` share, as reshardctl reads them
(client/plan_flags.h): the mesh (--mesh, --flatten, --link, --copy_gbps,
--base_us, --reduce_gbps), the tensor and states (--shape, --dtype, --from,
--to) and the planner options, with errors naming the flag. The planner
checks the rest, with the C++ core's messages."""

from __future__ import annotations

from dataclasses import dataclass

from reshard._errors import invalid_argument
from reshard._values import COST_MODELS, FLATTEN_POLICIES, PLANNERS, Link, Mesh
from reshard._values import PlanOptions as Options
from reshard.cli.args import Args, int_list, integer, number

MESH_FLAGS = ("mesh", "flatten", "link", "copy_gbps", "base_us", "reduce_gbps")
PLAN_FLAGS = {
    *MESH_FLAGS,
    "shape",
    "dtype",
    "from",
    "to",
    "planner",
    "cost_model",
    "devices_per_host",
    "flatten_policy",
    "max_peak_bytes",
    "search_budget",
}
# The word a --link field takes where the cost model's value applies.
DEFAULT_FIELD = "default"
_BYTE_UNITS = (("KiB", 10), ("MiB", 20), ("GiB", 30), ("TiB", 40))
_BYTE_FORM = "a byte count >= 0 (with an optional KiB, MiB, GiB or TiB)"
_INT64_MAX = (1 << 63) - 1


def byte_count(text: str, flag: str) -> int:
    """The count of "65536" or "1MiB" (common/byte_size.h); INVALID_ARGUMENT naming
    `flag`."""
    digits, shift = text, 0
    for unit, bits in _BYTE_UNITS:
        if text.endswith(unit):
            digits, shift = text[: -len(unit)], bits
            break
    if (
        not digits.isascii()
        or not digits.isdigit()
        or int(digits) > _INT64_MAX >> shift
    ):
        raise invalid_argument(f'--{flag}: "{text}" is not {_BYTE_FORM}')
    return int(digits) << shift


def _mesh_dims(text: str) -> tuple[list[str], list[int]]:
    names, sizes = [], []
    for part in text.split(","):
        kv = part.split("=")
        size = integer(kv[1]) if len(kv) == 2 else None
        if size is None:
            raise invalid_argument(f'--mesh: "{part}" must be NAME=SIZE (in "{text}")')
        names.append(kv[0])
        sizes.append(size)
    return names, sizes


def _link_field(text: str) -> tuple[bool, float | None]:
    if text == DEFAULT_FIELD:
        return True, None
    value = number(text)
    return value is not None, value


def _link(text: str) -> tuple[str, Link]:
    """The target and link of "A=100:1.5" or "A,B=0.1:20[:A2A_US]"."""
    kv = text.split("=")
    values = kv[1].split(":") if len(kv) == 2 else []
    fields = [_link_field(v) for v in values]
    if not 2 <= len(values) <= 3 or not all(ok for ok, _ in fields):
        raise invalid_argument(
            f'--link: "{text}" must be DIM=GBPS:US[:A2A_US] or '
            "DIM,DIM...=GBPS:US[:A2A_US] (a field may be default)"
        )
    numbers = [v for _, v in fields] + [None]
    return kv[0], Link(numbers[0], numbers[1], numbers[2])


def _number_flag(args: Args, name: str, unit: str) -> float | None:
    text = args.get(name)
    if text is None:
        return None
    value = number(text)
    if value is None:
        raise invalid_argument(f'--{name}: "{text}" must be a number of {unit}')
    return value


def mesh_from_flags(args: Args) -> Mesh:
    text = args.get("mesh")
    if text is None:
        raise invalid_argument("--mesh is required, e.g. A=2,B=2")
    names, sizes = _mesh_dims(text)
    flattened = [tuple(g.split(",")) for g in args.get_all("flatten")]
    links: dict[int, Link] = {}
    flattened_links: dict[int, Link] = {}
    for value in args.get_all("link"):
        target, link = _link(value)
        group = tuple(target.split(","))
        if "," in target and group in flattened:
            flattened_links[flattened.index(group)] = link
        elif "," not in target and target in names:
            links[names.index(target)] = link
        else:
            raise invalid_argument(
                f'--link: "{target}" is neither a mesh dim nor a --flatten group'
            )
    copy_gbps = _number_flag(args, "copy_gbps", "GB/s")
    base_us = _number_flag(args, "base_us", "us")
    reduce_gbps = _number_flag(args, "reduce_gbps", "GB/s")
    return Mesh(
        shape=tuple(sizes),
        dim_names=tuple(names),
        flattened=tuple(flattened),
        links=tuple(links.get(d, Link()) for d in range(len(names))) if links else (),
        flattened_links=tuple(
            flattened_links.get(f, Link()) for f in range(len(flattened))
        )
        if flattened_links
        else (),
        copy_gbps=copy_gbps,
        base_us=base_us,
        reduce_gbps=reduce_gbps,
    )


def _choice(
    args: Args, flag: str, what: str, known: tuple[str, ...], default: str
) -> str:
    value = args.get(flag)
    if value is None:
        return default
    if value not in known:
        expected = ", ".join(known[:-1]) + " or " + known[-1]
        raise invalid_argument(
            f'--{flag}: unknown {what} "{value}"; expected {expected}'
        )
    return value


def options_from_flags(args: Args) -> Options:
    planner = _choice(args, "planner", "planner", PLANNERS, "optimal")
    cost_model = _choice(args, "cost_model", "cost model", COST_MODELS, "alpha_beta")
    counts = {}
    for flag, default in (("devices_per_host", 8), ("search_budget", 0)):
        text = args.get(flag)
        counts[flag] = default if text is None else integer(text)
        if counts[flag] is None:
            raise invalid_argument(f'--{flag}: "{text}" is not an integer')
    peak = args.get("max_peak_bytes")
    return Options(
        planner=planner,
        cost_model=cost_model,
        devices_per_host=counts["devices_per_host"],
        search_budget=counts["search_budget"],
        max_peak_bytes=None if peak is None else byte_count(peak, "max_peak_bytes"),
        flatten_policy=_choice(
            args, "flatten_policy", "policy", FLATTEN_POLICIES, "existing"
        ),
        merge=args.has("merge"),
    )


@dataclass(frozen=True)
class Request:
    """What the tensor, state and option flags ask to plan."""

    shape: list[int]
    dtype: str
    src: str
    dst: str
    options: Options


def request_from_flags(args: Args) -> Request:
    for required in ("shape", "from", "to"):
        if not args.has(required):
            raise invalid_argument(f"--{required} is required")
    options = options_from_flags(args)
    return Request(
        shape=int_list(args.get("shape") or "", "shape"),
        dtype=args.get("dtype") or "float32",
        src=args.get("from") or "",
        dst=args.get("to") or "",
        options=options,
    )
