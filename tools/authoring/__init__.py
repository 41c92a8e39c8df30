"""What an author runs by hand to keep files that are committed true to their sources.

``refresh_outputs`` re-executes chapters in place so that their stored outputs are fresh
(``make outputs`` runs it on every chapter, then writes the learner edition with
``tools/editions/learner.py``); ``make_corpus`` writes chapter 12's corpus,
``attention_lib/toy/data/food.txt``, from its templates (``--check``: is the committed
file up to date?); ``study_time`` prints each chapter's study time for the landing page's
plan table (``tests/test_intro.py`` keeps the two close); ``landing_figure`` draws the
landing page's heatmap of the toy's attention, ``_static/landing_attention.png``
(``--check``: are the PNG and intro.md's alt text up to date?); ``trained_sample`` writes
``attention_lib/data/minilm_sample.npz``, the trained model's numbers that
``attention_lib.trained`` serves to chapters 1-7 (``--check``: does it match the model?).
"""
