"""Step lines of the printers dev11 of the field probe holds (tests/fixtures/fields_probe/dev11.yaml), one test per
rule, each line as its printer writes it; and the part's own figures."""

from __future__ import annotations

import calendar
from pathlib import Path

from streams.assemble.parse import parse_line
from tests.fields_probe import load, score
from tests.unit.assemble.corpus_helpers import parsed_lines

READ = calendar.timegm((2024, 6, 1, 12, 0, 0)) * 1000
PROBE_DEV11 = Path(__file__).resolve().parents[2] / "fixtures" / "fields_probe" / "dev11.yaml"
# What dev11 still misses, left alone: WeNet's "TRAIN Batch 0/100 ..." whose first count is the epoch (elsewhere the
# count before a batch's total is the batch), Tacotron 2's "Train loss 1200 0.51 Grad Norm 0.82" (the step between a
# key and its value), HiFi-GAN's "Gen Loss Total : 45.1" (a three-word key no family claims), Acme's "Learner Steps =
# 1000" (a counter of two words, which banners write too), Coqui's lone "current_lr" row (no gate word), YOLOv5 v5.0's
# "total" column, a spaCy row as a step metric (its losses are per component) and Flair's "DEV : loss 0.31" (one
# pair).


def lifted(line: str):
    return parse_line(line, READ)


def parsed(tmp_path: Path, *lines: str) -> list[dict]:
    return parsed_lines(tmp_path, lines, READ)


def test_a_current_learning_rate_is_the_learning_rate() -> None:
    # Coqui TTS's console logger "current_lr", icefall's and many scripts' "cur_lr"
    assert lifted('{"step": 12, "current_lr": 2.5e-07}').metrics["learning_rate"] == 2.5e-07
    assert lifted('{"step": 12, "cur_lr": 0.001, "loss": 1.5}').metrics["learning_rate"] == 0.001


def test_nvlabs_gpumem_is_gib() -> None:
    # StyleGAN2-ADA / StyleGAN3 training_loop: "gpumem {:<6.2f}" of max_memory_allocated() / 2**30
    p = lifted('{"kimg": 48.4, "gpumem": 8.29, "loss": 0.5, "step": 3}')
    assert p.metrics["gpu_memory_mb"] == 8.29 * 1024


def test_held_out_sets_by_their_short_names() -> None:
    # WeNet's and ESPnet's cross-validation "cv_loss", Flair's development set "dev_loss"
    assert lifted('{"epoch": 0, "cv_loss": 7.891234}').metrics == {"eval_loss": 7.891234}
    assert lifted('{"epoch": 2, "dev_loss": 0.3112}').metrics == {"eval_loss": 0.3112}


def test_chainer_print_report_rows(tmp_path: Path) -> None:
    # PrintReport's entries are the Reporter's names: the trained link is "main", the Evaluator's "validation/main"
    head = "epoch       main/loss   validation/main/loss  main/accuracy  validation/main/accuracy  elapsed_time"
    row = "1           0.191976    0.0931192             0.942517       0.9712            18.7328"
    out = parsed(tmp_path, head, row)
    assert out[-1]["epoch"] == 1.0
    assert out[-1]["metrics"]["loss"] == 0.191976 and out[-1]["metrics"]["eval_loss"] == 0.0931192
    out = parsed(tmp_path, "epoch       iteration   main/loss   main/accuracy  elapsed_time",
                 "1           600         0.191976    0.942517       18.7328     ")
    assert out[-1]["step"] == 600 and out[-1]["metrics"]["loss"] == 0.191976


def test_sklearn_gradient_boosting_table(tmp_path: Path) -> None:
    # VerboseReporter: names of two words ("Train Loss", "Remaining Time"), the columns two or more blanks apart
    row = "         1           1.2345            1.23s"
    out = parsed(tmp_path, "      Iter       Train Loss   Remaining Time ", row)
    assert out[-1]["step"] == 1 and out[-1]["metrics"]["loss"] == 1.2345
    out = parsed(tmp_path, "      Iter       Train Loss      OOB Improve   Remaining Time ",
                 "         2           1.1123           0.0412            1.10s")
    assert out[-1]["step"] == 2 and out[-1]["metrics"]["loss"] == 1.1123
    # prose with wide gaps is no header: its rows stay text
    out = parsed(tmp_path, "Note  this is  free text", "         1           1.2345            1.23s")
    assert out[-1].get("step") is None


