"""``make bench``: measurements of speed, not tests; nothing here fails on a slow machine.

``run`` is the benchmark proper (``BENCH_ARGS=--full`` for section 5). It measures, in
order: the machine and attention's FLOP rate against the machine's peak (``throughput``),
the library's multi-head attention beside PyTorch's (``vs_pytorch``, which installs a CPU
build of PyTorch from ``requirements-bench.txt`` where pip offers one), each chapter in a
fresh kernel with the time its sliders take (``chapter_runs``), the pretrained model and
chapter 12's decoder (``models``) and, with ``--full``, a clean ``make book``, a rebuild
and the tests (``build_times``); ``report`` prints the table, each number beside its
target, and the numbers go to ``_build/bench/bench.json``. Then ``make bench`` runs
``grader_speed`` (the grader on 300 synthetic submissions, then on honest copies of three
chapters) and ``site_speed`` (a first visit to each page of the built site, in Chromium).
``benchmarks.md`` records and explains the results.
"""
