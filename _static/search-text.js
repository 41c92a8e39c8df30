// Search results that show the page's own words.
// Sphinx builds each result's summary from the page's [role="main"] element, which in this
// theme also holds the header's buttons (".pdf", "Contents"). The summary is taken from the
// article instead, without permalinks and with formulas read as their MathML text.
// From a file:// copy the browser refuses to fetch pages, which Sphinx needs for summaries:
// there results show their titles only, instead of failing with errors.
document.addEventListener("DOMContentLoaded", () => {
  if (typeof Search === "undefined" || typeof DOCUMENTATION_OPTIONS === "undefined") return;
  if (window.location.protocol === "file:") {
    DOCUMENTATION_OPTIONS.SHOW_SEARCH_SUMMARY = false;
    return;
  }
  const sphinxText = Search.htmlToText;
  Search.htmlToText = (htmlString, anchor) => {
    const page = new DOMParser().parseFromString(htmlString, "text/html");
    const article = page.querySelector("article.bd-article");
    if (!article) return sphinxText(htmlString, anchor);
    article.querySelectorAll(".headerlink, script, style, mjx-math").forEach((el) => el.remove());
    const part = anchor ? article.querySelector(anchor) : null;
    return (part || article).textContent.replace(/\s+/g, " ");
  };
});
