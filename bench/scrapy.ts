// Scrapy beside the whole-site crawl: bench/reference/scrapy_crawl.py on the same catalogue site, as a row of the jobs table.
import { spawnSync } from 'node:child_process';
import type { JobCrawlFigures } from './jobs.js';
import { startChild } from './processes.js';
import { ROOT } from './services.js';

/** Debian's python3-scrapy is installed for the system interpreter, not for whichever python3 comes first on PATH. */
const PYTHON = '/usr/bin/python3';
const CRAWL_TIMEOUT_MS = 600_000;

/** What scrapy_crawl.py prints when its crawl is over. */
interface ScrapyReport {
  pages: number;
  items: number;
  seconds: number;
  cpu_seconds: number;
  peak_rss_mb: number;
  reason: string;
}

/** Why the Scrapy row cannot be measured on this machine, or undefined when it can. */
export function scrapyMissing(): string | undefined {
  const probe = spawnSync(PYTHON, ['-c', 'import scrapy'], { encoding: 'utf8' });
  if (probe.status === 0) return undefined;
  return `${PYTHON} with Scrapy is not available here (${(probe.error?.message ?? probe.stderr).trim().split('\n').pop()}; apt-get install python3-scrapy)`;
}

/**
 * Scrapy's crawl of `siteUrl`'s catalogue, the pages the crawl job visits, `concurrency` requests at
 * once in one process. Time, CPU and peak RSS are the Scrapy process's own (there is no database).
 */
export async function measureScrapyCrawl(siteUrl: string, options: { label: string; concurrency: number; expectedPages: number; latencyMs: number }): Promise<JobCrawlFigures> {
  const args = ['bench/reference/scrapy_crawl.py', `${siteUrl}books/`, `${siteUrl}sitemap.xml`, String(options.concurrency)];
  const child = startChild(options.label, args, {}, ROOT, PYTHON);
  let stdout = '';
  child.proc.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  // 'close', not 'exit': the report line must have been read before it is parsed.
  const closed = new Promise<void>((resolve) => child.proc.once('close', () => resolve()));
  const timer = setTimeout(() => void child.stop(), CRAWL_TIMEOUT_MS);
  try {
    await closed;
  } finally {
    clearTimeout(timer);
    await child.stop();
  }
  const line = stdout.trim().split('\n').pop() ?? '';
  let report: ScrapyReport;
  try {
    report = JSON.parse(line) as ScrapyReport;
  } catch {
    throw new Error(`${options.label}: no report (exit ${child.proc.exitCode ?? child.proc.signalCode}):\n${child.output()}`);
  }
  if (report.pages < options.expectedPages) {
    throw new Error(`${options.label}: ${report.reason} after ${report.pages} pages, expected ${options.expectedPages}:\n${child.output()}`);
  }
  return {
    label: options.label,
    workers: 1,
    concurrency: options.concurrency,
    latencyMs: options.latencyMs,
    pages: report.pages,
    products: report.items,
    ms: report.seconds * 1000,
    pagesPerSecond: report.pages / report.seconds,
    handlerMeanMs: Number.NaN,
    footprint: {
      backend: 'none',
      serviceCpuS: report.cpu_seconds,
      databaseCpuS: 0,
      cpuSPer1000Pages: (report.cpu_seconds / report.pages) * 1000,
      peakRssMb: report.peak_rss_mb,
    },
  };
}
