#!/usr/bin/env bash
# Renders a certification report.html in headless Chromium at a desktop and
# a phone width, and fails unless each rendering has no console error, shows
# at least one sequence diagram with a real size, and fits the width (only
# diagrams and wide tables may scroll sideways, inside their own boxes).
# Usage: .ci/html-check.sh REPORT.html OUT_DIR
set -euo pipefail
report=$(realpath "$1")
out=$(mkdir -p "$2" && realpath "$2")
. "$(dirname "$0")/chromium.sh"
find_chromium html-check

# The probe: a page that shows the report in a frame exactly as wide as the
# width under test (a headless window cannot be narrower than 500 pixels),
# measures it once loaded, and writes the result where --dump-dom reads it.
# The report itself has no script.
cp "$report" "$out/report.html"
probe() {
  cat <<PROBE
<!DOCTYPE html><html><body style="margin:0">
<iframe id="f" src="report.html" style="border:0;width:$1px;height:$2px"></iframe>
<script>
const f = document.getElementById("f");
f.addEventListener("load", () => {
  const d = f.contentDocument, w = f.contentWindow;
  const svgs = [...d.querySelectorAll("svg.seq")];
  const sized = svgs.filter(s => { const r = s.getBoundingClientRect(); return r.width > 100 && r.height > 50; });
  const arrows = d.querySelectorAll("svg.seq line.msg").length;
  const r = document.createElement("pre");
  r.textContent = "svgs=" + svgs.length + " sized=" + sized.length + " arrows=" + arrows +
    " page=" + d.documentElement.scrollWidth + " width=" + w.innerWidth;
  document.body.appendChild(r);
});
</script></body></html>
PROBE
}

status=0
for size in 1280,900 390,844; do
  w=${size%,*}
  log="$out/console-$w.log"
  probe "$w" "${size#*,}" > "$out/probe-$w.html"
  dom=$(render "$out/probe-$w.html" "file://$report" "$size" "$out/report-$w.png" "$log")
  result=$(printf '%s' "$dom" | grep -o 'svgs=[0-9]* sized=[0-9]* arrows=[0-9]* page=[0-9]* width=[0-9]*' || true)
  echo "html-check at ${w}px: ${result:-no result}"
  if [ -z "$result" ]; then echo "  ✘ the page did not render" >&2; status=1; continue; fi
  eval "$(printf '%s' "$result" | tr ' ' '\n' | sed 's/^/r_/')"
  console_clean "$log" || status=1
  [ "$r_svgs" -ge 1 ] && [ "$r_sized" -eq "$r_svgs" ] && [ "$r_arrows" -ge 1 ] \
    || { echo "  ✘ no visible sequence diagram" >&2; status=1; }
  [ "$r_page" -le "$r_width" ] || { echo "  ✘ the page is ${r_page}px wide in a ${r_width}px window" >&2; status=1; }
  [ -s "$out/report-$w.png" ] || { echo "  ✘ no screenshot" >&2; status=1; }
done
rm -f "$out"/probe-*.html
exit $status
