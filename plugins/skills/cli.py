"""``zagent skills list|show|match|curate|archive|activate|sweep|history``.

The folder is ``--folder``, else ``kernel.config["skills"]["folder"]``, else
``$ZAGENT_SKILLS_DIR``, else ``~/.local/share/zagent/skills``. ``curate`` asks
``--model`` (default: ``ZAGENT_MODEL``) to judge each run. Handlers return the
exit status: 0 ok, 1 not found or failed. Only ``curate`` creates a missing folder.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import argparse

    from zagent import Kernel
    from zagent.plugins.cli import CommandGroup


def add_commands(cli: "CommandGroup") -> None:
    group = cli.group("skills", help="list, match, curate and archive learned skills")
    p = group.command("list", cmd_list, help="list skills with state, version and usage")
    _folder(p)
    p.add_argument("--all", action="store_true", help="include archived skills")
    p.add_argument("--json", action="store_true", help="print JSON")
    p = group.command("show", cmd_show, help="print one skill's file and figures")
    _folder(p)
    p.add_argument("name")
    p = group.command("match", cmd_match, help="which skill fits a request, with scores")
    _folder(p)
    p.add_argument("text")
    p = group.command("curate", cmd_curate, help="learn skills from a trajectory file or folder (*.jsonl)")
    _folder(p)
    p.add_argument("trajectories", metavar="TRAJECTORY_DIR")
    p.add_argument("--model", "-m", default=None, help="'provider:model' judging the runs")
    for name, func, text in (("archive", cmd_archive, "archive a skill (kept, never matched)"),
                             ("activate", cmd_activate, "make a skill active again"),
                             ("history", cmd_history, "a skill's lifecycle transitions")):
        p = group.command(name, func, help=text)
        _folder(p)
        p.add_argument("name")
    p = group.command("sweep", cmd_sweep, help="apply the lifecycle rules now (stale, archived)")
    _folder(p)


def _folder(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--folder", default=None, help="skills folder (default: $ZAGENT_SKILLS_DIR or "
                                                       "~/.local/share/zagent/skills)")


def _skills(args: argparse.Namespace, kernel: "Kernel", *, create: bool = False) -> Any:
    """The folder's ``Skills``; only ``curate`` creates a missing folder (and its index)."""
    import os

    from .runtime import Skills, default_folder

    options: dict[str, Any] = {"folder": args.folder} if args.folder else {}
    folder = args.folder or (kernel.config.get("skills") or {}).get("folder") or default_folder()
    if not create and not os.path.isdir(folder):
        options["index"] = False
    return Skills.open(kernel, **options)


def _get(skills: Any, name: str) -> Any:
    skill = skills.registry.get(name)
    if skill is None:
        print(f"zagent skills: no skill named {name!r} in {skills.registry.folder}", file=sys.stderr)
    return skill


def cmd_list(args: argparse.Namespace, kernel: "Kernel") -> int:
    import msgspec

    skills = _skills(args, kernel)
    try:
        found = [s for s in skills.registry.list() if args.all or s.state != "archived"]
        if args.json:
            print(msgspec.json.encode([{**msgspec.to_builtins(s), "success_rate": s.success_rate}
                                       for s in found]).decode())
            return 0
        if not found:
            print(f"(no skills in {skills.registry.folder})")
        for s in found:
            rate = "-" if s.success_rate is None else f"{s.success_rate:.0%}"
            print(f"{s.name}\tv{s.version}\t{s.state}\tused {s.usage_count}\tsuccess {rate}\t{s.description}")
    finally:
        skills.close()
    return 0


def cmd_show(args: argparse.Namespace, kernel: "Kernel") -> int:
    from . import markdown

    skills = _skills(args, kernel)
    try:
        skill = _get(skills, args.name)
        if skill is None:
            return 1
        print(markdown.render(skill), end="")
        rate = "-" if skill.success_rate is None else f"{skill.success_rate:.0%}"
        print(f"\n# state: {skill.state}  used: {skill.usage_count}  success: {rate}  source: {skill.source}"
              f"{'  (edited by a person)' if skill.edited_by_human else ''}")
    finally:
        skills.close()
    return 0


def cmd_match(args: argparse.Namespace, kernel: "Kernel") -> int:
    skills = _skills(args, kernel)
    try:
        best = skills.match(args.text)
        for m in skills.matcher.rank(args.text)[:5]:
            print(f"{m.score:.3f}\t{m.method}\t{m.name}")
        print(f"best: {best.name}" if best else f"no skill above the threshold ({skills.matcher.threshold})")
    finally:
        skills.close()
    return 0 if best else 1


def cmd_curate(args: argparse.Namespace, kernel: "Kernel") -> int:
    skills = _skills(args, kernel, create=True)
    try:
        results = skills.curator(llm=args.model).curate_folder(args.trajectories)
        for r in results:
            target = f" -> {r.skill} v{r.version}" if r.skill else ""
            print(f"{r.trajectory}\t{r.action}{target}\t{r.reason}".rstrip())
        made = sum(r.action != "skipped" for r in results)
        print(f"{len(results)} run(s): {made} skill(s) created or improved", file=sys.stderr)
    finally:
        skills.close()
    return 0


def _transition(args: argparse.Namespace, kernel: "Kernel", state: str) -> int:
    skills = _skills(args, kernel)
    try:
        if _get(skills, args.name) is None:
            return 1
        getattr(skills.lifecycle, "archive" if state == "archived" else "activate")(args.name)
        print(f"{args.name}: {state}")
    finally:
        skills.close()
    return 0


def cmd_archive(args: argparse.Namespace, kernel: "Kernel") -> int:
    return _transition(args, kernel, "archived")


def cmd_activate(args: argparse.Namespace, kernel: "Kernel") -> int:
    return _transition(args, kernel, "active")


def cmd_sweep(args: argparse.Namespace, kernel: "Kernel") -> int:
    skills = _skills(args, kernel)
    try:
        for t in skills.lifecycle.sweep():
            print(f"{t.skill}: {t.from_state} -> {t.to_state} ({t.reason})")
    finally:
        skills.close()
    return 0


def cmd_history(args: argparse.Namespace, kernel: "Kernel") -> int:
    import datetime

    skills = _skills(args, kernel)
    try:
        for t in skills.registry.history(args.name):
            when = datetime.datetime.fromtimestamp(t.at, datetime.timezone.utc).isoformat(timespec="seconds")
            print(f"{when}\t{t.from_state} -> {t.to_state}\t{t.reason}")
    finally:
        skills.close()
    return 0
