"""An asyncio crawler with bounded concurrency.

``map_async(fetch, max_concurrency=4)`` runs at most 4 fetches at once and asks its upstream for at
most ``max_concurrency + prefetch`` URLs ahead, so a million URLs never become a million tasks.
``fetch`` is simulated (``asyncio.sleep``) so the example runs offline; swap in aiohttp or httpx.

    python examples/async_crawler.py
"""

from __future__ import annotations

import asyncio
import random

from rstreams import Flowable

MAX_CONCURRENCY = 4


async def main() -> None:
    in_flight = 0
    peak = 0
    rng = random.Random(7)

    async def fetch(url: str) -> tuple[str, int]:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        try:
            await asyncio.sleep(rng.uniform(0.001, 0.01))  # the network
            return url, 200 if not url.endswith("/13") else 404
        finally:
            in_flight -= 1

    urls = Flowable.range(0, 40).map(lambda i: f"https://example.org/page/{i}")
    results = await (
        urls.map_async(fetch, max_concurrency=MAX_CONCURRENCY)   # results in input order
        .filter(lambda r: r[1] == 200)
        .map(lambda r: r[0])
        .to_list()
    )
    print(f"crawled {len(results)} pages ok, at most {peak} requests in flight (limit {MAX_CONCURRENCY})")
    print("first:", results[:2])
    assert peak <= MAX_CONCURRENCY and len(results) == 39


if __name__ == "__main__":
    asyncio.run(main())
