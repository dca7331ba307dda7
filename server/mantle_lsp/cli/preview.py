"""``mantle-lsp preview SKILL.md [--memory STATE.yml] [--format text|json]``: the skill's
instruction text as the engine puts it in the system prompt for a memory state
(ide/preview.py; docs/features/preview.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..model import layout
from ..model.project import Project

if TYPE_CHECKING:
    from ..ide.preview import Preview

EXIT_OK, EXIT_USAGE = 0, 2


def add_parser(sub: Any) -> None:
    """Register the ``preview`` subcommand on ``sub`` (argparse subparsers)."""
    p = sub.add_parser(
        "preview",
        help="print a skill's instruction text as the engine puts it in the prompt",
        description="Print the instruction text of a skill as rasa-pro puts it in the "
        "system prompt for a memory state: `if:` paragraphs kept or dropped, @memory "
        "tokens replaced by their values. STATE.yml maps namespaces to entries "
        "(`card_replace: {reason: lost}`, `project: {...}`); anything absent is None.",
    )
    p.add_argument("skill", metavar="SKILL_MD", help="the skill's skill.md (or its folder)")
    p.add_argument("--memory", metavar="STATE.yml", help="the memory state (YAML or JSON)")
    p.add_argument("--format", choices=("text", "json"), default="text")


def render_text(pv: Preview) -> str:
    return pv.text + "\n" if pv.text else ""


def cmd_preview(args: argparse.Namespace) -> int:
    from ..ide.preview import parse_state, preview_skill  # only this command

    path = Path(args.skill)
    if not path.exists():
        return _error(f"{args.skill}: no such file or directory")
    path = path.resolve()
    folder = path if path.is_dir() else path.parent
    root = layout.find_project_for(folder / "skill.md")
    if root is None or folder.parent.name != "skills":
        print(
            f"mantle-lsp: error: {args.skill} is not a skill of a Mantle project", file=sys.stderr
        )
        return EXIT_USAGE
    state: dict[str, dict[str, object]] = {}
    if args.memory:
        try:
            state = parse_state(Path(args.memory).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return _error(f"{args.memory}: no such file or directory")
        except IsADirectoryError:
            return _error(f"{args.memory}: a folder, not a state file")
        except UnicodeDecodeError:
            return _error(f"{args.memory}: not UTF-8 text")
        except OSError as exc:
            return _error(f"{args.memory}: cannot read it ({exc.strerror or exc})")
        except ValueError as exc:
            return _error(f"{args.memory}: {exc}")
    pv = preview_skill(Project.load(root), folder.name, state)
    if pv is None:
        print(f"mantle-lsp: error: no skill.md in {folder}", file=sys.stderr)
        return EXIT_USAGE
    if args.format == "json":
        sys.stdout.write(json.dumps(pv.to_json(), indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_text(pv))
    return EXIT_OK


def _error(message: str) -> int:
    print(f"mantle-lsp: error: {message}", file=sys.stderr)
    return EXIT_USAGE
