"""`mesh register|list|get|delete`: the service's mesh registry, printed as
`reshardctl mesh` prints it (client/mesh_command.h)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from reshard._errors import invalid_argument
from reshard._json_text import json_string, number_text
from reshard._values import Link, Mesh
from reshard.cli.args import Args, GlobalFlags
from reshard.cli.connect import connect
from reshard.cli.exit_codes import PROG
from reshard.cli.plan_flags import DEFAULT_FIELD, MESH_FLAGS, mesh_from_flags

USAGE = f"""\
usage: {PROG} [global flags] mesh register --mesh A=2,B=2 [--flatten A,B]...
         [--link DIM[,DIM...]=GBPS:US[:A2A_US]]... [--copy_gbps X] [--base_us X]
         [--reduce_gbps X]
       {PROG} [global flags] mesh list [--json]
       {PROG} [global flags] mesh get MESH_ID [--json]
       {PROG} [global flags] mesh delete MESH_ID [--admin_token_file FILE] [--json]
  The service's mesh registry, as `reshardctl mesh` shows it: `register`
  prints the mesh's id; `list` and `get` print the id, dims, flattened
  groups, link overrides, copy_gbps, base_us, reduce_gbps and a rank map
  other than the identity; `delete` needs the planner's admin token.
"""


def _optional(value: float | None, none: str) -> str:
    return number_text(value) if value is not None else none


def _link_value(link: Link) -> str:
    """GBPS:US[:A2A_US], as --link takes it."""
    value = (
        f"{_optional(link.bandwidth_gbps, DEFAULT_FIELD)}:"
        f"{_optional(link.latency_us, DEFAULT_FIELD)}"
    )
    if link.all_to_all_us is not None:
        value += f":{number_text(link.all_to_all_us)}"
    return value


def _overridden(mesh: Mesh) -> list[tuple[str | tuple[str, ...], Link]]:
    """The links other than the model's: dims' first, then flattened
    groups' own."""
    out: list[tuple[str | tuple[str, ...], Link]] = [
        (name, link)
        for name, link in zip(mesh.dim_names, mesh.links, strict=False)
        if not link.is_default()
    ]
    out += [
        (group, link)
        for group, link in zip(mesh.flattened, mesh.flattened_links, strict=False)
        if not link.is_default()
    ]
    return out


def _identity_rank_map(mesh: Mesh) -> bool:
    return not mesh.rank_map or list(mesh.rank_map) == list(range(mesh.world_size))


def mesh_line(mesh_id: str, mesh: Mesh) -> str:
    dims = ",".join(f"{n}={s}" for n, s in zip(mesh.dim_names, mesh.shape, strict=True))
    line = f"{mesh_id}  {dims}"
    if mesh.flattened:
        line += "  flattened " + " ".join("_".join(g) for g in mesh.flattened)
    links = [
        f"{t if isinstance(t, str) else ','.join(t)}={_link_value(link)}"
        for t, link in _overridden(mesh)
    ]
    if links:
        line += "  links " + " ".join(links)
    for name in ("copy_gbps", "base_us", "reduce_gbps"):
        value = getattr(mesh, name)
        if value is not None:
            line += f"  {name} {number_text(value)}"
    if not _identity_rank_map(mesh):
        line += "  rank_map " + ",".join(map(str, mesh.rank_map))
    return line


def _names_json(names: Sequence[str]) -> str:
    return "[" + ", ".join(json_string(n) for n in names) + "]"


def _link_json(target: str | tuple[str, ...], link: Link) -> str:
    where = (
        f'"dim": {json_string(target)}'
        if isinstance(target, str)
        else f'"group": {_names_json(target)}'
    )
    return (
        f'{{{where}, "bandwidth_gbps": {_optional(link.bandwidth_gbps, "null")}, '
        f'"latency_us": {_optional(link.latency_us, "null")}, '
        f'"all_to_all_us": {_optional(link.all_to_all_us, "null")}}}'
    )


def mesh_json(mesh_id: str, mesh: Mesh) -> str:
    links = ", ".join(_link_json(t, link) for t, link in _overridden(mesh))
    rank_map = (
        "null"
        if _identity_rank_map(mesh)
        else "[" + ", ".join(map(str, mesh.rank_map)) + "]"
    )
    return (
        f'{{"mesh_id": {json_string(mesh_id)}, '
        f'"shape": [{", ".join(map(str, mesh.shape))}], '
        f'"dim_names": {_names_json(mesh.dim_names)}, '
        f'"flattened": [{", ".join(_names_json(g) for g in mesh.flattened)}], '
        f'"links": [{links}], '
        f'"copy_gbps": {_optional(mesh.copy_gbps, "null")}, '
        f'"base_us": {_optional(mesh.base_us, "null")}, '
        f'"reduce_gbps": {_optional(mesh.reduce_gbps, "null")}, '
        f'"rank_map": {rank_map}}}'
    )


def run_mesh(flags: GlobalFlags, argv: Sequence[str], out: TextIO) -> None:
    verb = argv[0] if argv else ""
    if verb not in ("register", "list", "get", "delete"):
        raise invalid_argument(
            "mesh: expected register, list, get or delete"
            + (f', not "{verb}"' if verb else "")
        )
    rest = list(argv[1:])
    mesh_id = None
    if verb in ("get", "delete") and rest and not rest[0].startswith("--"):
        mesh_id = rest.pop(0)
    args = (
        Args(rest, set(MESH_FLAGS), set())
        if verb == "register"
        else Args(rest, set(), {"json"})
    )
    if verb in ("get", "delete") and mesh_id is None:
        raise invalid_argument(f"mesh {verb}: MESH_ID is required")
    with connect(flags) as client:
        if verb == "register":
            out.write(client.register_mesh(mesh_from_flags(args)) + "\n")
        elif verb == "list":
            meshes = client.list_meshes()
            if args.has("json"):
                items = ", ".join(mesh_json(i, m) for i, m in meshes)
                out.write(f'{{"meshes": [{items}]}}\n')
            else:
                out.writelines(mesh_line(i, m) + "\n" for i, m in meshes)
        elif verb == "get":
            assert mesh_id is not None
            mesh = client.get_mesh(mesh_id)
            line = mesh_json if args.has("json") else mesh_line
            out.write(line(mesh_id, mesh) + "\n")
        else:
            assert mesh_id is not None
            client.delete_mesh(mesh_id)
            deleted = f'{{"deleted": {json_string(mesh_id)}}}'
            out.write((deleted if args.has("json") else f"deleted {mesh_id}") + "\n")
