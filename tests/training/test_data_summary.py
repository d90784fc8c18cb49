"""What the training run prints: the `data:` line says what the build left out, so a run that
trains on fewer examples than its corpus holds says why; the header shows the settings that apply;
the last line says the step reached, or why no step ran."""
from training_flags import training_flags
from tfdialemb.methods.spec import get_method
from tfdialemb.training import cli
from tfdialemb.training.settings import RunSettings


def _manifest(**counts):
    return {"counts": {"examples": 6, "dialogues": 9, "dropped_over_length": 0, "skipped_lines": 0, **counts},
            "builder": {"method": "augcl"}, "directory": "/runs/a/data", "max_length": 64,
            "min_turns": 2}


def test_the_data_line_counts_examples_dropped_over_the_max_length():
    # 3 steps of 4 over 6 examples: an epoch is one full batch (the partial second one dropped).
    assert cli.data_summary(_manifest(dropped_over_length=3), 3, 4, False) == (
        "data: 6 augcl examples from 9 dialogues in /runs/a/data (3 dropped for exceeding 64 tokens); "
        "3 steps x batch 4 = 3.00 epochs of uniformly shuffled batches")
    assert cli.data_summary(_manifest(dropped_over_length=3, skipped_lines=2), 3, 4, False) == (
        "data: 6 augcl examples from 9 dialogues in /runs/a/data (3 dropped for exceeding 64 tokens; 2 bad lines "
        "skipped); 3 steps x batch 4 = 3.00 epochs of uniformly shuffled batches")
    assert cli.data_summary(_manifest(dropped_under_min_turns=4), 3, 4, False) == (
        "data: 6 augcl examples from 9 dialogues in /runs/a/data (4 dialogues of fewer than 2 turns dropped); "
        "3 steps x batch 4 = 3.00 epochs of uniformly shuffled batches")
    assert cli.data_summary(_manifest(), 3, 4, False) == (
        "data: 6 augcl examples from 9 dialogues in /runs/a/data; 3 steps x batch 4 = 3.00 epochs of uniformly "
        "shuffled batches")
    assert cli.data_summary(_manifest(cut_at_max_length=2, tokens=400, tokens_cut=50), 3, 4, False) == (
        "data: 6 augcl examples from 9 dialogues in /runs/a/data (2 of 6 examples cut at 64 tokens, 12.5% of the "
        "tokens left out); 3 steps x batch 4 = 3.00 epochs of uniformly shuffled batches")
    # A corpus smaller than a batch: each step reads 8 of its 6 examples.
    assert cli.data_summary(_manifest(), 3, 8, True).endswith(
        "3 steps x batch 8 = 4.00 epochs of length-bucketed batches")


def test_the_last_line_says_when_no_step_ran():
    assert cli.run_summary({"step": 4.0, "loss": 2.30964, "accuracy": 0.25}, 4, "/runs/a") == (
        "trained to step 4 of 4: loss 2.3096, accuracy 0.2500")
    assert cli.run_summary({"step": 4.0}, 4, "/runs/a") == "nothing to train: /runs/a already holds step 4"
    assert cli.run_summary({"step": 4.0}, 3, "/runs/a") == (
        "nothing to train: /runs/a already holds step 4, past --max_steps=3: its weights are those of step 4")


def test_the_header_leaves_out_the_shared_flags_a_released_optimizer_fixes():
    given = training_flags(max_steps=5, learning_rate=1e-5, lr_schedule="linear", warmup_fraction=0.1,
                           weight_decay=0.01)
    spec = get_method("context_response")
    header = cli.run_header(RunSettings.from_flags(spec, spec.resolve({}), given))  # released one-cycle
    assert "lr_schedule" not in header and "warmup_fraction" not in header
    assert "learning_rate 1e-05, freeze_layers 0, max_length 24, weight_decay 0.01, max_steps 5" in header
    assert "schedule one_cycle, warmup_steps 0" in header
    linear = cli.run_header(RunSettings.from_flags(spec, spec.resolve({"context_response_optimizer": "linear"}),
                                                   given))
    assert "warmup_fraction 0.1, lr_schedule linear" in linear and "one_cycle" not in linear


def test_a_run_past_its_schedule_is_told_what_rate_it_gets():
    """dial2vec's released schedule spans the 20 training examples: a 30-step run trains steps
    21-30 at 1e-5 · (1 − step / 20), below 0."""
    spec = get_method("dial2vec")
    assert spec.schedule_steps(spec.resolve({"dial2vec_optimizer": "released"}), 20, None) == 20
    assert cli.past_schedule(20, 30) == ("steps 21-30 run past the end of the learning-rate schedule, at the rate it "
                                         "gives there (a linear decay that is not floored turns negative)")
