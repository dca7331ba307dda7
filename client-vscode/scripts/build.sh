#!/usr/bin/env bash
# Build the .vsix: wheel -> bundled server (server/libs) -> grammars -> bundle -> vsce package.
# Run by `make vsix` from the repository root; PYTHON is the interpreter that builds the wheel.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"   # client-vscode
root="$(cd "$here/.." && pwd)"
PYTHON="${PYTHON:-python3}"
cd "$here"
version="$(node -p "require('./package.json').version")"
pyversion="$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/pyproject.toml")"
if [ "$version" != "$pyversion" ]; then
  echo "build.sh: client-vscode/package.json version $version != pyproject.toml version $pyversion" >&2
  exit 1
fi

echo "== wheel"
rm -rf .build server dist syntaxes
mkdir -p .build/wheel server syntaxes
if ! "$PYTHON" -m pip wheel --no-deps --wheel-dir .build/wheel "$root" >.build/wheel.log 2>&1; then
  cat .build/wheel.log >&2
  exit 1
fi
wheel="$(ls .build/wheel/mantle_lsp-*.whl)"
echo "   $wheel"

echo "== bundled server (server/libs)"
# Resolved for the oldest supported Python (3.10) so that backports (exceptiongroup, ...)
# are included; every package is pure Python except PyYAML, whose optional libyaml
# extension is removed below (yaml falls back to its pure-Python SafeLoader), so the
# .vsix works with any CPython >= 3.10 on any platform.
if ! "$PYTHON" -m pip install --target server/libs --no-compile \
  --only-binary=:all: --python-version 3.10 --implementation cp \
  --platform manylinux2014_x86_64 --platform any \
  "$wheel" >.build/libs.log 2>&1; then
  cat .build/libs.log >&2
  exit 1
fi
# pip evaluates environment markers for the running Python, not --python-version: add the
# dependencies that Python 3.10 needs on top (e.g. cattrs -> exceptiongroup).
extra="$("$PYTHON" - server/libs <<'PY'
import pathlib, sys
from pip._vendor.packaging.requirements import Requirement
from pip._vendor.packaging.utils import canonicalize_name
libs = pathlib.Path(sys.argv[1])
have = {canonicalize_name(p.name.split("-")[0]) for p in libs.glob("*.dist-info")}
env = {"python_version": "3.10", "python_full_version": "3.10.0", "extra": ""}
need = set()
for meta in libs.glob("*.dist-info/METADATA"):
    for line in meta.read_text(encoding="utf-8").splitlines():
        if line.startswith("Requires-Dist:"):
            req = Requirement(line.split(":", 1)[1].strip())
            if (req.marker is None or req.marker.evaluate(env)) and canonicalize_name(req.name) not in have:
                need.add(str(req).split(";")[0])
print(" ".join(sorted(need)))
PY
)"
if [ -n "$extra" ]; then
  echo "   for Python 3.10: $extra"
  # shellcheck disable=SC2086
  "$PYTHON" -m pip install --target server/libs --no-compile --no-deps --only-binary=:all: \
    $extra >>.build/libs.log 2>&1 || { cat .build/libs.log >&2; exit 1; }
fi
rm -rf server/libs/bin
find server/libs \( -name '*.so' -o -name '*.pyd' -o -name '*.dylib' \) -print -delete
find server/libs -name '__pycache__' -prune -exec rm -rf {} +
# smoke test: only the bundle and the standard library (-S: no site-packages)
PYTHONPATH="$here/server/libs" "$PYTHON" -S -c '
import yaml, mantle_lsp.lsp.server, mantle_lsp.cli.main
assert not yaml.__with_libyaml__, "libyaml extension left in the bundle"
print("   bundle imports OK: mantle_lsp", mantle_lsp.__version__)
'
PYTHONPATH="$here/server/libs" "$PYTHON" -S -m mantle_lsp.cli.main check "$root/examples/telecom" | tail -1 | sed 's/^/   check examples\/telecom: /'
find server/libs -name '__pycache__' -prune -exec rm -rf {} +

echo "== grammars (from ../grammars)"
shopt -s nullglob
for g in "$root"/grammars/*.tmLanguage.json; do
  cp "$g" syntaxes/
  echo "   $(basename "$g")"
done
node scripts/check-grammars.mjs

echo "== bundle (esbuild)"
node scripts/bundle.mjs

echo "== package (vsce)"
out="mantle-$version.vsix"
rm -f "$out"
# The README's relative links (../docs/screenshots/*.png, ../docs/*.md) point into the
# repository, whose host vsce cannot guess from a URL that is not GitHub's or GitLab's:
# give it the base URLs of this folder in the repository named by package.json.
repo="$(node -p "require('./package.json').repository.url.replace(/^git\+/, '').replace(/\.git\$/, '')")"
npx vsce package --no-dependencies \
  --baseContentUrl "$repo/blob/HEAD/client-vscode" --baseImagesUrl "$repo/raw/HEAD/client-vscode" \
  --out "$out" </dev/null >.build/vsce.log 2>&1 || { cat .build/vsce.log >&2; exit 1; }
grep -v "^$" .build/vsce.log
if grep -qE "^[[:space:]]*WARNING" .build/vsce.log; then
  echo "build.sh: vsce warned (above); a marketplace package has no warnings" >&2
  exit 1
fi
ls -l "$out"
