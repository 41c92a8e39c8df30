"""The grader's parts: see ``tools/grade.py`` for how they fit together.

* :mod:`.wire`: how values cross the sandbox wall (JSON and ``.npy``, never pickle);
* :mod:`.worker`: the plain Python process that runs a student's answer cells, sandboxed;
* :mod:`.tripwires`: in the worker, the library functions an exercise rules out, set to trip;
* :mod:`.sandbox`: starts the worker under bubblewrap and talks to it, with time limits;
* :mod:`.mounts`: what the sandbox holds, and as which user the student's code runs;
* :mod:`.seccomp`: the system calls the sandbox refuses (built with libseccomp);
* :mod:`.cgroups`: one sandbox's processes and memory capped together, where allowed;
* :mod:`.selftest`: a known-good answer that must pass in the sandbox before grading;
* :mod:`.static`: the limited subprocess in which a submitted notebook is read;
* :mod:`.notebook`: what a submission holds (chapter, answer cells), read as data;
* :mod:`.verdict`: grades one submission: the checkers run here, the student's code there;
* :mod:`.flags`: what a static look at the answer cells finds (library calls, ``exec``);
* :mod:`.gradebook`: ``grades.csv``, one row per student, written row by row.
"""
