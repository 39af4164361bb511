# Headless Chromium for the page checks (html-check.sh, site-check.sh),
# sourced by both. A page is measured through a probe: a page of our own
# that shows it in a frame exactly as wide as the width under test (a
# headless window cannot be narrower than 500 pixels), measures it once
# loaded and writes the figures where --dump-dom reads them. The pages
# checked have no script of their own.

# The browser, or exit 2 naming the check ($1) that needs it.
find_chromium() {
  chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
  if [ -z "$chromium" ]; then
    echo "$1: Chromium is not installed" >&2
    exit 2
  fi
  chromium_flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
         --disable-background-networking --disable-component-update --disable-sync
         --hide-scrollbars --allow-file-access-from-files)
}

# render PROBE_HTML PAGE_URL WIDTH,HEIGHT SCREENSHOT LOG: prints the probe's
# DOM (its figures) and takes a screenshot of the page at that size; the
# console goes to LOG.
render() {
  local probe=$1 page=$2 size=$3 shot=$4 log=$5 profile
  profile=$(mktemp -d)
  "$chromium" "${chromium_flags[@]}" --user-data-dir="$profile" --window-size=1400,1000 \
        --enable-logging=stderr --v=0 --virtual-time-budget=5000 --dump-dom "file://$probe" 2>"$log" || true
  "$chromium" "${chromium_flags[@]}" --user-data-dir="$profile" --window-size="$size" \
        --screenshot="$shot" "$page" >/dev/null 2>&1 || true
  rm -rf "$profile"
}

# console_clean LOG: fails, printing them, when the console logged an
# error, a refused load or a network error.
console_clean() {
  if grep -E 'CONSOLE.*(ERROR|Uncaught)|Refused to load|net::ERR' "$1" >/dev/null; then
    echo "  ✘ console errors:" >&2; grep -E 'CONSOLE|Refused|net::ERR' "$1" >&2
    return 1
  fi
}
