"""``make classroom``: the course for the tools a class may already use, in ``_build/classroom/``.

``build`` runs the exports: ``nbgrader_export`` (a chapter as an nbgrader source notebook),
``student_repo`` (a repository of student copies to hand out) and ``otter_export`` (an
otter-grader assignment whose autograder grades with the course's own grader,
``tools/grade.py``, through the plugin in ``otter_plugin/``). All three read a chapter
through ``common`` (its exercises from ``tools/exercises.py``, its student copy from
``tools/editions/student.py``); ``envs`` builds the environments they and the Binder
checks run in. The modules import each other by name, as scripts of this folder.
"""
