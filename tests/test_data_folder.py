"""tests/data: every folder says where its traces come from, and the stored-gzipped list is exact."""

from __future__ import annotations

import gzip

import real_traces

DATA = real_traces.DATA
PLAIN_LIMIT = 32 * 1024  # a plain file larger than this is stored gzipped


def test_every_source_folder_has_a_provenance_note() -> None:
    folders = [p for p in DATA.iterdir() if p.is_dir()]
    assert len(folders) >= 6
    for folder in folders:
        note = folder / "PROVENANCE.md"
        assert note.is_file() and len(note.read_text(encoding="utf-8")) > 200, folder.name


def test_the_compressed_list_names_exactly_the_stored_gzipped_files() -> None:
    listed = set(real_traces.compressed_files())
    assert listed
    for relative in listed:
        stored = DATA / (relative + ".gz")
        assert stored.is_file(), relative
        assert not (DATA / relative).exists(), f"{relative} is stored both plain and gzipped"
        with gzip.open(stored) as f:
            assert f.read(1), relative  # a real gzip stream with content
    for file in DATA.rglob("*"):
        relative = file.relative_to(DATA).as_posix()
        if file.is_file() and not file.name.endswith(".gz") and relative not in ("compressed.txt",):
            assert file.stat().st_size <= PLAIN_LIMIT or relative.endswith("PROVENANCE.md"), (
                f"{relative} is large and plain: gzip it and list it in compressed.txt"
            )


def test_the_unpacked_copy_restores_the_original_files() -> None:
    root = real_traces.root()
    assert root != DATA
    for relative in real_traces.compressed_files():
        restored = root / relative
        assert restored.is_file() and not (root / (relative + ".gz")).exists()
        assert restored.read_bytes() == gzip.decompress((DATA / (relative + ".gz")).read_bytes())
    # Originally gzipped traces stay gzipped.
    assert (root / "kineto_resnet50/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz").is_file()
