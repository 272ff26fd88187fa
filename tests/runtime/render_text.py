# SPDX-License-Identifier: MIT
"""render_text.py KIND N SEED OUT.npy: text rendered with PIL in the Liberation fonts
(fonts-liberation), as PaddleOCR's models take it, for calibrating and judging them.

  lines   N lines of 48 x 320, a word or two and maybe a number each, black on white:
          the recogniser's input ((x / 255 - 0.5) / 0.5); their text in OUT.npy.txt
  flipped N lines of 48 x 192, every other one turned upside down: the orientation
          classifier's input, the true class (1: turned) per line in OUT.npy.txt
  pages   N pages of 640 x 640 with lines of text at random places and sizes: the
          detector's input (ImageNet's mean and deviation)
"""
import sys

import numpy as np
from PIL import Image, ImageDraw, ImageFont

FONTS = [f"/usr/share/fonts/truetype/liberation/Liberation{f}.ttf"
         for f in ("Sans-Regular", "Serif-Regular", "Mono-Regular", "Sans-Bold", "Serif-Italic")]
WORDS = ("invoice total amount date paid receipt order number customer account balance due "
         "street city Berlin Paris London the quick brown fox jumps over lazy dog device "
         "memory kernel schedule open close price tax net gross").split()


def phrase(rng):
    t = " ".join(rng.choice(WORDS, int(rng.integers(1, 3))))
    return t + (" " + str(int(rng.integers(0, 10000))) if rng.random() < 0.5 else "")


def font(rng, lo, hi):
    return ImageFont.truetype(FONTS[int(rng.integers(len(FONTS)))], int(rng.integers(lo, hi)))


def line(rng, w, text):
    img = Image.new("RGB", (w, 48), (255, 255, 255))
    ImageDraw.Draw(img).text((int(rng.integers(2, 12)), int(rng.integers(4, 10))), text,
                             fill=(0, 0, 0), font=font(rng, 24, 32))
    return img


def page(rng):
    img = Image.new("RGB", (640, 640), (255, 255, 255))
    d = ImageDraw.Draw(img)
    y = int(rng.integers(10, 40))
    while y < 590:
        size = int(rng.integers(18, 40))
        d.text((int(rng.integers(10, 200)), y), phrase(rng), fill=(0, 0, 0),
               font=font(rng, size, size + 1))
        y += size + int(rng.integers(10, 40))
    return img


def main():
    kind, n, seed, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    rng = np.random.default_rng(seed)
    imgs, labels = [], []
    for i in range(n):
        if kind == "lines":
            labels.append(phrase(rng))
            imgs.append(line(rng, 320, labels[-1]))
        elif kind == "flipped":
            img = line(rng, 192, phrase(rng))
            labels.append(str(i % 2))
            imgs.append(img.rotate(180) if i % 2 else img)
        elif kind == "pages":
            imgs.append(page(rng))
        else:
            sys.exit(f"render_text.py: no kind '{kind}' (lines, flipped, pages)")
    x = np.stack([np.asarray(im, np.float32) / 255 for im in imgs])
    if kind == "pages":
        x = (x - [0.485, 0.456, 0.406]) / [0.229, 0.224, 0.225]
    else:
        x = (x - 0.5) / 0.5
    np.save(out, x.transpose(0, 3, 1, 2).astype(np.float32))
    if labels:
        with open(out + ".txt", "w", encoding="utf-8") as f:
            f.write("\n".join(labels) + "\n")


main()
