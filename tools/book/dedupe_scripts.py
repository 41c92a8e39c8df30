"""Drop the script tags that Sphinx 7.4 writes twice on every page.

sphinx-thebe and sphinx-togglebutton add inline scripts with ``app.add_js_file(None, body=...)``.
Sphinx 7.4 keeps that entry and re-adds it from its registry as ``''``, which does not compare
equal, so both are written. The second ``const THEBE_JS_URL`` is a SyntaxError in the console.

This is a small Sphinx extension (loaded through ``local_extensions`` in ``_config.yml``),
not a script. After a Sphinx upgrade, try the build without it: if the browser checks
still see no console errors, delete it.
"""


def _dedupe(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for js in scripts:
        key = (js.filename or "", js.priority, tuple(sorted(js.attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(js)
    scripts[:] = unique


def setup(app):
    app.connect("html-page-context", _dedupe, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
