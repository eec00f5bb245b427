"""Screenshots of every page of the memory browser (`hermes-memory ui`), for a person to look at.

    python bench/ui_screenshots.py --out /tmp/ui-shots          # one PNG per page, and the timings

Fills a small store in a temporary home (a few turns, a move that supersedes the old home, curated
entries, a timeline event, two recorded blocks of "what the agent saw"), serves the browser on
127.0.0.1, opens each page in headless Chromium (Debian's ``chromium``; installed with apt-get when
missing) and saves ``Page.captureScreenshot``. Also goes through a correction and a forget preview.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.bench import ui_demo
from hermes_memory.bench.chromium import Browser
from hermes_memory.hermes import seen

PAGES = (
    ("ask", "/?q=where+does+the+user+live"),
    ("seen", "/seen"),
    ("facts", "/facts"),
    ("subject", "/facts?subject=the+user"),
    ("entities", "/entities"),
    ("entity", "/entity?name=Tom+Baker"),
    ("timeline", "/timeline"),
    ("curated", "/curated"),
    ("health", "/health"),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("ui-screenshots"))
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        # The default embedder (int8 MiniLM, shipped with the package): the ranking a user gets.
        api = MemoryAPI(
            hermes_home=home, actor="ui", ui={"record_context": True}, tier3={"backend": "memory"}
        )
        try:
            ui_demo.fill(api)
            for question in ("Where do I live now?", "Who is my manager?"):
                block = ui_demo_block(api, question)
                seen.record(api.config, session_id="20251002_090112_5d0e8a", scope=api.scope,
                            kind=seen.PREFETCH, served=question, text=block)  # fmt: skip
            browser = Browser()
            try:
                with ui_demo.serve(api) as served:
                    page = browser.new_page()
                    page.goto(served.login)
                    for name, path in PAGES:
                        started = time.monotonic()
                        page.goto(served.base + path, settle=0.3)
                        page.screenshot(args.out / f"{name}.png")
                        if name == "ask":  # the README's picture (docs/img/ui.png): what a window shows
                            page.screenshot(args.out / "readme.png", full_page=False)
                        print(f"{name:<10} {time.monotonic() - started:6.2f}s  {args.out / (name + '.png')}")
                    page.goto(served.base + "/facts?subject=the+user")
                    # The fact the extractor left vague ("moved there"): the correction a person would make.
                    fact = page.evaluate(
                        "[...document.querySelectorAll('li')]"
                        ".find(li => li.textContent.includes('moved there'))"
                        ".querySelector('a[href^=\"/fact?id=\"]').getAttribute('href')"
                    )
                    page.goto(served.base + fact)
                    page.screenshot(args.out / "fact.png")
                    page.evaluate("document.querySelector('textarea[name=text]').value = "
                                  "'The user moved to Lisbon in September 2025'")  # fmt: skip
                    page.submit("form.write")
                    page.screenshot(args.out / "correct-preview.png")
                    page.submit("form.write")
                    page.screenshot(args.out / "corrected.png")
                    page.goto(served.base + "/forget?name=Anna")
                    page.submit("form.write")
                    page.screenshot(args.out / "forget-preview.png")
                    print(f"readme, fact, correct-preview, corrected, forget-preview -> {args.out}")
                    page.close()
            finally:
                browser.close()
        finally:
            api.close()
    return 0


def ui_demo_block(api: MemoryAPI, question: str) -> str:
    from hermes_memory.hermes.settings import ProviderSettings
    from hermes_memory.ui._queries import provider_block

    return provider_block(api, ProviderSettings(), question, tier3=True)


if __name__ == "__main__":
    raise SystemExit(main())
