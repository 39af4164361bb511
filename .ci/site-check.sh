#!/usr/bin/env bash
# Renders a site written by `tern-sim site` (its index.html and matrix.html)
# in headless Chromium at a desktop and a phone width, and fails unless each
# rendering has no console error, shows its table, and fits the width (wide
# tables may scroll sideways, inside their own boxes only). Screenshots go to
# OUT_DIR as index-1280.png, matrix-390.png and so on.
# Usage: .ci/site-check.sh SITE_DIR OUT_DIR
set -euo pipefail
site=$(realpath "$1")
out=$(mkdir -p "$2" && realpath "$2")
. "$(dirname "$0")/chromium.sh"
find_chromium site-check
for page in index.html matrix.html; do
  [ -s "$site/$page" ] || { echo "site-check: no $page in $site" >&2; exit 2; }
done

# The probe: a page that shows a page of the site in a frame exactly as wide
# as the width under test (a headless window cannot be narrower than 500
# pixels), measures it once loaded, and writes the result where --dump-dom
# reads it. The site itself has no script.
rm -rf "$out/site"
cp -r "$site" "$out/site"
probe() {
  cat <<PROBE
<!DOCTYPE html><html><body style="margin:0">
<iframe id="f" src="site/$1" style="border:0;width:$2px;height:$3px"></iframe>
<script>
const f = document.getElementById("f");
f.addEventListener("load", () => {
  const d = f.contentDocument, w = f.contentWindow;
  const rows = d.querySelectorAll("table.index tr, table.matrix tr").length;
  const cells = d.querySelectorAll("table.matrix td.cell").length;
  const r = document.createElement("pre");
  r.textContent = "rows=" + rows + " cells=" + cells +
    " page=" + d.documentElement.scrollWidth + " width=" + w.innerWidth;
  document.body.appendChild(r);
});
</script></body></html>
PROBE
}

status=0
for page in index.html matrix.html; do
  name=${page%.html}
  for size in 1280,900 390,844; do
    w=${size%,*}
    log="$out/console-$name-$w.log"
    probe "$page" "$w" "${size#*,}" > "$out/probe-$name-$w.html"
    dom=$(render "$out/probe-$name-$w.html" "file://$out/site/$page" "$size" "$out/$name-$w.png" "$log")
    result=$(printf '%s' "$dom" | grep -o 'rows=[0-9]* cells=[0-9]* page=[0-9]* width=[0-9]*' || true)
    echo "site-check $page at ${w}px: ${result:-no result}"
    if [ -z "$result" ]; then echo "  ✘ the page did not render" >&2; status=1; continue; fi
    eval "$(printf '%s' "$result" | tr ' ' '\n' | sed 's/^/r_/')"
    console_clean "$log" || status=1
    [ "$r_rows" -ge 2 ] || { echo "  ✘ no table rows" >&2; status=1; }
    if [ "$page" = matrix.html ] && [ "$r_cells" -lt 1 ]; then
      echo "  ✘ no matrix cells" >&2; status=1
    fi
    [ "$r_page" -le "$r_width" ] || { echo "  ✘ the page is ${r_page}px wide in a ${r_width}px window" >&2; status=1; }
    [ -s "$out/$name-$w.png" ] || { echo "  ✘ no screenshot" >&2; status=1; }
  done
done
rm -f "$out"/probe-*.html
exit $status
