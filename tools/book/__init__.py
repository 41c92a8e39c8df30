"""The website: what ``make book`` runs, beside Jupyter Book, to make ``_build/html``.

Before the build, ``vendor_assets`` fetches the pinned MathJax (its fonts for the site, its
Node build for typesetting). Jupyter Book then executes each chapter (cached) and Sphinx
loads the other modules as extensions (``local_extensions`` in ``_config.yml``). When every
page has been read, ``exercise_numbers`` numbers each chapter's exercises from 1 ("Exercise
4.2"); as each page is written, ``learner_links`` points its Colab, Binder and download
buttons at the learner edition, and ``dedupe_scripts`` and ``light_pages`` drop the scripts
it does not need; once all are written, ``a11y_fixes`` repairs the HTML, ``light_pages``
takes out the theme's FontAwesome script and font preloads and marks each figure's natural
width, ``icons`` cuts FontAwesome down to the glyphs the pages draw, ``static_math``
typesets every formula (with ``static_math.js``, in Node) and ``learner_links`` copies
``notebooks/`` beside the pages. ``course_site`` (``make book-course``) runs the same build
on the student copies (``tools/editions/student.py``), for a class that is working on the
exercises.
"""
