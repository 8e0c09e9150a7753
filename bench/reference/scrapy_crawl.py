"""Scrapy's crawl of the bench's catalogue site, beside the project's crawl job, for `npm run bench` only.

Usage: /usr/bin/python3 scrapy_crawl.py START_URL SITEMAP_URL CONCURRENCY

The same crawl as the project's job (`{url: START_URL, crawl: {sitemap: true, include: ['/books/**'],
exclude: ['**/category/**']}}`): the start page and the sitemap's pages (index followed, gzip read),
then every link those pages hold, on the start's origin, under /books/ and outside any /category/.
Each page yields its heading and first price by CSS, so it is parsed, not only downloaded. robots.txt
is obeyed, as the project's crawl does by default. One plain spider in a CrawlerProcess, no project.
Prints one JSON line to stdout: pages and items, seconds and CPU seconds from the engine's start to
its close, and the process's peak RSS.
"""
import json
import resource
import sys
import time
from urllib.parse import urlsplit

from scrapy import Request, signals
from scrapy.crawler import CrawlerProcess
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import SitemapSpider


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class CatalogueSpider(SitemapSpider):
    name = "catalogue"

    def __init__(self, start_url, sitemap_url, **kwargs):
        super().__init__(**kwargs)
        self.start_url = start_url
        self.sitemap_urls = [sitemap_url]
        self.origin = urlsplit(start_url)[:2]
        self.links = LinkExtractor()
        self.pages = 0

    def accepts(self, url):
        # include '/books/**', exclude '**/category/**', on the start's scheme, host and port.
        parts = urlsplit(url)
        return parts[:2] == self.origin and parts.path.startswith("/books/") and "/category/" not in parts.path

    def start_requests(self):
        yield Request(self.start_url, callback=self.parse)
        yield from super().start_requests()

    def sitemap_filter(self, entries):
        # A sitemap index's entries are sitemaps, all followed; a urlset's pages must belong to the crawl.
        for entry in entries:
            if entries.type == "sitemapindex" or self.accepts(entry["loc"]):
                yield entry

    def parse(self, response):
        self.pages += 1
        yield {"url": response.url, "name": response.css("h1::text").get(), "price": response.css(".price_color::text").get()}
        for link in self.links.extract_links(response):
            if self.accepts(link.url):
                yield response.follow(link.url, callback=self.parse)


def main():
    start_url, sitemap_url, concurrency = sys.argv[1], sys.argv[2], int(sys.argv[3])
    process = CrawlerProcess(
        settings={
            "CONCURRENT_REQUESTS": concurrency,
            "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
            "DOWNLOAD_DELAY": 0,
            "AUTOTHROTTLE_ENABLED": False,
            "ROBOTSTXT_OBEY": True,
            "HTTPCACHE_ENABLED": False,
            "TELNETCONSOLE_ENABLED": False,
            "LOG_LEVEL": "WARNING",
            # The current fingerprints; the default (2.6) only warns that it is deprecated.
            "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
        }
    )
    crawler = process.create_crawler(CatalogueSpider)
    marks = {}

    def opened(spider):
        marks["start"] = (time.perf_counter(), cpu_seconds())

    def closed(spider, reason):
        marks["end"] = (time.perf_counter(), cpu_seconds())
        marks["reason"] = reason

    crawler.signals.connect(opened, signal=signals.spider_opened)
    crawler.signals.connect(closed, signal=signals.spider_closed)
    process.crawl(crawler, start_url=start_url, sitemap_url=sitemap_url)
    process.start()
    (t0, cpu0), (t1, cpu1) = marks["start"], marks["end"]
    stats = crawler.stats.get_stats()
    print(
        json.dumps(
            {
                "pages": crawler.spider.pages,
                "items": stats.get("item_scraped_count", 0),
                "seconds": t1 - t0,
                "cpu_seconds": cpu1 - cpu0,
                # ru_maxrss is in KiB on Linux.
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "reason": marks["reason"],
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
