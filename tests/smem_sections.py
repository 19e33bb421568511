"""Shared-memory sections of our own in the spec's form (the spec's facts, our words), for the
tests: a Markdown rendering and the plain-text one a browser gives (cells run together)."""

from __future__ import annotations

# ruff: noqa: E501  (table rows as the renderings write them, one row a line)

ATOMS = """Table 38 Swizzle modes, majorness and the swizzle-atom layout

| Swizzling mode | Major-ness | Swizzle atom layout (128b element) |
| --- | --- | --- |
| 128B Swizzling Mode | M/N | 8x8 |
| K | 8x8 |
| 64B Swizzling Mode | M/N | 4x8 |
| K | 8x4 |
| 32B Swizzling Mode | M/N | 2x8 |
| K | 8x2 |
| None | M/N | 1x8 |
| K | 8x1 |
"""

CANONICAL = """9.7.15.5.1.2.1.3. Canonical Layouts

| Major- ness | Swizzling mode | Canonical Layout without swizzling | Swizzling |
| --- | --- | --- | --- |
| MN- major | No-swizzling or Interleaved | ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)) | Swizzle<0, 4, 3> |
| 32B Swizzling | ((T,2,m),(8,k)):((1,T,LBO),(2T,SBO)) | Swizzle<1, 4, 3> |
| 64B Swizzling | ((T,4,m),(8,k)):((1,T,LBO),(4T,SBO)) | Swizzle<2, 4, 3> |
| 128B Swizzling | ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO)) | Swizzle<3, 4, 3> |
| K- major | No-swizzling or Interleaved | ((8,m),(T,2k)):((1T,SBO),(1,LBO)) | Swizzle<0, 4, 3> |
| 32B Swizzling | ((8,m),(T,2k)):((2T,SBO),(1,T)) | Swizzle<1, 4, 3> |
| 64B Swizzling | ((8,m),(T,2k)):((4T,SBO),(1,T)) | Swizzle<2, 4, 3> |
| 128B Swizzling | ((8,m),(T,2k)):((8T,SBO),(1,T)) | Swizzle<3, 4, 3> |
"""


def example(title: str, exact: str, canonical: str, params: list[tuple[str, str]]) -> str:
    rows = "\n".join(f"  | {k} | {v} |" for k, v in params)
    return (f"* {title}:\n\n  Exact layout : {exact}\n\n  Canonical Layout :{canonical}\n\n"
            f"  | Parameters | Value |\n  | --- | --- |\n{rows}\n")


K_NONE_TF32 = example(
    "K-Major, no-swizzling and tf32 type", "Swizzle<0,4,3> o ((8,2),(4,4)):((4,32),(1,64))",
    "Swizzle<0,4,3> o ((8,m),(T,2k)):((1T,SBO),(1,LBO))",
    [("T", "4"), ("m", "2"), ("k", "2"), ("LBO", "64\\*sizeof(tf32)"),
     ("SBO", "32\\*sizeof(tf32)"), ("Encoding of LBO in descriptor", "(LBO) >> 4 = 16"),
     ("Encoding of SBO in descriptor", "(SBO) >> 4 = 8")])
# the spec's K-major 32B example: k = 2 makes the K mode 16 tf32 wide in an 8-wide row
K_32B_TF32 = example(
    "K-Major, 32B swizzling and tf32 type", "Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))",
    "Swizzle<1,4,3> o ((8,m),(T,2k)):((2T,SBO),(1,T))",
    [("T", "4"), ("m", "2"), ("k", "2"), ("LBO", "NA"), ("SBO", "64\\*sizeof(tf32)"),
     ("Encoding of LBO in descriptor", "1 (assumed)"),
     ("Encoding of SBO in descriptor", "(SBO) >> 4 = 16")])
MN_64B_BF16 = example(
    "MN-Major, 64B swizzling and bf16 type",
    "Swizzle<2,4,3> o ((8,4,2),(8,2)):((1,8,256),(32,512))",
    "Swizzle<2,4,3> o ((T,4,m),(8,k)):((1,T,LBO),(4T,SBO))",
    [("T", "8"), ("m", "2"), ("k", "2"), ("LBO", "256\\*sizeof(bf16)"),
     ("SBO", "512\\*sizeof(bf16)"), ("Encoding of LBO in descriptor", "(LBO) >> 4 = 32"),
     ("Encoding of SBO in descriptor", "(SBO) >> 4 = 64")])