def test_spacy_training_table(tmp_path: Path) -> None:
    out = parsed(tmp_path, "E    #       LOSS TOK2VEC  LOSS NER  ENTS_F  ENTS_P  ENTS_R  SCORE",
                 "---  ------  ------------  --------  ------  ------  ------  ------",
                 "  1     400         70.88    267.65   33.50   45.95   26.36    0.33")
    assert out[-1]["epoch"] == 1.0 and out[-1]["step"] == 400


def test_gradient_accumulation_steps_are_a_setting() -> None:
    # build-nanogpt: print(f"=> calculated gradient accumulation steps: {grad_accum_steps}")
    assert lifted("=> calculated gradient accumulation steps: 16").step is None
    assert lifted("step: 16, loss: 2.5").step == 16


def test_the_global_step_wins_over_the_epochs_step() -> None:
    # Coqui TTS print_train_step: "--> STEP: {step}/{batch_steps} -- GLOBAL_STEP: {global_step}"
    p = lifted("\x1b[1m   --> STEP: 24/406 -- GLOBAL_STEP: 25\x1b[0m")
    assert p.step == 25 and p.max_steps is None
    assert lifted("step: 24/406, loss: 1.0").max_steps == 406


def test_darknet_training_line() -> None:
    # pjreddie detector.c: "%ld: %f, %f avg, %f rate, %lf seconds, %d images"
    p = lifted("4012: 0.412334, 0.498120 avg, 0.001000 rate, 3.217000 seconds, 256768 images")
    assert p.step == 4012
    assert p.metrics == {"loss": 0.412334, "running_loss": 0.49812, "learning_rate": 0.001}
    # AlexeyAB: "\n %d: %f, %f avg loss, %f rate, %lf seconds, %d images, %f hours left"
    p = lifted(" 1000: 1.234567, 1.456789 avg loss, 0.001000 rate, 3.210000 seconds, 64000 images, "
               "12.345000 hours left")
    assert p.step == 1000 and p.metrics["loss"] == 1.234567
    assert lifted("Learning Rate: 0.001, Momentum: 0.9, Decay: 0.0005").step is None


def test_pix2pix_learning_rate_update(tmp_path: Path) -> None:
    # BaseModel.update_learning_rate: print("learning rate %.7f -> %.7f" % (old_lr, lr))
    out = parsed(tmp_path, "learning rate 0.0002000 -> 0.0001980")
    assert out[-1]["attributes"]["learning_rate"] == "0.000198"


def test_memory_sentences(tmp_path: Path) -> None:
    out = parsed(tmp_path, "2022-12-12 11:10:01,552 INFO [train.py:902] Maximum memory allocated so far is 16753MB")
    assert out[-1]["gpu_memory_mb"] == 16753
    out = parsed(tmp_path, "peak memory consumption: 27356 MiB")
    assert out[-1]["gpu_memory_mb"] == 27356


def test_icefall_validation_after_the_epoch() -> None:
    p = lifted("2022-12-12 11:10:01,551 INFO [train.py:901] Epoch 3, validation: loss=0.2812, simple_loss=0.3404, "
               "pruned_loss=0.1109, over 944034.00 frames. ")
    assert p.epoch == 3 and p.metrics["eval_loss"] == 0.2812 and "loss" not in p.metrics
    # PyG's examples name splits after figures: those are accuracies, the loss stays the training's
    p = lifted("Epoch: 001, Loss: 1.9456, Train: 0.3000, Val: 0.2340, Test: 0.2450")
    assert p.metrics["loss"] == 1.9456


