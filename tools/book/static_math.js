// Typeset TeX with MathJax's CHTML output, in Node, for tools/book/static_math.py.
// Reads a JSON list of [tex, display] pairs from the file named as the first argument and
// prints {"html": [...one mjx-container per pair...], "css": "...the styles they need..."}.
// Each formula carries MathML for screen readers (the assistive-mml extension).
const fs = require("fs");
const path = require("path");

const [input, mathjax] = process.argv.slice(2);
const formulas = JSON.parse(fs.readFileSync(input, "utf8"));

require(path.join(mathjax, "node-main.js"))
  .init({
    loader: {
      paths: {mathjax},
      load: ["adaptors/liteDOM", "input/tex-full", "output/chtml", "a11y/assistive-mml"],
    },
    // Relative to the stylesheet, which the pages load from vendor/mathjax/.
    chtml: {fontURL: "output/chtml/fonts/woff-v2"},
  })
  .then((MathJax) => {
    const adaptor = MathJax.startup.adaptor;
    const html = formulas.map(([tex, display]) =>
      adaptor.outerHTML(MathJax.tex2chtml(tex, {display})),
    );
    const css = adaptor.textContent(MathJax.chtmlStylesheet());
    process.stdout.write(JSON.stringify({html, css}));
  })
  .catch((error) => {
    console.error(error);
    process.exit(1);
  });
