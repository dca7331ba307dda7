"""Draw the extension's icon (icon.png, 256×256): a white M on an indigo tile whose inner
strokes are a teal check mark. Needs Pillow: `python scripts/icon.py` from client-vscode/.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw

SIZE = 256
S = 4  # drawn at 4× and scaled down: smooth edges
TOP, BOTTOM = (40, 30, 120), (104, 60, 210)
WHITE, TEAL = (255, 255, 255), (64, 222, 176)


def icon() -> Image.Image:
    n = SIZE * S
    grad = Image.new("RGB", (n, n))
    px = grad.load()
    assert px is not None
    for y in range(n):
        t = y / (n - 1)
        row = tuple(round(a + (b - a) * t) for a, b in zip(TOP, BOTTOM, strict=True))
        for x in range(n):
            px[x, y] = row
    mask = Image.new("L", (n, n), 0)
    ImageDraw.Draw(mask).rounded_rectangle((0, 0, n - 1, n - 1), radius=48 * S, fill=255)
    img = Image.new("RGBA", (n, n), (0, 0, 0, 0))
    img.paste(grad, (0, 0), mask)

    d = ImageDraw.Draw(img)
    w = 30 * S

    def stroke(points: list[tuple[int, int]], colour: tuple[int, int, int]) -> None:
        pts = [(x * S, y * S) for x, y in points]
        d.line(pts, fill=colour, width=w, joint="curve")
        for x, y in pts:
            r = w // 2
            d.ellipse((x - r, y - r, x + r, y + r), fill=colour)

    stroke([(62, 194), (62, 70)], WHITE)
    stroke([(194, 70), (194, 194)], WHITE)
    stroke([(62, 70), (112, 150)], TEAL)  # the check's short leg
    stroke([(112, 150), (194, 70)], TEAL)  # its long leg
    return img.resize((SIZE, SIZE), Image.Resampling.LANCZOS)


if __name__ == "__main__":
    out = Path(__file__).resolve().parents[1] / "icon.png"
    icon().save(out, optimize=True)
    print(out)
