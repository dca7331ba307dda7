"""``mantle-lsp preview SKILL.md [--memory STATE.yml] [--scenario SCENARIO.yml]
[--step ID [--block ID]] [--format text|json]``: the skill's instruction text (or one
ordered-block step's) as the engine puts it in the system prompt for a memory state
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
        "(`card_replace: {reason: lost}`, `project: {...}`); anything absent is None. "
        "--scenario starts from an eval scenario's setup.initial_slots instead (over "
        "--memory). "
        "With --step, the instructions of that ordered-block step, which the engine shows "
        "instead of the prose while the step is active. --format json adds the text's "
        "size: characters and an estimated token count (characters / 4, not a tokenizer).",
    )
    p.add_argument("skill", metavar="SKILL_MD", help="the skill's skill.md (or its folder)")
    p.add_argument("--memory", metavar="STATE.yml", help="the memory state (YAML or JSON)")
    p.add_argument(
        "--scenario",
        metavar="SCENARIO.yml",
        help="start from this scenario's setup.initial_slots (over --memory)",
    )
    p.add_argument(
        "--step",
        metavar="ID",
        help="preview this ordered-block step's instructions instead of the prose",
    )
    p.add_argument(
        "--block",
        metavar="ID",
        help="the block of --step (needed when the step id is in several blocks)",
    )
    p.add_argument("--format", choices=("text", "json"), default="text")


def render_text(pv: Preview) -> str:
    return pv.text + "\n" if pv.text else ""


def cmd_preview(args: argparse.Namespace) -> int:
    from ..ide.preview import StepNotFound, parse_state, preview_skill  # only this command

    if args.block is not None and args.step is None:
        return _error("--block needs --step (the step of that block to preview)")
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
    project = Project.load(root)
    if args.scenario:
        failed = _scenario(project, args.scenario, state)
        if failed is not None:
            return failed
    try:
        pv = preview_skill(project, folder.name, state, args.step, args.block)
    except StepNotFound as exc:
        return _error(str(exc))
    if pv is None:
        print(f"mantle-lsp: error: no skill.md in {folder}", file=sys.stderr)
        return EXIT_USAGE
    if pv.step is not None and pv.step.kind != "instructions":
        kind = pv.step.kind or "malformed"
        kind = ("an " if kind[0] in "aeiou" else "a ") + f"`{kind}`"
        print(
            f"mantle-lsp: note: step `{pv.step.id}` of block `{pv.step.block}` is {kind} "
            "step: it has no instructions, so the engine shows none while it is active",
            file=sys.stderr,
        )
    if args.format == "json":
        sys.stdout.write(json.dumps(pv.to_json(), indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_text(pv))
    return EXIT_OK


def _scenario(project: Project, name: str, state: dict[str, dict[str, object]]) -> int | None:
    """Lay the scenario's initial slots over ``state`` (None), or say why not (2)."""
    from ..ide.preview import scenario_state

    try:
        text = Path(name).read_text(encoding="utf-8")
    except FileNotFoundError:
        return _error(f"{name}: no such file or directory")
    except IsADirectoryError:
        return _error(f"{name}: a folder, not a scenario file")
    except UnicodeDecodeError:
        return _error(f"{name}: not UTF-8 text")
    except OSError as exc:
        return _error(f"{name}: cannot read it ({exc.strerror or exc})")
    try:
        slots, ignored = scenario_state(project, text.replace("\r\n", "\n"))
    except ValueError as exc:
        return _error(f"{name}: {exc}")
    for ns, entries in slots.items():
        state.setdefault(ns, {}).update(entries)
    if ignored:
        shown = ", ".join(f"`{k}`" for k in ignored)
        print(
            f"mantle-lsp: note: {name}: initial slots that set no memory field, left out: {shown}",
            file=sys.stderr,
        )
    return None


def _error(message: str) -> int:
    print(f"mantle-lsp: error: {message}", file=sys.stderr)
    return EXIT_USAGE
