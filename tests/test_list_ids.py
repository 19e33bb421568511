"""``ptxlayout list`` lists every id ``show`` takes: the catalog's layouts, its shared-memory
layouts (wgmma.smem, tcgen05.smem), tcgen05's data paths, and every other id the proof report
names (block-scale factors, sparse metadata, packing formats, the shared-memory examples,
canonical forms and descriptor tables); ``--family`` keeps one family (or, with a shorter
name, every family under it: ``tcgen05``).  A test walks the list and shows one id of each
family; another checks the list against the ids of ``prove --format json``."""

from __future__ import annotations

from .inproc import run


def test_list_names_every_family_and_show_takes_one_id_of_each() -> None:
    from formal.api import listed_ids, model_of, results_beyond_fragments
    rows = listed_ids(model_of([]).layouts, True, beyond=results_beyond_fragments())
    families = {f for f, _ in rows}
    assert {"mma", "mma.sp", "ldmatrix", "stmatrix", "movmatrix", "wgmma", "wgmma.sp",
            "tcgen05.ld", "tcgen05.st", "wgmma.smem", "tcgen05.smem",
            "tcgen05.datapath", "tcgen05.packing", "mma.block_scale", "tcgen05.block_scale",
            "tcgen05.sp_meta"} <= families
    code, out, _ = run("list")
    assert code == 0 and out.splitlines() == [i for _f, i in rows]
    assert len(set(out.splitlines())) == len(rows)  # no id twice
    for fam in sorted(families):
        first = next(i for f, i in rows if f == fam)
        code, shown, err = run("show", first)
        assert (code, err) == (0, ""), (first, err)
        assert shown.strip(), first
    # the tcgen05.smem ids the list names were missing before
    assert "catalog:tcgen05.smem.K-major.128B.b16" in out.splitlines()
    assert "catalog:tcgen05.datapath.E" in out.splitlines()


def test_list_family_filters_and_an_unknown_family_is_exit_2() -> None:
    code, out, _ = run("list", "--family", "wgmma.smem")
    ids = out.splitlines()
    # 20 layouts at each width, 8 canonical forms, 2 examples, the descriptor table and the
    # K slices of 8 types
    assert code == 0 and all(i.startswith("catalog:wgmma.smem.") for i in ids)
    assert (len(ids), sum(".canonical." in i for i in ids), sum(".example." in i for i in ids),
            ids.count("catalog:wgmma.smem.descriptor"), sum(".k-slice." in i for i in ids)) \
        == (39, 8, 2, 1, 8)
    code, out, _ = run("list", "--family", "tcgen05")
    prefixes = {i.split(".")[1] for i in out.splitlines()}
    assert code == 0 and {"ld", "st", "smem", "datapath", "packing", "block_scale",
                          "sp_meta"} <= prefixes
    code, out, _ = run("list", "--family", "wgmma")  # wgmma, wgmma.sp and wgmma.smem
    assert code == 0 and {i.split(".")[1] for i in out.splitlines()} >= {"sp", "smem"}
    code, out, _ = run("list", "--family", "tcgen05", "datapath.B")
    assert (code, out) == (0, "catalog:tcgen05.datapath.B\n")
    code, out, err = run("list", "--family", "wgmma.sme")
    assert (code, out) == (2, "")
    assert err == ("ptxlayout: no layout of family 'wgmma.sme'; did you mean wgmma.smem or "
                   "wgmma.sp or wgmma?\n")


def test_list_query_finds_shared_memory_and_data_path_ids() -> None:
    code, out, _ = run("list", "K-major.128B.b16")
    assert (code, out.splitlines()) == (0, ["catalog:wgmma.smem.K-major.128B.b16",
                                            "catalog:tcgen05.smem.K-major.128B.b16"])
    code, out, _ = run("list", "datapath.E")
    assert (code, out) == (0, "catalog:tcgen05.datapath.E\n")