DEFINITIONS = """9.7.15.5.1.2.1.1. Leading Dimension Byte Offset

| Major-ness | Definition |
| --- | --- |
| K-Major | * No-Swizzling: the step from the first column to the second column of the 8x2 tile. * Swizzled layouts: not used, 1 is assumed. |
| MN-Major | * Interleave: the step from the first 8 columns to the next 8 columns. * Swizzled layouts: the step from the first (swizzle-byte-size/16) rows to the next ones. |

9.7.15.5.1.2.1.2. Stride Dimension Byte Offset

| Major-ness | Definition |
| --- | --- |
| K-Major | The step from the first 8 rows to the next 8 rows. |
| MN-Major | * Interleave: the step from the first row to the next row. * Swizzled layout: the step from the first 8 columns to the next 8 columns |
"""

WGMMA_DESCRIPTOR = """9.7.15.5.1.2.2. Matrix Descriptor Format

| Bit-field | Size in bits | Description |
| --- | --- | --- |
| 13–0 | 14 | encoded start address |
| 29–16 | 14 | encoded leading dimension byte offset |
| 45–32 | 14 | encoded stride dimension byte offset |
| 51–49 | 3 | base offset |
| 63–62 | 2 | swizzle mode |
"""

TCGEN05_DESCRIPTOR = """9.7.16.4.1. Shared memory descriptor

Table 40 Shared memory descriptor layout

| Bit-field | Size in bits | Description |
| --- | --- | --- |
| 0-13 | 14 | encoded start address |
| 16-29 | 14 | encoded leading dimension offset or address |
| 32-45 | 14 | encoded stride dimension byte offset |
| 46-48 | 3 | Fixed constant value of 0b001 |
| 49-51 | 3 | base offset |
| 52 | 1 | leading dimension stride mode |
| 53-60 | 8 | Fixed constant value of 0xb00000000 |
| 61-63 | 3 | swizzle mode |
"""

WGMMA = (ATOMS + "\n" + DEFINITIONS + "\n" + CANONICAL + "\nExamples\n\n" + K_NONE_TF32 + K_32B_TF32 + MN_64B_BF16
         + "\n" + WGMMA_DESCRIPTOR)


def plain(markdown: str) -> str:
    """The browser's text of a Markdown rendering: no pipes, no escapes, no bullets, no rule
    rows, cells separated by blanks."""
    out = []
    for line in markdown.splitlines():
        s = line.strip()
        if s.startswith("| ---") or s.startswith("| Parameters"):
            continue
        s = s.lstrip("* ")
        if s.startswith("|"):
            s = " ".join(c.strip() for c in s.strip("|").split("|"))
        out.append(s.replace("\\*", "*"))
    return "\n".join(out) + "\n"


def line_of(text: str, needle: str) -> int:
    """The 1-based line of the first line containing ``needle``."""
    for n, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return n
    raise ValueError(needle)

# tcgen05's own sections (9.7.16.10.6's atom table, 9.7.16.3's canonical layouts): the atom
# table has the 32-byte-atomicity row and a row of dashes, the examples' LBO rows say which LBO
# mode they use, and the anchors name tcgen05
TCGEN05_ATOMS = """Table 53 Layout for swizzle atoms

| Swizzling mode and Swizzle-Atomicity | Leading Dimension | Swizzle atom layout (128b element) |
| --- | --- | --- |
| 128B Swizzling with 32B atomicity | M/N | 8x4 |
| – | – |
| 128B Swizzling with 16B atomicity | M/N | 8x8 |
| K | 8x8 |
| 64B Swizzling Mode | M/N | 4x8 |
| K | 8x4 |
| 32B Swizzling Mode | M/N | 2x8 |
| K | 8x2 |
| None | M/N | 1x8 |
| K | 8x1 |
"""

TCGEN05_K_NONE_TF32 = example(
    "K-Major, no-swizzling and tf32 type: [Figure 188](#tcgen05-k-no-swizzle-tf32)",
    "Swizzle<0,4,3> o ((8,2),(4,4)):((4,32),(1,64))",
    "Swizzle<0,4,3> o ((8,m),(T,2k)):((1T,SBO),(1,LBO))",
    [("T", "4"), ("m", "2"), ("k", "2"), ("LBO (relative offset)", "64\\*sizeof(tf32)"),
     ("SBO", "32\\*sizeof(tf32)"), ("Encoding of LBO in descriptor", "(LBO) >> 4 = 16"),
     ("Encoding of SBO in descriptor", "(SBO) >> 4 = 8")]).replace(
         ": [Figure 188](#tcgen05-k-no-swizzle-tf32):", ": [Figure 188](#tcgen05-k-no-swizzle-tf32)")

TCGEN05 = (TCGEN05_ATOMS + "\n" + CANONICAL.replace("9.7.15.5.1.2.1.3.", "9.7.16.3.3.")
           + "\nExamples\n\n" + TCGEN05_K_NONE_TF32)