def test_nanot5_arrow_pairs_and_a_total_in_words() -> None:
    # Logger.log_stats: f"[{prefix[:-1]}] Step {step} out of {total_steps} | " + " | ".join(f"{k} --> {v:.3f}")
    p = lifted("[train] Step 100 out of 65536 | Loss --> 5.234 | Grad_l2 --> 1.234 | Weights_l2 --> 11261.455 | "
               "Lr --> 0.010 | Seconds_per_step --> 0.412 | ")
    assert p.step == 100 and p.max_steps == 65536
    assert p.metrics["loss"] == 5.234 and p.metrics["grad_norm"] == 1.234 and p.metrics["learning_rate"] == 0.01
    p = lifted("[eval] Step 65536 out of 65536 | Loss --> 1.987 | Accuracy --> 0.612 | Time --> 12.345 | ")
    assert p.metrics["eval_loss"] == 1.987 and "loss" not in p.metrics


def test_pairs_one_blank_apart() -> None:
    # WeNet's executor: "TRAIN Batch {}/{} loss {:.6f} " + "loss_att {:.6f} " + ... + "lr {:.8f} rank {}"
    p = lifted("2021-03-10 12:41:07,991 DEBUG TRAIN Batch 7/2300 loss 3.215008 loss_att 2.871122 loss_ctc 4.017414 "
               "lr 0.00071234 rank 0")
    assert p.metrics["loss"] == 3.215008 and p.metrics["learning_rate"] == 0.00071234
    assert p.metrics["loss_ctc"] == 4.017414 and p.max_steps is None
    # its cross-validation batches: the split in capitals before the counter
    p = lifted("2021-03-10 10:30:00,456 DEBUG CV Batch 0/100 loss 8.123456 loss_att 7.123456 loss_ctc 10.123456 "
               "history loss 8.345678")
    assert p.metrics["eval_loss"] == 8.123456 and "loss" not in p.metrics
    # a settings echo measures nothing; two pairs are no run
    assert not lifted("Using lr 0.001 batch 32 epochs 10 seed 42").metrics
    assert not lifted("Using lr 0.001 batch 32").metrics


def test_epoch_and_batch_in_brackets_without_keys() -> None:
    # PyTorch's DCGAN example: '[%d/%d][%d/%d]\tLoss_D: %.4f\tLoss_G: %.4f ...' % (epoch, niter, i, len(dataloader))
    p = lifted("[0/5][50/1583]\tLoss_D: 1.6513\tLoss_G: 5.4321\tD(x): 0.4567\tD(G(z)): 0.4012 / 0.0061")
    assert p.epoch == 0.0 and p.step is None and p.metrics["loss_d"] == 1.6513
    assert lifted("[3/25][100/782] Loss_D: 0.4536 Loss_G: 4.1234").epoch == 3.0
    assert lifted("[1/2][3/4]").epoch is None  # no figures behind them


def test_a_bare_norm_is_the_gradients_only_on_a_counted_line() -> None:
    # scikit-learn's SGD (verbose): the weights' norm after each "-- Epoch 1"; llm.c's step line prints no other norm
    p = lifted("Norm: 12.34, NNZs: 100, Bias: 0.123456, T: 1000, Avg. loss: 0.456789")
    assert "grad_norm" not in p.metrics and p.attributes["Norm"] == "12.34"
    p = lifted("step    1/74 | train loss 11.010 | norm 15.4102 | lr 6.00e-06 | (1234.56 ms | 42000 tok/s)")
    assert p.metrics["grad_norm"] == 15.4102


def test_an_argument_echo_is_a_setting() -> None:
    # Chainer's examples: print('# epoch: {}'.format(args.epoch)) before training
    p = lifted("# epoch: 20")
    assert p.epoch is None and p.attributes["epoch"] == "20"
    assert lifted("epoch: 20").epoch == 20.0
    assert lifted("# loss: 0.5").metrics == {"loss": 0.5}  # a measured figure is no argument


def test_dev11_figures() -> None:
    s = score(load([str(PROBE_DEV11)]))
    assert s["right"] >= 163
    assert s["absent"]["violated"] == 0
