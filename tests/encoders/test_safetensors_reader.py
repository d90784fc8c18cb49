"""The plain-read safetensors reader gives what the safetensors package reads, and names a damaged
file."""
import numpy as np
import pytest
from safetensors import safe_open
from safetensors.numpy import save_file

from tfdialemb.encoders.huggingface import SafetensorsError, read_safetensors


@pytest.fixture
def tensors_file(tmp_path):
    rng = np.random.default_rng(3)
    path = str(tmp_path / "model.safetensors")
    save_file({"a.weight": rng.normal(size=(3, 5)).astype(np.float32),
               "b.half": rng.normal(size=(7,)).astype(np.float16),
               "c.ids": np.arange(12, dtype=np.int64).reshape(2, 2, 3),
               "d.scalar": np.array(2.5, np.float32)}, path, metadata={"format": "pt"})
    return path


def test_reads_what_the_safetensors_package_reads(tensors_file):
    tensors = read_safetensors(tensors_file)
    with safe_open(tensors_file, framework="numpy") as reference:
        assert sorted(tensors) == sorted(reference.keys())
        for name in reference.keys():
            expected = reference.get_tensor(name)
            assert tensors[name].dtype == expected.dtype and tensors[name].shape == expected.shape
            np.testing.assert_array_equal(tensors[name], expected)
        assert tensors.metadata == reference.metadata() == {"format": "pt"}
    assert "a.weight" in tensors and "missing" not in tensors and len(tensors) == 4
    with pytest.raises(KeyError):
        tensors["missing"]  # pylint: disable=pointless-statement


def test_a_cut_file_and_a_non_file_are_named(tensors_file, tmp_path):
    with open(tensors_file, "rb") as f:
        data = f.read()
    header_end = 8 + int.from_bytes(data[:8], "little")
    cut = tmp_path / "cut.safetensors"
    cut.write_bytes(data[:header_end])  # the header whole, no tensor data
    with pytest.raises(SafetensorsError, match=f"cut short: its header places tensors up to byte {len(data)}, "
                                               f"and the file has {header_end} bytes"):
        read_safetensors(str(cut))
    junk = tmp_path / "junk.safetensors"
    junk.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00not json at all!")
    with pytest.raises(SafetensorsError, match="not a safetensors file"):
        read_safetensors(str(junk))


def test_a_git_lfs_pointer_and_bad_offsets_are_named(tmp_path):
    pointer = tmp_path / "pointer.safetensors"
    pointer.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:0123\nsize 90868376\n")
    with pytest.raises(SafetensorsError, match="not a safetensors file.*does not fit the file"):
        read_safetensors(str(pointer))
    header = b'{"a": {"dtype": "F32", "shape": [1], "data_offsets": [-4, 0]}}'
    negative = tmp_path / "negative.safetensors"
    negative.write_bytes(len(header).to_bytes(8, "little") + header + b"\x00" * 4)
    with pytest.raises(SafetensorsError, match="data offsets -4..0"):
        read_safetensors(str(negative))
