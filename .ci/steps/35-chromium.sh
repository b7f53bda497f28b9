# The run timeline (zagent logs show --html) in a real headless Chromium: installs Debian's chromium
# package when it is missing, then runs the browser tests (the main suite skipped them without it).
if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null; then
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
        echo "== installing Debian's chromium package for the timeline browser tests"
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1 \
            || echo "apt-get could not install chromium"
    fi
fi
if command -v chromium >/dev/null || command -v chromium-browser >/dev/null; then
    echo "== running the timeline tests in headless Chromium"
    python -m pytest -q -p no:cacheprovider tests/runlog/test_runlog_browser.py
else
    echo "chromium is not available here (no apt-get or no root): skipping the timeline browser tests"
fi
