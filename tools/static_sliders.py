"""Keep ipywidgets' state out of the website's pages.

On the website every slider is the plain-HTML form of ``attention_lib.widgets.frame_slider``
(``_config.yml`` tells myst-nb never to render a widget view). The executed notebooks
still carry the widgets' state, which myst-nb would embed in each page as a
``<script type="application/vnd.jupyter.widget-state+json">``: every frame a second time,
for a widget manager the site no longer loads. This extension drops that script.

A small Sphinx extension, loaded through ``local_extensions`` in ``_config.yml``.
"""

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def _drop_widget_state(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if scripts:
        scripts[:] = [js for js in scripts if js.attributes.get("type") != WIDGET_STATE]


def setup(app):
    app.connect("html-page-context", _drop_widget_state, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
