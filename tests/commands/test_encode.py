"""`python -m tfdialemb.encode` end to end on a tiny checkpoint, and its output layouts."""
import json
import subprocess
import sys

import numpy as np

from tfdialemb.encoders import load_pretrained

SENTENCES = ["hello world", "", "good morning , how are you ?", "book a taxi please", "fine thanks",
             "中文 你好", "the hotel is not helpful"]


def _run(*args):
    return subprocess.run([sys.executable, "-m", "tfdialemb.encode", "--mixed_precision=float32", *args],
                          capture_output=True, text=True, timeout=300)


def test_encode_matches_one_sentence_at_a_time(tmp_path, hf_safetensors_dir):
    source = tmp_path / "in.txt"
    source.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    output = tmp_path / "out" / "emb.npy"
    flagfile = tmp_path / "encode.cfg"
    flagfile.write_text(f"--init_checkpoint={hf_safetensors_dir}\n--batch_size=3\n--pooling=mean\n")
    result = _run(f"--flagfile={flagfile}", f"--input={source}", f"--output={output}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "6/6 sentences" in result.stderr
    embeddings = np.load(output)
    assert embeddings.shape == (6, 32)

    pretrained = load_pretrained(hf_safetensors_dir)
    for row, text in enumerate(t for t in SENTENCES if t):
        single = pretrained.encoder.embed(pretrained.tokenizer([text]), training=False).numpy()[0]
        np.testing.assert_allclose(embeddings[row], single, atol=1e-5)


def test_cls_pooling_differs_from_mean(tmp_path, hf_safetensors_dir):
    source = tmp_path / "in.txt"
    source.write_text("hello world\nfine thanks\n")
    outputs = {}
    for pooling in ("mean", "cls"):
        outputs[pooling] = tmp_path / f"{pooling}.npy"
        result = _run(f"--init_checkpoint={hf_safetensors_dir}", f"--input={source}",
                      f"--output={outputs[pooling]}", f"--pooling={pooling}")
        assert result.returncode == 0, result.stderr[-3000:]
    pretrained = load_pretrained(hf_safetensors_dir)
    inputs = pretrained.tokenizer(["hello world", "fine thanks"])
    cls = pretrained.encoder(inputs)["sequence_output"].numpy()[:, 0]
    np.testing.assert_allclose(np.load(outputs["cls"]), cls, atol=1e-5)
    assert not np.allclose(np.load(outputs["cls"]), np.load(outputs["mean"]))


def test_missing_input_and_bad_checkpoint_exit_2_with_a_message(tmp_path, hf_safetensors_dir):
    result = _run(f"--init_checkpoint={hf_safetensors_dir}", f"--input={tmp_path}/none.txt",
                  f"--output={tmp_path}/o.npy")
    assert result.returncode == 2 and "none.txt: input file does not exist" in result.stderr
    (tmp_path / "in.txt").write_text("hello\n")
    result = _run(f"--init_checkpoint={tmp_path}", f"--input={tmp_path}/in.txt", f"--output={tmp_path}/o.npy")
    assert result.returncode == 2 and "not a checkpoint directory" in result.stderr
    assert not (tmp_path / "o.npy").exists()


def test_text_layouts_read_back_the_same_float32_values(tmp_path):
    from tfdialemb.inference.embedding_files import write_embeddings

    rng = np.random.default_rng(0)
    embeddings = (rng.standard_normal([3, 5]) * 10.0 ** rng.integers(-6, 3, size=[3, 5])).astype(np.float32)
    texts = ["hello", 'a "quoted"\ttext', "中文"]
    write_embeddings(str(tmp_path / "e.tsv"), texts, embeddings)
    write_embeddings(str(tmp_path / "e.jsonl"), texts, embeddings)
    write_embeddings(str(tmp_path / "e.npy"), texts, embeddings)
    tsv = np.array([[float(v) for v in line.split("\t")]
                    for line in (tmp_path / "e.tsv").read_text(encoding="utf-8").splitlines()], np.float32)
    rows = [json.loads(line) for line in (tmp_path / "e.jsonl").read_text(encoding="utf-8").splitlines()]
    np.testing.assert_array_equal(tsv, embeddings)
    np.testing.assert_array_equal(np.array([row["embedding"] for row in rows], np.float32), embeddings)
    assert [row["text"] for row in rows] == texts
    np.testing.assert_array_equal(np.load(tmp_path / "e.npy"), embeddings)


def test_an_output_of_another_layout_is_refused_before_any_work(tmp_path, hf_safetensors_dir):
    result = _run(f"--init_checkpoint={hf_safetensors_dir}", "--input=-", f"--output={tmp_path}/e.csv")
    assert result.returncode == 2 and "e.csv: --output must end with .npy, .jsonl, .tsv" in result.stderr
    assert "loaded" not in result.stderr  # refused before the checkpoint was read


def test_a_byte_order_mark_is_no_text_and_skipped_blank_lines_are_said(tmp_path, hf_safetensors_dir):
    source = tmp_path / "in.txt"
    source.write_bytes("\ufeffhello there\n\nfine thanks\n  \n".encode("utf-8"))
    result = _run(f"--init_checkpoint={hf_safetensors_dir}", f"--input={source}", f"--output={tmp_path}/e.jsonl")
    assert result.returncode == 0, result.stderr[-3000:]
    rows = [json.loads(line) for line in (tmp_path / "e.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [row["text"] for row in rows] == ["hello there", "fine thanks"]
    assert (f"note: skipped 2 blank lines of {source}: row i of {tmp_path}/e.jsonl is the i-th non-blank line"
            in result.stderr.splitlines())
