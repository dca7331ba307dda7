"""The workspace: every project under a set of folders, with open buffers over disk."""

from __future__ import annotations

import os
from pathlib import Path

from . import layout
from .layout import DISK, Layout
from .layout import resolve as resolve
from .project import Project
from .source import Source, read_source, source_from_text


class Workspace:
    """The projects, read through two doors: :meth:`read` (file contents, open buffers
    first) and ``fs`` (what exists: the layout interface; the server's keeps its answers
    until a file event says a path changed, :meth:`disk_changed`)."""

    def __init__(self, fs: Layout = DISK) -> None:
        self.fs = fs
        self.projects: dict[Path, Project] = {}
        self.overlays: dict[Path, Source] = {}
        self._engine: str | None = None

    @property
    def engine_override(self) -> str | None:
        """The engine profile forced by the editor's settings (None: detect per project)."""
        return self._engine

    @engine_override.setter
    def engine_override(self, value: str | None) -> None:
        self._engine = value
        for proj in self.projects.values():
            proj.engine_override = value

    def _load(self, root: Path) -> Project:
        proj = self.load_detached(root)
        self.projects[root] = proj
        return proj

    def load_detached(self, root: Path) -> Project:
        """The project at ``root``, loaded but not taken in (:meth:`adopt` does)."""
        proj = Project(root, self.read, self.fs)
        proj.engine_override = self._engine
        proj.rescan()
        return proj

    # -- reading: open buffers win over disk ------------------------------------------------
    def read(self, path: Path) -> Source:
        src = self.overlays.get(path)
        return src if src is not None else read_source(path)

    # -- projects ---------------------------------------------------------------------------
    def add_folder(self, folder: Path) -> list[Project]:
        folder = resolve(folder)
        added = []
        for root in layout.find_projects(folder, self.fs):
            if root not in self.projects:
                added.append(self._load(root))
        return added

    def adopt(self, proj: Project) -> None:
        """Take over a project loaded elsewhere (a partial one from a spread load, whose
        other files are parsed later by :meth:`settle`)."""
        proj.engine_override = self._engine
        proj.fs = self.fs
        for path, kind in proj.disk_questions.items():  # what its rules were told
            self.fs.remember(path, kind)
        self.projects[proj.root] = proj

    @property
    def has_pending(self) -> bool:
        return any(proj.has_pending for proj in self.projects.values())

    def settle(self, limit: int | None = None) -> bool:
        """Parse up to ``limit`` files still pending in partial projects (all by default);
        True when none remains anywhere."""
        for proj in self.projects.values():
            if proj.has_pending and proj.materialize(limit) and limit is not None:
                return False
        return not self.has_pending

    def project_for(self, path: Path) -> Project | None:
        """The innermost known project whose layout includes ``path``: as written (a file
        in a skill folder that is a symbolic link, as the project lists it), else with
        links resolved."""
        if path.is_absolute():
            found = self._project_for(path)
            if found is not None and path in found.files:
                return found
        return self._project_for(resolve(path))

    def _project_for(self, path: Path) -> Project | None:
        best: Project | None = None
        for root, proj in self.projects.items():
            inside = root == path or root in path.parents
            deeper = best is None or len(root.parts) > len(best.root.parts)
            mantle = layout.classify(path, root) is not None
            if inside and deeper and (mantle or self.fs.is_dir(path)):
                best = proj
        return best

    def ensure_project_for(self, path: Path) -> Project | None:
        proj = self.project_for(path)
        if proj is not None:
            return proj
        root = layout.find_project_for(resolve(path), self.fs)
        if root is None:
            return None
        if root in self.projects:  # loaded already; the path is just not a Mantle file
            return self.projects[root]
        return self._load(root)

    # -- changes ----------------------------------------------------------------------------
    def disk_changed(self, path: Path) -> set[Path]:
        """A file event names ``path``: the layout forgets what it knew of it (and below
        it), before the change itself is taken in (:meth:`file_changed`,
        :meth:`sync_folder`). When a rule of a project had been told something of it
        that is no longer so (``lib/build/rates.py`` exists: ``Project.sees_file``),
        every file of that project may have findings that change: they are returned."""
        differs = self.fs.changed(path)
        out: set[Path] = set()
        if differs:
            for proj in self.projects.values():
                if not differs.isdisjoint(proj.disk_questions):
                    proj.disk_answers_changed()
                    out |= set(proj.files)
        return out

    def was_asked(self, path: str) -> bool:
        """Whether a rule asked the disk about ``path`` or something below it
        (``Project.sees_file``): a watcher that passes over such paths otherwise (a
        ``build/`` folder) reports it. Safe to ask from another thread."""
        below = path.rstrip(os.sep) + os.sep
        for proj in list(self.projects.values()):
            asked = proj.disk_questions
            if path in asked or any(q.startswith(below) for q in list(asked)):
                return True
        return False

    def open_buffer(self, path: Path, text: str, version: int | None) -> set[Path]:
        path = resolve(path)
        self.overlays[path] = source_from_text(path, text, version)
        return self._refresh(path)

    def close_buffer(self, path: Path) -> set[Path]:
        path = resolve(path)
        self.overlays.pop(path, None)
        return self._refresh(path)

    def file_changed(self, path: Path) -> set[Path]:
        """A file changed (or appeared, or vanished) on disk."""
        path = resolve(path)
        if path.name in ("agent.yml", "integrations.yml", "skill.md") and (
            self.project_for(path) is None
        ):
            # may have made a new project appear
            root = layout.find_project_for(path, self.fs)
            if root is not None and root not in self.projects:
                return set(self._load(root).files)
        affected = self._refresh(path)
        for proj, alias in self._aliases(path):
            exists = alias in self.overlays or self.fs.is_file(alias)
            affected |= proj.set_source(alias, self.read(alias) if exists else None)
        return affected

    def _aliases(self, real: Path) -> list[tuple[Project, Path]]:
        """The other paths the projects list the file ``real`` (links resolved) under:
        below a skill folder that is a symbolic link (``skills/up -> ..`` lists the
        project's memory.yml again as ``skills/up/memory.yml``, ``skills/b -> a`` every
        file of skill ``a``), where ``check`` reads it afresh as well."""
        out = []
        for proj in self.projects.values():
            for link, target in layout.linked_skill_dirs(proj.root, self.fs):
                if real != target and target not in real.parents:
                    continue
                alias = link / real.relative_to(target)
                if alias != real and proj.classify(alias) is not None:
                    out.append((proj, alias))
        return out

    def sync_folder(self, proj: Project, folder: Path) -> set[Path]:
        """A folder of ``proj`` changed on disk (created, deleted, moved, replaced by a
        ``git checkout``), whether or not its files were reported one by one: the
        project's files are brought in line with the disk, as a fresh load would see them
        (open buffers still win; a buffer whose file is gone stays). Files below
        ``folder`` are read again. Returns the files whose diagnostics may change."""
        listing = {p for p, _, _ in layout.project_files(proj.root, self.fs)}
        known = set(proj.files)
        changes: dict[Path, Source | None] = {}
        for p in listing:
            if p not in known:
                changes[p] = self.read(p)
            elif p == folder or folder in p.parents:
                src = self.read(p)
                old = proj.files[p].source
                if (src.text, src.analyzable, len(src.issues)) != (
                    old.text,
                    old.analyzable,
                    len(old.issues),
                ):
                    changes[p] = src
        for p in known - listing:
            if p not in self.overlays:
                changes[p] = None
        affected = proj.replace_files(changes)
        if proj.resync_skill_folders():  # an empty skill folder appeared or vanished
            affected |= set(proj.files)
        return affected

    def _refresh(self, path: Path) -> set[Path]:
        proj = self.project_for(path)
        if proj is None:
            return set()
        exists = path in self.overlays or self.fs.is_file(path)
        return proj.set_source(path, self.read(path) if exists else None)
